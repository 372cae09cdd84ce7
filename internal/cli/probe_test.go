package cli_test

import (
	"os"
	"strings"
	"testing"

	"github.com/dshgo/harness/internal/sandboxtest"
)

// TestBootsThatSpawnNothingSandboxedRunNoBwrap: with the sandbox on,
// `harness tools` and `harness prompt` boot and stop without running
// bwrap, and `harness check` runs the probe once for its sandbox line. A
// bwrap first on PATH logs each run, then execs the real one.
func TestBootsThatSpawnNothingSandboxedRunNoBwrap(t *testing.T) {
	t.Parallel()
	bin, runs := sandboxtest.LoggingBwrap(t)
	env := append(baseEnv()[1:], "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	manifest := strings.Replace(agentManifest("http://127.0.0.1:1", t.TempDir(), ""), "  - name: subprocess-local\n",
		"  - name: subprocess-local\n    config:\n      sandbox: {mode: workspace-write}\n      sandboxBackend: bwrap\n", 1)
	dir := t.TempDir()
	for _, args := range [][]string{{"tools"}, {"prompt"}} {
		out, err := processCommand(t, dir, manifest, env, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("harness %s: %v\n%s", args[0], err, out)
		}
		if n := runs(); n != 0 {
			t.Fatalf("harness %s ran bwrap %d times, want none", args[0], n)
		}
	}
	out, err := processCommand(t, dir, manifest, env, "check").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "\nsandbox: workspace-write, network off, via bwrap: full\n") {
		t.Fatalf("harness check: %v\n%s", err, out)
	}
	if n := runs(); n != 1 {
		t.Fatalf("harness check ran bwrap %d times, want 1 (the probe)", n)
	}
}
