package cli_test

import (
	"bytes"
	"encoding/json"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/dshgo/harness/internal/otlptest"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// `harness run` (the real binary) with OTEL_TRACES_EXPORTER=otlp and an
// endpoint exports its spans over OTLP/HTTP to that endpoint before it
// exits: the turn's invoke_agent span is a child of the TRACEPARENT the
// process was given, the model calls and the tool call hang below it
// with the GenAI attributes, the session id and the job id.
func TestRunExportsSpansOverOTLP(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	col := otlptest.New(t)
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("c1", "bash", `{"command":"echo traced","description":"say it"}`),
		text("all done"),
	})
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	env := append(baseEnv(), "OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT="+col.URL,
		"TRACEPARENT=00-"+traceID+"-"+parentID+"-01", "HARNESS_JOB_ID=99", "OTEL_SERVICE_NAME=harness-e2e")
	cmd := processCommand(t, t.TempDir(), agentManifest(srv.URL, t.TempDir(), "  - name: tracing\n"), env, "run", "-o", "json", "say traced")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, stderr.String())
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.SessionID == "" {
		t.Fatalf("result %q: %v", stdout.String(), err)
	}
	spans := col.Spans()
	byName := map[string][]otlptest.Span{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	if len(spans) != 4 || len(byName["invoke_agent harness"]) != 1 || len(byName["chat m1"]) != 2 || len(byName["execute_tool bash"]) != 1 {
		var names []string
		for _, s := range spans {
			names = append(names, s.Name)
		}
		t.Fatalf("spans %v\nstderr: %s", names, stderr.String())
	}
	if spans[0].Resource["service.name"] != "harness-e2e" {
		t.Errorf("resource %v", spans[0].Resource)
	}
	inv := byName["invoke_agent harness"][0]
	for _, s := range spans {
		if s.TraceID != traceID {
			t.Errorf("%s: trace %s, want the TRACEPARENT's %s", s.Name, s.TraceID, traceID)
		}
	}
	if inv.ParentID != parentID {
		t.Errorf("invoke_agent: parent %s, want %s", inv.ParentID, parentID)
	}
	for k, v := range map[string]string{"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": res.SessionID,
		"harness.job.id": "99", "gen_ai.provider.name": "test", "gen_ai.request.model": "m1", "harness.turn.reason": "stop"} {
		if inv.Attrs[k] != v {
			t.Errorf("invoke_agent %s = %q, want %q (%v)", k, inv.Attrs[k], v, inv.Attrs)
		}
	}
	first, second := byName["chat m1"][0], byName["chat m1"][1]
	if first.Start > second.Start {
		first, second = second, first
	}
	tool := byName["execute_tool bash"][0]
	if first.ParentID != inv.SpanID || second.ParentID != inv.SpanID || tool.ParentID != first.SpanID {
		t.Errorf("tree: chats' parents %s %s (want %s), tool's %s (want %s)", first.ParentID, second.ParentID, inv.SpanID, tool.ParentID, first.SpanID)
	}
	if a := second.Attrs; a["gen_ai.usage.input_tokens"] != "900" || a["gen_ai.usage.output_tokens"] != "12" || a["gen_ai.response.finish_reasons"] != "[stop]" {
		t.Errorf("second chat: %v", a)
	}
	if a := tool.Attrs; a["gen_ai.tool.name"] != "bash" || a["gen_ai.tool.call.id"] != "c1" || tool.Status == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("tool span: %v status %v", a, tool.Status)
	}
}
