package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/telemetry"
)

// JobSpanName is the name of the worker's span of one job attempt.
const JobSpanName = "job harness_run"

// Keys of a job's River metadata that hold the submitter's W3C trace
// context (the values of the traceparent and tracestate headers).
const (
	MetaTraceParent = "traceparent"
	MetaTraceState  = "tracestate"
)

// traceMetadata is the metadata of a job submitted under ctx: the trace
// context of ctx's span, else of the process's TRACEPARENT (as the
// tracing service read it), under MetaTraceParent and MetaTraceState; nil
// when there is neither (or no tracing row).
func (s *Service) traceMetadata(ctx context.Context) []byte {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		ts, ok := core.Lookup(s.c, telemetry.Key)
		if !ok {
			return nil
		}
		ctx = ts.Parent()
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	if c.Get(MetaTraceParent) == "" {
		return nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil
	}
	return b
}

// SubmitterTrace returns the trace context stored with job by its
// submission (see [Service.Submit]): invalid when there is none.
func SubmitterTrace(job *rivertype.JobRow) trace.SpanContext {
	var meta map[string]json.RawMessage
	if json.Unmarshal(job.Metadata, &meta) != nil {
		return trace.SpanContext{}
	}
	c := propagation.MapCarrier{}
	for _, k := range []string{MetaTraceParent, MetaTraceState} {
		var v string
		if json.Unmarshal(meta[k], &v) == nil {
			c[k] = v
		}
	}
	return trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), c))
}

// jobSpan starts the span of one attempt of a job: a no-op span when the
// manifest has no tracing row or its export is off. Its parent is the
// trace context stored with the job by its submitter, else the worker
// process's TRACEPARENT; with both, the worker's is a link. The run
// process's spans are its children (runEnv passes its context in
// TRACEPARENT).
func (s *Service) jobSpan(ctx context.Context, job *rivertype.JobRow, sid string) (context.Context, trace.Span) {
	ts, ok := core.Lookup(s.c, telemetry.Key)
	if !ok || !ts.Enabled() {
		return ctx, noop.Span{}
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(telemetry.AttrJobID.Int64(job.ID), telemetry.AttrJobAttempt.Int(job.Attempt),
			telemetry.AttrJobQueue.String(job.Queue), semconv.GenAIConversationID(sid))}
	own, submitter := trace.SpanContextFromContext(ts.Parent()), SubmitterTrace(job)
	switch {
	case submitter.IsValid():
		ctx = trace.ContextWithRemoteSpanContext(ctx, submitter)
		if own.IsValid() && !own.Equal(submitter) {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: own}))
		}
	case own.IsValid():
		ctx = trace.ContextWithRemoteSpanContext(ctx, own)
	}
	return ts.Tracer().Start(ctx, JobSpanName, opts...)
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
		"HARNESS_JOB_ID":        fmt.Sprint(job.ID),
		telemetry.JobAttemptEnv: fmt.Sprint(job.Attempt),
		"HARNESS_SESSION_ID":    sid,
	}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "OTEL_") {
			env[k] = v
		}
	}
	telemetry.Inject(ctx, env)
	return env
}
