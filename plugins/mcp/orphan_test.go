//go:build unix

package mcp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/plugins/mcp"
)

// ownerEnv makes the test binary act as a harness (TestMain): it boots
// the mcp row given in the variable, prints "ready" once every server
// connected, and waits to be killed.
const ownerEnv = "MCP_TEST_OWNER_CONFIG"

func runOwner(cfg string) int {
	manifest := "plugins:\n  - name: subprocess-local\n  - name: tools\n  - name: mcp\n    config:\n" + indent(cfg, "      ")
	h, err := harness.New(harness.WithManifest([]byte(manifest)), harness.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		fmt.Println("owner:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		fmt.Println("owner:", err)
		return 1
	}
	m, ok := core.Lookup(h.Root.Context(), mcp.Key)
	if !ok {
		fmt.Println("owner: no mcp manager")
		return 1
	}
	if err := m.Wait(ctx); err != nil {
		fmt.Println("owner:", err)
		return 1
	}
	for _, s := range m.Servers() {
		if s.State != mcp.StateReady {
			fmt.Printf("owner: server %s is %s\n", s.Name, s.State)
			return 1
		}
	}
	fmt.Println("ready")
	time.Sleep(time.Hour) // until the test SIGKILLs this process
	return 0
}

// A harness killed with SIGKILL (its whole process group) takes its MCP
// stdio servers with it. A server exits by itself once its stdin ends; a
// launcher (bash, staying node's parent as npx does) that also started a
// helper (a browser, a language server) ignoring SIGTERM and SIGHUP does
// not: it waits for the helper, and both ran on as orphans before.
func TestServersDieWhenTheHarnessIsKilled(t *testing.T) {
	t.Parallel()
	bin := npmBin(t, "mcp-server-everything")
	mark := marker()
	launcher := fmt.Sprintf(`(trap "" TERM HUP; exec -a %s-helper sleep 3600) & %s stdio %s; wait`, mark, bin, mark)
	cfg := fmt.Sprintf("grace: 500ms\nservers:\n  launched:\n    command: bash\n    args: [-c, '%s']\n", launcher) +
		indent(fixtureServer("plain", "ok", mark), "  ")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), ownerEnv+"="+cfg)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		for _, pid := range survivors(mark) {
			var n int
			if _, err := fmt.Sscan(pid, &n); err == nil {
				_ = syscall.Kill(n, syscall.SIGKILL)
			}
		}
	})
	line, _ := bufio.NewReader(out).ReadString('\n') // the owner gives up after 60 s
	if line != "ready\n" {
		t.Fatalf("owner said %q, want ready", line)
	}
	if s := survivors(mark); len(s) != 4 {
		t.Fatalf("want bash, its helper, node and the fixture server running, got %v", s)
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for len(survivors(mark)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if s := survivors(mark); len(s) != 0 {
		t.Fatalf("servers survived the harness's SIGKILL by 10 s: %v", s)
	}
}
