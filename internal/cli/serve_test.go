package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServePrintsTheURLServesAndStops: `harness serve` (a real process)
// prints the URL with its token, the page answers with it and refuses
// without, the working directory is a workspace, and SIGTERM stops it with
// status 0. A non-loopback address without --allow-remote and TLS is a
// usage error.
func TestServePrintsTheURLServesAndStops(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	state := t.TempDir()
	manifest := agentManifest("http://127.0.0.1:9/v1", state, "  - name: workspaces\n    config: {stateDir: "+state+"}\n  - name: approval\n    config: {policy: never}\n")
	env := append(baseEnv(), "XDG_CONFIG_HOME="+t.TempDir(), "XDG_STATE_HOME="+state)

	bad := processCommand(t, dir, manifest, env, "serve", "--addr", "0.0.0.0:0")
	out, err := bad.CombinedOutput()
	if ee, ok := err.(interface{ ExitCode() int }); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "allowRemote") {
		t.Fatalf("non-loopback: %v\n%s", err, out)
	}

	cmd := processCommand(t, dir, manifest, env, "serve")
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewReader(stdout)
	line, err := lines.ReadString('\n')
	if err != nil {
		t.Fatalf("no URL: %v\n%s", err, stderr.String())
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "harness serve: open ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(url, "/?token=") {
		t.Fatalf("printed %q", line)
	}
	base, token, _ := strings.Cut(url, "/?token=")
	get := func(path, auth string) (int, string) {
		r, _ := http.NewRequest("GET", base+path, nil)
		if auth != "" {
			r.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/api/workspaces", ""); code != 401 {
		t.Fatalf("without the token: %d", code)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if code, body := get("/api/workspaces", token); code != 200 || !strings.Contains(body, real) {
		t.Fatalf("workspaces: %d %s", code, body)
	}
	// A setting saved from the page and then reset to null falls back to
	// harness.yml's value (not the plugin's default) in the running server.
	patch := func(rev string, values map[string]any) (string, string) {
		b, _ := json.Marshal(map[string]any{"revision": rev, "values": values})
		r, _ := http.NewRequest("PATCH", base+"/api/settings/approval", bytes.NewReader(b))
		r.Header.Set("Authorization", "Bearer "+token)
		r.Header.Set("Origin", base)
		r.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Revision string
			Row      struct{ Values map[string]any }
		}
		raw, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("PATCH settings: %d %s", resp.StatusCode, raw)
		}
		return out.Revision, fmt.Sprint(out.Row.Values["policy"])
	}
	code, body := get("/api/settings", token)
	var snap struct{ Revision string }
	if err := json.Unmarshal([]byte(body), &snap); code != 200 || err != nil {
		t.Fatalf("GET settings: %d %s", code, body)
	}
	rev, policy := patch(snap.Revision, map[string]any{"policy": "ask"})
	if policy != "ask" {
		t.Fatalf("set policy: %s", policy)
	}
	if _, policy = patch(rev, map[string]any{"policy": nil}); policy != "never" {
		t.Fatalf("policy after null: %s, want harness.yml's never", policy)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
	_ = os.Remove(filepath.Join(state, "workspaces.json"))
}
