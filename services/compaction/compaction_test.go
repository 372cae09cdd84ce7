package compaction_test

import (
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/services/compaction"
	"github.com/dshgo/harness/services/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// history builds n rounds of: user, assistant with k parallel calls (with
// reasoning, as DeepSeek thinking mode), k results, assistant text.
func history(n, k int) []llm.Message {
	var out []llm.Message
	for i := range n {
		out = append(out, llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf("do step %d", i)})
		a := llm.Message{Role: llm.RoleAssistant, Reasoning: fmt.Sprintf("thinking %d", i)}
		for j := range k {
			a.ToolCalls = append(a.ToolCalls, llm.ToolCall{ID: fmt.Sprintf("c%d_%d", i, j), Name: "read", Arguments: `{"path":"x"}`})
		}
		out = append(out, a)
		for j := range k {
			out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: fmt.Sprintf("c%d_%d", i, j), Content: strings.Repeat("r", 40*(j+1))})
		}
		out = append(out, llm.Message{Role: llm.RoleAssistant, Content: "ok", Reasoning: "done thinking"})
	}
	return out
}

func price(h []llm.Message) func(int) int {
	return func(i int) int { return len(h[i].Content)/4 + len(h[i].Reasoning)/4 + 4 }
}

// For every budget, hence every place the tail could start, the compacted
// view (summary + tail) keeps every call with its results, and the tail's
// messages are the originals (reasoning included).
func TestCutNeverSeparatesCallsFromResults(t *testing.T) {
	h := history(6, 3)
	if err := compaction.Paired(h); err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for keep := 0; keep <= 100; keep++ {
		cfg := compaction.Config{}
		cfg.SetDefaults()
		cfg.KeepRecent = float64(keep) / 100
		s := compaction.New(cfg, nil)
		cut := s.Cut(h, price(h), 2000)
		seen[cut] = true
		view := append([]llm.Message{{Role: llm.RoleUser, Content: compaction.SummaryPrefix + "summary"}}, h[cut:]...)
		if err := compaction.Paired(view); err != nil {
			t.Fatalf("keepRecent %.2f: cut %d: %v", cfg.KeepRecent, cut, err)
		}
		for i, m := range h[cut:] {
			if m.Role == llm.RoleAssistant && m.Reasoning == "" {
				t.Fatalf("cut %d: message %d lost its reasoning", cut, cut+i)
			}
		}
	}
	if len(seen) < 10 {
		t.Fatalf("the budgets reached only %d cut positions", len(seen))
	}
	// Every cut position, directly: Paired accepts exactly the positions
	// that do not start the tail with a tool result.
	for cut := 0; cut <= len(h); cut++ {
		view := append([]llm.Message{{Role: llm.RoleUser, Content: "summary"}}, h[cut:]...)
		err := compaction.Paired(view)
		startsWithResult := cut < len(h) && h[cut].Role == llm.RoleTool
		if (err != nil) != startsWithResult {
			t.Errorf("cut %d (%s): Paired = %v", cut, h[min(cut, len(h)-1)].Role, err)
		}
	}
}

func TestPairedFindsBrokenHistories(t *testing.T) {
	call := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a"}, {ID: "b"}}}
	res := func(id string) llm.Message { return llm.Message{Role: llm.RoleTool, ToolCallID: id} }
	for _, tc := range []struct {
		msgs []llm.Message
		want string
	}{
		{[]llm.Message{res("a")}, "without its call"},
		{[]llm.Message{call, res("a")}, "without results"},
		{[]llm.Message{call, res("a"), {Role: llm.RoleUser}, res("b")}, "have no result"},
		{[]llm.Message{call, res("a"), res("b"), res("b")}, "without its call"},
	} {
		if err := compaction.Paired(tc.msgs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Paired = %v, want %q", err, tc.want)
		}
	}
}

func TestDueAndConfig(t *testing.T) {
	cfg := compaction.Config{}
	cfg.SetDefaults()
	s := compaction.New(cfg, nil)
	if s.Due(800, 1000) || !s.Due(801, 1000) || s.Due(5000, 0) {
		t.Fatal("Due does not follow threshold 0.8")
	}
	cfg.Threshold, cfg.KeepRecent = 0, 1
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "threshold") || !strings.Contains(err.Error(), "keepRecent") {
		t.Fatalf("Validate = %v", err)
	}
}

func TestTranscriptClipsResults(t *testing.T) {
	h := []llm.Message{{Role: llm.RoleTool, Name: "read", ToolCallID: "c", Content: strings.Repeat("é", 200)}}
	tr := compaction.Transcript(h, 101)
	if !strings.Contains(tr, "more bytes elided") || strings.Contains(tr, strings.Repeat("é", 51)) {
		t.Fatalf("transcript: %s", tr)
	}
}

// BenchmarkCut2000 is compaction's bookkeeping (excluding the model call)
// on a 2,000-message history: pricing every message and finding the cut,
// plus the pairing check of the compacted view. Reference in the same run:
// copying the history (what any compaction must do at least).
func BenchmarkCut2000(b *testing.B) {
	h := history(400, 3) // 400 × 5 = 2000 messages
	cfg := compaction.Config{}
	cfg.SetDefaults()
	s := compaction.New(cfg, nil)
	p := price(h)
	b.Run("cut+pair", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			cut := s.Cut(h, p, 200000)
			view := append([]llm.Message{{Role: llm.RoleUser, Content: "summary"}}, h[cut:]...)
			if err := compaction.Paired(view); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("copy-reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = append([]llm.Message(nil), h...)
		}
	})
}
