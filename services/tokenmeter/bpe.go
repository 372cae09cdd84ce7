package tokenmeter

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
	"golang.org/x/text/unicode/norm"
)

// BPE is an exact byte-level BPE tokenizer loaded from a HuggingFace
// tokenizer.json (the "tokenizer-json" estimator). It reproduces the ids of the
// HuggingFace tokenizers library for the supported subset:
//
//   - normalizer: none, Sequence, NFC, NFD, NFKC, NFKD;
//   - pre_tokenizer: Split (Regex or String pattern; behaviors Isolated,
//     Removed, MergedWithPrevious, MergedWithNext, Contiguous; invert),
//     ByteLevel (add_prefix_space, use_regex with the GPT-2 pattern), and a
//     Sequence of those;
//   - model: BPE with merges as "a b" strings or [a, b] pairs, ignore_merges;
//     no dropout, no byte fallback, no unk token;
//   - added tokens are matched in the input first (longest match wins) and map
//     to their ids, as HuggingFace's encode does by default; their
//     lstrip/rstrip/single_word flags are ignored.
//
// Split patterns run on github.com/dlclark/regexp2 (lookaheads such as
// `\s+(?!\S)`); a pattern RE2 accepts runs on the standard regexp package,
// which is faster. Piece encodings are cached, so repeated words cost one map
// lookup. A BPE is safe for concurrent use. Load errors name the JSON field.
type BPE struct {
	name           string
	normalize      func(string) string
	steps          []splitStep
	byteLevel      bool // map bytes through the GPT-2 byte alphabet
	addPrefixSpace bool
	vocab          map[string]int
	byteIDs        [256]int32
	merges         map[uint64]mergeRule
	ignoreMerges   bool
	added          addedIndex

	mu    sync.RWMutex
	cache map[string][]int32
}

type mergeRule struct{ rank, id int32 }

// maxCachedPieces bounds the piece cache; it is emptied when full.
const maxCachedPieces = 1 << 17

// tokenizerFile is the subset of tokenizer.json that BPE reads.
type tokenizerFile struct {
	AddedTokens []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
	} `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        struct {
		Type         string            `json:"type"`
		Vocab        map[string]int    `json:"vocab"`
		Merges       []json.RawMessage `json:"merges"`
		IgnoreMerges bool              `json:"ignore_merges"`
		ByteFallback bool              `json:"byte_fallback"`
		Dropout      *float64          `json:"dropout"`
	} `json:"model"`
}

type component struct {
	Type           string          `json:"type"`
	Normalizers    json.RawMessage `json:"normalizers"`
	Pretokenizers  json.RawMessage `json:"pretokenizers"`
	Pattern        json.RawMessage `json:"pattern"`
	Behavior       string          `json:"behavior"`
	Invert         bool            `json:"invert"`
	AddPrefixSpace bool            `json:"add_prefix_space"`
	UseRegex       *bool           `json:"use_regex"`
}

// LoadTokenizerJSON reads a HuggingFace tokenizer.json file. See [BPE] for the
// supported subset; anything else is an error naming the field.
func LoadTokenizerJSON(path string) (*BPE, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer-json: %w", err)
	}
	t, err := ParseTokenizerJSON(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer-json: %s: %w", path, err)
	}
	return t, nil
}

// ParseTokenizerJSON builds a [BPE] from the bytes of a tokenizer.json.
func ParseTokenizerJSON(data []byte) (*BPE, error) {
	var f tokenizerFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	t := &BPE{name: "tokenizer-json", vocab: f.Model.Vocab, cache: map[string][]int32{}}
	if f.Model.Type != "BPE" {
		return nil, fmt.Errorf("model.type: unsupported %q (only BPE)", f.Model.Type)
	}
	if f.Model.ByteFallback {
		return nil, errors.New("model.byte_fallback: unsupported")
	}
	if f.Model.Dropout != nil && *f.Model.Dropout != 0 {
		return nil, errors.New("model.dropout: unsupported")
	}
	if len(t.vocab) == 0 {
		return nil, errors.New("model.vocab: empty")
	}
	t.ignoreMerges = f.Model.IgnoreMerges
	var err error
	if t.normalize, err = parseNormalizer(f.Normalizer, "normalizer"); err != nil {
		return nil, err
	}
	if err := t.parsePreTokenizer(f.PreTokenizer, "pre_tokenizer"); err != nil {
		return nil, err
	}
	if err := t.buildAlphabet(); err != nil {
		return nil, err
	}
	if err := t.parseMerges(f.Model.Merges); err != nil {
		return nil, err
	}
	for i, a := range f.AddedTokens {
		if a.Content == "" {
			return nil, fmt.Errorf("added_tokens[%d].content: empty", i)
		}
		t.added.add(a.Content, a.ID)
	}
	t.added.finish()
	return t, nil
}

func parseNormalizer(raw json.RawMessage, path string) (func(string) string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch c.Type {
	case "NFC":
		return norm.NFC.String, nil
	case "NFD":
		return norm.NFD.String, nil
	case "NFKC":
		return norm.NFKC.String, nil
	case "NFKD":
		return norm.NFKD.String, nil
	case "Sequence":
		var parts []json.RawMessage
		if err := json.Unmarshal(c.Normalizers, &parts); err != nil {
			return nil, fmt.Errorf("%s.normalizers: %w", path, err)
		}
		var fns []func(string) string
		for i, p := range parts {
			fn, err := parseNormalizer(p, fmt.Sprintf("%s.normalizers[%d]", path, i))
			if err != nil {
				return nil, err
			}
			if fn != nil {
				fns = append(fns, fn)
			}
		}
		if len(fns) == 0 {
			return nil, nil
		}
		return func(s string) string {
			for _, fn := range fns {
				s = fn(s)
			}
			return s
		}, nil
	}
	return nil, fmt.Errorf("%s.type: unsupported normalizer %q", path, c.Type)
}

// gpt2Pattern is the ByteLevel pre-tokenizer's built-in split pattern.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

func (t *BPE) parsePreTokenizer(raw json.RawMessage, path string) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	switch c.Type {
	case "Sequence":
		var parts []json.RawMessage
		if err := json.Unmarshal(c.Pretokenizers, &parts); err != nil {
			return fmt.Errorf("%s.pretokenizers: %w", path, err)
		}
		for i, p := range parts {
			if err := t.parsePreTokenizer(p, fmt.Sprintf("%s.pretokenizers[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case "Split":
		var pat struct{ Regex, String *string }
		if err := json.Unmarshal(c.Pattern, &pat); err != nil {
			return fmt.Errorf("%s.pattern: %w", path, err)
		}
		var expr string
		switch {
		case pat.Regex != nil:
			expr = *pat.Regex
		case pat.String != nil:
			expr = regexp2.Escape(*pat.String)
		default:
			return fmt.Errorf("%s.pattern: needs Regex or String", path)
		}
		m, err := compileMatcher(expr)
		if err != nil {
			return fmt.Errorf("%s.pattern: %w", path, err)
		}
		b, err := parseBehavior(c.Behavior)
		if err != nil {
			return fmt.Errorf("%s.behavior: %w", path, err)
		}
		t.steps = append(t.steps, splitStep{match: m, behavior: b, invert: c.Invert})
		return nil
	case "ByteLevel":
		t.byteLevel = true
		t.addPrefixSpace = c.AddPrefixSpace
		if c.UseRegex == nil || *c.UseRegex {
			m, err := compileMatcher(gpt2Pattern)
			if err != nil {
				return err
			}
			t.steps = append(t.steps, splitStep{match: m, behavior: isolated, prefixSpace: c.AddPrefixSpace})
		} else if c.AddPrefixSpace {
			t.steps = append(t.steps, splitStep{behavior: isolated, prefixSpace: true})
		}
		return nil
	}
	return fmt.Errorf("%s.type: unsupported pre-tokenizer %q", path, c.Type)
}

// bytesToUnicode is GPT-2's reversible byte → rune alphabet: printable bytes
// map to themselves, the rest to U+0100 onwards in byte order.
func bytesToUnicode() [256]rune {
	var m [256]rune
	n := 0
	for b := range 256 {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE {
			m[b] = rune(b)
		} else {
			m[b] = rune(256 + n)
			n++
		}
	}
	return m
}

var byteAlphabet = bytesToUnicode()

func (t *BPE) symbol(b byte) string {
	if t.byteLevel {
		return string(byteAlphabet[b])
	}
	return string([]byte{b})
}

func (t *BPE) buildAlphabet() error {
	for b := range 256 {
		id, ok := t.vocab[t.symbol(byte(b))]
		if !ok {
			t.byteIDs[b] = -1
			continue
		}
		t.byteIDs[b] = int32(id)
	}
	if !t.byteLevel {
		return errors.New("pre_tokenizer: a ByteLevel step is required (byte-level BPE only)")
	}
	return nil
}

func (t *BPE) parseMerges(raw []json.RawMessage) error {
	t.merges = make(map[uint64]mergeRule, len(raw))
	for i, r := range raw {
		var a, b string
		var pair []string
		var s string
		if err := json.Unmarshal(r, &s); err == nil {
			var ok bool
			a, b, ok = strings.Cut(s, " ")
			if !ok {
				return fmt.Errorf("model.merges[%d]: %q is not \"a b\"", i, s)
			}
		} else if err := json.Unmarshal(r, &pair); err == nil && len(pair) == 2 {
			a, b = pair[0], pair[1]
		} else {
			return fmt.Errorf("model.merges[%d]: want \"a b\" or [a, b]", i)
		}
		ia, oka := t.vocab[a]
		ib, okb := t.vocab[b]
		ic, okc := t.vocab[a+b]
		if !oka || !okb || !okc {
			return fmt.Errorf("model.merges[%d]: %q + %q: token not in model.vocab", i, a, b)
		}
		key := uint64(ia)<<32 | uint64(uint32(ib))
		if _, dup := t.merges[key]; !dup {
			t.merges[key] = mergeRule{rank: int32(i), id: int32(ic)}
		}
	}
	return nil
}

// Name reports "tokenizer-json".
func (t *BPE) Name() string { return t.name }

// Count returns the number of tokens Encode would return.
func (t *BPE) Count(text string) int {
	n := 0
	t.walk(text, func(ids []int32) { n += len(ids) })
	return n
}

// Encode returns the token ids of text, without special tokens around it
// (HuggingFace encode with add_special_tokens=false).
func (t *BPE) Encode(text string) []int {
	var out []int
	t.walk(text, func(ids []int32) {
		for _, id := range ids {
			out = append(out, int(id))
		}
	})
	return out
}

// walk splits out added tokens, normalises and pre-tokenizes the rest, and
// hands each piece's ids to emit in order.
func (t *BPE) walk(text string, emit func([]int32)) {
	for text != "" {
		start, end, id := t.added.find(text)
		if start < 0 {
			t.walkSegment(text, emit)
			return
		}
		if start > 0 {
			t.walkSegment(text[:start], emit)
		}
		emit([]int32{int32(id)})
		text = text[end:]
	}
}

func (t *BPE) walkSegment(text string, emit func([]int32)) {
	if t.normalize != nil {
		text = t.normalize(text)
	}
	pieces := []string{text}
	for i := range t.steps {
		pieces = t.steps[i].apply(pieces)
	}
	for _, p := range pieces {
		if p != "" {
			emit(t.piece(p))
		}
	}
}

// piece returns the ids of one pre-token, from the cache when possible.
func (t *BPE) piece(p string) []int32 {
	t.mu.RLock()
	ids, ok := t.cache[p]
	t.mu.RUnlock()
	if ok {
		return ids
	}
	ids = t.merge(p)
	t.mu.Lock()
	if len(t.cache) >= maxCachedPieces {
		clear(t.cache)
	}
	t.cache[strings.Clone(p)] = ids
	t.mu.Unlock()
	return ids
}

// merge runs byte-level BPE on one pre-token: start from one symbol per byte
// and repeatedly merge the adjacent pair with the lowest merge rank (the
// leftmost one on ties) until no pair has a rule.
func (t *BPE) merge(p string) []int32 {
	if t.ignoreMerges {
		var b strings.Builder
		for i := 0; i < len(p); i++ {
			b.WriteString(t.symbol(p[i]))
		}
		if id, ok := t.vocab[b.String()]; ok {
			return []int32{int32(id)}
		}
	}
	syms := make([]int32, 0, len(p))
	for i := 0; i < len(p); i++ {
		syms = append(syms, t.byteIDs[p[i]])
	}
	if len(syms) < 2 {
		return syms
	}
	if len(syms) > maxLinearMerge {
		return t.mergeHeap(syms)
	}
	return t.mergeLinear(syms)
}

// mergeLinear is merge for short pieces: rescan every pair per step.
func (t *BPE) mergeLinear(syms []int32) []int32 {
	if len(syms) < 2 {
		return syms
	}
	// rules[i] is the merge rule of the pair (syms[i], syms[i+1]); only the
	// two pairs around a merge change, so each step costs two map lookups.
	rules := make([]mergeRule, len(syms)-1)
	for i := range rules {
		rules[i] = t.rule(syms[i], syms[i+1])
	}
	for {
		at := -1
		for i, r := range rules {
			if r.rank >= 0 && (at < 0 || r.rank < rules[at].rank) {
				at = i
			}
		}
		if at < 0 {
			break
		}
		syms[at] = rules[at].id
		syms = append(syms[:at+1], syms[at+2:]...)
		rules = append(rules[:at], rules[at+1:]...)
		if at > 0 {
			rules[at-1] = t.rule(syms[at-1], syms[at])
		}
		if at < len(rules) {
			rules[at] = t.rule(syms[at], syms[at+1])
		}
	}
	return syms
}

// maxLinearMerge is the longest piece (in bytes) merged by rescanning all
// pairs per step (fast for words); longer pieces use a heap, O(n log n).
const maxLinearMerge = 128

// pairEntry is a candidate merge of the symbol at pos with its successor.
type pairEntry struct {
	rank, pos   int32
	left, right int32 // the ids when the entry was pushed, to detect staleness
}

type pairHeap []pairEntry

func (h pairHeap) less(i, j int) bool {
	return h[i].rank < h[j].rank || h[i].rank == h[j].rank && h[i].pos < h[j].pos
}

func (h *pairHeap) push(e pairEntry) {
	*h = append(*h, e)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if !a.less(i, p) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h *pairHeap) pop() pairEntry {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a = a[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(a) && a.less(l, m) {
			m = l
		}
		if r < len(a) && a.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}

// mergeHeap is merge for long pieces: the symbols form a linked list and the
// candidate pairs a heap ordered by (rank, position), which is the order the
// linear scan merges in (lowest rank, leftmost first).
func (t *BPE) mergeHeap(syms []int32) []int32 {
	n := len(syms)
	next := make([]int32, n)
	prev := make([]int32, n)
	for i := range n {
		next[i], prev[i] = int32(i+1), int32(i-1)
	}
	next[n-1] = -1
	var h pairHeap
	pushPair := func(i int32) {
		if i < 0 || next[i] < 0 {
			return
		}
		j := next[i]
		if r := t.rule(syms[i], syms[j]); r.rank >= 0 {
			h.push(pairEntry{rank: r.rank, pos: i, left: syms[i], right: syms[j]})
		}
	}
	for i := range int32(n - 1) {
		pushPair(i)
	}
	for len(h) > 0 {
		e := h.pop()
		i := e.pos
		j := next[i]
		if syms[i] != e.left || j < 0 || syms[j] != e.right {
			continue // stale: one side was merged since
		}
		syms[i] = t.rule(e.left, e.right).id
		syms[j] = -1
		next[i] = next[j]
		if next[j] >= 0 {
			prev[next[j]] = i
		}
		pushPair(prev[i])
		pushPair(i)
	}
	out := syms[:0]
	for i := int32(0); i >= 0 && int(i) < n; i = next[i] {
		out = append(out, syms[i])
	}
	return out
}

// rule returns the merge rule of the pair (a, b), or rank -1 for none.
func (t *BPE) rule(a, b int32) mergeRule {
	if r, ok := t.merges[uint64(a)<<32|uint64(uint32(b))]; ok {
		return r
	}
	return mergeRule{rank: -1}
}

// splitBehavior is HuggingFace's SplitDelimiterBehavior.
type splitBehavior int

const (
	isolated splitBehavior = iota
	removed
	mergedWithPrevious
	mergedWithNext
	contiguous
)

func parseBehavior(s string) (splitBehavior, error) {
	switch s {
	case "Isolated":
		return isolated, nil
	case "Removed":
		return removed, nil
	case "MergedWithPrevious":
		return mergedWithPrevious, nil
	case "MergedWithNext":
		return mergedWithNext, nil
	case "Contiguous":
		return contiguous, nil
	}
	return 0, fmt.Errorf("unsupported %q", s)
}

// matcher is a compiled split pattern: a repeated character class (scanned
// directly), an RE2 regexp, or a regexp2 one.
type matcher struct {
	class    []rune // sorted inclusive ranges lo, hi, lo, hi…; nil if not a class run
	min, max int    // repetition bounds of class (max -1: unbounded)
	re2      *regexp.Regexp
	re       *regexp2.Regexp
}

// compileMatcher picks the fastest engine that gives the backtracking
// semantics of the HuggingFace tokenizers: a direct scanner for a repeated
// character class such as `\p{N}{1,3}` or `[一-龥]+`, RE2 for other patterns
// it accepts, regexp2 for the rest (lookaheads).
func compileMatcher(expr string) (*matcher, error) {
	if m := classRun(expr); m != nil {
		return m, nil
	}
	if re, err := regexp.Compile(expr); err == nil && re2Equivalent(expr) {
		return &matcher{re2: re}, nil
	}
	re, err := regexp2.Compile(expr)
	if err != nil {
		return nil, err
	}
	return &matcher{re: re}, nil
}

// each feeds the byte range of every non-overlapping match in p to sp, in
// order. runes is a reusable buffer; the grown buffer is returned.
func (m *matcher) each(p string, sp *splitter, runes []rune) []rune {
	if m.class != nil {
		m.eachClassRun(p, sp)
		return runes
	}
	if m.re2 != nil {
		for _, x := range m.re2.FindAllStringIndex(p, -1) {
			sp.match(x[0], x[1])
		}
		return runes
	}
	runes = runes[:0]
	for _, r := range p {
		runes = append(runes, r)
	}
	// Matches arrive in order: walk a rune cursor and its byte offset.
	ri, bi := 0, 0
	toByte := func(r int) int {
		for ri < r {
			_, size := utf8.DecodeRuneInString(p[bi:])
			bi += size
			ri++
		}
		return bi
	}
	_ = m.re.FindRunesMatches(runes, 0, func(v regexp2.MatchView) bool {
		if idx, n, ok := v.GroupRange(0); ok {
			start := toByte(idx)
			sp.match(start, toByte(idx+n))
		}
		return true
	}) // only a match timeout errs, and none is set
	return runes
}

// classRun recognises X+, X* and X{min,max} where X is one character class
// or literal rune, and no \s-like escape is involved (see re2Equivalent).
func classRun(expr string) *matcher {
	if !re2Equivalent(expr) {
		return nil
	}
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	m := &matcher{}
	switch re.Op {
	case syntax.OpPlus:
		m.min, m.max = 1, -1
	case syntax.OpRepeat:
		m.min, m.max = re.Min, re.Max
	default:
		return nil
	}
	if len(re.Sub) != 1 || m.min < 1 || re.Flags&syntax.NonGreedy != 0 {
		return nil
	}
	sub := re.Sub[0]
	switch sub.Op {
	case syntax.OpCharClass:
		m.class = sub.Rune
	case syntax.OpLiteral:
		if len(sub.Rune) != 1 || sub.Flags&syntax.FoldCase != 0 {
			return nil
		}
		m.class = []rune{sub.Rune[0], sub.Rune[0]}
	default:
		return nil
	}
	return m
}

func (m *matcher) inClass(r rune) bool {
	c := m.class
	// Binary search over the range pairs.
	lo, hi := 0, len(c)/2
	for lo < hi {
		mid := (lo + hi) / 2
		switch {
		case r < c[2*mid]:
			hi = mid
		case r > c[2*mid+1]:
			lo = mid + 1
		default:
			return true
		}
	}
	return false
}

// eachClassRun finds greedy runs of class members of length min..max.
func (m *matcher) eachClassRun(p string, sp *splitter) {
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		if !m.inClass(r) {
			i += size
			continue
		}
		start, n, j := i, 0, i
		for j < len(p) && (m.max < 0 || n < m.max) {
			r, size := utf8.DecodeRuneInString(p[j:])
			if !m.inClass(r) {
				break
			}
			j += size
			n++
		}
		if n >= m.min {
			sp.match(start, j)
			i = j
			continue
		}
		i += size
	}
}

// re2Equivalent reports whether RE2's leftmost-first semantics give the same
// matches as a backtracking engine for expr. Both pick the first alternative
// that matches at the leftmost position, and greedy quantifiers agree, so the
// only differences come from constructs RE2 rejects anyway; classes such as
// \s differ, though: RE2's \s is ASCII-only while .NET's is Unicode. Patterns
// using \s, \d, \w, \b are therefore left to regexp2.
func re2Equivalent(expr string) bool {
	for _, esc := range []string{`\s`, `\S`, `\d`, `\D`, `\w`, `\W`, `\b`, `\B`} {
		if strings.Contains(expr, esc) {
			return false
		}
	}
	return true
}

// splitStep is one Split (or ByteLevel) pre-tokenizer stage.
type splitStep struct {
	match       *matcher // nil: no split (ByteLevel without regex)
	behavior    splitBehavior
	invert      bool
	prefixSpace bool // ByteLevel add_prefix_space: prepend " " to each piece
}

func (s *splitStep) apply(pieces []string) []string {
	out := make([]string, 0, len(pieces)*2)
	var runes []rune
	for _, p := range pieces {
		if s.prefixSpace && !strings.HasPrefix(p, " ") {
			p = " " + p
		}
		if s.match == nil {
			out = append(out, p)
			continue
		}
		sp := splitter{step: s, p: p, out: out, first: len(out)}
		runes = s.match.each(p, &sp, runes)
		sp.part(len(p), s.invert)
		if sp.pending != "" {
			sp.out = append(sp.out, sp.pending)
		}
		out = sp.out
	}
	return out
}

// splitter appends the parts of one piece to out per the HuggingFace
// delimiter behavior, as matches arrive.
type splitter struct {
	step      *splitStep
	p         string
	out       []string
	first     int    // index in out of this piece's first part
	prev      int    // end of the previous match
	pending   string // MergedWithNext: delimiters waiting for the next part
	lastDelim bool   // Contiguous: the last part was a delimiter
}

// match records the match [start, end): the gap before it, then the match.
func (sp *splitter) match(start, end int) {
	if start == end {
		return
	}
	sp.part(start, sp.step.invert)
	sp.prev = start
	sp.part(end, !sp.step.invert)
}

// part emits p[sp.prev:end] (if non-empty) as a delimiter or not.
func (sp *splitter) part(end int, delim bool) {
	if end <= sp.prev {
		return
	}
	text := sp.p[sp.prev:end]
	sp.prev = end
	switch sp.step.behavior {
	case isolated:
		sp.out = append(sp.out, text)
	case removed:
		if !delim {
			sp.out = append(sp.out, text)
		}
	case mergedWithPrevious:
		if delim && len(sp.out) > sp.first {
			sp.out[len(sp.out)-1] += text
		} else {
			sp.out = append(sp.out, text)
		}
	case mergedWithNext:
		if delim {
			sp.pending += text
			return
		}
		sp.out = append(sp.out, sp.pending+text)
		sp.pending = ""
	case contiguous:
		if delim && sp.lastDelim && len(sp.out) > sp.first {
			sp.out[len(sp.out)-1] += text
		} else {
			sp.out = append(sp.out, text)
		}
		sp.lastDelim = delim
	}
}

// addedIndex finds added tokens in text: candidates are grouped by their first
// two runes, longest first.
type addedIndex struct {
	byPrefix map[string][]addedToken
	first    string // distinct first runes, for strings.IndexAny
}

type addedToken struct {
	content string
	id      int
}

func prefixKey(s string) string {
	_, n1 := utf8.DecodeRuneInString(s)
	if n1 >= len(s) {
		return s
	}
	_, n2 := utf8.DecodeRuneInString(s[n1:])
	return s[:n1+n2]
}

func (a *addedIndex) add(content string, id int) {
	if a.byPrefix == nil {
		a.byPrefix = map[string][]addedToken{}
	}
	k := prefixKey(content)
	a.byPrefix[k] = append(a.byPrefix[k], addedToken{content, id})
}

func (a *addedIndex) finish() {
	firsts := map[rune]bool{}
	for k, list := range a.byPrefix {
		sort.SliceStable(list, func(i, j int) bool { return len(list[i].content) > len(list[j].content) })
		r, _ := utf8.DecodeRuneInString(k)
		firsts[r] = true
	}
	var b strings.Builder
	for r := range firsts {
		b.WriteRune(r)
	}
	a.first = b.String()
}

// find returns the byte range and id of the leftmost added token in s, or
// start -1.
func (a *addedIndex) find(s string) (start, end, id int) {
	if a.first == "" {
		return -1, -1, 0
	}
	off := 0
	for {
		i := strings.IndexAny(s[off:], a.first)
		if i < 0 {
			return -1, -1, 0
		}
		at := off + i
		rest := s[at:]
		for _, k := range []string{prefixKey(rest), firstRune(rest)} {
			for _, tok := range a.byPrefix[k] {
				if strings.HasPrefix(rest, tok.content) {
					return at, at + len(tok.content), tok.id
				}
			}
		}
		_, n := utf8.DecodeRuneInString(rest)
		off = at + n
	}
}

func firstRune(s string) string {
	_, n := utf8.DecodeRuneInString(s)
	return s[:n]
}
