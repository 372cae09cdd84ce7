//go:build otlpgrpc

package tracing

import (
	"context"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// withGRPC says whether this binary exports over gRPC.
const withGRPC = true

// newGRPCExporter is the OTLP/gRPC span exporter, in binaries built with
// `-tags otlpgrpc` (gRPC adds 3.6 MB).
func newGRPCExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	return otlptracegrpc.New(ctx)
}
