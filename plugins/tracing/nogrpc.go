//go:build !otlpgrpc

package tracing

import (
	"context"
	"errors"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// withGRPC says whether this binary exports over gRPC.
const withGRPC = false

// newGRPCExporter fails in a binary built without `-tags otlpgrpc`.
func newGRPCExporter(context.Context) (sdktrace.SpanExporter, error) {
	return nil, errNoGRPC
}

// errNoGRPC says how to get spans out of a binary without gRPC.
var errNoGRPC = errors.New("this harness binary was built without OTLP over gRPC: set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf (the collector's port 4318), or build harness with `-tags otlpgrpc`")
