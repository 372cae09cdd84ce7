package tracing_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/dshgo/harness/core"
	llmopenai "github.com/dshgo/harness/plugins/llm-openai"
	prompttools "github.com/dshgo/harness/plugins/prompt-tools"
	subagentinprocess "github.com/dshgo/harness/plugins/subagent-inprocess"
	subagenttools "github.com/dshgo/harness/plugins/subagent-tools"
	"github.com/dshgo/harness/plugins/tracing"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/subagent"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
)

// scripts answers each conversation from its own list: a child's is named
// by its prompt's first word ("#A"), the parent's is "".
type scripts map[string][]llmtest.Turn

// scriptsMu guards every scripts value (children's requests overlap).
var scriptsMu sync.Mutex

func (s scripts) check(_ llmtest.Request, w llmtest.WireRequest) *llmtest.Turn {
	scriptsMu.Lock()
	defer scriptsMu.Unlock()
	key := ""
	for _, m := range w.Messages {
		if m.Role == "user" && strings.HasPrefix(m.Text(), "#") {
			key, _, _ = strings.Cut(m.Text(), " ")
		}
	}
	if len(s[key]) == 0 {
		t := llmtest.Error(500, "script "+key+" exhausted")
		return &t
	}
	t := s[key][0]
	s[key] = s[key][1:]
	return &t
}

// runWithSubagents runs one parent turn with the in-process subagent
// plugins and returns the ended spans.
func runWithSubagents(t *testing.T, sc scripts) (*agent.Session, []sdktrace.ReadOnlySpan) {
	t.Helper()
	srv := llmtest.New(t, nil, llmtest.WithCheck(sc.check))
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = root.Dispose(context.Background()) })
	rc := root.Context()
	for _, p := range []core.Plugin{systemprompt.Plugin, tools.Plugin, prompttools.Plugin, llm.Plugin, testTools} {
		rc.Plugin(p, nil)
	}
	retries := 0
	rc.Plugin(llmopenai.Plugin, llmopenai.Config{Provider: "test", BaseURL: srv.URL, APIKey: "sk-test", MaxRetries: &retries,
		Models: []llmopenai.ModelConfig{{Name: "m1", Default: true, Thinking: llm.ThinkingDisabled, ContextWindow: 1 << 20}}})
	rc.Plugin(sessions.JSONLPlugin, sessions.JSONLConfig{StateDir: t.TempDir()})
	obs := tracing.NewObserver(tp, tracing.ObserverOptions{})
	if err := core.On(rc, agent.Observed, obs.Handle); err != nil {
		t.Fatal(err)
	}
	rc.Plugin(agent.Plugin, agent.Config{MaxSteps: 10})
	rc.Plugin(subagent.Plugin, subagent.Config{MaxDepth: 1})
	rc.Plugin(subagentinprocess.Plugin, subagentinprocess.Config{Name: "inprocess"})
	fb := rc.Plugin(subagenttools.Plugin, subagenttools.Config{Provider: "inprocess", Dirs: []string{t.TempDir()}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fb.Await(ctx); err != nil {
		t.Fatalf("subagent-tools: %v (pending on %v)", err, fb.PendingOn())
	}
	svc, _ := core.Lookup(rc, agent.Key)
	ss, err := svc.Open(context.Background(), agent.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close(context.Background()) })
	if _, err := ss.Run(context.Background(), "delegate"); err != nil {
		t.Fatal(err)
	}
	return ss, rec.Ended()
}

// A subagent's turn is a child of the task call that started it, in the
// parent's trace, with its own conversation id and its lineage; its own
// model and tool calls hang below it. With two task calls at once, a
// child's turn is a child of the model call that asked for both (or of a
// task call when it is the only one still running).
func TestSubagentTurnsJoinTheParentsTrace(t *testing.T) {
	t.Run("one task", func(t *testing.T) {
		ss, spans := runWithSubagents(t, scripts{
			"":   {llmtest.Calls(llmtest.Call{ID: "t1", Name: "task", Args: `{"description":"part a","prompt":"#A do a"}`}), llmtest.Reply("done")},
			"#A": {llmtest.Calls(llmtest.Call{ID: "e1", Name: "echo", Args: `{"text":"x"}`}), llmtest.Reply("child done")},
		})
		var parentTurn, child, task, childChat, childTool sdktrace.ReadOnlySpan
		for _, s := range spans {
			a := attrs(s)
			switch {
			case s.Name() == "invoke_agent harness" && a["gen_ai.conversation.id"].AsString() == ss.ID():
				parentTurn = s
			case s.Name() == "invoke_agent harness":
				child = s
			case s.Name() == "execute_tool task":
				task = s
			case s.Name() == "execute_tool echo":
				childTool = s
			}
		}
		if parentTurn == nil || child == nil || task == nil || childTool == nil || len(spans) != 8 {
			t.Fatalf("spans: %v", names(spans))
		}
		if child.SpanContext().TraceID() != parentTurn.SpanContext().TraceID() || parentOf(child) != task.SpanContext().SpanID() {
			t.Errorf("child turn: parent %s, want the task call %s", parentOf(child), task.SpanContext().SpanID())
		}
		want(t, child, map[string]any{"harness.session.parent_id": ss.ID(), "harness.session.depth": 1})
		for _, s := range spans {
			if s.Name() == "chat m1" && s.SpanContext().SpanID() == parentOf(childTool) {
				childChat = s
			}
		}
		if childChat == nil || parentOf(childChat) != child.SpanContext().SpanID() {
			t.Errorf("the child's calls are not below its turn: %v", names(spans))
		}
	})
	t.Run("two tasks at once", func(t *testing.T) {
		_, spans := runWithSubagents(t, scripts{
			"": {llmtest.Calls(
				llmtest.Call{ID: "t1", Name: "task", Args: `{"description":"part a","prompt":"#A do a"}`},
				llmtest.Call{ID: "t2", Name: "task", Args: `{"description":"part b","prompt":"#B do b"}`}), llmtest.Reply("done")},
			"#A": {llmtest.Reply("a done")},
			"#B": {llmtest.Reply("b done")},
		})
		// A child whose turn starts while both calls run hangs below the
		// chat; one that starts after the other's call ended, below the
		// one call still running (its own).
		allowed := map[string]bool{}
		for _, s := range spans {
			if s.Name() == "execute_tool task" {
				allowed[s.SpanContext().SpanID().String()] = true
				allowed[parentOf(s).String()] = true
			}
		}
		children := 0
		for _, s := range spans {
			if _, ok := attrs(s)["harness.session.parent_id"]; ok && s.Name() == "invoke_agent harness" {
				children++
				if !allowed[parentOf(s).String()] || len(allowed) != 3 {
					t.Errorf("child turn %v: parent %s, want the chat that asked for both tasks or a task call (%v)", attrs(s)["gen_ai.conversation.id"], parentOf(s), names(spans))
				}
			}
		}
		if children != 2 {
			t.Errorf("%d child turns: %v", children, names(spans))
		}
	})
}
