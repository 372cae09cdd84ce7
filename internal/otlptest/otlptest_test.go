package otlptest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/dshgo/harness/internal/otlptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Spans a real OTLP/HTTP exporter sends arrive with their ids, parent,
// kind, attributes, links and resource; a request that is not an OTLP
// protobuf export is refused.
func TestCollectorKeepsExportedSpans(t *testing.T) {
	col := otlptest.New(t)
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(col.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "otlptest"))))
	tr := tp.Tracer("t")
	linked := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9}, SpanID: trace.SpanID{8}})
	ctx, parent := tr.Start(context.Background(), "parent")
	_, child := tr.Start(ctx, "child", trace.WithSpanKind(trace.SpanKindConsumer), trace.WithLinks(trace.Link{SpanContext: linked}),
		trace.WithAttributes(attribute.Int("n", 7), attribute.Bool("b", true), attribute.StringSlice("s", []string{"x", "y"})))
	child.End()
	parent.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := col.Spans()
	if len(got) != 2 || got[0].Name != "child" || got[1].Name != "parent" {
		t.Fatalf("spans %+v", got)
	}
	c, p := got[0], got[1]
	if c.TraceID != parent.SpanContext().TraceID().String() || c.ParentID != p.SpanID || p.ParentID != "" ||
		c.SpanID != child.SpanContext().SpanID().String() || c.Kind.String() != "SPAN_KIND_CONSUMER" {
		t.Errorf("child %+v, parent %+v", c, p)
	}
	if c.Attrs["n"] != "7" || c.Attrs["b"] != "true" || c.Attrs["s"] != "[x,y]" || c.Resource["service.name"] != "otlptest" ||
		len(c.Links) != 1 || c.Links[0] != linked.TraceID().String()+"-"+linked.SpanID().String() {
		t.Errorf("child attributes %v, resource %v, links %v", c.Attrs, c.Resource, c.Links)
	}
	res, err := http.Post(col.URL+"/v1/traces", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest || len(col.Spans()) != 2 {
		t.Errorf("a JSON request: status %d, %d spans", res.StatusCode, len(col.Spans()))
	}
}
