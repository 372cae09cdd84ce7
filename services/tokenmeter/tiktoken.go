package tokenmeter

import (
	"compress/flate"
	_ "embed" // the vocabularies
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"

	"github.com/dlclark/regexp2/v2"
)

// The vocabularies of OpenAI's tiktoken encodings, compressed: token i is
// written as uvarint(len) followed by its bytes, for i = 0, 1, … (length 0
// for an id with no token), and the whole is DEFLATE-compressed. The files
// are written from github.com/tiktoken-go/tokenizer by
// `go test -run TestTiktokenTablesMatchTheLibrary -update ./services/tokenmeter/`
// and checked against it by the same test.
var (
	//go:embed tiktoken/o200k_base.bin.flate
	o200kTable string
	//go:embed tiktoken/cl100k_base.bin.flate
	cl100kTable string
)

// tiktokenEncoding is one tiktoken encoding: its compressed vocabulary and
// the pattern that splits text into pieces before byte-pair merging.
type tiktokenEncoding struct {
	table   string
	pattern string
}

var tiktokenEncodings = map[string]tiktokenEncoding{
	"o200k":  {o200kTable, `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`},
	"cl100k": {cl100kTable, `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`},
}

// Tiktoken is an OpenAI-family estimator ("o200k" or "cl100k"): tiktoken's
// byte-pair encoding, with the vocabulary embedded in the binary (fully
// offline). The split runs on regexp2's backtracking engine; counts equal
// github.com/tiktoken-go/tokenizer's (the tests compare them) except where
// that library's generated split code departs from the pattern: it drops
// the byte 0x7f and splits "\n \n" in two. Special tokens such as
// <|endoftext|> are counted as ordinary text, as the library does.
//
// The vocabulary is inflated and its rank table built on first use (tens of
// milliseconds, a few MB of heap), never at start-up; a table that fails to
// load makes Count fall back to [Heuristic]. The embedded tables are about
// 1.6 MB where the same vocabularies as Go map literals cost about 7 MB of
// binary.
type Tiktoken struct {
	name string
	enc  tiktokenEncoding

	once  sync.Once
	ranks map[string]uint32 // token bytes → rank (its id)
	split *regexp2.Regexp
	err   error
}

// NewTiktoken returns the estimator for name "o200k" or "cl100k".
func NewTiktoken(name string) (*Tiktoken, error) {
	enc, ok := tiktokenEncodings[name]
	if !ok {
		return nil, fmt.Errorf("tiktoken: unknown encoding %q (want o200k or cl100k)", name)
	}
	return &Tiktoken{name: name, enc: enc}, nil
}

// Name reports "o200k" or "cl100k".
func (t *Tiktoken) Name() string { return t.name }

// Count returns the exact token count under the encoding.
func (t *Tiktoken) Count(text string) int {
	if text == "" {
		return 0
	}
	t.once.Do(t.load)
	if t.err != nil {
		return Heuristic{}.Count(text)
	}
	n := 0
	m, err := t.split.FindStringMatch(text)
	for ; m != nil && err == nil; m, err = t.split.FindNextMatch(m) {
		n += t.pieceTokens(m.String())
	}
	if err != nil { // regexp2 fails only on a timeout, and none is set
		return Heuristic{}.Count(text)
	}
	return n
}

func (t *Tiktoken) load() {
	t.ranks, t.err = parseTiktokenTable(t.enc.table)
	if t.err == nil {
		t.split, t.err = regexp2.Compile(t.enc.pattern, regexp2.None)
	}
	if t.err != nil {
		t.err = fmt.Errorf("tiktoken %s: %w", t.name, t.err)
	}
}

// maxTiktokenTable bounds the inflated size of an embedded table.
const maxTiktokenTable = 8 << 20

// parseTiktokenTable inflates a table and returns its rank map. The keys are
// substrings of one string holding every token's bytes.
func parseTiktokenTable(table string) (map[string]uint32, error) {
	raw, err := io.ReadAll(io.LimitReader(flate.NewReader(strings.NewReader(table)), maxTiktokenTable+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxTiktokenTable {
		return nil, fmt.Errorf("table inflates to more than %d bytes", maxTiktokenTable)
	}
	all := string(raw)
	ranks := make(map[string]uint32, 1<<17)
	for id, off := uint32(0), 0; off < len(all); id++ {
		n, w := binary.Uvarint(raw[off:])
		if w <= 0 || n > uint64(len(all)-off-w) {
			return nil, fmt.Errorf("token %d at byte %d: bad length", id, off)
		}
		off += w
		if n > 0 {
			ranks[all[off:off+int(n)]] = id
		}
		off += int(n)
	}
	return ranks, nil
}

// pieceTokens counts the tokens of one piece of the split.
func (t *Tiktoken) pieceTokens(piece string) int {
	if len(piece) < 2 {
		return len(piece) // every single byte is a token
	}
	if _, ok := t.ranks[piece]; ok {
		return 1
	}
	if len(piece) < heapMergeFrom {
		return t.mergeScan(piece)
	}
	return t.mergeHeap(piece)
}

// heapMergeFrom is the piece length, in bytes, from which merging uses a heap
// (O(n log n)) instead of a rescan of every pair per merge (O(n²), faster for
// words).
const heapMergeFrom = 96

const noRank = math.MaxUint32

// rankOf is the rank of piece[i:k], or noRank when it is not a token.
func (t *Tiktoken) rankOf(piece string, i, k int32) uint32 {
	if r, ok := t.ranks[piece[i:k]]; ok {
		return r
	}
	return noRank
}

// mergeScan is tiktoken's merge: start from one part per byte, and merge the
// adjacent pair whose concatenation has the lowest rank (the leftmost on
// ties) until no concatenation is a token. It returns the number of parts.
func (t *Tiktoken) mergeScan(piece string) int {
	var buf [heapMergeFrom + 1]int32
	starts := buf[:0] // the parts' start offsets, then len(piece)
	for i := range int32(len(piece)) + 1 {
		starts = append(starts, i)
	}
	var rbuf [heapMergeFrom]uint32
	ranks := rbuf[:len(piece)-1] // ranks[i]: parts i and i+1 merged
	for i := range ranks {
		ranks[i] = t.rankOf(piece, starts[i], starts[i+2])
	}
	for len(ranks) > 0 {
		at := 0
		for i, r := range ranks {
			if r < ranks[at] {
				at = i
			}
		}
		if ranks[at] == noRank {
			break
		}
		starts = append(starts[:at+1], starts[at+2:]...)
		ranks = append(ranks[:at], ranks[at+1:]...)
		if at > 0 {
			ranks[at-1] = t.rankOf(piece, starts[at-1], starts[at+1])
		}
		if at < len(ranks) {
			ranks[at] = t.rankOf(piece, starts[at], starts[at+2])
		}
	}
	return len(starts) - 1
}

// mergeHeap is mergeScan for long pieces: the part boundaries form a linked
// list and the candidate merges a heap ordered by (rank, offset), the order
// mergeScan merges in.
func (t *Tiktoken) mergeHeap(piece string) int {
	n := int32(len(piece))
	next := make([]int32, n+1)
	prev := make([]int32, n+1)
	rank := make([]uint32, n+1) // rank[i]: the part at i merged with its successor
	for i := range n + 1 {
		next[i], prev[i], rank[i] = i+1, i-1, noRank
	}
	next[n] = -1
	rankAt := func(i int32) uint32 {
		j := next[i]
		if j < 0 || next[j] < 0 {
			return noRank
		}
		return t.rankOf(piece, i, next[j])
	}
	var h pairHeap
	for i := range n - 1 {
		if rank[i] = rankAt(i); rank[i] != noRank {
			h.push(pairEntry{rank: int32(rank[i]), pos: i})
		}
	}
	parts := int(n)
	for len(h) > 0 {
		e := h.pop()
		i := e.pos
		if rank[i] != uint32(e.rank) {
			continue // stale: a neighbour merged since
		}
		j := next[i]
		rank[j] = noRank
		next[i] = next[j]
		prev[next[j]] = i
		parts--
		for _, b := range [2]int32{i, prev[i]} {
			if b < 0 {
				continue
			}
			if rank[b] = rankAt(b); rank[b] != noRank {
				h.push(pairEntry{rank: int32(rank[b]), pos: b})
			}
		}
	}
	return parts
}
