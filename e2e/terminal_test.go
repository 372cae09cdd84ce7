package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// liveWith lists the live (not zombie) processes whose command line
// contains marker.
func liveWith(marker string) []string {
	var out []string
	files, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(b), marker) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join(filepath.Dir(f), "stat"))
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
			continue
		}
		out = append(out, filepath.Base(filepath.Dir(f))+": "+strings.ReplaceAll(string(b), "\x00", " "))
	}
	return out
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// The default configuration, headless, no -y, in the sandbox: the model
// starts a Python web server with bash run_in_background, reaches it with
// curl from a second bash call, reads the server's log with bash_output,
// stops it with kill_shell (a later curl is refused), and the server's
// process is gone. A second run leaves a shell running when it ends: the
// harness kills it with the session.
func TestBackgroundServerStartCurlReadKill(t *testing.T) {
	t.Parallel()
	needTools(t, "python3", "curl", "bwrap")
	marker := fmt.Sprintf("e2e-bgshell-%d", time.Now().UnixNano())
	p := newProject(t, map[string]string{marker + "/hello.txt": "hello from the background\n"})
	port := freePort(t)
	url := "http://127.0.0.1:" + port + "/hello.txt"
	o := p.run("Serve the site and check it.",
		call("c1", "bash", map[string]any{"command": "python3 -u -m http.server " + port + " --bind 127.0.0.1 --directory " + marker, "description": "serve the site", "run_in_background": true}),
		bash("c2", "curl -sS --retry 30 --retry-connrefused --retry-delay 1 "+url, "fetch a page"),
		call("c3", "bash_output", map[string]any{"shell_id": "shell-1"}),
		call("c4", "kill_shell", map[string]any{"shell_id": "shell-1"}),
		bash("c5", "curl -sS -m 5 "+url+"; echo curl=$?", "the server is gone"),
		answer("Served and stopped."),
	)
	o.mustSucceed(t, "Served and stopped.")
	if r := o.toolResult(t, "c1"); !strings.HasPrefix(r, "[started in the background as shell shell-1]") {
		t.Fatalf("start: %s", r)
	}
	if r := o.toolResult(t, "c2"); !strings.Contains(r, "hello from the background") {
		t.Fatalf("curl from a second bash call:\n%s", r)
	}
	if r := o.toolResult(t, "c3"); !strings.Contains(r, "Serving HTTP on 127.0.0.1 port "+port) || !strings.Contains(r, "GET /hello.txt") || !strings.HasSuffix(r, "[shell shell-1: running]") {
		t.Fatalf("bash_output: want the server's start and access log, running:\n%s", r)
	}
	if r := o.toolResult(t, "c4"); !strings.Contains(r, "[shell shell-1: killed (signal SIG") {
		t.Fatalf("kill_shell:\n%s", r)
	}
	if r := o.toolResult(t, "c5"); !strings.Contains(r, "curl=7") {
		t.Fatalf("after kill_shell the server still answers:\n%s", r)
	}
	if live := liveWith(marker); len(live) != 0 {
		t.Fatalf("the server outlived kill_shell and the run: %v", live)
	}

	// A shell still running when the session ends dies with it.
	sleeper := marker + "-sleeper"
	o = p.run("Start a long job and leave.",
		call("d1", "bash", map[string]any{"command": "sleep 600; : " + sleeper, "run_in_background": true}),
		call("d2", "bash_output", map[string]any{"shell_id": "shell-1"}),
		answer("Left it running."),
	)
	o.mustSucceed(t, "Left it running.")
	if r := o.toolResult(t, "d2"); !strings.HasSuffix(r, "[shell shell-1: running]") {
		t.Fatalf("the background shell did not run:\n%s", r)
	}
	if live := liveWith(sleeper); len(live) != 0 {
		t.Fatalf("the background shell outlived its session: %v", live)
	}
}
