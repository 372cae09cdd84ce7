package subagenttools_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/subagent"
	"github.com/dshgo/harness/services/tools"
)

// A policy listener registered in the parent session's scope (as a
// permission plugin scoped to it would) denies read_file; the child, whose
// scope lies within, is denied too.
func TestChildIsDeniedWhatItsParentIsDenied(t *testing.T) {
	f := newFixture(t, map[string][]llmtest.Turn{
		"":   {llmtest.Calls(call("t1", "task", `{"description":"read","prompt":"#A read secret.txt"}`)), llmtest.Reply("ok")},
		"#A": {llmtest.Calls(call("r1", "read_file", `{"path":"secret.txt"}`)), llmtest.Reply("could not read it")},
	}, fixtureOpts{})
	ss := f.open(agent.Options{Model: "test/m1"})
	if err := tools.OnPreExecute(ss.Context(), func(_ context.Context, e *tools.Execution) (tools.Decision, error) {
		if e.Name() == "read_file" {
			return tools.Deny("read_file is denied in this session"), nil
		}
		return tools.Allow(), nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Run(context.Background(), "delegate"); err != nil {
		t.Fatal(err)
	}
	kids := f.children(ss.ID())
	var denied bool
	for _, r := range f.records(kids[0]) {
		if r.Type == agent.RecordToolResult && r.Name == "read_file" {
			denied = r.IsError && r.Message != nil && strings.Contains(r.Message.Content, "read_file is denied in this session")
		}
	}
	if !denied {
		t.Fatalf("the child's read_file was not denied: %+v", f.records(kids[0]))
	}
}

// children lists the stored child ids of parent.
func (f *fixture) children(parent string) []string {
	f.t.Helper()
	list, err := f.sub.Children(context.Background(), parent)
	if err != nil {
		f.t.Fatal(err)
	}
	var ids []string
	for _, i := range list {
		ids = append(ids, i.ID)
	}
	if len(ids) == 0 {
		f.t.Fatalf("session %s has no children", parent)
	}
	return ids
}

// Interrupting the parent mid-child stops the child's running tool and
// records aborted results in both logs; no child turn survives.
func TestInterruptingTheParentStopsTheChild(t *testing.T) {
	f := newFixture(t, map[string][]llmtest.Turn{
		"":   {llmtest.Calls(call("t1", "task", `{"description":"wait","prompt":"#A wait long"}`))},
		"#A": {llmtest.Calls(call("s1", "sleep", `{"ms":60000}`))},
	}, fixtureOpts{})
	ss := f.open(agent.Options{Model: "test/m1"})
	ctx, cancel := context.WithCancel(context.Background())
	f.probe.started = make(chan string, 1)
	go func() { <-f.probe.started; cancel() }()
	res, err := ss.Run(ctx, "delegate and wait")
	if !errors.Is(err, context.Canceled) || res.Reason != "aborted" {
		t.Fatalf("run = %+v, %v", res, err)
	}
	kid := f.children(ss.ID())[0]
	if list, _ := f.sub.Children(context.Background(), ss.ID()); list[0].Live || list[0].Running {
		t.Fatalf("child survived: %+v", list[0])
	}
	aborted := func(id, tool string) bool {
		for _, r := range f.records(id) {
			if r.Type == agent.RecordToolResult && r.Name == tool && r.IsError && r.Error != nil && r.Error.Code == tools.CodeAborted {
				return true
			}
		}
		return false
	}
	if !aborted(kid, "sleep") || !aborted(ss.ID(), "task") {
		t.Fatalf("aborted results missing: child %+v\nparent %+v", f.records(kid), f.records(ss.ID()))
	}
}

// A provider that advertises less than a request needs refuses it.
type plainProvider struct{}

func (plainProvider) Capabilities() []subagent.Capability { return nil }
func (plainProvider) Start(context.Context, subagent.Request) (subagent.Child, error) {
	return nil, errors.New("never called")
}

func TestUnsupportedCapabilityDepthAndUnknownProvider(t *testing.T) {
	f := newFixture(t, nil, fixtureOpts{})
	if err := f.sub.Register(f.rc, "plain", plainProvider{}); err != nil {
		t.Fatal(err)
	}
	parent := subagent.Parent{SessionID: "p1"}
	cases := []struct {
		provider string
		req      subagent.Request
		code     subagent.Code
		text     string
	}{
		{"plain", subagent.Request{Parent: parent, Prompt: "x", Continuable: true}, subagent.CodeUnsupportedCapability, `provider "plain" does not support "continuable"`},
		{"plain", subagent.Request{Parent: parent, Prompt: "x", Tools: []string{"read_file"}}, subagent.CodeUnsupportedCapability, `does not support "tools"`},
		{"inprocess", subagent.Request{Parent: subagent.Parent{SessionID: "p1", Depth: 1}, Prompt: "x"}, subagent.CodeDepthLimit, "a child of depth 2 exceeds maxDepth 1"},
		{"nope", subagent.Request{Parent: parent, Prompt: "x"}, subagent.CodeUnknownProvider, `no subagent provider "nope" (registered: [inprocess plain])`},
		{"inprocess", subagent.Request{Parent: parent}, subagent.CodeInvalidRequest, "without a prompt"},
	}
	for _, c := range cases {
		_, err := f.sub.Start(context.Background(), c.provider, c.req)
		if subagent.CodeOf(err) != c.code || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s %+v: err = %v, want %s %q", c.provider, c.req, err, c.code, c.text)
		}
	}
}
