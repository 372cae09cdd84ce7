package tokenmeter

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// asciiAlphabet holds pieces that exercise every rule of the scanner:
// letters, digits, blanks, newlines, punctuation, control bytes, and the
// combinations with a rule of their own (mark + word, space + word,
// punctuation + newlines).
var asciiAlphabet = []string{
	"a", "Z", "word", "identifierName", "x", "0", "12", "2024", "1234567", " ", "  ", "\t", "\v", "\f",
	"\n", "\r\n", "\n\n", ".", ",", "(", ")", "{", "}", "::", "...", "\"", "!=", "\x00", "\x1b", "\x7f",
	".Println", " word", "\n  ", "\t\t", ";\n", "`", "@", "[", "_", "~",
}

// nonASCIIAlphabet adds bytes the bit-mask engine must hand to the scanner.
var nonASCIIAlphabet = []string{"é", "café", "中文", "，", "。", "😀", "\x80", "\xc3", "Ж", "—", "¿"}

func randomText(r *rand.Rand, alphabet []string, pieces int, longRuns bool) string {
	var b strings.Builder
	for range pieces {
		if longRuns && r.IntN(20) == 0 {
			// Runs long enough to cross one or more 64-byte blocks.
			b.WriteString(strings.Repeat(alphabet[r.IntN(len(alphabet))], 1+r.IntN(150)))
			continue
		}
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

func TestHeuristicASCIIEngineMatchesScanner(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	mixed := append(append([]string{}, asciiAlphabet...), nonASCIIAlphabet...)
	var cases []string
	for _, k := range kinds {
		cases = append(cases, readTestdata(t, k.file))
	}
	cases = append(cases, mixedCorpus(t, 1<<18))
	for _, c := range []string{"a", "1", " ", "\n", ".", "\x00"} {
		for _, n := range []int{1, 2, 3, 63, 64, 65, 66, 127, 128, 129, 200} {
			cases = append(cases, strings.Repeat(c, n), "x"+strings.Repeat(c, n)+"y", ".\n"+strings.Repeat(c, n)+" z")
		}
	}
	// Seams between the engine and the scanner: ASCII stretches around the
	// minimum length, ending in a word, a mark, digits or blanks, next to
	// non-ASCII that does or does not continue the word.
	prose := strings.Repeat("the quick brown fox jumps over a lazy dog. ", 8)
	for _, sep := range []string{"é", "café", "中文", "。", "\x80", " 中", "\n中"} {
		for _, k := range []int{10, 63, 64, 65, 100, 130, 250} {
			for _, end := range []string{"", "x", ".", "7", "  ", "\n", ".a"} {
				head := prose[:k] + end
				cases = append(cases, head+sep+prose[:k], sep+head+sep+head+sep)
			}
		}
	}
	for i := range 3000 {
		cases = append(cases, randomText(r, asciiAlphabet, r.IntN(200), i%2 == 0))
		cases = append(cases, randomText(r, mixed, r.IntN(200), i%2 == 0))
	}
	for i, text := range cases {
		want := scalarMilli(text)
		if got := heuristicMilli(text); got != want {
			t.Fatalf("case %d (%d bytes) %.200q: hybrid %d milli-tokens, scanner %d", i, len(text), text, got, want)
		}
		if asciiLen(text) == len(text) {
			if got := asciiMilli(text); got != want {
				t.Fatalf("case %d (%d bytes) %.200q: engine %d milli-tokens, scanner %d", i, len(text), text, got, want)
			}
		}
	}
}

// TestClassifyBlocks holds the platform's classifyBlocks (SSE2 on amd64) to
// the portable bit-plane classification, on every ASCII byte in every lane.
func TestClassifyBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var b strings.Builder
	for c := range 128 { // each byte value in each of the 64 lanes
		for range 64 {
			b.WriteByte(byte(c))
		}
	}
	for b.Len() < 64*classBatch*40 {
		b.WriteByte(byte(r.IntN(128)))
	}
	src := b.String()
	for i := 0; i+64 <= len(src); {
		n := min((len(src)-i)/64, 1+r.IntN(classBatch))
		got := make([]classMasks, n)
		classifyBlocks(got, src[i:i+64*n])
		for k := range got {
			if want := classifyPlanes(src, i+64*k); got[k] != want {
				t.Fatalf("block at %d: got %+v, want %+v (bytes %q)", i+64*k, got[k], want, src[i+64*k:i+64*k+64])
			}
		}
		i += 64 * n
	}
	classifyBlocks(nil, "") // no blocks: nothing read
}

func FuzzHeuristicASCIIEngine(f *testing.F) {
	for _, s := range asciiAlphabet {
		f.Add(strings.Repeat(s, 70))
	}
	f.Add("héllo wörld " + strings.Repeat("the quick brown fox. ", 8) + "中文，")
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := heuristicMilli(text), scalarMilli(text); got != want {
			t.Fatalf("%q: hybrid %d milli-tokens, scanner %d", text, got, want)
		}
	})
}

// BenchmarkHeuristicEngines compares the hybrid estimator with the piece
// scanner alone on ASCII and non-ASCII text.
func BenchmarkHeuristicEngines(b *testing.B) {
	mixed := mixedCorpus(b, 1<<20)
	var ascii strings.Builder
	for ascii.Len() < 1<<20 {
		ascii.WriteString(readTestdata(b, "english.txt"))
		ascii.WriteString(readTestdata(b, "code.go.txt"))
		ascii.WriteString(readTestdata(b, "data.json"))
	}
	chinese := strings.Repeat(readTestdata(b, "chinese.txt"), 1<<20/len(readTestdata(b, "chinese.txt")))
	for _, c := range []struct{ name, text string }{{"ascii", ascii.String()}, {"chinese", chinese}, {"mixed", mixed}} {
		for _, e := range []struct {
			name  string
			milli func(string) int
		}{{"hybrid", heuristicMilli}, {"scanner", scalarMilli}} {
			b.Run(c.name+"/"+e.name, func(b *testing.B) {
				b.SetBytes(int64(len(c.text)))
				cpu := processCPU()
				for b.Loop() {
					e.milli(c.text)
				}
				b.StopTimer()
				if d := processCPU() - cpu; d > 0 {
					b.ReportMetric(float64(b.N)*float64(len(c.text))/d.Seconds()/1e6, "cpu-MB/s")
				}
			})
		}
	}
}
