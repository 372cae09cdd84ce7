package worker

import (
	"context"
	"fmt"
	"strings"

	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/plugins/tracing"
)

// JobSpanName is the name of the worker's span of one job attempt.
const JobSpanName = "job harness_run"

// jobSpan starts the span of one attempt of a job, a child of the worker
// process's TRACEPARENT when it has one: a no-op span when the manifest
// has no tracing row or its export is off. The run process's spans are
// its children (runEnv passes its context in TRACEPARENT).
func (s *Service) jobSpan(ctx context.Context, job *rivertype.JobRow, sid string) (context.Context, trace.Span) {
	ts, ok := core.Lookup(s.c, tracing.Key)
	if !ok || !ts.Enabled() {
		return ctx, noop.Span{}
	}
	if p := trace.SpanContextFromContext(ts.Parent()); p.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, p)
	}
	return ts.Tracer().Start(ctx, JobSpanName, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(tracing.AttrJobID.Int64(job.ID), tracing.AttrJobAttempt.Int(job.Attempt),
			tracing.AttrJobQueue.String(job.Queue), semconv.GenAIConversationID(sid)))
}

// endJobSpan ends a job attempt's span with the attempt's outcome: err
// non-nil (a failure, a cancellation, a snooze) is an error status.
func endJobSpan(span trace.Span, err error) {
	if err != nil {
		msg := err.Error()
		if len(msg) > 512 {
			msg = msg[:512]
		}
		span.SetStatus(codes.Error, msg)
	}
	span.End()
}

// runEnv is the run process's environment besides what the manifest
// passes: the job's id, attempt and session id; the trace context of ctx
// (TRACEPARENT, TRACESTATE) when ctx carries a span; and the worker's own
// OTEL_* variables (environ, "NAME=value"), which configure the run's
// exporter like the worker's: the subprocess service keeps OTEL_* from
// children unless they are passed explicitly, as here.
func runEnv(ctx context.Context, job *rivertype.JobRow, sid string, environ []string) map[string]string {
	env := map[string]string{
		"HARNESS_JOB_ID":      fmt.Sprint(job.ID),
		tracing.JobAttemptEnv: fmt.Sprint(job.Attempt),
		"HARNESS_SESSION_ID":  sid,
	}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "OTEL_") {
			env[k] = v
		}
	}
	tracing.Inject(ctx, env)
	return env
}
