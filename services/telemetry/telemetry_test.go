package telemetry_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/dshgo/harness/services/telemetry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func lookupIn(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// TRACEPARENT becomes the parent context; a malformed one is ignored.
func TestParentFromEnv(t *testing.T) {
	ctx, ok := telemetry.ParentFromEnv(lookupIn(map[string]string{"TRACEPARENT": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}))
	sc := trace.SpanContextFromContext(ctx)
	if !ok || sc.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" || sc.SpanID().String() != "b7ad6b7169203331" || !sc.IsSampled() || !sc.IsRemote() {
		t.Errorf("parent %v ok %v", sc, ok)
	}
	for _, bad := range []string{"", "00-zz-yy-01", "00-00000000000000000000000000000000-b7ad6b7169203331-01"} {
		if _, ok := telemetry.ParentFromEnv(lookupIn(map[string]string{"TRACEPARENT": bad})); ok {
			t.Errorf("TRACEPARENT %q accepted", bad)
		}
	}
	env := map[string]string{}
	telemetry.Inject(ctx, env)
	if env["TRACEPARENT"] != "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" {
		t.Errorf("Inject: %v", env)
	}
	env = map[string]string{}
	telemetry.Inject(context.Background(), env)
	if len(env) != 0 {
		t.Errorf("Inject without a span: %v", env)
	}
}

// A job's id and attempt are read back from the run process's
// environment; outside a job (or with malformed values) there are none.
func TestJobAttributes(t *testing.T) {
	attrs := telemetry.JobAttributes(lookupIn(map[string]string{telemetry.JobIDEnv: "7", telemetry.JobAttemptEnv: "2"}))
	if len(attrs) != 2 || attrs[0] != telemetry.AttrJobID.Int64(7) || attrs[1] != telemetry.AttrJobAttempt.Int(2) {
		t.Errorf("job attributes %v", attrs)
	}
	if attrs := telemetry.JobAttributes(lookupIn(map[string]string{telemetry.JobIDEnv: "x"})); len(attrs) != 0 {
		t.Errorf("malformed id: %v", attrs)
	}
}
