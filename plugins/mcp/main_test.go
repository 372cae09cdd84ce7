//go:build unix

package mcp_test

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

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/plugins/mcp"
	"github.com/dshgo/harness/services/tools"
	"go.uber.org/goleak"
)

// fixture is the path of the Go fixture server built by TestMain.
var fixture string

func TestMain(m *testing.M) {
	if cfg := os.Getenv(ownerEnv); cfg != "" {
		os.Exit(runOwner(cfg))
	}
	dir, err := os.MkdirTemp("", "mcp-fixture-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixture = filepath.Join(dir, "fixture")
	build := exec.Command("go", "build", "-o", fixture, "./testdata/fixture")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the fixture server:", err)
		os.Exit(1)
	}
	code := 0
	func() {
		defer os.RemoveAll(dir)
		// The SDK delivers notifications/cancelled from a goroutine of its
		// own, bounded by a few seconds; a test that just timed out a call may
		// end before it does.
		code = runWithLeakCheck(m)
	}()
	os.Exit(code)
}

func runWithLeakCheck(m *testing.M) int {
	code := m.Run()
	if code != 0 {
		return code
	}
	if err := goleak.Find(); err != nil {
		fmt.Fprintln(os.Stderr, "goleak:", err)
		return 1
	}
	return 0
}

var markerSeq atomic.Int64

// marker returns an argument unique to this test process and call, so /proc
// checks find only the processes a test started.
func marker() string {
	return fmt.Sprintf("mcp-test-marker-%d-%d", os.Getpid(), markerSeq.Add(1))
}

// survivors lists the pids whose command line contains marker (zombies
// excluded).
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

// boot starts a harness with subprocess-local, tools and an mcp row whose
// config is cfg (YAML, indented under config:), waits for the servers and
// returns the harness, the manager and the registry. extraRows are more
// manifest rows.
func boot(t *testing.T, cfg string, extraRows ...string) (*fxcore.Harness, *mcp.Manager, *tools.Registry) {
	t.Helper()
	return bootWith(t, nil, cfg, extraRows...)
}

// bootWith is boot with harness options (a logger, say).
func bootWith(t *testing.T, opts []harness.Option, cfg string, extraRows ...string) (*fxcore.Harness, *mcp.Manager, *tools.Registry) {
	t.Helper()
	manifest := "plugins:\n  - name: subprocess-local\n  - name: tools\n" + strings.Join(extraRows, "") +
		"  - name: mcp\n    config:\n" + indent(cfg, "      ")
	return startAndWait(t, manifest, opts...)
}

// startAndWait starts the manifest, waits for its MCP servers' first
// connects and returns the harness, the manager and the registry.
func startAndWait(t *testing.T, manifest string, opts ...harness.Option) (*fxcore.Harness, *mcp.Manager, *tools.Registry) {
	t.Helper()
	h := harnesstest.Start(t, manifest, opts...)
	m := harnesstest.Service(t, h, mcp.Key)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatalf("waiting for servers: %v", err)
	}
	return h, m, harnesstest.Service(t, h, tools.Key)
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// status returns the named server's status.
func status(t *testing.T, m *mcp.Manager, name string) mcp.ServerStatus {
	t.Helper()
	for _, s := range m.Servers() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no server %q", name)
	return mcp.ServerStatus{}
}

// eventually polls cond every 20 ms for up to 20 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func call(reg *tools.Registry, name, args string) *tools.Outcome {
	return reg.Execute(context.Background(), tools.Call{ID: "t", Name: name, Arguments: args})
}
