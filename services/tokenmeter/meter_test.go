package tokenmeter

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

func TestPriceMessageOverheads(t *testing.T) {
	e := Bytes{}
	for _, tc := range []struct {
		name string
		msg  Message
		want int
	}{
		{"user abcd", Message{Role: RoleUser, Content: "abcd"}, 9},
		{"empty assistant", Message{Role: RoleAssistant}, 4},
		{"assistant with reasoning and a tool call", Message{
			Role: RoleAssistant, Content: "ok", Reasoning: "think",
			ToolCalls: []ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"ls"}`}},
		}, 4 + (1 + 4) + (2 + 4) + (1 + 4 + 4)},
		{"tool result", Message{Role: RoleTool, ToolCallID: "c1", Content: "12345678"}, 4 + (2 + 4) + 4},
	} {
		if got := PriceMessage(e, tc.msg); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	if PriceSystem(e, "") != 0 || PriceSystem(e, "abcdefgh") != 6 {
		t.Error("system price")
	}
	tools := []ToolSchema{{Name: "bash", Description: "run", Parameters: json.RawMessage(`{"type":"object"}`)}}
	b, _ := json.Marshal(tools)
	if PriceTools(e, nil) != 0 || PriceTools(e, tools) != (len(b)+3)/4+4 {
		t.Errorf("tools price %d", PriceTools(e, tools))
	}
	// The tools are priced as the JSON the model reads (JSON.stringify in
	// dsh): "<", ">" and "&" are not escaped to \u003c and friends.
	html := []ToolSchema{{Name: "t", Description: "a<b && c>d", Parameters: json.RawMessage(`{"type":"object"}`)}}
	plain := `[{"name":"t","description":"a<b && c>d","parameters":{"type":"object"}}]`
	if got, want := PriceTools(e, html), (len(plain)+3)/4+4; got != want {
		t.Errorf("tools with <&>: %d, want %d", got, want)
	}
	m := NewMeter(e, nil)
	if m.Count("abcde") != 2 || m.CountMessages([]Message{{Role: RoleUser, Content: "abcd"}, {Role: RoleUser, Content: "abcd"}}) != 18 ||
		m.CountTools(tools) != PriceTools(e, tools) || m.CountSystem("abcd") != 5 {
		t.Error("meter counts differ from the price functions")
	}
}

func intp(n int) *int { return &n }

// b23Usage is the DeepSeek usage of bug case B23.
const b23Usage = `{"prompt_tokens":98716,"completion_tokens":78,"total_tokens":98794,"prompt_cache_hit_tokens":98432,"prompt_cache_miss_tokens":284,"completion_tokens_details":{"reasoning_tokens":40}}`

// Example prices per million tokens (cache hit, miss, output).
var deepseekPrices = &Prices{InputCacheHit: 0.07, InputCacheMiss: 0.27, Output: 1.10}

// B23: DeepSeek's prompt_tokens already includes the cache hits.
func TestB23CacheHitsAreNotCountedTwice(t *testing.T) {
	var u Usage
	if err := json.Unmarshal([]byte(b23Usage), &u); err != nil {
		t.Fatal(err)
	}
	m := NewMeter(Bytes{}, map[string]Model{"deepseek-chat": {ContextWindow: 1_000_000, Prices: deepseekPrices}})
	s := m.Session("s1")
	req := Request{Model: "deepseek-chat", System: "sys", Messages: []Message{{Role: RoleUser, Content: "hi"}}}
	rec := s.Record(Exchange{Request: req, Usage: &u})

	if rec.PromptTokens != 98716 {
		t.Errorf("context used = %d, want 98716 (not 197148)", rec.PromptTokens)
	}
	if rec.CacheHitTokens != 98432 || rec.CacheMissTokens != 284 || rec.CompletionTokens != 78 || rec.ReasoningTokens != 40 {
		t.Errorf("figures = %+v", rec.Figures)
	}
	if r := rec.CacheHitRatio(); math.Abs(r-98432.0/98716.0) > 1e-12 || math.Round(r*1000)/10 != 99.7 {
		t.Errorf("cache-hit ratio = %v, want 99.7%%", r)
	}
	// hits × hit price + misses × miss price + completion × output price;
	// the 40 reasoning tokens are inside the 78 and not added again.
	wantCost := (98432*0.07 + 284*0.27 + 78*1.10) / 1e6
	if !rec.Priced || math.Abs(rec.Cost-wantCost) > 1e-15 {
		t.Errorf("cost = %v, want %v", rec.Cost, wantCost)
	}
	p := s.Project(req)
	if p.Tokens != 98716 || p.Source != SourceUsage {
		t.Errorf("projection of the same request = %d (%s), want 98716 from usage", p.Tokens, p.Source)
	}
	if math.Abs(p.PercentUsed-9.8716) > 1e-9 || p.ContextWindow != 1_000_000 {
		t.Errorf("percent used = %v of %d", p.PercentUsed, p.ContextWindow)
	}

	// Session totals are the sum of the per-request figures.
	req2 := req
	req2.Messages = append(append([]Message(nil), req.Messages...), Message{Role: RoleAssistant, Content: "hello"}, Message{Role: RoleUser, Content: "more"})
	u2 := Usage{PromptTokens: 98800, CompletionTokens: 10, PromptCacheHitTokens: intp(98700), PromptCacheMissTokens: intp(100)}
	rec2 := s.Record(Exchange{Request: req2, Usage: &u2})
	st := s.Stats()
	if st.Requests != 2 || st.EstimatedRequests != 0 {
		t.Errorf("requests = %d/%d", st.Requests, st.EstimatedRequests)
	}
	want := Figures{PromptTokens: 98716 + 98800, CacheHitTokens: 98432 + 98700, CacheMissTokens: 284 + 100,
		CompletionTokens: 88, ReasoningTokens: 40, Cost: rec.Cost + rec2.Cost, Priced: true}
	if st.Totals != want {
		t.Errorf("totals = %+v, want %+v", st.Totals, want)
	}
	if st.Last == nil || *st.Last != rec2 {
		t.Errorf("last = %+v", st.Last)
	}
}

func TestOpenAICachedTokensWin(t *testing.T) {
	var u Usage
	json.Unmarshal([]byte(`{"prompt_tokens":1000,"completion_tokens":5,"prompt_cache_hit_tokens":10,"prompt_tokens_details":{"cached_tokens":600}}`), &u)
	if u.CacheHitTokens() != 600 || u.CacheMissTokens() != 400 {
		t.Errorf("hits %d misses %d", u.CacheHitTokens(), u.CacheMissTokens())
	}
	json.Unmarshal([]byte(`{"prompt_tokens":10,"prompt_cache_hit_tokens":50}`), &u)
	u.PromptTokensDetails = nil
	if u.CacheHitTokens() != 10 || u.CacheMissTokens() != 0 {
		t.Errorf("clamped hits %d misses %d", u.CacheHitTokens(), u.CacheMissTokens())
	}
}

func TestRequestWithoutUsageIsEstimatedNotZero(t *testing.T) {
	m := NewMeter(Bytes{}, map[string]Model{"m": {Prices: deepseekPrices}})
	s := m.Session("s")
	req := Request{Model: "m", System: "abcdefgh", Messages: []Message{{Role: RoleUser, Content: "abcd"}}}
	rec := s.Record(Exchange{Request: req, Reply: Message{Role: RoleAssistant, Content: "12345678"}})
	// prompt: system 2+4, message 9 = 15; completion: 2+4 = 6.
	if !rec.Estimated || rec.PromptTokens != 15 || rec.CompletionTokens != 6 || rec.CacheMissTokens != 15 {
		t.Errorf("record = %+v", rec)
	}
	st := s.Stats()
	if st.EstimatedRequests != 1 || st.Totals.PromptTokens != 15 {
		t.Errorf("stats = %+v", st)
	}
	neg := Usage{PromptTokens: -1}
	if rec := s.Record(Exchange{Request: req, Usage: &neg}); !rec.Estimated {
		t.Error("negative usage was trusted")
	}
}

func TestProjectionAnchorsOnUsageAndAddsAppendedMessages(t *testing.T) {
	m := NewMeter(Bytes{}, nil)
	s := m.Session("s")
	tools := []ToolSchema{{Name: "bash", Parameters: json.RawMessage(`{}`)}}
	req := Request{Model: "m", System: "system prompt", Tools: tools, Messages: []Message{{Role: RoleUser, Content: "list files"}}}
	if p := s.Project(req); p.Source != SourceEstimated || p.Tokens != m.CountRequest(req) {
		t.Fatalf("first projection = %+v, want the full estimate %d", p, m.CountRequest(req))
	}
	s.Record(Exchange{Request: req, Usage: &Usage{PromptTokens: 1000, CompletionTokens: 20}})

	appended := []Message{
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"ls"}`}}},
		{Role: RoleTool, ToolCallID: "c1", Content: strings.Repeat("file\n", 40)},
	}
	next := req
	next.Messages = append(append([]Message(nil), req.Messages...), appended...)
	p := s.Project(next)
	if want := 1000 + m.CountMessages(appended); p.Tokens != want || p.Source != SourceUsage {
		t.Errorf("projection = %d (%s), want %d from usage", p.Tokens, p.Source, want)
	}

	// A changed envelope (system prompt, tools, model) invalidates the anchor.
	for name, mutate := range map[string]func(*Request){
		"system": func(r *Request) { r.System = "other" },
		"tools":  func(r *Request) { r.Tools = nil },
		"model":  func(r *Request) { r.Model = "m2" },
	} {
		r := next
		mutate(&r)
		if p := s.Project(r); p.Source != SourceEstimated || p.Tokens != m.CountRequest(r) {
			t.Errorf("%s changed: %+v, want the full estimate %d", name, p, m.CountRequest(r))
		}
	}
	// Rewritten history (compaction) falls back to the full estimate too.
	compacted := next
	compacted.Messages = []Message{{Role: RoleUser, Content: "summary"}}
	if p := s.Project(compacted); p.Source != SourceEstimated || p.Tokens != m.CountRequest(compacted) {
		t.Errorf("compacted: %+v", p)
	}
	// Only the latest request with usage anchors.
	s.Record(Exchange{Request: compacted, Usage: &Usage{PromptTokens: 50}})
	if p := s.Project(next); p.Source != SourceEstimated {
		t.Errorf("older anchor reused: %+v", p)
	}
}

// C4/C7 "usage ≥ heuristic anchor": a provider prompt_tokens below the
// estimator's price of the same request is not trusted as a baseline; the
// estimate anchors instead and projections say so. Equal counts as enough.
func TestUsageBelowTheEstimateAnchorsTheEstimate(t *testing.T) {
	m := NewMeter(Bytes{}, nil)
	req := Request{Model: "m", System: strings.Repeat("s", 400), Messages: []Message{{Role: RoleUser, Content: strings.Repeat("u", 400)}}}
	full := m.CountRequest(req)
	next := req
	next.Messages = append(append([]Message(nil), req.Messages...), Message{Role: RoleAssistant, Content: "done"})
	appended := m.CountMessages(next.Messages[1:])
	for _, c := range []struct {
		name   string
		prompt int
		want   int
		source Source
	}{
		{"above", full + 500, full + 500 + appended, SourceUsage},
		{"equal", full, full + appended, SourceUsage},
		{"below", full - 1, full + appended, SourceEstimated},
		{"tiny", 3, full + appended, SourceEstimated},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := m.Session(c.name)
			rec := s.Record(Exchange{Request: req, Usage: &Usage{PromptTokens: c.prompt, CompletionTokens: 1}})
			if rec.Estimated || rec.PromptTokens != c.prompt {
				t.Fatalf("record = %+v, want the provider's figures", rec)
			}
			if p := s.Project(next); p.Tokens != c.want || p.Source != c.source {
				t.Fatalf("projection = %d (%s), want %d (%s)", p.Tokens, p.Source, c.want, c.source)
			}
		})
	}
}

type countingEstimator struct{ calls atomic.Int64 }

func (c *countingEstimator) Name() string { return "counting" }
func (c *countingEstimator) Count(text string) int {
	c.calls.Add(1)
	return Bytes{}.Count(text)
}

func TestHistoryIsNeverRecounted(t *testing.T) {
	est := &countingEstimator{}
	s := NewMeter(est, nil).Session("s")
	var msgs []Message
	for i := range 50 {
		msgs = append(msgs, Message{Role: RoleUser, Content: strings.Repeat("x", i+1)})
		s.Project(Request{Model: "m", Messages: msgs})
	}
	// Each message is counted once when it first appears, never again.
	if got := est.calls.Load(); got != 50 {
		t.Errorf("Count called %d times, want 50", got)
	}
}

func TestContextWindowOverride(t *testing.T) {
	m := NewMeter(Bytes{}, map[string]Model{"m": {ContextWindow: 100}})
	s := m.Session("s")
	req := Request{Model: "m", Messages: []Message{{Role: RoleUser, Content: strings.Repeat("a", 4*42)}}}
	if p := s.Project(req); p.ContextWindow != 100 || p.Tokens != 50 || p.PercentUsed != 50 {
		t.Errorf("projection = %+v", p)
	}
	s.SetContextWindow(200)
	if p := s.Project(req); p.ContextWindow != 200 || p.PercentUsed != 25 {
		t.Errorf("override: %+v", p)
	}
	if p := m.Session("other").Project(Request{Model: "unknown"}); p.ContextWindow != 0 || p.PercentUsed != 0 || p.Tokens != 0 {
		t.Errorf("unknown model: %+v", p)
	}
	if m.Session("s") != s {
		t.Error("Session is not stable")
	}
	m.DropSession("s")
	if m.Session("s") == s {
		t.Error("DropSession kept the session")
	}
}

// compactionRequest is a request right after compaction: a system prompt,
// three tool schemas, a summary and a few new messages.
func compactionRequest(t testing.TB) Request {
	var doc struct {
		Function struct {
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal([]byte(readTestdata(t, "data.json")), &doc); err != nil {
		t.Fatal(err)
	}
	tools := []ToolSchema{
		{Name: "search_files", Description: "Search the workspace for files whose contents match a regular expression.", Parameters: doc.Function.Parameters},
		{Name: "read", Description: "Read a file with optional offset and limit, in lines.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer","minimum":0},"limit":{"type":"integer","minimum":1}},"required":["path"]}`)},
		{Name: "bash", Description: "Run a shell command in the workspace and return its output.", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"integer"}},"required":["command"]}`)},
	}
	return Request{
		Model:  "deepseek-chat",
		System: readTestdata(t, "english.txt"),
		Tools:  tools,
		Messages: []Message{
			{Role: RoleUser, Content: "Summary of the conversation so far:\n" + readTestdata(t, "chinese.txt")},
			{Role: RoleAssistant, Content: "I will continue with the queue.", ToolCalls: []ToolCall{{ID: "call_1", Name: "read", Arguments: `{"path":"queue/queue.go"}`}}},
			{Role: RoleTool, ToolCallID: "call_1", Content: readTestdata(t, "code.go.txt")},
			{Role: RoleUser, Content: "Add a Len method that reports how many jobs are waiting."},
		},
	}
}

// renderDeepSeek renders a request roughly as DeepSeek-V3's chat template
// does (special tokens, the tools as JSON in the system part), for measuring
// the real prompt_tokens of compactionRequest.
func renderDeepSeek(req Request) string {
	var b strings.Builder
	b.WriteString("<｜begin▁of▁sentence｜>")
	b.WriteString(req.System)
	if len(req.Tools) > 0 {
		b.WriteString("\n\n## Tools\n\nYou have access to the following tools:\n")
		for _, tl := range req.Tools {
			js, _ := json.Marshal(map[string]any{"type": "function", "function": tl})
			b.WriteString("\n" + string(js) + "\n")
		}
	}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			b.WriteString("<｜User｜>" + m.Content)
		case RoleAssistant:
			b.WriteString("<｜Assistant｜>" + m.Content)
			for _, c := range m.ToolCalls {
				b.WriteString("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>" + c.Name + "\n```json\n" + c.Arguments + "\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>")
			}
			b.WriteString("<｜end▁of▁sentence｜>")
		case RoleTool:
			b.WriteString("<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>" + m.Content + "<｜tool▁output▁end｜><｜tool▁outputs▁end｜>")
		}
	}
	b.WriteString("<｜Assistant｜>")
	return b.String()
}

// realCompactionPromptTokens is the DeepSeek-V3 token count of
// renderDeepSeek(compactionRequest), measured with the real tokenizer
// (TestDeepSeekTokenizer re-checks it when the tokenizer is available).
const realCompactionPromptTokens = 1214

// B23 (mark3labs/kit #80): after compaction the estimate must include the
// system prompt and the tool schemas, and land within ±10% of the next real
// prompt_tokens.
func TestEstimateAfterCompactionIncludesSystemAndTools(t *testing.T) {
	m := NewMeter(Heuristic{}, nil)
	s := m.Session("s")
	long := compactionRequest(t)
	long.Messages = append([]Message{{Role: RoleUser, Content: strings.Repeat("old history ", 20000)}}, long.Messages...)
	s.Record(Exchange{Request: long, Usage: &Usage{PromptTokens: 98716, CompletionTokens: 78}})

	req := compactionRequest(t)
	p := s.Project(req)
	if p.Source != SourceEstimated {
		t.Fatalf("source = %s, want estimated after compaction", p.Source)
	}
	if p.Breakdown.SystemTokens == 0 || p.Breakdown.ToolsTokens == 0 ||
		p.Tokens != p.Breakdown.SystemTokens+p.Breakdown.ToolsTokens+p.Breakdown.MessageTokens {
		t.Fatalf("estimate left out the envelope: %+v", p)
	}
	errPct := 100 * float64(p.Tokens-realCompactionPromptTokens) / realCompactionPromptTokens
	if math.Abs(errPct) > 10 {
		t.Errorf("estimate %d vs real %d (%+.1f%%), want within ±10%%", p.Tokens, realCompactionPromptTokens, errPct)
	}
}

func TestRealCompactionPromptTokens(t *testing.T) {
	path := os.Getenv("HARNESS_DEEPSEEK_TOKENIZER")
	if path == "" {
		t.Skip("HARNESS_DEEPSEEK_TOKENIZER not set")
	}
	tk, err := LoadTokenizerJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := tk.Count(renderDeepSeek(compactionRequest(t))); got != realCompactionPromptTokens {
		t.Errorf("real prompt tokens = %d, constant says %d", got, realCompactionPromptTokens)
	}
}

func TestFiguresJSONIncludesTheCacheHitRatio(t *testing.T) {
	rec := RequestRecord{Model: "m", Figures: Figures{PromptTokens: 100, CacheHitTokens: 75, CacheMissTokens: 25, CompletionTokens: 5}}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"m","estimated":false,"promptTokens":100,"cacheHitTokens":75,"cacheMissTokens":25,"completionTokens":5,"reasoningTokens":0,"cacheHitRatio":0.75}`
	if string(b) != want {
		t.Errorf("JSON = %s\nwant   %s", b, want)
	}
	st, _ := json.Marshal(Stats{Requests: 1, Totals: rec.Figures, Last: &rec})
	if !strings.Contains(string(st), `"totals":{"promptTokens":100,`) || strings.Count(string(st), `"cacheHitRatio":0.75`) != 2 {
		t.Errorf("Stats JSON = %s", st)
	}
}

// Reference C4: only the latest successful call anchors, and a call without
// usage gets an estimated anchor: the projection after it is an estimate,
// not the older provider figure.
func TestCallWithoutUsageReplacesTheAnchor(t *testing.T) {
	s := NewMeter(Bytes{}, nil).Session("s")
	h1 := []Message{{Role: RoleUser, Content: "abcd"}}
	s.Record(Exchange{Request: Request{Model: "m", Messages: h1}, Reply: Message{Role: RoleAssistant, Content: "ok"}, Usage: &Usage{PromptTokens: 500}})
	h2 := append(h1, Message{Role: RoleAssistant, Content: "ok"}, Message{Role: RoleUser, Content: "more"})
	if p := s.Project(Request{Model: "m", Messages: h2}); p.Source != SourceUsage {
		t.Fatalf("after a call with usage: %+v", p)
	}
	s.Record(Exchange{Request: Request{Model: "m", Messages: h2}, Reply: Message{Role: RoleAssistant, Content: "ok"}})
	h3 := append(h2, Message{Role: RoleAssistant, Content: "ok"}, Message{Role: RoleUser, Content: "again"})
	p := s.Project(Request{Model: "m", Messages: h3})
	if p.Source != SourceEstimated || p.Tokens != NewMeter(Bytes{}, nil).CountRequest(Request{Model: "m", Messages: h3}) {
		t.Errorf("after a call without usage: %+v, want the full estimate", p)
	}
}
