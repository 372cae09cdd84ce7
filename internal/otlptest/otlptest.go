// Package otlptest is an OTLP/HTTP trace receiver for tests: a real HTTP
// server that decodes the export requests (protobuf) an OTLP exporter
// sends, in this process or in a child, and keeps their spans.
//
//	col := otlptest.New(t)
//	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
//	... run the code under test ...
//	spans := col.Spans()
package otlptest

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, with ids in hex and attribute values
// rendered as strings (ints in decimal, booleans "true"/"false", string
// arrays "[a,b]").
type Span struct {
	Name     string
	TraceID  string
	SpanID   string
	ParentID string // "" for a root span
	Kind     tracepb.Span_SpanKind
	Status   tracepb.Status_StatusCode
	Attrs    map[string]string
	Resource map[string]string
	// Start is when the span started, in nanoseconds since the Unix epoch.
	Start uint64
	// Links are the linked span contexts as "TRACEID-SPANID".
	Links []string
}

// Collector is a running receiver. Create it with [New].
type Collector struct {
	// URL is the endpoint to export to (OTEL_EXPORTER_OTLP_ENDPOINT): the
	// exporter appends /v1/traces.
	URL string

	srv *httptest.Server

	mu    sync.Mutex
	spans []Span
}

// New starts a collector and closes it when tb ends.
func New(tb testing.TB) *Collector {
	tb.Helper()
	c := &Collector{}
	c.srv = httptest.NewServer(http.HandlerFunc(c.serve))
	c.URL = c.srv.URL
	tb.Cleanup(func() {
		c.srv.CloseClientConnections()
		c.srv.Close()
	})
	return c
}

// Spans returns a copy of the spans received so far, in arrival order.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Span(nil), c.spans...)
}

// serve answers one export request: 400 for anything that is not an
// OTLP/HTTP protobuf trace export.
func (c *Collector) serve(w http.ResponseWriter, r *http.Request) {
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
	var got []Span
	for _, rs := range req.ResourceSpans {
		res := Attributes(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				got = append(got, convert(s, res))
			}
		}
	}
	c.mu.Lock()
	c.spans = append(c.spans, got...)
	c.mu.Unlock()
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func convert(s *tracepb.Span, res map[string]string) Span {
	out := Span{Name: s.Name, TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
		ParentID: hex.EncodeToString(s.ParentSpanId), Kind: s.Kind, Status: s.GetStatus().GetCode(),
		Attrs: Attributes(s.Attributes), Resource: res, Start: s.StartTimeUnixNano}
	for _, l := range s.Links {
		out.Links = append(out.Links, hex.EncodeToString(l.TraceId)+"-"+hex.EncodeToString(l.SpanId))
	}
	return out
}

// Attributes renders OTLP attributes as strings (see [Span]).
func Attributes(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = strconv.FormatInt(v.IntValue, 10)
		case *commonpb.AnyValue_BoolValue:
			m[kv.Key] = strconv.FormatBool(v.BoolValue)
		case *commonpb.AnyValue_DoubleValue:
			m[kv.Key] = strconv.FormatFloat(v.DoubleValue, 'g', -1, 64)
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
