package tracing_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/plugins/tracing"
	"github.com/dshgo/harness/services/telemetry"
)

// otelVars are every variable Decide reads.
var otelVars = []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
	"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"}

func lookupIn(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// Export is off unless an exporter or an endpoint is named; none and
// OTEL_SDK_DISABLED win; unsupported values are errors (and no export).
func TestDecide(t *testing.T) {
	for _, c := range []struct {
		name    string
		env     map[string]string
		want    tracing.Export
		wantErr bool
	}{
		{"nothing set", map[string]string{}, tracing.Export{}, false},
		{"unrelated OTEL variable", map[string]string{"OTEL_SERVICE_NAME": "x"}, tracing.Export{}, false},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, tracing.Export{Protocol: "http/protobuf", Endpoint: "http://c:4318"}, false},
		{"traces endpoint wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b/v1/traces"}, tracing.Export{Protocol: "http/protobuf", Endpoint: "http://b/v1/traces"}, false},
		{"exporter otlp alone", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, tracing.Export{Protocol: "http/protobuf", Endpoint: "http://localhost:4318"}, false},
		{"grpc", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, tracing.Export{Protocol: "grpc", Endpoint: "http://localhost:4317"}, false},
		{"traces protocol wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, tracing.Export{Protocol: "http/protobuf", Endpoint: "http://c"}, false},
		{"none", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, tracing.Export{}, false},
		{"disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, tracing.Export{}, false},
		{"empty values are unset", map[string]string{"OTEL_TRACES_EXPORTER": "", "OTEL_EXPORTER_OTLP_ENDPOINT": " "}, tracing.Export{}, false},
		{"unsupported exporter", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, tracing.Export{}, true},
		{"unsupported protocol", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, tracing.Export{}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := tracing.Decide(lookupIn(c.env))
			if got != c.want || (err != nil) != c.wantErr {
				t.Errorf("Decide(%v) = %+v, %v; want %+v, error %v", c.env, got, err, c.want, c.wantErr)
			}
		})
	}
}

// bootTracing applies the tracing plugin alone and returns its service
// and the root (disposed at cleanup, or earlier by the test).
func bootTracing(t *testing.T) (telemetry.Service, *core.Root) {
	t.Helper()
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = root.Dispose(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := root.Context().Plugin(tracing.Plugin, nil).Await(ctx); err != nil {
		t.Fatal(err)
	}
	s, ok := core.Lookup(root.Context(), telemetry.Key)
	if !ok {
		t.Fatal("no tracing service")
	}
	return s, root
}

// Without OTEL_* variables the plugin is off: no exporter, a no-op
// tracer, no goroutine left (goleak in TestMain), and nothing connects to
// the SDK's default endpoint, not even at shutdown, when an exporter
// flushes (a listener there sees no connection).
func TestOffByDefault(t *testing.T) {
	for _, k := range otelVars {
		t.Setenv(k, "")
	}
	accepted := make(chan struct{}, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:4318")
	if err != nil {
		t.Logf("127.0.0.1:4318 is taken (%v): the connection check is skipped", err)
	} else {
		go func() {
			if c, err := ln.Accept(); err == nil {
				accepted <- struct{}{}
				c.Close()
			}
		}()
		defer ln.Close()
	}
	s, root := bootTracing(t)
	if s.Enabled() || s.Exporter() != "off" {
		t.Fatalf("enabled %v exporter %q", s.Enabled(), s.Exporter())
	}
	_, span := s.Tracer().Start(context.Background(), "x")
	if span.SpanContext().IsValid() {
		t.Error("the off tracer makes real spans")
	}
	span.End()
	if err := root.Dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-accepted:
		t.Error("something connected to the default OTLP endpoint")
	default:
	}
}

// With OTEL_TRACES_EXPORTER=otlp and no endpoint, the plugin exports to
// the default endpoint: the listener there sees the flush at shutdown
// (the counterpart of TestOffByDefault, showing its check can fail).
func TestOnConnectsToTheDefaultEndpoint(t *testing.T) {
	for _, k := range otelVars {
		t.Setenv(k, "")
	}
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2000")
	ln, err := net.Listen("tcp", "127.0.0.1:4318")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("127.0.0.1:4318 is taken in CI: %v", err)
		}
		t.Skipf("127.0.0.1:4318 is taken: %v", err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	s, root := bootTracing(t)
	if !s.Enabled() || s.Exporter() != "http/protobuf http://localhost:4318" {
		t.Fatalf("enabled %v exporter %q", s.Enabled(), s.Exporter())
	}
	_, span := s.Tracer().Start(context.Background(), "x")
	span.End()
	_ = root.Dispose(context.Background())
	select {
	case <-accepted:
	default:
		t.Error("no connection to the default endpoint at shutdown")
	}
}
