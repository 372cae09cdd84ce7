package harness_test

import (
	"os/exec"
	"strings"
	"testing"
)

// notLinked are module paths the default harness binary must not link:
// each came in once through a dependency and cost megabytes.
var notLinked = map[string]string{
	"google.golang.org/grpc":                 "OTLP over gRPC is built only with -tags otlpgrpc (plugins/tracing); 3.6 MB with HTTP/2",
	"github.com/grpc-ecosystem/grpc-gateway": "came with the OTLP collector package otlptracehttp imports; plugins/tracing encodes the request itself",
	"github.com/openai/openai-go":            "the provider adapters speak the wire protocol themselves",
}

// The default binary (`go build ./cmd/harness`, no tags) links none of
// notLinked.
func TestDefaultBinaryLinksNoneOfNotLinked(t *testing.T) {
	t.Parallel()
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "./cmd/harness").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for mod, why := range notLinked {
			if pkg == mod || strings.HasPrefix(pkg, mod+"/") {
				t.Errorf("cmd/harness links %s (%s)", pkg, why)
			}
		}
	}
}
