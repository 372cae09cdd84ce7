//go:build !otlpgrpc

package tracing

import (
	"context"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// withGRPC says whether this binary exports over gRPC.
const withGRPC = false

// newGRPCExporter fails in a binary built without `-tags otlpgrpc`.
func newGRPCExporter(context.Context) (sdktrace.SpanExporter, error) {
	return nil, errNoGRPC
}
