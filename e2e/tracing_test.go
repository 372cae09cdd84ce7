package e2e

import (
	"strings"
	"testing"

	"github.com/dshgo/harness/internal/otlptest"
)

// Tracing on the default manifest, headless, no -y, turned on the way a
// user does, by the OTLP variables alone: a run that builds nothing but
// asks the real Go toolchain its version in the sandbox exports its turn,
// its model calls and its tool call over OTLP/HTTP to a collector; neither
// the sandboxed command nor the output sees the header's credential.
func TestTracingExportsARunsSpansOverOTLPHTTP(t *testing.T) {
	t.Parallel()
	needTools(t, "go")
	col := otlptest.New(t)
	p := newProject(t, map[string]string{"go.mod": "module example.com/traced\n\ngo 1.22\n"})
	p.extraEnv = []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + col.URL,
		"OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20otlp-e2e-secret",
	}
	o := p.run("Which Go is this?",
		bash("b1", "go env GOVERSION; env | grep -c '^OTEL_' || true", "Go version"),
		answer("It is Go."))
	o.mustSucceed(t, "It is Go.")
	r := o.toolResult(t, "b1")
	if !strings.Contains(r, "go1.") {
		t.Fatalf("the sandboxed go env did not run:\n%s", r)
	}
	if strings.Contains(r, "otlp-e2e-secret") || !strings.Contains(r, "\n0") {
		t.Fatalf("the sandboxed command saw the OTEL variables:\n%s", r)
	}
	if strings.Contains(o.stdout+o.stderr, "otlp-e2e-secret") {
		t.Fatalf("the export header's value was printed:\n%s\n%s", o.stdout, o.stderr)
	}
	spans := col.Spans()
	byName := map[string]otlptest.Span{}
	for _, s := range spans {
		byName[strings.Fields(s.Name)[0]] = s
	}
	turn, chat, tool := byName["invoke_agent"], byName["chat"], byName["execute_tool"]
	if turn.SpanID == "" || chat.SpanID == "" || tool.SpanID == "" {
		names := make([]string, len(spans))
		for i, s := range spans {
			names[i] = s.Name
		}
		t.Fatalf("spans %q: want invoke_agent, chat and execute_tool", names)
	}
	if chat.ParentID != turn.SpanID || tool.TraceID != turn.TraceID || tool.Name != "execute_tool bash" {
		t.Fatalf("span tree: turn %+v\nchat %+v\ntool %+v", turn, chat, tool)
	}
	if turn.Resource["service.name"] != "harness" {
		t.Fatalf("resource %v", turn.Resource)
	}
}
