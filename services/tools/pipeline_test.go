package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
)

type approver struct {
	answer tools.ApprovalOutcome
	err    error
	asked  atomic.Int64
}

func (a *approver) Ask(context.Context, tools.ApprovalRequest) (tools.ApprovalOutcome, error) {
	a.asked.Add(1)
	return a.answer, a.err
}

func (e *env) provideApprover(a tools.Approver) {
	e.mount(func(c *core.Context) error { return core.Provide(c, tools.ApprovalKey, a) })
}

func TestPreExecuteDecisions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		decision tools.Decision
		approver *approver
		wantText string
		wantCode string
		wantRan  bool
	}{
		{"allow", tools.Allow(), nil, "hi", "", true},
		{"deny", tools.Deny("not here"), nil, "Error: not here", "", false},
		{"deny without reason", tools.Deny(""), nil, `Error: tool "echo" was denied by policy`, "", false},
		{"unknown kind fails closed", tools.Decision{Kind: 42}, nil, "Error: tools/pre-execute returned an invalid decision kind DecisionKind(42)", "", false},
		{"deny with info", tools.DenyWith("policy says no", &tools.ErrorInfo{Name: "PolicyError", Code: "DENIED"}), nil, "Error: policy says no", "DENIED", false},
		{"cancel", tools.Cancel(), nil, "Error: tool call aborted before dispatch", tools.CodeAbortedBeforeDispatch, false},
		{"ask without approval service", tools.Ask(""), nil, `Error: tool "echo" requires approval (not yet supported)`, "", false},
		{"ask with reason, no service", tools.Ask("writes files"), nil, "Error: writes files", "", false},
		{"ask allowed once", tools.Ask("x"), &approver{answer: tools.ApprovalAllowedOnce}, "hi", "", true},
		{"ask allowed always", tools.Ask("x"), &approver{answer: tools.ApprovalAllowedAlways}, "hi", "", true},
		{"ask rejected", tools.Ask("x"), &approver{answer: tools.ApprovalRejected}, `Error: the user rejected tool "echo"`, "", false},
		{"ask cancelled", tools.Ask("x"), &approver{answer: tools.ApprovalCancelled}, `Error: approval for tool "echo" was cancelled`, "", false},
		{"ask unavailable", tools.Ask("x"), &approver{answer: tools.ApprovalUnavailable}, `Error: tool "echo" requires approval, but no approval channel is available`, "", false},
		{"ask fails", tools.Ask("x"), &approver{err: errors.New("tty gone")}, `Error: approval for tool "echo" failed: tty gone`, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			var calls atomic.Int64
			e.register(echoTool(&calls))
			if tc.approver != nil {
				e.provideApprover(tc.approver)
			}
			var post atomic.Int64
			e.on(core.On(e.c, tools.PreExecute, func(ctx context.Context, x *tools.Execution, next core.Next[*tools.Execution, tools.Decision]) (tools.Decision, error) {
				return tc.decision, nil
			}))
			e.on(core.On(e.c, tools.PostExecute, func(ctx context.Context, x *tools.Execution, next core.Next[*tools.Execution, tools.PostDecision]) (tools.PostDecision, error) {
				post.Add(1)
				return next(ctx, x)
			}))
			o := e.exec("echo", `{"text":"hi"}`)
			if text(o) != tc.wantText || code(o) != tc.wantCode || (calls.Load() == 1) != tc.wantRan {
				t.Errorf("got %q code %q ran %v", text(o), code(o), calls.Load())
			}
			if o.IsError == tc.wantRan {
				t.Errorf("IsError %v", o.IsError)
			}
			wantPost := int64(1)
			if tc.name == "ask fails" || tc.name == "unknown kind fails closed" {
				wantPost = 0 // a failure inside policy is final
			}
			if post.Load() != wantPost {
				t.Errorf("post-execute ran %d times, want %d", post.Load(), wantPost)
			}
		})
	}
}

// A guard denies after any waterfall outcome, whatever the listener order.
func TestGuardsBeatAnyWaterfallOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var calls atomic.Int64
	e.register(echoTool(&calls))
	e.on(e.reg.Guard(e.c, func(x *tools.Execution) string {
		if strings.Contains(x.Arguments(), "rm") {
			return "rm is forbidden"
		}
		return ""
	}))
	allowAll := func(ctx context.Context, x *tools.Execution, next core.Next[*tools.Execution, tools.Decision]) (tools.Decision, error) {
		return tools.Allow(), nil // short-circuits everything after it
	}
	e.on(core.On(e.c, tools.PreExecute, allowAll, core.Prepend()))
	e.on(core.On(e.c, tools.PreExecute, allowAll))
	if o := e.exec("echo", `{"text":"rm -rf /"}`); text(o) != "Error: rm is forbidden" || calls.Load() != 0 {
		t.Errorf("got %q, ran %d", text(o), calls.Load())
	}
	if o := e.exec("echo", `{"text":"ok"}`); text(o) != "ok" {
		t.Errorf("got %q", text(o))
	}
}

// Guards are walked live (reference A9 step 6): a guard that a guard adds
// during a call is checked in that same call (its layer not yet finished), a
// scoped guard added by a global guard runs too, and each guard runs once.
func TestGuardAddedDuringACallIsCheckedInThatCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var calls, laterRuns atomic.Int64
	e.register(echoTool(&calls))
	aID := core.NewScopeID("agent", nil)
	a, err := core.NewScope(e.c, aID)
	e.on(err)
	var added atomic.Bool
	e.on(e.reg.Guard(e.c, func(x *tools.Execution) string {
		if added.CompareAndSwap(false, true) {
			e.on(e.reg.Guard(e.c, func(x *tools.Execution) string {
				laterRuns.Add(1)
				return "denied by a guard added during this call"
			}))
			e.on(e.reg.Guard(a.Context(), func(x *tools.Execution) string {
				return "not reached: the global guard denies first"
			}))
		}
		return ""
	}))
	o := e.reg.Execute(context.Background(), tools.Call{ID: "c1", Name: "echo", Arguments: `{"text":"x"}`, Scope: aID})
	if text(o) != "Error: denied by a guard added during this call" || calls.Load() != 0 || laterRuns.Load() != 1 {
		t.Fatalf("got %q, body ran %d, later guard ran %d", text(o), calls.Load(), laterRuns.Load())
	}
}

type bashArgs struct {
	Command string `json:"command"`
}

// B17, registry level: deny > ask > allow whatever the order, audit sees every
// call, on every path (Execute, Scheduler, retry), and the post-execute
// replacement is what the caller and the Result observers get.
func TestB17DenyWinsOnEveryPath(t *testing.T) {
	t.Parallel()
	type vote struct {
		name string
		fn   func(x *tools.Execution) tools.Decision
	}
	allowAll := vote{"allow-all", func(*tools.Execution) tools.Decision { return tools.Allow() }}
	denyRm := vote{"deny-rm", func(x *tools.Execution) tools.Decision {
		if strings.Contains(x.Args().(bashArgs).Command, "rm -rf") {
			return tools.Deny("rm -rf is denied by policy")
		}
		return tools.Allow()
	}}
	askAll := vote{"ask-all", func(*tools.Execution) tools.Decision { return tools.Ask("") }}
	orders := [][]vote{{allowAll, denyRm}, {denyRm, allowAll}, {askAll, allowAll, denyRm}, {allowAll, askAll, denyRm}, {denyRm, askAll, allowAll}}
	for _, order := range orders {
		var names []string
		for _, v := range order {
			names = append(names, v.name)
		}
		t.Run(strings.Join(names, ","), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.provideApprover(&approver{answer: tools.ApprovalAllowedOnce})
			var ran []string
			var mu sync.Mutex
			e.register(tools.Define("bash", "run", func(_ context.Context, _ *tools.Execution, a bashArgs) (string, error) {
				mu.Lock()
				ran = append(ran, a.Command)
				mu.Unlock()
				return strings.TrimPrefix(a.Command, "echo "), nil
			}))
			// An ordinary waterfall listener that allows without calling next:
			// it must not hide the votes.
			e.on(core.On(e.c, tools.PreExecute, func(context.Context, *tools.Execution, core.Next[*tools.Execution, tools.Decision]) (tools.Decision, error) {
				return tools.Allow(), nil
			}))
			for _, v := range order {
				v := v
				e.on(tools.OnPreExecute(e.c, func(_ context.Context, x *tools.Execution) (tools.Decision, error) { return v.fn(x), nil }))
			}
			var audit atomic.Int64
			e.on(tools.OnPreExecute(e.c, func(context.Context, *tools.Execution) (tools.Decision, error) {
				audit.Add(1)
				return tools.Allow(), nil
			}))
			e.on(core.On(e.c, tools.PostExecute, func(ctx context.Context, x *tools.Execution, next core.Next[*tools.Execution, tools.PostDecision]) (tools.PostDecision, error) {
				d, err := next(ctx, x)
				if err != nil || d.Kind != tools.PostAccept {
					return d, err
				}
				t := tools.TextOf(x.Outcome().Content)
				if strings.Contains(t, "sk-") {
					return tools.ReplaceContent(tools.Text(strings.ReplaceAll(t, "sk-b17-secret", "[REDACTED]"))), nil
				}
				return d, nil
			}))
			var observed []string
			e.on(core.On(e.c, tools.Result, func(_ context.Context, x *tools.Execution) error {
				mu.Lock()
				observed = append(observed, tools.TextOf(x.Outcome().Content))
				mu.Unlock()
				return nil
			}))
			rm := tools.Call{ID: "2", Name: "bash", Arguments: `{"command":"rm -rf /tmp/b17-target"}`}
			outs := tools.Scheduler{Registry: e.reg}.Run(context.Background(), []tools.Call{
				{ID: "1", Name: "bash", Arguments: `{"command":"echo ok"}`}, rm,
			})
			direct := e.reg.Execute(context.Background(), rm) // the programmatic API
			retry := e.reg.Execute(context.Background(), rm)
			if text(outs[0]) != "ok" {
				t.Errorf("echo ok: %q", text(outs[0]))
			}
			for _, o := range []*tools.Outcome{outs[1], direct, retry} {
				if text(o) != "Error: rm -rf is denied by policy" {
					t.Errorf("rm: %q", text(o))
				}
			}
			if len(ran) != 1 || ran[0] != "echo ok" {
				t.Errorf("bodies ran: %q", ran)
			}
			if audit.Load() != 4 {
				t.Errorf("audit saw %d calls, want 4", audit.Load())
			}
			secret := e.exec("bash", `{"command":"echo sk-b17-secret"}`)
			if text(secret) != "[REDACTED]" || secret.Value != "sk-b17-secret" {
				t.Errorf("redaction: content %q value %v", text(secret), secret.Value)
			}
			if last := observed[len(observed)-1]; last != "[REDACTED]" {
				t.Errorf("Result observers saw %q", last)
			}
		})
	}
}

func TestMergePrecedence(t *testing.T) {
	t.Parallel()
	kinds := []tools.Decision{tools.Allow(), tools.Ask("a"), tools.Cancel(), tools.Deny("d")}
	for i, a := range kinds {
		for j, b := range kinds {
			want := kinds[max(i, j)].Kind
			if got := tools.Merge(a, b).Kind; got != want {
				t.Errorf("Merge(%v, %v) = %v, want %v", a.Kind, b.Kind, got, want)
			}
		}
	}
}

type countArgs struct {
	N int `json:"n"`
}

type countOut struct {
	N int `json:"n"`
}

func countTool() *tools.Tool {
	return tools.Define("count", "count", func(_ context.Context, x *tools.Execution, a countArgs) (countOut, error) {
		x.DeferContext("deferred by the body")
		return countOut(a), nil
	},
		tools.WithRender(func(a countArgs, o countOut) []tools.Content {
			return []tools.Content{tools.Text("n=" + strings.Repeat("I", o.N))}
		}),
		tools.WithMeta(func(a countArgs, o countOut) any { return map[string]int{"n": o.N} }))
}

func TestPostExecuteDecisions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		decision tools.PostDecision
		wantText string
		wantErr  bool
		wantMeta string
		wantCtx  []string
	}{
		{"accept", tools.Accept(), "n=II", false, `{"n":2}`, []string{"deferred by the body"}},
		{"replace content", tools.ReplaceContent(tools.Text("short")), "short", false, `{"n":2}`, []string{"deferred by the body"}},
		{"replace value", tools.ReplaceValueWith(countOut{N: 3}), "n=III", false, `{"n":3}`, []string{"deferred by the body"}},
		{"replace value from JSON", tools.ReplaceValueWith(map[string]any{"n": 1}), "n=I", false, `{"n":1}`, []string{"deferred by the body"}},
		{"replace value of the wrong shape", tools.ReplaceValueWith("nope"), `Error: tool "count" returned invalid output: json: cannot unmarshal string into Go value of type tools_test.countOut`, true, "", nil},
		{"replace both", tools.PostDecision{Content: []tools.Content{tools.Text("x")}, Value: 1, ReplaceValue: true}, "Error: tools/post-execute accept decision cannot replace both value and content", true, "", nil},
		{"block", tools.Block(tools.Text("blocked: secret")).WithContexts("look elsewhere"), "blocked: secret", true, "", []string{"look elsewhere"}},
		{"block without feedback", tools.Block(), "Error: tool result blocked by post-execute policy", true, "", nil},
		{"accept with contexts", tools.Accept().WithContexts("reminder"), "n=II", false, `{"n":2}`, []string{"deferred by the body", "reminder"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.register(countTool())
			e.on(core.On(e.c, tools.PostExecute, func(ctx context.Context, x *tools.Execution, next core.Next[*tools.Execution, tools.PostDecision]) (tools.PostDecision, error) {
				return tc.decision, nil
			}))
			o := e.exec("count", `{"n":2}`)
			if text(o) != tc.wantText || o.IsError != tc.wantErr || string(o.Meta) != tc.wantMeta || strings.Join(o.AdditionalContexts, "|") != strings.Join(tc.wantCtx, "|") {
				t.Errorf("got %q err %v meta %s ctx %q", text(o), o.IsError, o.Meta, o.AdditionalContexts)
			}
			if o.IsError && o.Value != nil {
				t.Error("a failure carries a value")
			}
		})
	}
}

func TestReplaceValueOfAFailureIsAnError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.register(tools.Define("fail", "fail", func(context.Context, *tools.Execution, countArgs) (countOut, error) {
		return countOut{}, errors.New("disk full")
	}))
	e.on(core.On(e.c, tools.PostExecute, func(ctx context.Context, x *tools.Execution, next core.Next[*tools.Execution, tools.PostDecision]) (tools.PostDecision, error) {
		return tools.ReplaceValueWith(countOut{N: 1}), nil
	}))
	if o := e.exec("fail", `{"n":1}`); text(o) != "Error: tools/post-execute cannot replace the value of a failed result" {
		t.Errorf("got %q", text(o))
	}
}

func TestErrorMapping(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.register(
		tools.Define("boom", "panics", func(context.Context, *tools.Execution, countArgs) (string, error) {
			var m map[string]int
			m["x"] = 1 //nolint:staticcheck // the nil-map write is the panic under test
			return "", nil
		}),
		tools.Define("coded", "fails with a code", func(context.Context, *tools.Execution, countArgs) (string, error) {
			return "", &tools.Error{Name: "FsError", Code: "FS_NOT_FOUND", Message: `"a.txt" does not exist`, Reason: "checked /tmp"}
		}),
		tools.Define("plain", "fails", func(context.Context, *tools.Execution, countArgs) (string, error) {
			return "", errors.New("plain failure")
		}),
		tools.DefineRaw("badout", "returns an invalid value", json.RawMessage(`{"type":"object"}`),
			func(context.Context, *tools.Execution, json.RawMessage) (any, error) {
				return map[string]any{"n": "x"}, nil
			},
			tools.WithOutputSchema(json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`))),
		tools.Define("badrender", "render panics", func(context.Context, *tools.Execution, countArgs) (string, error) { return "v", nil },
			tools.WithRender(func(countArgs, string) []tools.Content { panic("render exploded") })),
	)
	cases := []struct {
		name, args, wantText, wantCode string
	}{
		{"nosuch", `{}`, `Error: unknown tool "nosuch"`, tools.CodeUnknownTool},
		{"boom", `{"n":1}`, `Error: tool "boom" panicked: assignment to entry in nil map`, ""},
		{"coded", `{"n":1}`, `Error: "a.txt" does not exist`, "FS_NOT_FOUND"},
		{"plain", `{"n":1}`, `Error: plain failure`, ""},
		{"badout", `{}`, `Error: tool "badout" returned invalid output: /n: type: must be an integer, got string "x"`, tools.CodeInvalidToolOutput},
		{"badrender", `{"n":1}`, `Error: tool "badrender" returned invalid output: output render panicked: render exploded`, tools.CodeInvalidToolOutput},
	}
	for _, tc := range cases {
		o := e.exec(tc.name, tc.args)
		if !o.IsError || text(o) != tc.wantText || code(o) != tc.wantCode {
			t.Errorf("%s: got %q code %q", tc.name, text(o), code(o))
		}
	}
	if o := e.exec("coded", `{"n":1}`); o.Error.Reason != "checked /tmp" || o.Error.Name != "FsError" {
		t.Errorf("info %+v", o.Error)
	}
	// The session goes on: the next call works.
	e.register(echoTool(nil))
	if o := e.exec("echo", `{"text":"still alive"}`); text(o) != "still alive" {
		t.Errorf("after a panic: %q", text(o))
	}
}

func TestPanickingListenersFailClosed(t *testing.T) {
	t.Parallel()
	for _, ev := range []string{"pre", "execute", "post", "result"} {
		t.Run(ev, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			var calls atomic.Int64
			e.register(echoTool(&calls))
			switch ev {
			case "pre":
				e.on(core.On(e.c, tools.PreExecute, func(context.Context, *tools.Execution, core.Next[*tools.Execution, tools.Decision]) (tools.Decision, error) {
					panic("hook exploded")
				}))
			case "execute":
				e.on(core.On(e.c, tools.Execute, func(context.Context, *tools.Execution, core.Next[*tools.Execution, *tools.Outcome]) (*tools.Outcome, error) {
					panic("hook exploded")
				}))
			case "post":
				e.on(core.On(e.c, tools.PostExecute, func(context.Context, *tools.Execution, core.Next[*tools.Execution, tools.PostDecision]) (tools.PostDecision, error) {
					panic("hook exploded")
				}))
			case "result":
				e.on(core.On(e.c, tools.Result, func(context.Context, *tools.Execution) error { panic("observer exploded") }))
			}
			o := e.exec("echo", `{"text":"hi"}`)
			if ev == "result" {
				if o.IsError || text(o) != "hi" {
					t.Errorf("an observer changed the outcome: %q", text(o))
				}
				return
			}
			if !o.IsError || !strings.Contains(text(o), "hook exploded") {
				t.Errorf("got %q", text(o))
			}
			if ev != "post" && calls.Load() != 0 {
				t.Error("the body ran although a policy listener panicked")
			}
		})
	}
}

func TestCancellation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	started := make(chan struct{})
	var pre atomic.Int64
	e.register(tools.Define("wait", "waits for cancellation then succeeds", func(ctx context.Context, _ *tools.Execution, a countArgs) (string, error) {
		close(started)
		<-ctx.Done()
		if a.N == 1 {
			return "", ctx.Err()
		}
		return "finished anyway", nil
	}))
	e.on(tools.OnPreExecute(e.c, func(context.Context, *tools.Execution) (tools.Decision, error) {
		pre.Add(1)
		return tools.Allow(), nil
	}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := e.reg.Execute(ctx, tools.Call{Name: "wait", Arguments: `{"n":0}`})
	if text(o) != "Error: tool call aborted before dispatch" || code(o) != tools.CodeAbortedBeforeDispatch || pre.Load() != 0 {
		t.Errorf("pre-cancelled: %q, pre-execute ran %d", text(o), pre.Load())
	}
	for _, n := range []string{`{"n":0}`, `{"n":1}`} {
		started = make(chan struct{})
		ctx, cancel = context.WithCancel(context.Background())
		go func() { <-started; cancel() }()
		o = e.reg.Execute(ctx, tools.Call{Name: "wait", Arguments: n})
		if text(o) != "Error: tool call aborted" || code(o) != tools.CodeAborted {
			t.Errorf("%s cancelled after start: %q", n, text(o))
		}
	}
}

// An Execute listener may swap the context (a deadline) but cannot detach the
// caller's cancellation.
func TestExecuteListenerCannotDetachCallerCancellation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	started := make(chan struct{})
	e.register(tools.Define("wait", "waits", func(ctx context.Context, _ *tools.Execution, _ countArgs) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	}))
	e.on(core.On(e.c, tools.Execute, func(ctx context.Context, x *tools.Execution, next core.Next[*tools.Execution, *tools.Outcome]) (*tools.Outcome, error) {
		return next(context.Background(), x) // tries to detach
	}))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	if o := e.reg.Execute(ctx, tools.Call{Name: "wait", Arguments: `{"n":0}`}); code(o) != tools.CodeAborted {
		t.Errorf("got %q", text(o))
	}
}

func TestExecuteListenerAuthoredSuccessIsRerendered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var calls atomic.Int64
	e.register(countTool(), echoTool(&calls))
	e.on(core.On(e.c, tools.Execute, func(ctx context.Context, x *tools.Execution, next core.Next[*tools.Execution, *tools.Outcome]) (*tools.Outcome, error) {
		if x.Name() == "echo" {
			return &tools.Outcome{Value: "cached", Content: []tools.Content{tools.Text("ignored")}}, nil
		}
		return &tools.Outcome{Value: countOut{N: 4}}, nil
	}))
	if o := e.exec("count", `{"n":1}`); text(o) != "n=IIII" || string(o.Meta) != `{"n":4}` {
		t.Errorf("count: %q %s", text(o), o.Meta)
	}
	if o := e.exec("echo", `{"text":"x"}`); text(o) != "cached" || calls.Load() != 0 {
		t.Errorf("echo: %q", text(o))
	}
}

func TestFinalizeRunsOnceOnEveryOutcome(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var n atomic.Int64
	e.register(tools.Define("fin", "finalized", func(context.Context, *tools.Execution, countArgs) (string, error) { return "body", nil },
		tools.WithFinalize(func(x *tools.Execution, o *tools.Outcome) []tools.Content {
			n.Add(1)
			return []tools.Content{tools.Text("final: " + tools.TextOf(o.Content))}
		})))
	if o := e.exec("fin", `{"n":1}`); text(o) != "final: body" {
		t.Errorf("success: %q", text(o))
	}
	if o := e.exec("fin", `{"n":"x"}`); !strings.HasPrefix(text(o), "final: Error: invalid arguments") {
		t.Errorf("invalid args: %q", text(o))
	}
	if n.Load() != 2 {
		t.Errorf("finalize ran %d times", n.Load())
	}
}

func TestResultEventIsScoped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.register(echoTool(nil))
	a, err := core.NewScope(e.c, core.NewScopeID("agent-a", nil))
	e.on(err)
	b, err := core.NewScope(e.c, core.NewScopeID("agent-b", nil))
	e.on(err)
	var seenA, seenB, seenAll atomic.Int64
	e.on(core.On(a.Context(), tools.Result, func(context.Context, *tools.Execution) error { seenA.Add(1); return nil }))
	e.on(core.On(b.Context(), tools.Result, func(context.Context, *tools.Execution) error { seenB.Add(1); return nil }))
	e.on(core.On(e.c, tools.Result, func(context.Context, *tools.Execution) error { seenAll.Add(1); return nil }))
	e.reg.Execute(context.Background(), tools.Call{Name: "echo", Arguments: `{"text":"x"}`, Scope: a.ID()})
	if seenA.Load() != 1 || seenB.Load() != 0 || seenAll.Load() != 1 {
		t.Errorf("a %d b %d all %d", seenA.Load(), seenB.Load(), seenAll.Load())
	}
	_ = time.Second
}

func TestBodyContextsAndConcludeTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.register(tools.Define("finish", "ends the turn", func(_ context.Context, x *tools.Execution, a countArgs) (string, error) {
		x.DeferContext("first")
		x.DeferContext("second")
		x.ConcludeTurn()
		if a.N == 0 {
			return "", errors.New("failed after deferring")
		}
		return "done", nil
	}))
	ok := e.exec("finish", `{"n":1}`)
	if !ok.ConcludesTurn || strings.Join(ok.AdditionalContexts, "|") != "first|second" {
		t.Errorf("success: %+v", ok)
	}
	failed := e.exec("finish", `{"n":0}`)
	if failed.ConcludesTurn || strings.Join(failed.AdditionalContexts, "|") != "first|second" || text(failed) != "Error: failed after deferring" {
		t.Errorf("failure: %+v", failed)
	}
}

func TestNestedCallsSkipPresentationMeta(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.register(countTool())
	top := e.reg.Execute(context.Background(), tools.Call{ID: "outer", Name: "count", Arguments: `{"n":1}`})
	nested := e.reg.Execute(context.Background(), tools.Call{ID: "inner", Name: "count", Arguments: `{"n":1}`, Parent: new(tools.Token)})
	if string(top.Meta) != `{"n":1}` || nested.Meta != nil || text(nested) != "n=I" {
		t.Errorf("top meta %s, nested meta %s", top.Meta, nested.Meta)
	}
}

func TestChangedFiresOnRegisterAndUnregister(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var changes atomic.Int64
	e.on(core.On(e.c, tools.Changed, func(context.Context, *tools.Registry) (struct{}, bool, error) {
		changes.Add(1)
		return struct{}{}, false, nil
	}))
	f := e.mount(func(c *core.Context) error { return tools.Register(c, echoTool(nil)) })
	if changes.Load() != 1 {
		t.Errorf("after register: %d", changes.Load())
	}
	e.on(f.Dispose(context.Background()))
	if changes.Load() != 2 {
		t.Errorf("after unregister: %d", changes.Load())
	}
}

// A failing tools/change listener rolls the registration back and its error
// reaches the registering caller, as with the system prompt's change event
// (reference A7): the tool is not visible and its name is free again; a
// restriction likewise. A failure on removal is only logged.
var errIndexFull = errors.New("index full")

func TestChangeListenerFailureRollsTheRegistrationBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var fail atomic.Bool
	e.on(core.On(e.c, tools.Changed, func(context.Context, *tools.Registry) (struct{}, bool, error) {
		if fail.Load() {
			return struct{}{}, false, errIndexFull
		}
		return struct{}{}, false, nil
	}))
	fail.Store(true)
	var regErr error
	f := e.mount(func(c *core.Context) error {
		regErr = tools.Register(c, echoTool(nil))
		return nil
	})
	if regErr == nil || !strings.HasPrefix(regErr.Error(), `tool echo: change listener: event tools/change: `) || !errors.Is(regErr, errIndexFull) {
		t.Fatalf("Register with a failing listener: %v", regErr)
	}
	if _, ok := e.reg.Get("echo", nil); ok {
		t.Fatal("the tool stayed registered after its change listener failed")
	}
	if o := e.exec("echo", `{"text":"x"}`); code(o) != tools.CodeUnknownTool {
		t.Fatalf("the rolled-back tool still runs: %+v", o)
	}
	fail.Store(false)
	e.register(echoTool(nil)) // the name is free again
	if _, ok := e.reg.Get("echo", nil); !ok {
		t.Fatal("register after the rollback failed")
	}
	// Restrict: rolled back too.
	aID := core.NewScopeID("a", nil)
	a, err := core.NewScope(e.c, aID)
	e.on(err)
	fail.Store(true)
	if err := e.reg.Restrict(a.Context(), tools.Filter{Deny: []string{"echo"}}); err == nil {
		t.Fatal("Restrict with a failing change listener returned nil")
	}
	if _, ok := e.reg.Get("echo", aID); !ok {
		t.Fatal("the rolled-back restriction still hides the tool")
	}
	// A failure on removal leaves the removal done.
	e.on(f.Dispose(context.Background()))
}

func TestExecutionIdentity(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var seen []*tools.Execution
	e.register(echoTool(nil))
	e.on(core.On(e.c, tools.Result, func(_ context.Context, x *tools.Execution) error { seen = append(seen, x); return nil }))
	e.reg.Execute(context.Background(), tools.Call{ID: "a", Name: "echo", Arguments: `{"text":"1"}`})
	e.reg.Execute(context.Background(), tools.Call{ID: "b", RootID: "root", Name: "echo", Arguments: `{"text":"2"}`})
	if len(seen) != 2 || seen[0].Token() == seen[1].Token() || seen[0].RootCallID() != "a" || seen[1].RootCallID() != "root" ||
		seen[1].CallID() != "b" || seen[1].Name() != "echo" || seen[1].Arguments() != `{"text":"2"}` || seen[1].Args().(echoArgs).Text != "2" {
		t.Errorf("identity wrong: %+v", seen)
	}
}

// B22: a panicking body is an error result naming the tool, with the stack in
// the log, and the next call works.
func TestPanickingBodyIsLoggedWithItsStack(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	t.Cleanup(func() { _ = root.Dispose(context.Background()) })
	if err := root.Context().Plugin(tools.Plugin, nil).Await(context.Background()); err != nil {
		t.Fatal(err)
	}
	reg, _ := core.Lookup(root.Context(), tools.Key)
	p := core.Define("boom-plugin", func(c *core.Context, _ struct{}) error {
		return tools.Register(c, tools.Define("boom", "panics", func(context.Context, *tools.Execution, struct{}) (string, error) {
			var m map[string]int
			m["x"]++ //nolint:staticcheck // the nil-map write is the panic under test
			return "", nil
		}))
	}, core.WithInject(tools.Key.Name()))
	if err := root.Context().Plugin(p, nil).Await(context.Background()); err != nil {
		t.Fatal(err)
	}
	o := reg.Execute(context.Background(), tools.Call{Name: "boom"})
	if !o.IsError || text(o) != `Error: tool "boom" panicked: assignment to entry in nil map` {
		t.Errorf("got %q", text(o))
	}
	if s := log.String(); !strings.Contains(s, "panic contained") || !strings.Contains(s, "goroutine") || !strings.Contains(s, "pipeline_test.go") {
		t.Errorf("log lacks the stack:\n%s", s)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
