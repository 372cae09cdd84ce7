package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// secretLocations is the one list of credential locations the walk plants
// (with "~/" in the case's HOME, "./" in the workspace): what the default
// denyRead ("@defaults", sandbox.DefaultDenyRead) promises to hide.
var secretLocations = []string{
	"~/.ssh/id_ed25519",
	"~/.gnupg/private-keys-v1.d/0123.key",
	"~/.aws/credentials",
	"~/.config/gcloud/application_default_credentials.json",
	"~/.azure/msal_token_cache.json",
	"~/.kube/config",
	"~/.config/gh/hosts.yml",
	"~/.docker/config.json",
	"~/.netrc",
	"~/.git-credentials",
	"~/.npmrc",
	"~/.pypirc",
	"~/.pgpass",
	"~/.cargo/credentials.toml",
	"~/.terraform.d/credentials.tfrc.json",
	"./.env",
	"./.env.local",
	"./sub/.env.production",
}

// secretMark starts every planted secret's content: no output may hold it.
const secretMark = "SECRET-VALUE-"

// plantSecrets writes secretLocations under p and returns their absolute
// paths, in order.
func plantSecrets(t *testing.T, p *project) []string {
	t.Helper()
	var paths []string
	for i, loc := range secretLocations {
		abs := filepath.Join(p.dir, strings.TrimPrefix(loc, "./"))
		if rest, ok := strings.CutPrefix(loc, "~/"); ok {
			abs = filepath.Join(p.home, rest)
		}
		writeFile(t, abs, fmt.Sprintf("%s%d %s\n", secretMark, i, loc))
		paths = append(paths, abs)
	}
	return paths
}

// The walk: every secret location of the one list is refused or hidden on
// every path the model has to a file, on the default manifest (headless,
// no -y): bash (bwrap in a shared sandbox, bwrap per command, Landlock
// forced), the MCP filesystem server (sandboxed like bash), read, grep,
// glob and the web app's file list (in process). Landlock cannot take a
// path out of a writable directory, so under it bash and the MCP server
// still read the workspace's .env files: the report says so (partial)
// and this test asserts exactly that gap, nothing more.
func TestSecretLocationsAreRefusedOnEveryPath(t *testing.T) {
	needTools(t, "bwrap", "rg", "node")
	mcpServer, err := filepath.Abs("../plugins/mcp/testdata/npm/node_modules/.bin/mcp-server-filesystem")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mcpServer); err != nil {
		missing(t, "the MCP filesystem server is not installed: npm ci --prefix plugins/mcp/testdata/npm")
	}
	p := newProject(t, map[string]string{"main.go": "package main\n"})
	secrets := plantSecrets(t, p)
	writeFile(t, filepath.Join(p.dir, "paths.txt"), strings.Join(secrets, "\n")+"\n")
	// The permission rules also refuse the MCP server's reads of the files
	// the default deny rules name (Read rules govern an MCP tool by its
	// paths); with the deny list emptied, the loop sees the sandbox alone.
	mcpRow := fmt.Sprintf("- id: mcp\n  config: {servers: {fs: {command: %s, args: [%s, %s]}}}\n", mcpServer, p.home, p.dir)
	writeFile(t, filepath.Join(p.home, ".config", "harness", "harness.yml"), mcpRow)
	files, _ := json.Marshal(secrets)
	if out := p.tool(t, "mcp__fs__read_multiple_files", map[string]any{"paths": json.RawMessage(files)}); !strings.Contains(out, "permission denied: rule") {
		t.Errorf("the default deny rules do not refuse the MCP server's read of the secret locations:\n%s", out)
	}
	mcp := mcpRow + "- id: permission\n  config: {allow: !append [mcp__fs__read_multiple_files], deny: []}\n"

	for _, v := range []struct{ name, patch string }{
		{"bwrap shared", "- {id: subprocess, config: {sandboxBackend: bwrap}}\n"},
		{"bwrap per command", "- {id: subprocess, config: {sandboxBackend: bwrap, sandboxPerCommand: true}}\n"},
		{"landlock", "- {id: subprocess, config: {sandboxBackend: landlock}}\n"},
	} {
		writeFile(t, filepath.Join(p.home, ".config", "harness", "harness.yml"), v.patch+mcp)
		out := p.tool(t, "bash", map[string]any{"command": `while read -r f; do echo "== $f"; cat "$f"; done < paths.txt; true`})
		if !strings.Contains(out, "== "+secrets[0]) {
			t.Fatalf("%s: bash did not walk the list:\n%s", v.name, out)
		}
		assertHidden(t, v.name+" bash", out, v.name == "landlock")
		out = p.tool(t, "mcp__fs__read_multiple_files", map[string]any{"paths": json.RawMessage(files)})
		if strings.Contains(out, "requires approval") || strings.Contains(out, "permission denied: rule") || !strings.Contains(out, secrets[len(secrets)-1]) {
			t.Fatalf("%s: the MCP server did not read the list:\n%s", v.name, out)
		}
		assertHidden(t, v.name+" MCP filesystem server", out, v.name == "landlock")
	}
	writeFile(t, filepath.Join(p.home, ".config", "harness", "harness.yml"), "")

	for _, s := range secrets {
		out := p.tool(t, "read", map[string]any{"file_path": s})
		if !strings.Contains(out, "is refused") && !strings.Contains(out, "permission denied") {
			t.Errorf("read %s was not refused:\n%s", s, out)
		}
		assertHidden(t, "read "+s, out, false)
	}
	for _, dir := range []string{p.home, p.dir} {
		out := p.tool(t, "grep", map[string]any{"pattern": secretMark, "path": dir})
		assertHidden(t, "grep "+dir, out, false)
		out = p.tool(t, "glob", map[string]any{"pattern": "**/*", "path": dir})
		for i, loc := range secretLocations {
			if strings.Contains(out, secrets[i]) || strings.Contains(out, strings.TrimPrefix(strings.TrimPrefix(loc, "~/"), "./")) {
				t.Errorf("glob %s lists %s:\n%s", dir, loc, out)
			}
		}
		if !strings.Contains(out, "hidden by the sandbox policy") {
			t.Errorf("glob %s does not say it hid files:\n%s", dir, out)
		}
	}
	p.webFiles(t)
}

// assertHidden fails when out holds a planted secret; with workspaceGap
// (Landlock), the workspace's .env files must be the only ones it holds.
func assertHidden(t *testing.T, what, out string, workspaceGap bool) {
	t.Helper()
	for i, loc := range secretLocations {
		leaked := strings.Contains(out, fmt.Sprintf("%s%d ", secretMark, i))
		switch {
		case leaked && !(workspaceGap && strings.HasPrefix(loc, "./")):
			t.Errorf("%s: %s is readable:\n%s", what, loc, out)
		case !leaked && workspaceGap && strings.HasPrefix(loc, "./"):
			t.Errorf("%s: %s is hidden under Landlock, which the docs say it cannot do: update docs/sandbox.md and this test", what, loc)
		}
	}
}

// tool runs `harness tool NAME ARGS` in the workspace (the default
// manifest and the case's user patch, headless) and returns its output.
func (p *project) tool(t *testing.T, name string, args map[string]any) string {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := inDir(t, p.dir, p.env(), harnessBinary(t), "tool", name, string(b))
	return out
}

// webFiles starts `harness serve` in the workspace and checks its file
// list: no secret of the workspace is listed or served.
func (p *project) webFiles(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, harnessBinary(t), "serve")
	cmd.Dir, cmd.Env = p.dir, p.env()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	open, ok := strings.CutPrefix(strings.TrimSpace(line), "harness serve: open ")
	if err != nil || !ok {
		t.Fatalf("harness serve: %q %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	u, err := url.Parse(open)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, "GET", u.Scheme+"://"+u.Host+path, nil)
		req.Header.Set("Authorization", "Bearer "+u.Query().Get("token"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	_, body := get("/api/workspaces")
	var wss []struct{ ID, Path string }
	if err := json.Unmarshal([]byte(body), &wss); err != nil || len(wss) != 1 {
		t.Fatalf("workspaces: %s", body)
	}
	for _, dir := range []string{".", "sub"} {
		code, body := get("/api/workspaces/" + wss[0].ID + "/files?path=" + url.QueryEscape(dir))
		if code != http.StatusOK || strings.Contains(body, ".env") || !strings.Contains(body, `"hidden":`) {
			t.Errorf("web file list of %s: %d %s", dir, code, body)
		}
	}
	for _, loc := range secretLocations {
		if rel, ok := strings.CutPrefix(loc, "./"); ok {
			code, body := get("/api/workspaces/" + wss[0].ID + "/files?path=" + url.QueryEscape(rel))
			if code != http.StatusForbidden || strings.Contains(body, secretMark) {
				t.Errorf("web file %s: %d %s", rel, code, body)
			}
		}
	}
}
