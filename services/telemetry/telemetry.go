package telemetry

import (
	"context"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/dshgo/harness/core"
)

// Service gives plugins (the fleet worker) the harness's tracer and the
// trace context of this process. The tracing plugin provides it, whether
// or not spans are exported. Safe for concurrent use.
type Service interface {
	// Enabled reports whether spans are exported.
	Enabled() bool
	// Exporter describes the export for `harness check`-style reports:
	// "off", or the protocol and endpoint (never the headers).
	Exporter() string
	// Tracer returns the harness's tracer: a no-op one when export is off.
	Tracer() trace.Tracer
	// Parent returns the process's parent trace context: the one in the
	// TRACEPARENT environment variable, or an empty context.
	Parent() context.Context
}

// Key is the tracing service ("tracing").
var Key = core.NewKey[Service]("tracing")

// ScopeName is the instrumentation scope of the harness's spans.
const ScopeName = "github.com/dshgo/harness"

// Environment variables of a fleet job's run process (set by the worker).
const (
	// JobIDEnv holds the job's id: the harness.job.id attribute.
	JobIDEnv = "HARNESS_JOB_ID"
	// JobAttemptEnv holds the job's attempt (1 for the first): the
	// harness.job.attempt attribute.
	JobAttemptEnv = "HARNESS_JOB_ATTEMPT"
)

// Inject writes the trace context of ctx's span into env as TRACEPARENT
// (and TRACESTATE when there is one), for a child harness process. A
// context without a valid span sets nothing.
func Inject(ctx context.Context, env map[string]string) {
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	if v := c.Get("traceparent"); v != "" {
		env["TRACEPARENT"] = v
	}
	if v := c.Get("tracestate"); v != "" {
		env["TRACESTATE"] = v
	}
}

// ParentFromEnv returns a context carrying the remote span context of the
// TRACEPARENT and TRACESTATE values lookup finds. ok is false when
// TRACEPARENT is unset or malformed (the context then carries nothing).
func ParentFromEnv(lookup func(string) (string, bool)) (ctx context.Context, ok bool) {
	tp, _ := lookup("TRACEPARENT")
	ts, _ := lookup("TRACESTATE")
	ctx = propagation.TraceContext{}.Extract(context.Background(),
		propagation.MapCarrier{"traceparent": strings.TrimSpace(tp), "tracestate": strings.TrimSpace(ts)})
	return ctx, trace.SpanContextFromContext(ctx).IsValid()
}

// JobAttributes returns harness.job.id and harness.job.attempt from the
// run process's environment (HARNESS_JOB_ID, HARNESS_JOB_ATTEMPT), or
// nothing outside a job.
func JobAttributes(lookup func(string) (string, bool)) []attribute.KeyValue {
	var out []attribute.KeyValue
	if v, ok := lookup(JobIDEnv); ok {
		if id, err := strconv.ParseInt(v, 10, 64); err == nil {
			out = append(out, AttrJobID.Int64(id))
		}
	}
	if v, ok := lookup(JobAttemptEnv); ok {
		if n, err := strconv.Atoi(v); err == nil {
			out = append(out, AttrJobAttempt.Int(n))
		}
	}
	return out
}
