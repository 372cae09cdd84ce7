package subagenttools_test

import (
	"context"
	"testing"
	"time"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/subagent"
)

// firstRequest reports when the router sees the first request of key.
func (r *router) firstRequest(key string, at chan<- time.Time) {
	r.mu.Lock()
	r.notify = map[string]chan<- time.Time{key: at}
	r.mu.Unlock()
}

// BenchmarkChildStartToFirstRequest measures starting an in-process child
// (session, scope, restrictions, state record) until its first model
// request reaches the server; the model's answer is not timed. The
// reference is the same for a top-level session (Open + Run) in the same
// run: "child-ns" vs "toplevel-ns".
func BenchmarkChildStartToFirstRequest(b *testing.B) {
	r := newRouter(map[string][]llmtest.Turn{})
	f := newFixtureTB(b, r)
	parent, err := f.svc.Open(context.Background(), agent.Options{Model: "test/m1"})
	if err != nil {
		b.Fatal(err)
	}
	defer parent.Close(context.Background())
	seen := make(chan time.Time, 1)
	var child, top time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r.add("#C", llmtest.Reply("ok"))
		r.firstRequest("#C", seen)
		t0 := time.Now()
		run, err := f.sub.Start(context.Background(), "inprocess", subagent.Request{
			Parent: subagent.Parent{SessionID: parent.ID(), Scope: parent.Scope(), Cwd: parent.Cwd()},
			Prompt: "#C go", Tools: []string{"read_file"}, Persona: "p",
		})
		if err != nil {
			b.Fatal(err)
		}
		child += (<-seen).Sub(t0)
		if out, err := run.Wait(context.Background()); err != nil || out.Status != subagent.StatusCompleted {
			b.Fatalf("%+v %v", out, err)
		}
		// Reference: a top-level session.
		r.add("#T", llmtest.Reply("ok"))
		r.firstRequest("#T", seen)
		t0 = time.Now()
		ss, err := f.svc.Open(context.Background(), agent.Options{Model: "test/m1"})
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan struct{})
		go func() { _, _ = ss.Run(context.Background(), "#T go"); close(done) }()
		top += (<-seen).Sub(t0)
		<-done
		_ = ss.Close(context.Background())
	}
	b.ReportMetric(float64(child.Nanoseconds())/float64(b.N), "child-ns")
	b.ReportMetric(float64(top.Nanoseconds())/float64(b.N), "toplevel-ns")
}

// BenchmarkTwoChildrenInOneStep runs parent turns whose one step starts one
// child, then two children, each child's tool sleeping 50 ms: "two-ms"
// should be "one-ms" plus a few ms ("extra-ms"), not twice it.
func BenchmarkTwoChildrenInOneStep(b *testing.B) {
	r := newRouter(map[string][]llmtest.Turn{})
	f := newFixtureTB(b, r)
	childScript := func(key string) {
		r.add(key, llmtest.Calls(call("s", "sleep", `{"ms":50}`)), llmtest.Reply("done "+key))
	}
	turn := func(calls ...llmtest.Call) time.Duration {
		r.add("", llmtest.Calls(calls...), llmtest.Reply("ok"))
		ss, err := f.svc.Open(context.Background(), agent.Options{Model: "test/m1"})
		if err != nil {
			b.Fatal(err)
		}
		defer ss.Close(context.Background())
		t0 := time.Now()
		if _, err := ss.Run(context.Background(), "go"); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	var one, two time.Duration
	b.ResetTimer()
	for b.Loop() {
		childScript("#A")
		one += turn(call("t1", "task", `{"description":"a","prompt":"#A x"}`))
		childScript("#A")
		childScript("#B")
		two += turn(call("t1", "task", `{"description":"a","prompt":"#A x"}`), call("t2", "task", `{"description":"b","prompt":"#B x"}`))
	}
	n := float64(b.N)
	b.ReportMetric(float64(one.Milliseconds())/n, "one-ms")
	b.ReportMetric(float64(two.Milliseconds())/n, "two-ms")
	b.ReportMetric(float64((two-one).Microseconds())/n/1000, "extra-ms")
}
