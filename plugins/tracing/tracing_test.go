package tracing_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/dshgo/harness/core"
	llmopenai "github.com/dshgo/harness/plugins/llm-openai"
	"github.com/dshgo/harness/plugins/permission"
	prompttools "github.com/dshgo/harness/plugins/prompt-tools"
	"github.com/dshgo/harness/plugins/tracing"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/telemetry"
	"github.com/dshgo/harness/services/tokenmeter"
	"github.com/dshgo/harness/services/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The prompt and the tools' arguments and results carry this marker: no
// span may record it (content is never recorded).
const secret = "s3cr3t-content"

type echoArgs struct {
	Text string `json:"text"`
}

// testTools: echo succeeds, boom fails with code BOOM, forbidden is
// denied by the permission row.
var testTools = core.Define("tracing-test-tools", func(c *core.Context, _ struct{}) error {
	echo := func(_ context.Context, _ *tools.Execution, a echoArgs) (string, error) { return a.Text, nil }
	boom := func(_ context.Context, _ *tools.Execution, a echoArgs) (string, error) {
		return "", tools.Errorf("BOOM", "it broke on %s", a.Text)
	}
	return tools.Register(c,
		tools.Define("echo", "echoes text", echo),
		tools.Define("boom", "always fails", boom),
		tools.Define("forbidden", "denied by policy", echo))
}, core.WithInject(tools.Key.Name()))

type harness struct {
	svc *agent.Service
	rec *tracetest.SpanRecorder
	srv *llmtest.Server
}

// setup boots an agent against the scripted model with the observer
// listening to its events through a span recorder. parent is the remote
// parent (TRACEPARENT) of top-level turns.
func setup(t *testing.T, turns []llmtest.Turn, parent context.Context) *harness { //nolint:revive // parent is optional (nil: Background), so it comes last
	t.Helper()
	h := &harness{srv: llmtest.New(t, turns), rec: tracetest.NewSpanRecorder()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(h.rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = root.Dispose(context.Background()) })
	rc := root.Context()
	for _, p := range []core.Plugin{systemprompt.Plugin, tools.Plugin, prompttools.Plugin, tokenmeter.Plugin, llm.Plugin, testTools} {
		rc.Plugin(p, nil)
	}
	retries := 0
	rc.Plugin(llmopenai.Plugin, llmopenai.Config{Provider: "test", BaseURL: h.srv.URL, APIKey: "sk-test", MaxRetries: &retries,
		Models: []llmopenai.ModelConfig{{Name: "m1", Default: true, Thinking: llm.ThinkingDisabled, ContextWindow: 1 << 20}}})
	rc.Plugin(permission.Plugin, permission.Config{Allow: []string{"echo", "boom"}, Deny: []string{"forbidden"}})
	rc.Plugin(sessions.JSONLPlugin, sessions.JSONLConfig{StateDir: t.TempDir()})
	obs := tracing.NewObserver(tp, tracing.ObserverOptions{Parent: parent,
		Attributes: []attribute.KeyValue{telemetry.AttrJobID.Int64(42), telemetry.AttrJobAttempt.Int(2)}})
	if err := core.On(rc, agent.Observed, obs.Handle); err != nil {
		t.Fatal(err)
	}
	fb := rc.Plugin(agent.Plugin, agent.Config{MaxSteps: 10})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fb.Await(ctx); err != nil {
		t.Fatalf("agent: %v (pending on %v)", err, fb.PendingOn())
	}
	h.svc, _ = core.Lookup(rc, agent.Key)
	return h
}

func (h *harness) run(t *testing.T, prompt string) (*agent.Result, string, error) {
	t.Helper()
	ss, err := h.svc.Open(context.Background(), agent.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close(context.Background())
	res, err := ss.Run(context.Background(), prompt)
	return res, ss.ID(), err
}

// spans returns the ended spans by name (several of a name in end order).
func (h *harness) spans() map[string][]sdktrace.ReadOnlySpan {
	out := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range h.rec.Ended() {
		out[s.Name()] = append(out[s.Name()], s)
	}
	return out
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// want checks that span s has each attribute with the value given (an
// int for INT64 attributes, a []string for string slices).
func want(t *testing.T, s sdktrace.ReadOnlySpan, kv map[string]any) {
	t.Helper()
	got := attrs(s)
	for k, v := range kv {
		a, ok := got[attribute.Key(k)]
		if !ok {
			t.Errorf("span %q: no attribute %s (has %v)", s.Name(), k, s.Attributes())
			continue
		}
		var same bool
		switch v := v.(type) {
		case int:
			same = a.Type() == attribute.INT64 && a.AsInt64() == int64(v)
		case string:
			same = a.Type() == attribute.STRING && a.AsString() == v
		case bool:
			same = a.Type() == attribute.BOOL && a.AsBool() == v
		case []string:
			same = a.Type() == attribute.STRINGSLICE && strings.Join(a.AsStringSlice(), ",") == strings.Join(v, ",")
		}
		if !same {
			t.Errorf("span %q: %s = %s, want %v", s.Name(), k, a.String(), v)
		}
	}
}

func parentOf(s sdktrace.ReadOnlySpan) trace.SpanID { return s.Parent().SpanID() }

// A run with three tool calls (one succeeds, one fails, one is denied)
// and an answer makes the tree invoke_agent → chat → execute_tool ×3,
// chat, under the TRACEPARENT context, with the GenAI attributes, the job
// attributes, error statuses on the failed and the denied call, and no
// content anywhere.
func TestRunSpanTree(t *testing.T) {
	remote := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled, Remote: true})
	parent := trace.ContextWithRemoteSpanContext(context.Background(), remote)
	u := llmtest.Usage{PromptTokens: 5000, CompletionTokens: 20, TotalTokens: 5020}
	h := setup(t, []llmtest.Turn{
		llmtest.Stream(
			llmtest.ToolCallStart(0, "c1", "echo", `{"text":"`+secret+`"}`),
			llmtest.ToolCallStart(1, "c2", "boom", `{"text":"`+secret+`"}`),
			llmtest.ToolCallStart(2, "c3", "forbidden", `{"text":"`+secret+`"}`),
			llmtest.FinishWithUsage("tool_calls", u)),
		llmtest.Stream(llmtest.TextDelta("done "+secret), llmtest.FinishWithUsage("stop", llmtest.Usage{PromptTokens: 6000, CompletionTokens: 7, TotalTokens: 6007, PromptCacheHitTokens: 5000, PromptCacheMissTokens: 1000})),
	}, parent)
	res, sid, err := h.run(t, "please "+secret)
	if err != nil || res.Steps != 2 {
		t.Fatalf("run: %+v %v", res, err)
	}
	sp := h.spans()
	if len(sp["invoke_agent harness"]) != 1 || len(sp["chat m1"]) != 2 || len(h.rec.Ended()) != 6 {
		t.Fatalf("spans: %v", names(h.rec.Ended()))
	}
	inv := sp["invoke_agent harness"][0]
	if inv.SpanContext().TraceID() != remote.TraceID() || parentOf(inv) != remote.SpanID() {
		t.Errorf("invoke_agent: trace %s parent %s, want the TRACEPARENT's %s %s", inv.SpanContext().TraceID(), parentOf(inv), remote.TraceID(), remote.SpanID())
	}
	want(t, inv, map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "harness",
		"gen_ai.conversation.id": sid, "gen_ai.provider.name": "test", "gen_ai.request.model": "m1",
		"harness.job.id": 42, "harness.job.attempt": 2, "harness.turn": 1, "harness.turn.reason": "stop", "harness.turn.steps": 2,
		"gen_ai.usage.input_tokens": 11000, "gen_ai.usage.output_tokens": 27})
	if inv.Status().Code != codes.Unset || inv.SpanKind() != trace.SpanKindInternal {
		t.Errorf("invoke_agent: status %v kind %v", inv.Status(), inv.SpanKind())
	}
	chat1, chat2 := sp["chat m1"][0], sp["chat m1"][1]
	for i, c := range []sdktrace.ReadOnlySpan{chat1, chat2} {
		if parentOf(c) != inv.SpanContext().SpanID() || c.SpanKind() != trace.SpanKindClient || c.Status().Code != codes.Unset {
			t.Errorf("chat %d: parent %s kind %v status %v", i+1, parentOf(c), c.SpanKind(), c.Status())
		}
	}
	want(t, chat1, map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "test", "gen_ai.system": "test",
		"gen_ai.request.model": "m1", "gen_ai.usage.input_tokens": 5000, "gen_ai.usage.output_tokens": 20,
		"gen_ai.response.finish_reasons": []string{"tool_calls"}, "harness.step": 1})
	want(t, chat2, map[string]any{"gen_ai.usage.input_tokens": 6000, "gen_ai.usage.output_tokens": 7,
		"gen_ai.usage.cache_read.input_tokens": 5000, "harness.usage.cache_miss.input_tokens": 1000,
		"gen_ai.response.finish_reasons": []string{"stop"}, "harness.step": 2})
	if !chat1.EndTime().Before(chat2.StartTime()) {
		t.Errorf("chat 1 ends %v after chat 2 starts %v", chat1.EndTime(), chat2.StartTime())
	}
	for _, c := range []struct {
		name, id string
		code     codes.Code
		kv       map[string]any
	}{
		{"execute_tool echo", "c1", codes.Unset, map[string]any{}},
		{"execute_tool boom", "c2", codes.Error, map[string]any{"error.type": "BOOM"}},
		{"execute_tool forbidden", "c3", codes.Error, map[string]any{"error.type": "DENIED", "harness.tool.denied": true}},
	} {
		if len(sp[c.name]) != 1 {
			t.Errorf("%s: %d spans", c.name, len(sp[c.name]))
			continue
		}
		s := sp[c.name][0]
		if parentOf(s) != chat1.SpanContext().SpanID() {
			t.Errorf("%s: parent %s, want the first chat %s", c.name, parentOf(s), chat1.SpanContext().SpanID())
		}
		if s.Status().Code != c.code {
			t.Errorf("%s: status %v, want %v", c.name, s.Status(), c.code)
		}
		c.kv["gen_ai.operation.name"] = "execute_tool"
		c.kv["gen_ai.tool.name"] = strings.TrimPrefix(c.name, "execute_tool ")
		c.kv["gen_ai.tool.call.id"] = c.id
		want(t, s, c.kv)
		if _, ok := attrs(s)["harness.tool.duration_ms"]; !ok {
			t.Errorf("%s: no harness.tool.duration_ms", c.name)
		}
	}
	for _, s := range h.rec.Ended() {
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.String(), secret) {
				t.Errorf("span %q records content: %s=%s", s.Name(), kv.Key, kv.Value.String())
			}
		}
		if strings.Contains(s.Status().Description, secret) {
			t.Errorf("span %q records content in its status: %s", s.Name(), s.Status().Description)
		}
	}
}

// A model call that fails (HTTP 400: PROTOCOL) ends the chat span and the
// turn's span with an error status and error.type PROTOCOL.
func TestModelErrorSetsErrorStatus(t *testing.T) {
	h := setup(t, []llmtest.Turn{llmtest.Error(400, "bad request")}, nil)
	res, _, err := h.run(t, "hi")
	if err == nil || !res.IsError {
		t.Fatalf("run: %+v %v", res, err)
	}
	sp := h.spans()
	if len(sp["invoke_agent harness"]) != 1 || len(sp["chat m1"]) != 1 {
		t.Fatalf("spans: %v", names(h.rec.Ended()))
	}
	inv, chat := sp["invoke_agent harness"][0], sp["chat m1"][0]
	if inv.Parent().IsValid() {
		t.Errorf("invoke_agent without TRACEPARENT has a parent: %v", inv.Parent())
	}
	for _, s := range []sdktrace.ReadOnlySpan{inv, chat} {
		if s.Status().Code != codes.Error || !strings.Contains(s.Status().Description, "bad request") {
			t.Errorf("%s: status %v", s.Name(), s.Status())
		}
		want(t, s, map[string]any{"error.type": "PROTOCOL"})
	}
	want(t, inv, map[string]any{"harness.turn.reason": "error"})
	if _, ok := attrs(chat)["gen_ai.response.finish_reasons"]; ok {
		t.Errorf("a failed call has finish reasons: %v", chat.Attributes())
	}
}

// Two turns of one session are two traces' roots with the same
// conversation id; a max_steps end is an error with error.type MAX_STEPS.
func TestTurnsAndMaxSteps(t *testing.T) {
	call := llmtest.Stream(llmtest.ToolCallStart(0, "c", "echo", `{"text":"x"}`), llmtest.Finish("tool_calls"))
	turns := []llmtest.Turn{llmtest.Reply("one")}
	for range 10 {
		turns = append(turns, call)
	}
	h := setup(t, turns, nil)
	ss, err := h.svc.Open(context.Background(), agent.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close(context.Background())
	if _, err := ss.Run(context.Background(), "first"); err != nil {
		t.Fatal(err)
	}
	if res, err := ss.Run(context.Background(), "second"); err == nil || res.Reason != "max_steps" {
		t.Fatalf("second turn: %+v %v", res, err)
	}
	inv := h.spans()["invoke_agent harness"]
	if len(inv) != 2 {
		t.Fatalf("spans: %v", names(h.rec.Ended()))
	}
	if inv[0].SpanContext().TraceID() == inv[1].SpanContext().TraceID() {
		t.Error("two turns share a trace")
	}
	want(t, inv[0], map[string]any{"gen_ai.conversation.id": ss.ID(), "harness.turn": 1})
	want(t, inv[1], map[string]any{"gen_ai.conversation.id": ss.ID(), "harness.turn": 2, "error.type": "MAX_STEPS", "harness.turn.steps": 10})
	if inv[1].Status().Code != codes.Error {
		t.Errorf("max_steps turn: status %v", inv[1].Status())
	}
	if n := len(h.spans()["execute_tool echo"]); n != 10 {
		t.Errorf("%d tool spans, want 10", n)
	}
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name()+"("+s.SpanContext().SpanID().String()+"<"+s.Parent().SpanID().String()+")")
	}
	return out
}
