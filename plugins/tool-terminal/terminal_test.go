package toolterminal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/services/tools"
)

// need skips the test without the programs it drives, and fails it in CI.
func need(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed: CI must have it", n)
			}
			t.Skipf("%s is not installed", n)
		}
	}
}

// boot starts a harness from a manifest with the sandboxed subprocess
// service (workspace-write, as the default manifest), the tool registry,
// the bash tool and tool-terminal, working in dir.
func boot(t *testing.T, dir string) *tools.Registry {
	t.Helper()
	return bootWith(t, dir, "", "")
}

// bootWith is boot with tool-terminal's config rows (terminal, indented
// under its config) and more plugin rows.
func bootWith(t *testing.T, dir, terminal, rows string) *tools.Registry {
	t.Helper()
	h := harnesstest.Start(t, fmt.Sprintf(`plugins:
  - name: subprocess-local
    config:
      sandbox: {mode: workspace-write}
  - name: tools
  - name: tool-bash
    config: {cwd: %q}
  - name: tool-terminal
    config:
      cwd: %q
%s%s`, dir, dir, terminal, rows))
	return harnesstest.Service(t, h, tools.Key)
}

// call runs one tool call through the registry and returns its text; a
// failed call fails the test.
func call(t *testing.T, reg *tools.Registry, scope *core.ScopeID, name string, args map[string]any) string {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	o := reg.Execute(context.Background(), tools.Call{ID: "c", Name: name, Arguments: string(b), Scope: scope})
	text := tools.TextOf(o.Content)
	if o.IsError {
		t.Fatalf("%s %s: %s", name, b, text)
	}
	return text
}

// alive reports whether a process whose command line contains marker runs.
func alive(t *testing.T, marker string) []string {
	t.Helper()
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), marker) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
			continue // a zombie has exited
		}
		out = append(out, filepath.Base(filepath.Dir(p))+": "+strings.ReplaceAll(string(b), "\x00", " "))
	}
	return out
}

var portRE = regexp.MustCompile(`port (\d+)`)

// A server started with bash run_in_background runs in the sandbox; a
// second bash call reaches it with curl; bash_output returns what it
// printed since the last read; kill_shell stops it and its process is gone.
func TestBackgroundServerStartCurlReadKill(t *testing.T) {
	need(t, "python3", "curl", "bwrap")
	dir := t.TempDir()
	marker := "bgshell-marker-" + fmt.Sprint(time.Now().UnixNano())
	site := filepath.Join(dir, marker)
	if err := os.Mkdir(site, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(site, "hello.txt"), []byte("hello from the background\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := boot(t, dir)
	scope := core.NewScopeID("session:test", nil)

	started := call(t, reg, scope, "bash", map[string]any{"command": "python3 -u -m http.server 0 --bind 127.0.0.1 --directory " + marker, "run_in_background": true})
	if !strings.HasPrefix(started, "[started in the background as shell shell-1]") || !strings.Contains(started, "bash_output") {
		t.Fatalf("start result %q", started)
	}
	// The server prints its port once it listens.
	var port string
	var seen strings.Builder
	for deadline := time.Now().Add(30 * time.Second); port == "" && time.Now().Before(deadline); {
		out := call(t, reg, scope, "bash_output", map[string]any{"shell_id": "shell-1", "wait_ms": 200})
		if strings.Contains(out, "[shell shell-1: exited") {
			t.Fatalf("the server exited: %s", seen.String()+out)
		}
		seen.WriteString(out)
		if m := portRE.FindStringSubmatch(seen.String()); m != nil {
			port = m[1]
		}
	}
	if port == "" {
		t.Fatalf("no port printed: %s", seen.String())
	}
	if p := alive(t, marker); len(p) == 0 {
		t.Fatal("no server process carries the marker")
	}
	got := call(t, reg, scope, "bash", map[string]any{"command": "curl -sS -m 10 http://127.0.0.1:" + port + "/hello.txt"})
	if !strings.Contains(got, "hello from the background") {
		t.Fatalf("curl from a second bash call: %q", got)
	}
	// The access log line is new output; the startup line was read already.
	out := call(t, reg, scope, "bash_output", map[string]any{"shell_id": "shell-1", "wait_ms": 0})
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out, "GET /hello.txt") && time.Now().Before(deadline); {
		out += call(t, reg, scope, "bash_output", map[string]any{"shell_id": "shell-1", "wait_ms": 100})
	}
	if !strings.Contains(out, "GET /hello.txt") || strings.Contains(out, "Serving HTTP") || !strings.Contains(out, "[shell shell-1: running]") {
		t.Fatalf("second read %q: want only the access log and the running status", out)
	}
	killed := call(t, reg, scope, "kill_shell", map[string]any{"shell_id": "shell-1"})
	if !strings.Contains(killed, "[shell shell-1: killed (signal SIGTERM)]") && !strings.Contains(killed, "[shell shell-1: killed (signal SIGKILL)]") {
		t.Fatalf("kill result %q", killed)
	}
	if p := alive(t, marker); len(p) != 0 {
		t.Fatalf("after kill_shell the server still runs: %v", p)
	}
	// Another session sees no such shell.
	o := reg.Execute(context.Background(), tools.Call{ID: "x", Name: "bash_output", Arguments: `{"shell_id":"shell-1"}`, Scope: core.NewScopeID("session:other", nil)})
	if !o.IsError || !strings.Contains(tools.TextOf(o.Content), "no background shell") {
		t.Fatalf("another session read shell-1: %s", tools.TextOf(o.Content))
	}
}
