package lsp_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/plugins/lsp"
	"github.com/dshgo/harness/services/tools"
	"go.uber.org/goleak"
)

// fakeEnv selects the fake server mode of the test binary.
const fakeEnv = "LSP_TEST_FAKE_SERVER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeServer(mode))
	}
	goleak.VerifyTestMain(m)
}

// fakeServer is a language server that misbehaves as mode says: "oversize"
// announces a message larger than any limit; "garbage" writes no framing.
func fakeServer(mode string) int {
	buf := make([]byte, 4096)
	_, _ = os.Stdin.Read(buf) // the initialize request
	switch mode {
	case "oversize":
		fmt.Fprintf(os.Stdout, "Content-Length: %d\r\n\r\n", 1<<40)
	case "garbage":
		fmt.Fprint(os.Stdout, "this is not a header line at all and has no colon\r\n\r\n")
	}
	time.Sleep(time.Minute)
	return 0
}

var markerSeq atomic.Int64

// marker is an argument unique to this test process and call.
func marker() string {
	return fmt.Sprintf("lsp-test-marker-%d-%d", os.Getpid(), markerSeq.Add(1))
}

// survivors lists the live pids whose command line contains marker.
func survivors(marker string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), marker) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if f := strings.Fields(string(st)); len(f) > 2 && f[2] == "Z" {
				continue
			}
		}
		out = append(out, e.Name())
	}
	return out
}

// gopls returns the gopls executable; without it the test fails in CI
// (CI set) and is skipped elsewhere.
func gopls(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("gopls"); err == nil {
		return p
	}
	out, _ := exec.Command("go", "env", "GOPATH").Output()
	p := filepath.Join(strings.Split(strings.TrimSpace(string(out)), ":")[0], "bin", "gopls")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatal("gopls not installed in CI (.ci/run installs it)")
	}
	t.Skip("gopls not installed")
	return ""
}

// boot starts subprocess-local (default sandbox), tools, tool-fs and an
// lsp row with the given servers block, all in ws.
func boot(t *testing.T, ws, servers string) (*fxcore.Harness, *tools.Registry, *lsp.Manager) {
	t.Helper()
	manifest := "plugins:\n  - name: subprocess-local\n    config:\n      sandbox: {mode: workspace-write}\n  - name: tools\n" +
		"  - name: tool-fs\n    config: {cwd: " + ws + "}\n" +
		"  - name: lsp\n    config:\n      cwd: " + ws + "\n      timeout: 60s\n      servers:\n" + servers
	h := harnesstest.Start(t, manifest)
	return h, harnesstest.Service(t, h, tools.Key), harnesstest.Service(t, h, lsp.Key)
}

func call(reg *tools.Registry, name, args string) *tools.Outcome {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return reg.Execute(ctx, tools.Call{ID: "t", Name: name, Arguments: args})
}

func harnessService(t *testing.T, h *fxcore.Harness) *tools.Registry {
	t.Helper()
	return harnesstest.Service(t, h, tools.Key)
}
