package tokenmeter

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unicode"
)

// mixedCorpus generates about size bytes of English prose, Go code, JSON and
// Chinese prose, interleaved in chunks of about 4 KB. Words and characters are
// drawn from the testdata files with a fixed seed, so the corpus is
// deterministic but not a repetition (caches cannot memorise it).
func mixedCorpus(tb testing.TB, size int) string {
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.FieldsFunc(readTestdata(tb, "english.txt")+readTestdata(tb, "code.go.txt"), func(c rune) bool { return !unicode.IsLetter(c) })
	var han []rune
	for _, c := range readTestdata(tb, "chinese.txt") {
		if unicode.Is(unicode.Han, c) {
			han = append(han, c)
		}
	}
	word := func() string { return words[r.IntN(len(words))] }
	ident := func() string {
		w := word()
		return w + strings.ToUpper(word()[:1]) + fmt.Sprint(r.IntN(100))
	}
	gens := []func(b *strings.Builder){
		func(b *strings.Builder) { // English
			for range 8 + r.IntN(10) {
				b.WriteString(word() + " ")
			}
			b.WriteString(word() + ". ")
			if r.IntN(6) == 0 {
				b.WriteString("\n\n")
			}
		},
		func(b *strings.Builder) { // Go
			switch r.IntN(4) {
			case 0:
				fmt.Fprintf(b, "\tif %s != nil {\n\t\treturn %s, fmt.Errorf(\"%s %%w\", err)\n\t}\n", ident(), ident(), word())
			case 1:
				fmt.Fprintf(b, "func (%s *%s) %s(ctx context.Context, n int) ([]byte, error) {\n", word()[:1], ident(), ident())
			case 2:
				fmt.Fprintf(b, "\t%s := %s.%s(%d, %q)\n", ident(), word(), ident(), r.IntN(10000), word())
			default:
				b.WriteString("}\n\n")
			}
		},
		func(b *strings.Builder) { // JSON
			fmt.Fprintf(b, "{\"%s\": %d, \"%s\": \"%s %s\", \"%s\": [%d, %d, %.2f], \"ok\": %v},\n",
				word(), r.IntN(100000), ident(), word(), word(), word(), r.IntN(1000), r.IntN(1000), r.Float64()*100, r.IntN(2) == 0)
		},
		func(b *strings.Builder) { // Chinese
			for range 10 + r.IntN(20) {
				b.WriteRune(han[r.IntN(len(han))])
			}
			b.WriteString([]string{"，", "。", "；", "：", "。\n"}[r.IntN(5)])
		},
	}
	var b strings.Builder
	for b.Len() < size {
		gen := gens[r.IntN(len(gens))]
		for start := b.Len(); b.Len()-start < 4096; {
			gen(&b)
		}
	}
	return b.String()
}

// benchEstimators are the estimators benchmarked; tokenizer-json uses the
// real DeepSeek-V3 tokenizer when HARNESS_DEEPSEEK_TOKENIZER names it, else
// the small generated one (speed figures then mean little).
func benchEstimators(b *testing.B) []Estimator {
	o, _ := NewTiktoken("o200k")
	c, _ := NewTiktoken("cl100k")
	var bpe *BPE
	var err error
	if path := os.Getenv("HARNESS_DEEPSEEK_TOKENIZER"); path != "" {
		bpe, err = LoadTokenizerJSON(path)
	} else {
		bpe, err = ParseTokenizerJSON(testTokenizerJSON(b, false))
	}
	if err != nil {
		b.Fatal(err)
	}
	return []Estimator{Heuristic{}, Bytes{}, o, c, bpe}
}

// BenchmarkEstimators reports MB/s on a 1 MB mixed corpus and, as metrics,
// each estimator's error against DeepSeek-V3 per kind of text (percent).
// tokenizer-json is run cold: its piece cache is emptied every iteration.
func BenchmarkEstimators(b *testing.B) {
	corpus := mixedCorpus(b, 1<<20)
	for _, est := range benchEstimators(b) {
		b.Run(est.Name(), func(b *testing.B) {
			est.Count("warm up")
			b.SetBytes(int64(len(corpus)))
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				if bpe, ok := est.(*BPE); ok {
					bpe.mu.Lock()
					clear(bpe.cache)
					bpe.mu.Unlock()
				}
				est.Count(corpus)
			}
			b.StopTimer()
			if d := processCPU() - cpu; d > 0 {
				b.ReportMetric(float64(b.N)*float64(len(corpus))/d.Seconds()/1e6, "cpu-MB/s")
			}
			for _, k := range kinds {
				got := est.Count(readTestdata(b, k.file))
				b.ReportMetric(100*float64(got-k.deepseek)/float64(k.deepseek), "err%-"+k.kind)
			}
		})
	}
}

// BenchmarkSessionProjectGrowingHistory appends one message per request to a
// 500-message history: only the new message is priced.
func BenchmarkSessionProjectGrowingHistory(b *testing.B) {
	corpus := mixedCorpus(b, 1<<20)
	var msgs []Message
	for i := range 500 {
		msgs = append(msgs, Message{Role: RoleUser, Content: corpus[i*2000 : i*2000+2000]})
	}
	req := Request{Model: "m", System: readTestdata(b, "english.txt"), Messages: msgs[:1]}
	b.ReportAllocs()
	var i int
	for b.Loop() {
		s := NewMeter(Heuristic{}, nil).Session("s")
		for i = 1; i <= len(msgs); i++ {
			req.Messages = msgs[:i]
			s.Project(req)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(msgs)), "ns/request")
}
