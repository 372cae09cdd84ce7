package llmopenai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// referenceBody is the body openai-go sends for the request (its params
// encoder plus WithJSONSet("stream", true)), captured on the wire.
func referenceBody(t testing.TB, srv *llmtest.Server, model string, req llm.Request, opts llm.Options) []byte {
	t.Helper()
	p, err := buildParams(model, req, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := openai.NewClient(option.WithBaseURL(srv.URL+"/"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	srv.Enqueue(llmtest.Reply("ok"))
	var res *http.Response
	if err := c.Post(context.Background(), "chat/completions", p, &res, option.WithJSONSet("stream", true)); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	reqs := srv.Requests()
	return reqs[len(reqs)-1].Body
}

// randomText mixes ASCII, HTML characters, control characters, quotes,
// backslashes, multi-byte runes, U+2028/9 and invalid UTF-8.
func randomText(r *rand.Rand) string {
	pieces := []string{"a", "Z", " ", "<", ">", "&", "\"", "\\", "/", "\n", "\r", "\t", "\b", "\f", "\x00", "\x01", "\x1f", "\x7f",
		"é", "ß", "中", "😀", "\u2028", "\u2029", "\xff", "\xc3", "\xe2\x80", "\ufffd", "{\"k\":1}", "%s", "\u00a0"}
	var sb strings.Builder
	for range r.IntN(40) {
		sb.WriteString(pieces[r.IntN(len(pieces))])
	}
	return sb.String()
}

// TestRequestBodyMatchesOpenAIGo: the hand-written request encoder sends
// exactly the bytes openai-go's encoder sent for the same request, for
// every message shape and option, and for arbitrary text.
func TestRequestBodyMatchesOpenAIGo(t *testing.T) {
	srv := llmtest.New(t, nil)
	calls := []llm.ToolCall{{ID: "c1", Name: "read", Arguments: `{"path":"a.go"}`}, {ID: "c2", Name: "grep"}}
	schema := []byte(" {\n  \"type\": \"object\",\n  \"properties\": {\"q\": {\"type\": \"string\", \"description\": \"a <b> & \u2028\"}}\n} ")
	cases := []struct {
		name string
		req  llm.Request
		opts llm.Options
	}{
		{"empty", llm.Request{}, llm.Options{}},
		{"user", userRequest("hello"), llm.Options{}},
		{"all options", userRequest("x"), llm.Options{Thinking: llm.ThinkingEnabled, ReasoningEffort: "max", MaxOutputTokens: 393216}},
		{"thinking disabled", userRequest("x"), llm.Options{Thinking: llm.ThinkingDisabled}},
		{"history", llm.Request{Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "sys"},
			{Role: llm.RoleUser, Content: "u"},
			{Role: llm.RoleAssistant, Reasoning: "think <a> & b", ToolCalls: calls},
			{Role: llm.RoleTool, ToolCallID: "c1", Name: "read", Content: "file"},
			{Role: llm.RoleTool, ToolCallID: "c2", Content: ""},
			{Role: llm.RoleAssistant, Content: "text and calls", Reasoning: "é <&>", ToolCalls: calls[:1]},
			{Role: llm.RoleTool, ToolCallID: "c1", Content: "again"},
			{Role: llm.RoleAssistant, Content: "done", Reasoning: "dropped"},
			{Role: llm.RoleAssistant},
			{Role: llm.RoleAssistant, ToolCalls: calls[1:]},
			{Role: llm.RoleUser, Content: ""},
		}}, llm.Options{}},
		{"tools", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "u"}}, Tools: []llm.ToolSchema{
			{Name: "a", Description: "desc <&>", Parameters: schema},
			{Name: "b"},
			{Name: "c", Parameters: []byte(`{}`)},
		}}, llm.Options{MaxOutputTokens: 7}},
	}
	for _, thinking := range []llm.Thinking{llm.ThinkingDefault, llm.ThinkingEnabled} {
		c := cases[4]
		c.name += " thinking=" + string(thinking)
		c.opts.Thinking = thinking
		cases = append(cases, c)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		var req llm.Request
		for range r.IntN(30) {
			m := llm.Message{Content: randomText(r)}
			switch r.IntN(4) {
			case 0:
				m.Role = llm.RoleSystem
			case 1:
				m.Role = llm.RoleUser
			case 2:
				m.Role, m.ToolCallID = llm.RoleTool, randomText(r)+"x"
			case 3:
				m.Role = llm.RoleAssistant
				if r.IntN(2) == 0 {
					m.Content = ""
				}
				m.Reasoning = randomText(r)
				for range r.IntN(3) {
					m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: randomText(r), Name: randomText(r), Arguments: randomText(r)})
				}
			}
			req.Messages = append(req.Messages, m)
		}
		for range r.IntN(3) {
			req.Tools = append(req.Tools, llm.ToolSchema{Name: randomText(r), Description: randomText(r),
				Parameters: fmt.Appendf(nil, `{"description": %s, "type":"object"}`, must(json.Marshal(randomText(r))))})
		}
		opts := llm.Options{Thinking: []llm.Thinking{"", llm.ThinkingEnabled, llm.ThinkingDisabled}[r.IntN(3)]}
		if r.IntN(2) == 0 {
			opts.ReasoningEffort, opts.MaxOutputTokens = randomText(r), r.Int64N(1<<40)
		}
		cases = append(cases, struct {
			name string
			req  llm.Request
			opts llm.Options
		}{fmt.Sprint("random ", i), req, opts})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := referenceBody(t, srv, "deepseek-v4-flash", c.req, c.opts)
			got, err := encodeRequest("deepseek-v4-flash", c.req, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				t.Fatalf("body differs at byte %d:\n got  …%q\n want …%q", i, got[max(0, i-40):min(len(got), i+80)], want[max(0, i-40):min(len(want), i+80)])
			}
		})
	}
	// And the adapter sends exactly that body.
	a, err := New(testConfig(srv.URL), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	req := cases[len(cases)-1].req
	req.Model = "deepseek-v4-flash"
	want := referenceBody(t, srv, "deepseek-v4-flash", req, llm.Options{Thinking: llm.ThinkingEnabled})
	srv.Enqueue(llmtest.Reply("ok"))
	if r := llm.Collect(a.Stream(t.Context(), req)); r.Err != nil {
		t.Fatal(r.Err)
	}
	reqs := srv.Requests()
	if got := reqs[len(reqs)-1]; !bytes.Equal(got.Body, want) {
		t.Fatalf("adapter body:\n%s\nwant\n%s", got.Body, want)
	}
}

// Bad input still names the message or tool.
func TestRequestBodyErrors(t *testing.T) {
	for _, c := range []struct {
		req  llm.Request
		want string
	}{
		{llm.Request{Messages: []llm.Message{{Role: llm.RoleUser}, {Role: "robot"}}}, `messages[1]: role "robot"`},
		{llm.Request{Messages: []llm.Message{{Role: llm.RoleTool}}}, "messages[0]: tool message: toolCallId is required"},
		{llm.Request{Tools: []llm.ToolSchema{{Name: "x", Parameters: []byte(`[1]`)}}}, "tools[0] (x).parameters: not a JSON object"},
		{llm.Request{Tools: []llm.ToolSchema{{Name: "x", Parameters: []byte(`{"a":`)}}}, "tools[0] (x).parameters: not a JSON object"},
	} {
		if _, err := encodeRequest("m", c.req, llm.Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.req, err, c.want)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
