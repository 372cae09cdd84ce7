//go:build unix

package subprocess

import (
	"strings"
	"testing"
	"time"
)

// Inherited OTEL_* variables do not reach a child unless Allow names
// them; the OTLP headers variables (credentials) never do, Allow or not;
// a spawn's own Env still sets them explicitly.
func TestTelemetryEnvKeptFromChildren(t *testing.T) {
	t.Setenv("OTEL_SERVICE_NAME", "otel-probe-name")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://otel-probe:4318")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=otel-probe-secret")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-key=otel-probe-secret2")
	env := func(p EnvPolicy, set map[string]string) string {
		t.Helper()
		rt := newRuntime(t, Options{Env: p})
		spec := collectSpec(nil, "env", 1<<20, time.Second)
		spec.Env = set
		res, err := rt.Run(spec)
		if err != nil {
			t.Fatal(err)
		}
		return res.Stdout.Text()
	}
	if got := env(EnvPolicy{}, nil); strings.Contains(got, "otel-probe") {
		t.Errorf("default policy: a child inherits OTEL_ variables:\n%s", got)
	}
	got := env(EnvPolicy{Allow: []string{"OTEL_*"}}, nil)
	if !strings.Contains(got, "OTEL_SERVICE_NAME=otel-probe-name\n") || !strings.Contains(got, "OTEL_EXPORTER_OTLP_ENDPOINT=http://otel-probe:4318\n") {
		t.Errorf("allow OTEL_*: the allowed variables are missing:\n%s", got)
	}
	if strings.Contains(got, "otel-probe-secret") {
		t.Errorf("allow OTEL_*: a child inherits the OTLP headers:\n%s", got)
	}
	if got := env(EnvPolicy{}, map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "explicit"}); !strings.Contains(got, "OTEL_EXPORTER_OTLP_HEADERS=explicit\n") {
		t.Errorf("an explicit Spec.Env entry is not set:\n%s", got)
	}
	if err := (EnvPolicy{Set: map[string]string{"OTEL_SERVICE_NAME": "x"}}).Validate(); err == nil {
		t.Error("Set of an OTEL_ name without Allow is accepted")
	}
	if err := (EnvPolicy{Allow: []string{"OTEL_*"}, Set: map[string]string{"OTEL_SERVICE_NAME": "x"}}).Validate(); err != nil {
		t.Errorf("Set of an allowed OTEL_ name: %v", err)
	}
}
