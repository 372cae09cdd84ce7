package tokenmeter

import "math/bits"

// The bit-mask engine prices ASCII text exactly as scanPieces does, but 64
// bytes at a time and without a branch per piece. A block's bytes become
// one 64-bit mask per byte class, bit k for byte k (classifyBlocks: SSE2
// compares on amd64; elsewhere the bytes are transposed into seven bit
// planes and the classes are boolean formulas over the planes), and every
// piece price is rewritten as a sum over positions:
//
//   - a run priced f(n) by its length n costs Σ_k (f(k)−f(k−1)) · [n ≥ k];
//     the letters at index k of their word form E_k = L & prev(E_{k−1}),
//     so the short part of every word's price is a few popcounts, and only
//     the rare long word (and the word led by a mark) is visited on its
//     own, its length read as the trailing ones from its position;
//   - ceil(n/3) for a digit run counts the run positions 1, 4, 7, …, found
//     by a doubling propagation in steps of three;
//   - properties of a whole run (newlines consumed by the punctuation before
//     them, a whitespace piece that holds a newline) propagate from the
//     run's first byte with an addition: x + start carries through the
//     run's bits.
//
// Masks that look at earlier bytes take the previous block's bits as their
// carry-in, so runs may span blocks. Nothing looks at later bytes: a
// decision that depends on the next byte (does this space join a word?) is
// made at the position of that byte. TestHeuristicASCIIEngineMatchesScanner
// and FuzzHeuristicASCIIEngine hold the engine to the scanner, milli-token
// for milli-token.

// msb has the high bit of every byte set.
const msb = 0x8080808080808080

// shortRun is how far into a word the masks count (block writes the seven
// masks out); wordDelta[k] = wordCost(k) − wordCost(k−1) for k up to
// shortRun.
const shortRun = 7

var wordDelta = func() (d [shortRun + 1]int) {
	for k := 1; k <= shortRun; k++ {
		d[k] = wordCost(k) - wordCost(k-1)
	}
	return
}()

// What the masks leave out, in milli-tokens by length (below 64+shortRun
// letters): longPrice[n] = wordCost(n) − wordCost(shortRun) for a word longer than
// shortRun, markPrice[n] = markedWordCost(n) − wordCost(n) for a marked one.
var longPrice, markPrice = func() (long, mark [64 + shortRun]int32) {
	for n := 1; n < len(long); n++ {
		long[n] = int32(wordCost(n) - wordCost(shortRun))
		mark[n] = int32(markedWordCost(n) - wordCost(n))
	}
	return
}()

// transpose8 transposes the 8×8 bit matrix in x (row r is byte r): bit
// 8r+c moves to bit 8c+r, so byte b of the result holds bit b of each of
// the eight bytes.
func transpose8(x uint64) uint64 {
	t := (x ^ x>>7) & 0x00AA00AA00AA00AA
	x ^= t ^ t<<7
	t = (x ^ x>>14) & 0x0000CCCC0000CCCC
	x ^= t ^ t<<14
	t = (x ^ x>>28) & 0x00000000F0F0F0F0
	x ^= t ^ t<<28
	return x
}

// bitPlanes turns the 64 bytes at s[i:] into bit planes: bit k of b is bit b
// of byte k, for the seven low bits (ASCII). It transposes each 8-byte
// word's 8×8 bit matrix, then the 8×8 matrix of bytes across the words, all
// in registers.
func bitPlanes[T string | []byte](s T, i int) (b0, b1, b2, b3, b4, b5, b6 uint64) {
	s = s[i : i+64]
	x0, x1, x2, x3 := transpose8(le64(s, 0)), transpose8(le64(s, 8)), transpose8(le64(s, 16)), transpose8(le64(s, 24))
	x4, x5, x6, x7 := transpose8(le64(s, 32)), transpose8(le64(s, 40)), transpose8(le64(s, 48)), transpose8(le64(s, 56))
	const m32, m16, m8 = 0x00000000FFFFFFFF, 0x0000FFFF0000FFFF, 0x00FF00FF00FF00FF
	x0, x4 = x0&m32|x4<<32, x0>>32|x4&^m32
	x1, x5 = x1&m32|x5<<32, x1>>32|x5&^m32
	x2, x6 = x2&m32|x6<<32, x2>>32|x6&^m32
	x3, x7 = x3&m32|x7<<32, x3>>32|x7&^m32
	x0, x2 = x0&m16|x2<<16&^m16, x0>>16&m16|x2&^m16
	x1, x3 = x1&m16|x3<<16&^m16, x1>>16&m16|x3&^m16
	x4, x6 = x4&m16|x6<<16&^m16, x4>>16&m16|x6&^m16
	x5, x7 = x5&m16|x7<<16&^m16, x5>>16&m16|x7&^m16
	b0, b1 = x0&m8|x1<<8&^m8, x0>>8&m8|x1&^m8
	b2, b3 = x2&m8|x3<<8&^m8, x2>>8&m8|x3&^m8
	b4, b5 = x4&m8|x5<<8&^m8, x4>>8&m8|x5&^m8
	b6 = x6&m8 | x7<<8&^m8
	return
}

// topRun returns the index in its run of the block's last byte, given the
// class mask and the index of the previous block's last byte (0: the byte
// is not in the class).
func topRun(class uint64, prev int) int {
	if n := bits.LeadingZeros64(^class); n < 64 {
		return n
	}
	return prev + 64
}

// le64 reads s[i:i+8] little-endian; the compiler makes it one load.
func le64[T string | []byte](s T, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// asciiLen returns the length of the ASCII prefix of s.
func asciiLen(s string) int {
	i := 0
	for ; i+32 <= len(s); i += 32 {
		if (le64(s, i)|le64(s, i+8)|le64(s, i+16)|le64(s, i+24))&msb != 0 {
			break
		}
	}
	for ; i+8 <= len(s); i += 8 {
		if h := le64(s, i) & msb; h != 0 {
			return i + bits.TrailingZeros64(h)/8
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= 0x80 {
			return i
		}
	}
	return i
}

// lastWordEnd returns the last p in (i, q] where an ASCII word ends (text[p−1]
// is an ASCII letter and text[p] cannot continue the word), looking back at
// most 256 bytes from q, or i when there is none. Such a p is always where
// scanPieces starts a piece, whatever precedes it.
func lastWordEnd(text string, i, q int) int {
	for p := q; p > i && q-p < 256; p-- {
		if c := text[p-1]; c < 0x80 && byteClass[c] == clsLetter && letterWeight[text[p]] == runStop {
			return p
		}
	}
	return i
}

// asciiMilli prices s, which must be ASCII and start where scanPieces would
// start a piece, as if it were the whole text.
func asciiMilli(s string) int {
	var e asciiEngine
	var masks [classBatch]classMasks
	i := 0
	for i+64 <= len(s) {
		n := min((len(s)-i)/64, classBatch)
		classifyBlocks(masks[:n], s[i:i+64*n])
		for _, m := range masks[:n] {
			e.block(m, ^uint64(0))
		}
		i += 64 * n
	}
	if i < len(s) {
		var buf [64]byte
		copy(buf[:], s[i:])
		e.block(classifyPlanes(buf[:], 0), 1<<(len(s)-i)-1)
	}
	// One block past the end, where pieces that end with the text are
	// priced (the byte after them is nothing, as at the end of the text).
	e.block(classMasks{}, 0)
	return e.milli
}

// classBatch is how many blocks are classified per classifyBlocks call.
const classBatch = 16

// classMasks holds one block's byte classes, bit k for byte k: ASCII
// letters, digits, blanks (space, tab, VT, FF), newlines (CR, LF) and
// punctuation (the other printable bytes but DEL).
type classMasks struct{ L, D, S, N, P uint64 }

// classifyPlanes classifies the 64 ASCII bytes at s[i:] from their bit
// planes; it is the portable classifyBlocks.
func classifyPlanes[T string | []byte](s T, i int) classMasks {
	b0, b1, b2, b3, b4, b5, b6 := bitPlanes(s, i)
	low5 := b0 | b1 | b2 | b3 | b4
	L := b6 & low5 &^ (b4 & b3 & (b2 | b1&b0)) // 0x41–0x5A, 0x61–0x7A
	D := b5 & b4 &^ b6 &^ (b3 & (b2 | b1))     // 0x30–0x39
	space := b5 &^ b6 &^ low5                  // 0x20
	ctl := ^(b6 | b5 | b4) & b3                // 0x08–0x0F
	N := ctl & (^b2&b1&^b0 | b2&^b1&b0)        // \n, \r
	S := ctl&(^b2&b0|b2&^b1&^b0) | space       // \t, \v, \f, space
	del := b6 & b5 & b4 & b3 & b2 & b1 & b0
	return classMasks{L: L, D: D, S: S, N: N, P: (b6 | b5) &^ (space | del | L | D)}
}

// asciiEngine carries one block's state into the next.
type asciiEngine struct {
	milli int
	// The previous block's masks.
	prevL, prevD, prevP, prevS, prevW, prevX uint64
	// The index in its run of the previous block's last byte (0: not in
	// a run), for words and punctuation runs, and 1 shifted by it: bit k
	// set means that byte is in E_k.
	wordIdx, punctIdx int
	wordTop, punctTop uint64
	// The length so far of a long word, a marked word or a long punctuation
	// run that reached the end of the previous block (0: none).
	longLen, markLen, punctLen int
	// Carries of the run-propagating additions.
	nlCarry, firstCarry uint64
}

// block prices one block of 64 bytes given as its class masks; valid marks
// the bytes that are text (the rest is padding).
func (e *asciiEngine) block(cm classMasks, valid uint64) {
	L, D, S, N, P := cm.L, cm.D, cm.S, cm.N, cm.P
	O := valid &^ (L | D | S | N | P) // control bytes: one token each
	milli := 1000 * bits.OnesCount64(O)

	// Digits: one token per started group of three.
	D1 := D<<1 | e.prevD>>63
	DD := D & D1 & (D<<2 | e.prevD>>62) // p, p−1 and p−2 are digits
	X := D&^D1 | DD&(e.prevX>>61)       // run starts, and continued groups
	if G := DD; G != 0 {                // some run has three digits or more
		X |= X << 3 & G
		G &= G << 3
		X |= X << 6 & G
		G &= G << 6
		X |= X << 12 & G
		G &= G << 12
		X |= X << 24 & G
		G &= G << 24
		X |= X << 48 & G
	}
	milli += 1000 * bits.OnesCount64(X)

	// Words, and words led by a single punctuation mark (".Println").
	// Σ wordCost(n) over the words is Σ_k Δ_k · #(words with n ≥ k): the
	// letters at index k of their word form E_k = L & prev(E_k−1), counted
	// up to index shortRun; the few longer words, and the marked ones, are
	// then visited one by one for the rest of their price. A word that
	// reaches the end of the block is finished in the next one.
	L1 := L<<1 | e.prevL>>63
	P1 := P<<1 | e.prevP>>63
	P2 := P<<2 | e.prevP>>62
	starts := L &^ L1
	marked := starts & P1 &^ P2 // first letters of marked words
	carry := e.wordTop          // written out for shortRun = 7
	e1 := starts
	e2 := L & (e1<<1 | carry>>1&1)
	e3 := L & (e2<<1 | carry>>2&1)
	e4 := L & (e3<<1 | carry>>3&1)
	e5 := L & (e4<<1 | carry>>4&1)
	e6 := L & (e5<<1 | carry>>5&1)
	e7 := L & (e6<<1 | carry>>6&1)
	m := L & (e7<<1 | carry>>7&1) // E_8: letters at index 8, long words
	milli += wordDelta[1]*bits.OnesCount64(e1) + wordDelta[2]*bits.OnesCount64(e2) +
		wordDelta[3]*bits.OnesCount64(e3) + wordDelta[4]*bits.OnesCount64(e4) +
		wordDelta[5]*bits.OnesCount64(e5) + wordDelta[6]*bits.OnesCount64(e6) +
		wordDelta[7]*bits.OnesCount64(e7)
	e.wordIdx = topRun(L, e.wordIdx)
	e.wordTop = 1 << e.wordIdx
	if e.longLen > 0 || e.markLen > 0 {
		c := bits.TrailingZeros64(^L) // the word continues for c letters
		if e.longLen > 0 {
			if e.longLen += c; c < 64 {
				milli += wordCost(e.longLen) - wordCost(shortRun)
				e.longLen = 0
			}
		}
		if e.markLen > 0 {
			if e.markLen += c; c < 64 {
				milli += markedWordCost(e.markLen) - wordCost(e.markLen)
				e.markLen = 0
			}
		}
	}
	for ; m != 0; m &= m - 1 {
		s := bits.TrailingZeros64(m)
		r := bits.TrailingZeros64(^(L >> s))
		if s+r == 64 {
			e.longLen = shortRun + r
			break
		}
		milli += int(longPrice[shortRun+r])
	}
	for mk := marked; mk != 0; mk &= mk - 1 {
		s := bits.TrailingZeros64(mk)
		n := bits.TrailingZeros64(^(L >> s))
		if s+n == 64 {
			e.markLen = n
			break
		}
		milli += int(markPrice[n])
	}

	// Punctuation runs: most are one or two marks long. A mark is priced
	// inside its word instead.
	pstarts := P &^ P1
	p2 := P & (pstarts<<1 | e.punctTop>>1&1)
	p3 := P & (p2<<1 | e.punctTop>>2&1)
	e.punctIdx = topRun(P, e.punctIdx)
	e.punctTop = 1 << e.punctIdx
	milli += punctCost(1)*(bits.OnesCount64(pstarts)-bits.OnesCount64(marked)) +
		(punctCost(2)-punctCost(1))*bits.OnesCount64(p2)
	if e.punctLen > 0 {
		c := bits.TrailingZeros64(^P)
		if e.punctLen += c; c < 64 {
			milli += punctCost(e.punctLen) - punctCost(2)
			e.punctLen = 0
		}
	}
	for ; p3 != 0; p3 &= p3 - 1 {
		s := bits.TrailingZeros64(p3)
		r := bits.TrailingZeros64(^(P >> s))
		if s+r == 64 {
			e.punctLen = 2 + r
			break
		}
		milli += punctCost(2+r) - punctCost(2)
	}

	// Whitespace. Newlines right after punctuation belong to it; what is
	// left of a blank/newline run is one piece W.
	sum, c := bits.Add64(N, N&P1, e.nlCarry)
	W := (S | N) &^ ((sum ^ N) & N)
	e.nlCarry = c
	W1 := W<<1 | e.prevW>>63
	start := W &^ W1
	// A piece holding a newline costs one token: count its first newline,
	// either at its start or right after its leading blanks.
	sum, c = bits.Add64(S, start&S, e.firstCarry)
	e.firstCarry = c
	milli += 1000 * bits.OnesCount64(N&(sum&^S)|start&N)
	// Blanks after the piece's last newline: two or more cost one token,
	// a single one is free when a word or mark follows. Priced at the byte
	// after the piece.
	end := W1 &^ W
	S1 := S<<1 | e.prevS>>63
	S2 := S<<2 | e.prevS>>62
	milli += 1000 * (bits.OnesCount64(end&S1&S2) + bits.OnesCount64(end&S1&^S2&^(L|P)))

	e.milli += milli
	e.prevL, e.prevD, e.prevP, e.prevS, e.prevW, e.prevX = L, D, P, S, W, X
}
