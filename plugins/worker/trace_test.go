package worker

import (
	"context"
	"testing"

	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/trace"

	"github.com/dshgo/harness/services/telemetry"
)

// A job's run process gets the job's id, attempt and session id, the
// worker's job span as TRACEPARENT, and the worker's OTEL_* variables
// (nothing else from the worker's environment); the run's tracing reads
// the job attributes and the parent back from that environment.
func TestRunEnvCarriesTheJobAndTraceContext(t *testing.T) {
	t.Parallel()
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{0xaa, 1}, SpanID: trace.SpanID{0xbb, 2}, TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	job := &rivertype.JobRow{ID: 7, Attempt: 2, Queue: "default"}
	env := runEnv(ctx, job, "job-7-20260101T000000", []string{"PATH=/bin", "OTEL_SERVICE_NAME=fleet", "OTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318", "NOT_OTEL_X=1"})
	want := map[string]string{
		"HARNESS_JOB_ID": "7", "HARNESS_JOB_ATTEMPT": "2", "HARNESS_SESSION_ID": "job-7-20260101T000000",
		"TRACEPARENT":       "00-aa010000000000000000000000000000-bb02000000000000-01",
		"OTEL_SERVICE_NAME": "fleet", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
	}
	if len(env) != len(want) {
		t.Errorf("env %v, want %v", env, want)
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	attrs := telemetry.JobAttributes(lookup)
	if len(attrs) != 2 || attrs[0] != telemetry.AttrJobID.Int64(7) || attrs[1] != telemetry.AttrJobAttempt.Int(2) {
		t.Errorf("job attributes %v", attrs)
	}
	parent, ok := telemetry.ParentFromEnv(lookup)
	if got := trace.SpanContextFromContext(parent); !ok || got.TraceID() != sc.TraceID() || got.SpanID() != sc.SpanID() {
		t.Errorf("parent read back: %v %v", got, ok)
	}
	// Without a span (tracing off in the worker) no TRACEPARENT is set.
	if env := runEnv(context.Background(), job, "s", nil); env["TRACEPARENT"] != "" {
		t.Errorf("TRACEPARENT without a span: %v", env)
	}
}
