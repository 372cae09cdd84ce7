package tracing

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/telemetry"
)

// Config is the tracing plugin's configuration (harness.yml row
// `name: tracing`). Whether spans are exported, and where, is decided by
// the OTEL_* environment variables (see the package doc), not here.
type Config struct {
	// AgentName is gen_ai.agent.name of the invoke_agent spans and the
	// suffix of their name (default "harness").
	AgentName string `yaml:"agentName" json:"agentName,omitempty" jsonschema:"default=harness,description=gen_ai.agent.name of the invoke_agent spans (default harness)"`
	// ShutdownTimeout bounds the flush of the spans still queued when the
	// harness stops (default 5s); spans not sent by then are lost.
	ShutdownTimeout time.Duration `yaml:"shutdownTimeout" json:"shutdownTimeout,omitempty" jsonschema:"description=Bound on flushing queued spans at exit (default 5s)"`
}

// SetDefaults sets the defaults documented on the fields.
func (c *Config) SetDefaults() { c.AgentName, c.ShutdownTimeout = "harness", 5*time.Second }

// Validate checks the fields.
func (c *Config) Validate() error {
	var issues []core.Issue
	if strings.TrimSpace(c.AgentName) == "" {
		issues = append(issues, core.Issue{Path: "agentName", Message: "must not be empty"})
	}
	if c.ShutdownTimeout <= 0 {
		issues = append(issues, core.Issue{Path: "shutdownTimeout", Message: "must be positive"})
	}
	if len(issues) > 0 {
		return &core.ConfigError{Plugin: "tracing", Issues: issues}
	}
	return nil
}

// Plugin provides the tracing [Service] and, when the environment asks
// for export, an OTLP exporter and a listener of the agent's events.
var Plugin = core.Define("tracing", apply,
	core.WithProvides(telemetry.Key.Name()),
	core.WithDescription("OpenTelemetry spans for runs, model calls and tool calls (GenAI conventions), exported over OTLP when OTEL_* variables say so"))

// Service is the tracing service ([telemetry.Service]). Safe for
// concurrent use.
type Service struct {
	tp       trace.TracerProvider
	enabled  bool
	endpoint string
	parent   context.Context
}

// Enabled reports whether spans are exported.
func (s *Service) Enabled() bool { return s.enabled }

// Exporter describes the export for `harness check`-style reports:
// "off", or the protocol and endpoint (never the headers).
func (s *Service) Exporter() string {
	if !s.enabled {
		return "off"
	}
	return s.endpoint
}

// Tracer returns the harness's tracer: a no-op one when export is off.
func (s *Service) Tracer() trace.Tracer { return s.tp.Tracer(telemetry.ScopeName) }

// Parent returns the process's parent trace context: the one in the
// TRACEPARENT environment variable, or an empty context.
func (s *Service) Parent() context.Context { return s.parent }

func apply(c *core.Context, cfg Config) error {
	log := c.Logger()
	parent, ok := telemetry.ParentFromEnv(os.LookupEnv)
	if v, set := os.LookupEnv("TRACEPARENT"); set && !ok {
		log.Warn("tracing: TRACEPARENT is not a W3C trace context; spans start a new trace", "value", v)
	}
	s := &Service{tp: noop.NewTracerProvider(), parent: parent}
	exp, err := Decide(os.LookupEnv)
	if err != nil {
		log.Warn("tracing: " + err.Error() + "; not exporting spans")
	}
	if exp.Protocol != "" {
		spanExp, err := newExporter(c.Context(), exp)
		if err != nil {
			// Like an unsupported variable: said, and the run goes on.
			log.Warn("tracing: OTLP exporter: " + err.Error() + "; not exporting spans")
		} else if err := s.start(c, cfg, exp, spanExp); err != nil {
			return err
		}
	}
	return core.Provide[telemetry.Service](c, telemetry.Key, s)
}

// newExporter makes the span exporter of the protocol.
func newExporter(ctx context.Context, exp Export) (sdktrace.SpanExporter, error) {
	if exp.Protocol == ProtocolGRPC {
		return newGRPCExporter(ctx)
	}
	return newHTTPExporter(ctx, os.LookupEnv)
}

// start makes the provider around spanExp (undone with a bounded flush)
// and listens to the agent's events.
func (s *Service) start(c *core.Context, cfg Config, exp Export, spanExp sdktrace.SpanExporter) error {
	ctx := c.Context()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(spanExp), sdktrace.WithResource(newResource(ctx, c)))
	obs := NewObserver(tp, ObserverOptions{AgentName: cfg.AgentName, Parent: s.parent, Attributes: telemetry.JobAttributes(os.LookupEnv)})
	if err := c.Effect("tracer provider", func() (func(), error) {
		return func() {
			obs.Close()
			sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
			defer cancel()
			if err := tp.Shutdown(sctx); err != nil {
				c.Logger().Warn("tracing: flushing spans", "err", err)
			}
		}, nil
	}); err != nil {
		_ = tp.Shutdown(context.Background())
		return err
	}
	s.tp, s.enabled, s.endpoint = tp, true, exp.Protocol+" "+redactURL(exp.Endpoint)
	return core.On(c, agent.Observed, obs.Handle)
}

// newResource describes this process: service.name "harness" (or
// OTEL_SERVICE_NAME), its version, OTEL_RESOURCE_ATTRIBUTES, the SDK.
func newResource(ctx context.Context, c *core.Context) *resource.Resource {
	version := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("harness"), semconv.ServiceVersion(version)),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil && res == nil {
		c.Logger().Warn("tracing: resource", "err", err)
		return resource.Default()
	}
	return res
}

// Protocols of the OTLP exporter.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Export is what the environment asks for: Protocol "" means no export.
type Export struct {
	Protocol string
	// Endpoint is the configured endpoint variable's value, or the
	// protocol's default, for messages.
	Endpoint string
}

// Decide reads the OTEL_* variables through lookup and says whether and
// how spans are exported (see the package doc for the rules). An error
// names a value it does not support (the result is then no export).
func Decide(lookup func(string) (string, bool)) (Export, error) {
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") {
		return Export{}, nil
	}
	endpoint := get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if endpoint == "" {
		endpoint = get("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	on := endpoint != ""
	if list := get("OTEL_TRACES_EXPORTER"); list != "" {
		on = false
		for _, name := range strings.Split(list, ",") {
			switch name = strings.ToLower(strings.TrimSpace(name)); name {
			case "otlp":
				on = true
			case "none", "":
			default:
				return Export{}, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: exporter %q is not supported (supported: otlp, none)", list, name)
			}
		}
	}
	if !on {
		return Export{}, nil
	}
	proto := get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = get("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch proto {
	case "", ProtocolHTTP:
		proto = ProtocolHTTP
		if endpoint == "" {
			endpoint = "http://localhost:4318"
		}
	case ProtocolGRPC:
		if endpoint == "" {
			endpoint = "http://localhost:4317"
		}
	default:
		return Export{}, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: not supported (supported: %s, %s)", proto, ProtocolHTTP, ProtocolGRPC)
	}
	return Export{Protocol: proto, Endpoint: endpoint}, nil
}

// redactURL drops the user information of an endpoint URL (a password
// there is a credential).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(not a URL)"
	}
	if u.User == nil {
		return raw
	}
	u.User = url.User("redacted")
	return u.String()
}
