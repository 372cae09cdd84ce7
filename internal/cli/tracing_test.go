package cli_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// otlpCollector is an OTLP/HTTP trace receiver: it decodes each export
// request (protobuf) and keeps the spans with their resources.
type otlpCollector struct {
	mu        sync.Mutex
	spans     []*tracepb.Span
	resources []map[string]string
	requests  int
}

func (c *otlpCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	var req collectortrace.ExportTraceServiceRequest
	if err == nil && (r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf") {
		err = io.ErrUnexpectedEOF
	}
	if err == nil {
		err = proto.Unmarshal(body, &req)
	}
	if err != nil {
		http.Error(w, "bad export request", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.requests++
	for _, rs := range req.ResourceSpans {
		c.resources = append(c.resources, attrMap(rs.GetResource().GetAttributes()))
		for _, ss := range rs.ScopeSpans {
			c.spans = append(c.spans, ss.Spans...)
		}
	}
	c.mu.Unlock()
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// attrMap renders OTLP attributes as strings (ints in decimal).
func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = strings.TrimSpace(strings.ReplaceAll(string(mustJSON(v.IntValue)), `"`, ""))
		case *commonpb.AnyValue_BoolValue:
			m[kv.Key] = string(mustJSON(v.BoolValue))
		case *commonpb.AnyValue_ArrayValue:
			var parts []string
			for _, e := range v.ArrayValue.Values {
				parts = append(parts, e.GetStringValue())
			}
			m[kv.Key] = "[" + strings.Join(parts, ",") + "]"
		}
	}
	return m
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

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
	col := &otlpCollector{}
	otlp := httptest.NewServer(col)
	defer otlp.Close()
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("c1", "bash", `{"command":"echo traced","description":"say it"}`),
		text("all done"),
	})
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	env := append(baseEnv(), "OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT="+otlp.URL,
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
	col.mu.Lock()
	defer col.mu.Unlock()
	byName := map[string][]*tracepb.Span{}
	for _, s := range col.spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	if len(col.spans) != 4 || len(byName["invoke_agent harness"]) != 1 || len(byName["chat m1"]) != 2 || len(byName["execute_tool bash"]) != 1 {
		var names []string
		for _, s := range col.spans {
			names = append(names, s.Name)
		}
		t.Fatalf("%d requests, spans %v\nstderr: %s", col.requests, names, stderr.String())
	}
	if len(col.resources) == 0 || col.resources[0]["service.name"] != "harness-e2e" {
		t.Errorf("resource %v", col.resources)
	}
	inv := byName["invoke_agent harness"][0]
	for _, s := range col.spans {
		if hex.EncodeToString(s.TraceId) != traceID {
			t.Errorf("%s: trace %x, want the TRACEPARENT's %s", s.Name, s.TraceId, traceID)
		}
	}
	if hex.EncodeToString(inv.ParentSpanId) != parentID {
		t.Errorf("invoke_agent: parent %x, want %s", inv.ParentSpanId, parentID)
	}
	ia := attrMap(inv.Attributes)
	for k, v := range map[string]string{"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": res.SessionID,
		"harness.job.id": "99", "gen_ai.provider.name": "test", "gen_ai.request.model": "m1", "harness.turn.reason": "stop"} {
		if ia[k] != v {
			t.Errorf("invoke_agent %s = %q, want %q (%v)", k, ia[k], v, ia)
		}
	}
	first, second := byName["chat m1"][0], byName["chat m1"][1]
	if first.StartTimeUnixNano > second.StartTimeUnixNano {
		first, second = second, first
	}
	tool := byName["execute_tool bash"][0]
	if !bytes.Equal(first.ParentSpanId, inv.SpanId) || !bytes.Equal(second.ParentSpanId, inv.SpanId) || !bytes.Equal(tool.ParentSpanId, first.SpanId) {
		t.Errorf("tree: chats' parents %x %x (want %x), tool's %x (want %x)", first.ParentSpanId, second.ParentSpanId, inv.SpanId, tool.ParentSpanId, first.SpanId)
	}
	if a := attrMap(second.Attributes); a["gen_ai.usage.input_tokens"] != "900" || a["gen_ai.usage.output_tokens"] != "12" || a["gen_ai.response.finish_reasons"] != "[stop]" {
		t.Errorf("second chat: %v", a)
	}
	if a := attrMap(tool.Attributes); a["gen_ai.tool.name"] != "bash" || a["gen_ai.tool.call.id"] != "c1" || tool.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("tool span: %v status %v", a, tool.Status)
	}
}
