package llm_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/services/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestNormalizeArguments(t *testing.T) {
	tests := []struct {
		name, raw, want string
		reason          string // prefix; "" = valid
	}{
		{"empty becomes object", "", "{}", ""},
		{"whitespace becomes object", "   \n", "{}", ""},
		{"null becomes object", "null", "{}", ""},
		{"object kept verbatim", `{"path":"a.txt"}`, `{"path":"a.txt"}`, ""},
		{"truncated flagged", `{"x":`, `{"x":`, "truncated JSON"},
		{"garbage flagged", `{"pa{"path":"a.`, `{"pa{"path":"a.`, "invalid JSON"},
		{"two objects flagged", `{}{}`, `{}{}`, "invalid JSON: unexpected data"},
		{"array flagged", `[1]`, `[1]`, "arguments must be a JSON object, got array"},
		{"string flagged", `"x"`, `"x"`, "arguments must be a JSON object, got string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason := llm.NormalizeArguments(tt.raw)
			if got != tt.want {
				t.Errorf("args = %q, want %q", got, tt.want)
			}
			if tt.reason == "" && reason != "" || tt.reason != "" && !hasPrefix(reason, tt.reason) {
				t.Errorf("reason = %q, want prefix %q", reason, tt.reason)
			}
		})
	}
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

func seq(chunks ...llm.Chunk) llm.Stream {
	return func(yield func(llm.Chunk) bool) {
		for _, c := range chunks {
			if !yield(c) {
				return
			}
		}
	}
}

func TestCollectFoldsChunksInIndexOrder(t *testing.T) {
	u := llm.Usage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12}
	r := llm.Collect(seq(
		llm.Chunk{Kind: llm.ChunkReasoning, Text: "Need the file "},
		llm.Chunk{Kind: llm.ChunkToolCallStart, Index: 0, ToolCallID: "call_a", ToolName: "read_file"},
		llm.Chunk{Kind: llm.ChunkToolCallStart, Index: 1, ToolCallID: "call_b", ToolName: "read_file"},
		llm.Chunk{Kind: llm.ChunkToolCallDelta, Index: 1, Text: `{"path":`},
		llm.Chunk{Kind: llm.ChunkReasoning, Text: "first."},
		llm.Chunk{Kind: llm.ChunkToolCallDelta, Index: 0, Text: `{"path":"a.txt"}`},
		llm.Chunk{Kind: llm.ChunkToolCallDelta, Index: 1, Text: `"b.txt"}`},
		llm.Chunk{Kind: llm.ChunkToolCallStart, Index: 2, ToolCallID: "call_c", ToolName: "current_time"},
		llm.Chunk{Kind: llm.ChunkText, Text: "ok"},
		llm.Chunk{Kind: llm.ChunkToolCallEnd, Index: 0},
		llm.Chunk{Kind: llm.ChunkToolCallEnd, Index: 1},
		llm.Chunk{Kind: llm.ChunkToolCallEnd, Index: 2},
		llm.Chunk{Kind: llm.ChunkUsage, Usage: &u},
		llm.Chunk{Kind: llm.ChunkFinish, Finish: llm.FinishToolCalls},
		llm.Chunk{Kind: llm.ChunkText, Text: "ignored after finish"},
	))
	want := llm.Response{
		Message: llm.Message{Role: llm.RoleAssistant, Content: "ok", Reasoning: "Need the file first.", ToolCalls: []llm.ToolCall{
			{ID: "call_a", Name: "read_file", Arguments: `{"path":"a.txt"}`},
			{ID: "call_b", Name: "read_file", Arguments: `{"path":"b.txt"}`},
			{ID: "call_c", Name: "current_time", Arguments: `{}`},
		}},
		Finish: llm.FinishToolCalls, Usage: u, UsageReported: true,
	}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("got  %+v\nwant %+v", r, want)
	}
}

func TestCollectWithoutUsageIsNotReported(t *testing.T) {
	r := llm.Collect(seq(llm.Chunk{Kind: llm.ChunkText, Text: "hi"}, llm.Chunk{Kind: llm.ChunkFinish, Finish: llm.FinishStop}))
	if r.UsageReported || r.Usage != (llm.Usage{}) {
		t.Fatalf("usage = %+v reported=%v, want unreported", r.Usage, r.UsageReported)
	}
}

func TestCollectWithoutFinishIsAborted(t *testing.T) {
	r := llm.Collect(seq(llm.Chunk{Kind: llm.ChunkText, Text: "hi"}))
	if r.Finish != llm.FinishAborted || r.Err == nil || r.Err.Code != llm.CodeAborted {
		t.Fatalf("finish = %q err = %v, want aborted", r.Finish, r.Err)
	}
}

// B23 (usage part): DeepSeek's prompt_tokens already includes cache hits.
func TestUsageB23DeepSeekCacheFigures(t *testing.T) {
	u := llm.Usage{PromptTokens: 98716, CompletionTokens: 78, TotalTokens: 98794,
		CacheHitTokens: 98432, CacheMissTokens: 284, ReasoningTokens: 40}
	if got := u.ContextTokens(); got != 98716 {
		t.Errorf("context = %d, want 98716 (not 197148)", got)
	}
	if got := math.Round(u.CacheHitRatio()*1000) / 10; got != 99.7 {
		t.Errorf("cache-hit ratio = %v%%, want 99.7%%", got)
	}
	p := llm.Prices{CacheHit: 0.028, CacheMiss: 0.28, Output: 0.42}
	want := (98432*0.028 + 284*0.28 + 78*0.42) / 1e6 // reasoning is inside completion
	if got := p.Cost(u); math.Abs(got-want) > 1e-12 {
		t.Errorf("cost = %v, want %v", got, want)
	}
	total := u.Add(u)
	if total.PromptTokens != 2*98716 || total.CacheHitTokens != 2*98432 || total.CompletionTokens != 156 {
		t.Errorf("session total = %+v, want the sum of per-request figures", total)
	}
	if !p.Known() || (llm.Prices{}).Known() {
		t.Error("Known: want true for set prices, false for zero")
	}
}

func TestPricesCostWithoutCacheBreakdownPricesAllInputAsMisses(t *testing.T) {
	p := llm.Prices{CacheHit: 1, CacheMiss: 2, Output: 3}
	if got := p.Cost(llm.Usage{PromptTokens: 1e6, CompletionTokens: 1e6}); got != 5 {
		t.Fatalf("cost = %v, want 5", got)
	}
}

type fakeAdapter struct {
	name   string
	models []llm.Model
	got    []llm.Request
}

func (f *fakeAdapter) Provider() string    { return f.name }
func (f *fakeAdapter) Models() []llm.Model { return f.models }
func (f *fakeAdapter) Stream(_ context.Context, req llm.Request) llm.Stream {
	f.got = append(f.got, req)
	return seq(llm.Chunk{Kind: llm.ChunkFinish, Finish: llm.FinishStop})
}

func deepseekModels() []llm.Model {
	return []llm.Model{
		{Provider: "deepseek", Name: "deepseek-v4-flash", Default: true, ContextWindow: 1048576, MaxOutputTokens: 393216,
			Thinking: llm.ThinkingEnabled, Aliases: []llm.Alias{
				{Name: "deepseek-chat", Thinking: llm.ThinkingDisabled},
				{Name: "deepseek-reasoner", Thinking: llm.ThinkingEnabled}}},
		{Provider: "deepseek", Name: "deepseek-v4-pro", ContextWindow: 1048576, Thinking: llm.ThinkingEnabled},
	}
}

func TestServiceRegisterDuplicateAndUndo(t *testing.T) {
	s := llm.NewService()
	a := &fakeAdapter{name: "deepseek", models: deepseekModels()}
	undo, err := s.Register(a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Register(&fakeAdapter{name: "deepseek"}); !errors.Is(err, llm.ErrDuplicateProvider) {
		t.Fatalf("second register: err = %v, want ErrDuplicateProvider", err)
	}
	if got := s.Providers(); !reflect.DeepEqual(got, []string{"deepseek"}) {
		t.Fatalf("providers = %v", got)
	}
	undo()
	undo() // idempotent
	if got := s.Providers(); len(got) != 0 {
		t.Fatalf("providers after undo = %v", got)
	}
	if _, err := s.Register(&fakeAdapter{name: "deepseek"}); err != nil {
		t.Fatalf("register after undo: %v", err)
	}
}

func TestServiceResolveRoutesAndAliases(t *testing.T) {
	s := llm.NewService()
	if _, err := s.Register(&fakeAdapter{name: "deepseek", models: deepseekModels()}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		route, name string
		thinking    llm.Thinking
		err         bool
	}{
		{"deepseek/deepseek-v4-pro", "deepseek-v4-pro", llm.ThinkingEnabled, false},
		{"deepseek", "deepseek-v4-flash", llm.ThinkingEnabled, false},
		{"", "deepseek-v4-flash", llm.ThinkingEnabled, false},
		{"deepseek/deepseek-chat", "deepseek-v4-flash", llm.ThinkingDisabled, false},
		{"deepseek/deepseek-reasoner", "deepseek-v4-flash", llm.ThinkingEnabled, false},
		{"deepseek/nope", "", "", true},
		{"openai/gpt", "", "", true},
	}
	for _, tt := range tests {
		m, err := s.Resolve(tt.route)
		if tt.err {
			if !errors.Is(err, llm.ErrNoAdapter) {
				t.Errorf("%q: err = %v, want ErrNoAdapter", tt.route, err)
			}
			continue
		}
		if err != nil || m.Name != tt.name || m.Thinking != tt.thinking {
			t.Errorf("%q: got %s thinking=%q err=%v, want %s thinking=%q", tt.route, m.Name, m.Thinking, err, tt.name, tt.thinking)
		}
	}
}

func TestServiceStreamAppliesAliasThinkingAndReportsUnknownRoutes(t *testing.T) {
	s := llm.NewService()
	a := &fakeAdapter{name: "deepseek", models: deepseekModels()}
	if _, err := s.Register(a); err != nil {
		t.Fatal(err)
	}
	r := llm.Collect(s.Stream(t.Context(), llm.Request{Model: "deepseek/deepseek-chat"}))
	if r.Finish != llm.FinishStop {
		t.Fatalf("finish = %q", r.Finish)
	}
	if got := a.got[0]; got.Model != "deepseek-v4-flash" || got.Options.Thinking != llm.ThinkingDisabled {
		t.Fatalf("adapter got model=%q thinking=%q", got.Model, got.Options.Thinking)
	}
	// An explicit per-run option wins over the alias.
	llm.Collect(s.Stream(t.Context(), llm.Request{Model: "deepseek/deepseek-chat", Options: llm.Options{Thinking: llm.ThinkingEnabled}}))
	if got := a.got[1].Options.Thinking; got != llm.ThinkingEnabled {
		t.Fatalf("override thinking = %q", got)
	}
	r = llm.Collect(s.Stream(t.Context(), llm.Request{Model: "nope/x"}))
	if r.Finish != llm.FinishError || r.Err.Code != llm.CodeNoAdapter {
		t.Fatalf("unknown route: finish=%q err=%v", r.Finish, r.Err)
	}
}

func TestEffectiveOptions(t *testing.T) {
	flash := deepseekModels()[0]
	flash.ReasoningEffort = "high"
	local := llm.Model{Provider: "local", Name: "qwen3", MaxOutputTokens: 100}
	tests := []struct {
		name string
		m    llm.Model
		in   llm.Options
		want llm.Options
		code llm.Code
	}{
		{"model default thinking and effort", flash, llm.Options{}, llm.Options{Thinking: llm.ThinkingEnabled, ReasoningEffort: "high"}, ""},
		{"thinking off drops effort", flash, llm.Options{Thinking: llm.ThinkingDisabled}, llm.Options{Thinking: llm.ThinkingDisabled}, ""},
		{"effort override", flash, llm.Options{ReasoningEffort: "max"}, llm.Options{Thinking: llm.ThinkingEnabled, ReasoningEffort: "max"}, ""},
		{"no switch, nothing asked", local, llm.Options{MaxOutputTokens: 100}, llm.Options{MaxOutputTokens: 100}, ""},
		{"no switch, thinking asked", local, llm.Options{Thinking: llm.ThinkingEnabled}, llm.Options{}, llm.CodeUnsupportedOption},
		{"no switch, effort asked", local, llm.Options{ReasoningEffort: "high"}, llm.Options{}, llm.CodeUnsupportedOption},
		{"over the output limit", local, llm.Options{MaxOutputTokens: 101}, llm.Options{}, llm.CodeUnsupportedOption},
		{"bad thinking value", flash, llm.Options{Thinking: "maybe"}, llm.Options{}, llm.CodeUnsupportedOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := llm.EffectiveOptions(tt.m, tt.in)
			if tt.code != "" {
				if err == nil || err.Code != tt.code {
					t.Fatalf("err = %v, want code %s", err, tt.code)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v err %v, want %+v", got, err, tt.want)
			}
		})
	}
}

func TestErrorRetryableAndFormat(t *testing.T) {
	for code, want := range map[llm.Code]bool{
		llm.CodeRateLimit: true, llm.CodeServer: true, llm.CodeNetwork: true,
		llm.CodeAuth: false, llm.CodeProtocol: false, llm.CodeContextLength: false, llm.CodeUnsupportedOption: false,
	} {
		if got := (&llm.Error{Code: code}).Retryable(); got != want {
			t.Errorf("%s retryable = %v, want %v", code, got, want)
		}
	}
	e := &llm.Error{Code: llm.CodeAuth, Status: 401, Message: "bad key"}
	if got := e.Error(); got != "AUTH (HTTP 401): bad key" {
		t.Errorf("Error() = %q", got)
	}
	if got, ok := llm.AsError(errors.Join(errors.New("x"), e)); !ok || got != e {
		t.Errorf("AsError did not find the *Error")
	}
}

// A call that starts after another call's arguments began must not disturb
// them (the builders are not copied when the call list grows).
func TestCollectCallStartingAfterArgumentsOfAnother(t *testing.T) {
	r := llm.Collect(seq(
		llm.Chunk{Kind: llm.ChunkToolCallStart, Index: 0, ToolCallID: "a", ToolName: "read"},
		llm.Chunk{Kind: llm.ChunkToolCallDelta, Index: 0, Text: `{"path":`},
		llm.Chunk{Kind: llm.ChunkToolCallStart, Index: 1, ToolCallID: "b", ToolName: "glob"},
		llm.Chunk{Kind: llm.ChunkToolCallDelta, Index: 0, Text: `"a"}`},
		llm.Chunk{Kind: llm.ChunkToolCallStart, Index: 2, ToolCallID: "c", ToolName: "grep"},
		llm.Chunk{Kind: llm.ChunkToolCallDelta, Index: 1, Text: `{"pattern":"*"}`},
		llm.Chunk{Kind: llm.ChunkFinish, Finish: llm.FinishToolCalls},
	))
	got := []string{r.Message.ToolCalls[0].Arguments, r.Message.ToolCalls[1].Arguments, r.Message.ToolCalls[2].Arguments}
	if want := []string{`{"path":"a"}`, `{"pattern":"*"}`, `{}`}; !reflect.DeepEqual(got, want) {
		t.Fatalf("args = %q, want %q", got, want)
	}
}

func TestAssemblerMaxArgumentBytesDiscardsOversizedArguments(t *testing.T) {
	a := llm.Assembler{MaxArgumentBytes: 10}
	a.Add(llm.Chunk{Kind: llm.ChunkToolCallStart, Index: 0, ToolCallID: "a", ToolName: "big"})
	a.Add(llm.Chunk{Kind: llm.ChunkToolCallStart, Index: 1, ToolCallID: "b", ToolName: "small"})
	a.Add(llm.Chunk{Kind: llm.ChunkToolCallDelta, Index: 0, Text: `{"x":"`})
	a.Add(llm.Chunk{Kind: llm.ChunkToolCallDelta, Index: 1, Text: `{"y":1}`})
	a.Add(llm.Chunk{Kind: llm.ChunkToolCallDelta, Index: 0, Text: `0123456789"}`})
	a.Add(llm.Chunk{Kind: llm.ChunkFinish, Finish: llm.FinishToolCalls})
	r := a.Response()
	big, small := r.Message.ToolCalls[0], r.Message.ToolCalls[1]
	if big.Arguments != "{}" || big.ArgumentsError != llm.ArgumentsTooLarge(18, 10) {
		t.Fatalf("oversized call = %+v", big)
	}
	if small.Arguments != `{"y":1}` || small.ArgumentsError != "" {
		t.Fatalf("call under the limit = %+v", small)
	}
}
