package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/services/subprocess"
)

// runSandboxCLI runs `harness --config CFG ARGS...` in dir with only the
// subprocess-local plugin in the catalog.
func runSandboxCLI(t *testing.T, dir, manifest string, args ...string) (string, string, int) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(cfg, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := &cli.Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader("from-stdin\n"),
		Plugins:   []core.Plugin{subprocess.Plugin},
		LookupEnv: func(string) (string, bool) { return "", false },
		Getwd:     func() (string, error) { return dir, nil },
		Ctx:       context.Background()}
	code := cli.Run(append([]string{"--config", cfg}, args...), env)
	return out.String(), errb.String(), code
}

const sandboxManifest = "plugins:\n  - name: subprocess-local\n    config:\n      sandbox: {mode: workspace-write, network: off, denyRead: [\"**/.env\"]}\n"

func TestSandboxCommandAndCheckLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, errOut, code := runSandboxCLI(t, dir, sandboxManifest, "check")
	if code != 0 || !strings.HasPrefix(out, "ok: 1 plugin active\nsandbox: workspace-write, network off, via ") {
		t.Fatalf("check: %d %q %q", code, out, errOut)
	}
	if strings.Contains(out, "via none") {
		if os.Getenv("CI") != "" {
			t.Fatalf("no sandbox backend in CI: %s", out)
		}
		t.Skipf("no sandbox backend here: %s", out)
	}
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("SECRET_IN_ENV\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside, err := os.MkdirTemp(".", ".cli-sandbox-victim-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(outside) })
	outside, _ = filepath.Abs(outside)
	script := "cat; cat .env; echo ok > in.txt; echo no > " + outside + "/victim.txt; exit 7"
	out, errOut, code = runSandboxCLI(t, dir, sandboxManifest, "sandbox", "--", "bash", "-c", script)
	if code != 7 || !strings.Contains(out, "from-stdin") || strings.Contains(out, "SECRET_IN_ENV") || !strings.Contains(errOut, "harness sandbox: ") {
		t.Fatalf("sandbox: code %d out %q err %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "in.txt")); err != nil {
		t.Fatalf("workspace write: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "victim.txt")); err == nil {
		t.Fatal("sandboxed command wrote outside the workspace")
	}
	// --mode off runs it unsandboxed: the same write lands.
	_, errOut, code = runSandboxCLI(t, dir, sandboxManifest, "sandbox", "--mode", "off", "--", "bash", "-c", "echo yes > "+outside+"/victim.txt")
	if code != 0 || !strings.Contains(errOut, "none: none") {
		t.Fatalf("--mode off: %d %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(outside, "victim.txt")); err != nil {
		t.Fatalf("--mode off did not run unsandboxed: %v", err)
	}
	if _, errOut, code = runSandboxCLI(t, dir, sandboxManifest, "sandbox", "--mode", "bogus", "--", "true"); code != 2 {
		t.Fatalf("bad mode: %d %q", code, errOut)
	}
}
