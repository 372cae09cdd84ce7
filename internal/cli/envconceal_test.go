package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// Every variable the manifest reads with !env, in any layer and under any
// key, is kept from real children (M5): a bash call of a `harness run` and
// an MCP stdio server added by a patch's insert row, whose config itself
// uses !env (M6). The server's own env entry still passes a variable
// explicitly; a variable the manifest does not read reaches both children.
func TestManifestEnvReadsAreConcealedFromChildren(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	fx := mcpFixture(t)
	work := t.TempDir()
	dump := filepath.Join(t.TempDir(), "server-env")
	uniq := fmt.Sprintf("%d", time.Now().UnixNano())
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("c1", "bash", `{"command":"env","description":"print the environment"}`),
		text("done"),
	})
	base := strings.Replace(agentManifest(srv.URL, t.TempDir(), ""), "maxRetries: 2\n", "maxRetries: !env M5BASEVAR\n", 1)
	if !strings.Contains(base, "!env M5BASEVAR") {
		t.Fatal("the test manifest changed: no maxRetries to read with !env")
	}
	patch := filepath.Join(t.TempDir(), "ins.yml")
	if err := os.WriteFile(patch, []byte(fmt.Sprintf(`- id: test
  config: {headers: {X-Custom: !env M5HDRVAR}}
- insert:
    - name: mcp
      config:
        grace: 300ms
        callTimeout: !env [M5CTVAR, 30s]
        mcpServers:
          envdump:
            command: bash
            args: ["-c", "env > %s; exec %s ok %s"]
            env: {M5PASSVAR: !env M5PASSVAR}
          docs: {url: "http://127.0.0.1:1/mcp", headers: {Authorization: !env M5NESTEDVAR}}
`, dump, fx, uniq)), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(baseEnv(),
		"M5BASEVAR=2", "M5HDRVAR=hdr-"+uniq, "M5CTVAR=30s", "M5PASSVAR=pass-"+uniq,
		"M5NESTEDVAR=nested-"+uniq, "M5PLAINVAR=plain-"+uniq)
	cmd := processCommand(t, work, base, env, "--patch", patch, "run", "-y", "show the environment")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("harness run: %v\n%s", err, out)
	}
	var bashOut string
	for _, r := range srv.Requests() {
		w, _ := r.Wire()
		for _, m := range w.Messages {
			if m.Role == "tool" && m.ToolCallID == "c1" {
				bashOut = m.Text()
			}
		}
	}
	if bashOut == "" {
		t.Fatalf("no bash result sent to the model; harness said:\n%s", out)
	}
	srvEnv, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("the MCP server did not start: %v\n%s", err, out)
	}
	for name, got := range map[string]string{"bash": bashOut, "MCP server": string(srvEnv)} {
		if !strings.Contains(got, "M5PLAINVAR=plain-"+uniq) {
			t.Errorf("%s lacks the variable the manifest does not read:\n%s", name, got)
		}
		for _, v := range []string{"M5BASEVAR", "M5HDRVAR", "M5CTVAR", "M5NESTEDVAR"} {
			if strings.Contains(got, v+"=") {
				t.Errorf("%s inherited %s, which the manifest reads with !env", name, v)
			}
		}
	}
	if strings.Contains(bashOut, "M5PASSVAR=") {
		t.Error("bash inherited M5PASSVAR, which the manifest reads with !env")
	}
	if !strings.Contains(string(srvEnv), "M5PASSVAR=pass-"+uniq) {
		t.Errorf("the MCP server lacks M5PASSVAR, set by its own env entry:\n%s", srvEnv)
	}
}
