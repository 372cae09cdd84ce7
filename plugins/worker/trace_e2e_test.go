package worker_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/trace"

	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/internal/otlptest"
	"github.com/dshgo/harness/internal/pgtest"
	"github.com/dshgo/harness/plugins/worker"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// harnessBinary builds cmd/harness (the run command of the jobs) into a
// directory of t's.
func harnessBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "harness")
	build := exec.Command("go", "build", "-o", bin, "github.com/dshgo/harness/cmd/harness")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the harness binary: %v\n%s", err, out)
	}
	return bin
}

// traceManifest is an agent on the scripted model at url with sessions
// and the job queue in schema, and the tracing row: the manifest of the
// worker (this process) and of the jobs' run processes.
func traceManifest(url, dsn, schema, workRoot string) string {
	return harnesstest.AgentManifest(url, fmt.Sprintf(`  - name: subprocess-local
  - name: sessions-postgres
    config: {dsn: %q, schema: %s, poolSize: 2}
  - name: agent
  - name: tool-bash
  - name: tracing
  - name: worker
    config: {dsn: %q, schema: %s, poolSize: 2, workRoot: %s, fetchPollInterval: 200ms}
`, dsn, schema, dsn, schema, workRoot))
}

// waitJob waits until job id is completed and returns it; any other final
// state, or a failed attempt, fails t.
func waitJob(t *testing.T, w *worker.Service, id int64) *rivertype.JobRow {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		j, err := w.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case j.State == rivertype.JobStateCompleted:
			return j
		case len(j.Errors) > 0 || j.State == rivertype.JobStateCancelled || j.State == rivertype.JobStateDiscarded:
			t.Fatalf("job %d: %s, errors %+v", id, j.State, j.Errors)
		case time.Now().After(deadline):
			t.Fatalf("job %d still %s after 2m", id, j.State)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitSpans waits until the collector holds n spans of trace.
func waitSpans(t *testing.T, col *otlptest.Collector, traceID string, n int) map[string][]otlptest.Span {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		byName := map[string][]otlptest.Span{}
		got := 0
		for _, s := range col.Spans() {
			if s.TraceID == traceID {
				byName[s.Name] = append(byName[s.Name], s)
				got++
			}
		}
		if got >= n {
			return byName
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace %s: %d spans after 30s, want %d: %v", traceID, got, n, byName)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A run submitted under a span and worked by a worker (River on
// PostgreSQL, the run in a harness job-run process) with tracing on is
// one trace in the collector: the submitter's span → the worker's job
// span (consumer, the job's attributes) → the run's invoke_agent → its
// chat spans (the response model the provider named) → the tool call. A
// run submitted without a trace context is a trace rooted at its job span.
func TestWorkedJobIsOneTraceUnderItsSubmitter(t *testing.T) {
	dsn, schema := pgtest.Schema(t, "wtrace")
	col := otlptest.New(t)
	srv := llmtest.New(t, []llmtest.Turn{
		llmtest.Calls(llmtest.Call{ID: "c1", Name: "bash", Args: `{"command":"echo traced","description":"say it"}`}),
		llmtest.Reply("done"),
		llmtest.Reply("quick"),
	})
	for k, v := range map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": col.URL,
		"OTEL_BSP_SCHEDULE_DELAY": "100", "OTEL_SERVICE_NAME": "fleet-test", "TRACEPARENT": "", "TRACESTATE": ""} {
		t.Setenv(k, v) // restored when t ends
		if v == "" {
			_ = os.Unsetenv(k) // a CI system's trace context must not parent the worker
		}
	}
	m := traceManifest(srv.URL, dsn, schema, t.TempDir())
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(cfg, []byte(m), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := harnessBinary(t)
	w := harnesstest.Service(t, harnesstest.Start(t, m), worker.Key)

	submitter := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{0x5b, 0x7e}, SpanID: trace.SpanID{0x5b, 1}, TraceFlags: trace.FlagsSampled})
	a, err := w.Submit(trace.ContextWithSpanContext(context.Background(), submitter), worker.Submission{Args: worker.RunArgs{Prompt: "trace me"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := worker.SubmitterTrace(a.Job); !got.Equal(submitter.WithRemote(true)) {
		t.Fatalf("stored trace context %v, want %v (metadata %s)", got, submitter, a.Job.Metadata)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- w.Work(ctx, worker.WorkOptions{Command: []string{bin, "--config", cfg, "--no-claude-settings", "job-run"},
			Env: map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "XDG_STATE_HOME": t.TempDir()}})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Work: %v", err)
		}
	}()
	first := waitJob(t, w, a.Job.ID)
	b, err := w.Submit(context.Background(), worker.Submission{Args: worker.RunArgs{Prompt: "no trace"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := worker.SubmitterTrace(b.Job); got.IsValid() {
		t.Errorf("a job submitted outside any trace stored %v (metadata %s)", got, b.Job.Metadata)
	}
	second := waitJob(t, w, b.Job.ID)

	sp := waitSpans(t, col, submitter.TraceID().String(), 5)
	if len(sp["job harness_run"]) != 1 || len(sp["invoke_agent harness"]) != 1 || len(sp["chat m1"]) != 2 || len(sp["execute_tool bash"]) != 1 {
		t.Fatalf("spans of the submitter's trace: %v", sp)
	}
	job, inv, tool := sp["job harness_run"][0], sp["invoke_agent harness"][0], sp["execute_tool bash"][0]
	if job.ParentID != submitter.SpanID().String() || job.Kind.String() != "SPAN_KIND_CONSUMER" {
		t.Errorf("job span: parent %s kind %v, want the submitter's span %s, consumer", job.ParentID, job.Kind, submitter.SpanID())
	}
	sid := worker.SessionID(first)
	for k, v := range map[string]string{"harness.job.id": fmt.Sprint(first.ID), "harness.job.attempt": "1",
		"harness.job.queue": "default", "gen_ai.conversation.id": sid} {
		if job.Attrs[k] != v || inv.Attrs[k] != v && k != "harness.job.queue" {
			t.Errorf("%s: job span %q, invoke_agent %q, want %q", k, job.Attrs[k], inv.Attrs[k], v)
		}
	}
	if inv.ParentID != job.SpanID {
		t.Errorf("invoke_agent: parent %s, want the job span %s", inv.ParentID, job.SpanID)
	}
	var firstChat otlptest.Span
	for _, c := range sp["chat m1"] {
		if c.ParentID != inv.SpanID || c.Attrs["gen_ai.response.model"] != "llmtest" || c.Attrs["gen_ai.request.model"] != "m1" {
			t.Errorf("chat: parent %s (want %s), attributes %v", c.ParentID, inv.SpanID, c.Attrs)
		}
		if c.Attrs["harness.step"] == "1" {
			firstChat = c
		}
	}
	if tool.ParentID != firstChat.SpanID {
		t.Errorf("execute_tool: parent %s, want the first chat %s", tool.ParentID, firstChat.SpanID)
	}
	for _, s := range []otlptest.Span{job, inv} {
		if s.Resource["service.name"] != "fleet-test" {
			t.Errorf("%s: resource %v", s.Name, s.Resource)
		}
	}

	// The second job: a trace of its own, rooted at its job span.
	var root otlptest.Span
	for _, s := range col.Spans() {
		if s.Name == "job harness_run" && s.Attrs["harness.job.id"] == fmt.Sprint(second.ID) {
			root = s
		}
	}
	if root.SpanID == "" || root.ParentID != "" || root.TraceID == submitter.TraceID().String() {
		t.Fatalf("second job span %+v: want a root span of a new trace", root)
	}
	sp2 := waitSpans(t, col, root.TraceID, 3)
	if inv := sp2["invoke_agent harness"]; len(inv) != 1 || inv[0].ParentID != root.SpanID {
		t.Errorf("second job's spans: %v", sp2)
	}
}

// SubmitterTrace reads the W3C trace context a submission stored in the
// job's metadata, beside River's own keys; anything else is no context.
func TestSubmitterTraceReadsTheJobMetadata(t *testing.T) {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	got := worker.SubmitterTrace(&rivertype.JobRow{Metadata: []byte(`{"output":{"text":"x"},"traceparent":"` + tp + `","tracestate":"k=v"}`)})
	if got.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" || got.SpanID().String() != "b7ad6b7169203331" ||
		!got.IsSampled() || got.TraceState().String() != "k=v" || !got.IsRemote() {
		t.Errorf("SubmitterTrace: %+v", got)
	}
	for _, meta := range []string{``, `{}`, `[]`, `{"traceparent":5}`, `{"traceparent":"00-junk-01"}`, `{"tracestate":"k=v"}`} {
		if got := worker.SubmitterTrace(&rivertype.JobRow{Metadata: []byte(meta)}); got.IsValid() {
			t.Errorf("metadata %q: %v, want no context", meta, got)
		}
	}
}

// A worker started under a TRACEPARENT runs a job that stored its
// submitter's trace context: the job span is the submitter's child and
// links the worker's context.
func TestJobSpanUnderTheSubmitterLinksTheWorkersTraceparent(t *testing.T) {
	dsn, schema := pgtest.Schema(t, "wlink")
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	col := otlptest.New(t)
	own := "00-0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c-0d0d0d0d0d0d0d0d-01"
	for k, v := range map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": col.URL,
		"OTEL_BSP_SCHEDULE_DELAY": "100", "TRACEPARENT": own} {
		t.Setenv(k, v)
	}
	w := harnesstest.Service(t, harnesstest.Start(t, fmt.Sprintf(`plugins:
  - name: subprocess-local
  - name: sessions-postgres
    config: {dsn: %q, schema: %s, poolSize: 2}
  - name: tracing
  - name: worker
    config: {dsn: %q, schema: %s, poolSize: 2, workRoot: %s, fetchPollInterval: 200ms}
`, dsn, schema, dsn, schema, t.TempDir())), worker.Key)
	submitter := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{0xa1}, SpanID: trace.SpanID{0xa2}, TraceFlags: trace.FlagsSampled})
	a, err := w.Submit(trace.ContextWithSpanContext(context.Background(), submitter), worker.Submission{Args: worker.RunArgs{Prompt: "linked"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	// A run that prints a final answer (the agent's verdict) at once.
	run := []string{sh, "-c", `echo '{"reason":"stop","result":"ok","steps":1}'`}
	go func() { done <- w.Work(ctx, worker.WorkOptions{Command: run}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Work: %v", err)
		}
	}()
	waitJob(t, w, a.Job.ID)
	job := waitSpans(t, col, submitter.TraceID().String(), 1)["job harness_run"]
	if len(job) != 1 || job[0].ParentID != submitter.SpanID().String() ||
		len(job[0].Links) != 1 || job[0].Links[0] != "0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c-0d0d0d0d0d0d0d0d" {
		t.Fatalf("job spans %+v: want one, the submitter's child, linking the worker's TRACEPARENT", job)
	}
}
