package tracing

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// receiver is an OTLP/HTTP endpoint that decodes each request with the
// collector's own message type, answering the first fail requests with
// 503 and Retry-After: 1.
type receiver struct {
	mu       sync.Mutex
	fail     int
	requests []*http.Request
	spans    []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.requests = append(rc.requests, r)
	if rc.fail > 0 {
		rc.fail--
		w.Header().Set("Retry-After", "1")
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, _ := io.ReadAll(body)
	var req collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				rc.spans = append(rc.spans, sp.GetName())
			}
		}
	}
}

// upload sends one empty batch through the client, returning its error.
func upload(t *testing.T, env map[string]string) error {
	t.Helper()
	c, err := newHTTPClient(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Stop(context.Background()) }()
	return c.UploadTraces(context.Background(), []*tracepb.ResourceSpans{{}})
}

func exportOne(t *testing.T, env map[string]string) error {
	t.Helper()
	exp, err := newHTTPExporter(context.Background(), func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	_, span := tp.Tracer("t").Start(context.Background(), "the-span")
	span.End()
	return tp.Shutdown(context.Background())
}

// The exporter sends what the collector's own type decodes, to
// ENDPOINT/v1/traces (the signal's endpoint as is), with the configured
// headers and gzip; a 503 with Retry-After is retried.
func TestHTTPExporterSpeaksOTLP(t *testing.T) {
	t.Parallel()
	rc := &receiver{fail: 1}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	err := exportOne(t, map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":    srv.URL + "/",
		"OTEL_EXPORTER_OTLP_HEADERS":     "authorization=Bearer%20s3cret,x-team=a",
		"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
	})
	if err != nil {
		t.Fatal(err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.requests) != 2 || len(rc.spans) != 1 || rc.spans[0] != "the-span" {
		t.Fatalf("%d requests, spans %q", len(rc.requests), rc.spans)
	}
	r := rc.requests[1]
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" ||
		r.Header.Get("Authorization") != "Bearer s3cret" || r.Header.Get("X-Team") != "a" {
		t.Fatalf("request %s %v", r.URL.Path, r.Header)
	}

	rc2 := &receiver{}
	srv2 := httptest.NewServer(rc2)
	defer srv2.Close()
	if err := exportOne(t, map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":        "http://unused.invalid",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": srv2.URL + "/custom/path",
	}); err != nil {
		t.Fatal(err)
	}
	if len(rc2.requests) != 1 || rc2.requests[0].URL.Path != "/custom/path" || len(rc2.spans) != 1 {
		t.Fatalf("traces endpoint: %d requests, spans %q", len(rc2.requests), rc2.spans)
	}
}

// A 400 is not retried and its message is in the error; the timeout bounds
// retries of a server that stays unavailable.
func TestHTTPExporterFailures(t *testing.T) {
	t.Parallel()
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "malformed batch", http.StatusBadRequest)
	}))
	defer bad.Close()
	err := upload(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": bad.URL})
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "malformed batch") {
		t.Fatalf("400: %v", err)
	}
	rc := &receiver{fail: 1 << 30}
	busy := httptest.NewServer(rc)
	defer busy.Close()
	start := time.Now()
	err = upload(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": busy.URL, "OTEL_EXPORTER_OTLP_TIMEOUT": "300"})
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("unavailable: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the 300 ms timeout did not bound the retries: %v", d)
	}
}

// Bad configuration is an error naming the variable, never showing a
// header's value.
func TestHTTPExporterConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, "want an http:// or https:// URL"},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "authorization"}, "OTEL_EXPORTER_OTLP_TRACES_HEADERS: want key=value"},
		{map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "10s"}, "OTEL_EXPORTER_OTLP_TIMEOUT=10s: want a positive number of milliseconds"},
		{map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}, "want gzip or none"},
		{map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem"}, "OTEL_EXPORTER_OTLP_CERTIFICATE: open /nonexistent/ca.pem"},
		{map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_KEY": "/k.pem"}, "set both or neither"},
	} {
		_, err := newHTTPClient(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.env, err, tc.want)
		}
	}
}

// Without -tags otlpgrpc, asking for gRPC is an error that says how to get
// spans out (the plugin warns with it and the run goes on).
func TestGRPCNeedsTheBuildTag(t *testing.T) {
	t.Parallel()
	exp, err := newExporter(context.Background(), Export{Protocol: ProtocolGRPC})
	if withGRPC {
		if err != nil {
			t.Fatal(err)
		}
		if err := exp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf") || !strings.Contains(err.Error(), "-tags otlpgrpc") {
		t.Fatalf("%v", err)
	}
}
