package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/agent/lifecycle"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/systemprompt"
)

// C10: the runtime-context snapshot is one user message added only when
// it changes; when it disappears a clearing message is sent once.
func TestRuntimeContextSnapshotOnChange(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []llmtest.Turn{
		toolTurn("c1"), textTurn("one"), textTurn("two"), textTurn("three"),
	})
	svc, _ := core.Lookup(f.rc, systemprompt.Key)
	var mode atomic.Value
	mode.Store("sandbox: workspace-write")
	ss := f.open(agent.Options{})
	if _, err := svc.Context(ss.Context(), systemprompt.PromptContext{Name: "sandbox", Order: 110,
		TextFunc: func(context.Context, systemprompt.AssembleContext) (string, error) { return mode.Load().(string), nil }}); err != nil {
		t.Fatal(err)
	}
	run := func(p string) {
		t.Helper()
		if _, err := ss.Run(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	run("a") // two steps, one snapshot
	mode.Store("sandbox: read-only")
	run("b") // changed: a new snapshot
	mode.Store("")
	run("c") // gone: the clearing message
	var snaps []string
	for _, m := range ss.History() {
		if m.Role == "user" && (strings.HasPrefix(m.Content, systemprompt.ContextSnapshotHeader) || m.Content == systemprompt.ContextSnapshotCleared) {
			snaps = append(snaps, m.Content)
		}
	}
	if len(snaps) != 3 || !strings.HasSuffix(snaps[0], "workspace-write") || !strings.HasSuffix(snaps[1], "read-only") || snaps[2] != systemprompt.ContextSnapshotCleared {
		t.Fatalf("snapshots = %q", snaps)
	}
	// The snapshot follows the prompt it belongs to, in the log as in the request.
	w := f.wire(0)
	if w.Messages[1].Text() != "a" || !strings.HasPrefix(w.Messages[2].Text(), systemprompt.ContextSnapshotHeader) {
		t.Fatalf("request 1 = %+v", w.Messages)
	}
}

func toolTurn(id string) llmtest.Turn {
	return llmtest.Stream(llmtest.ToolCallStart(0, id, "current_time", ""), llmtest.Finish("tool_calls"))
}

func textTurn(s string) llmtest.Turn {
	return llmtest.Stream(llmtest.TextDelta(s), llmtest.Finish("stop"))
}

// Lifecycle events: UserPromptSubmit may block (the model is not called)
// or add context; Stop may continue the turn once with its reason;
// SessionStart context is added before the first prompt.
func TestLifecycleEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []llmtest.Turn{textTurn("first"), textTurn("second")})
	var stops atomic.Int32
	c := f.rc
	_ = core.On(c, lifecycle.SessionStart, func(ctx context.Context, p lifecycle.Start, next core.Next[lifecycle.Start, lifecycle.Decision]) (lifecycle.Decision, error) {
		d, err := next(ctx, p)
		return d.Merge(lifecycle.Decision{AdditionalContext: []string{"started: " + p.Source}}), err
	})
	_ = core.On(c, lifecycle.UserPromptSubmit, func(ctx context.Context, p lifecycle.Prompt, next core.Next[lifecycle.Prompt, lifecycle.Decision]) (lifecycle.Decision, error) {
		d, err := next(ctx, p)
		if strings.Contains(p.Prompt, "forbidden") {
			return d.Merge(lifecycle.Decision{Block: true, Reason: "no forbidden words"}), err
		}
		return d.Merge(lifecycle.Decision{AdditionalContext: []string{"prompt seen"}}), err
	})
	_ = core.On(c, lifecycle.Stop, func(ctx context.Context, p lifecycle.Stopping, next core.Next[lifecycle.Stopping, lifecycle.Decision]) (lifecycle.Decision, error) {
		d, err := next(ctx, p)
		stops.Add(1)
		if !p.StopHookActive {
			return d.Merge(lifecycle.Decision{Block: true, Reason: "also run the tests"}), err
		}
		return d, err
	})
	ss := f.open(agent.Options{})
	res, err := ss.Run(context.Background(), "forbidden thing")
	if !errors.Is(err, agent.ErrPromptBlocked) || !strings.Contains(res.Error, "no forbidden words") || len(f.srv.Requests()) != 0 {
		t.Fatalf("blocked prompt: %+v %v", res, err)
	}
	res, err = ss.Run(context.Background(), "fine thing")
	if err != nil || res.Text != "second" || res.Steps != 2 || stops.Load() != 2 {
		t.Fatalf("res=%+v err=%v stops=%d", res, err, stops.Load())
	}
	var texts []string
	for _, m := range f.wire(1).Messages[1:] {
		texts = append(texts, string(m.Role)+":"+m.Text())
	}
	want := "user:fine thing|user:started: startup|user:prompt seen|assistant:first|user:also run the tests"
	if got := strings.Join(texts, "|"); got != want {
		t.Fatalf("request 2:\n%s\nwant\n%s", got, want)
	}
}
