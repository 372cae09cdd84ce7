package cli_test

import (
	"testing"

	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// Model requests made by the CLI carry User-Agent: harness/VERSION.
func TestModelRequestsCarryTheHarnessUserAgent(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t, []llmtest.Turn{text("ok")})
	r := runAgent(t, t.TempDir(), agentManifest(srv.URL, t.TempDir(), ""), "", "run", "hi")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	if got, want := reqs[0].Header.Get("User-Agent"), "harness/"+cli.Version; got != want {
		t.Fatalf("User-Agent %q, want %q", got, want)
	}
}
