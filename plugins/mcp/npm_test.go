//go:build unix

package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dshgo/harness/plugins/mcp"
	"github.com/dshgo/harness/services/tools"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// npmBin returns the path of an npm-installed server under testdata/npm
// (installed by .ci/run with npm ci). In CI a missing server fails the
// test; elsewhere it skips with the command that installs it.
func npmBin(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "npm", "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	_, nodeErr := exec.LookPath("node")
	_, binErr := os.Stat(p)
	if nodeErr == nil && binErr == nil {
		return p
	}
	msg := fmt.Sprintf("%s is not installed (node: %v; %v): run `npm ci --prefix plugins/mcp/testdata/npm`", name, nodeErr, binErr)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// credentialName is the subprocess service's credential pattern.
var credentialName = regexp.MustCompile(`(?i)KEY|PASSWORD|SECRET|TOKEN|CREDENTIAL`)

func TestServerEverythingOverStdio(t *testing.T) {
	bin := npmBin(t, "mcp-server-everything")
	t.Setenv("MCP_TEST_API_TOKEN", "must-not-leak")
	t.Setenv("MCP_TEST_PLAIN", "inherited")
	mark := marker()
	_, m, reg := boot(t, fmt.Sprintf("mcpServers:\n  everything:\n    command: %s\n    args: [stdio, %s]\n    env: {MCP_EXPLICIT: given}\n", bin, mark))
	st := status(t, m, "everything")
	if st.State != mcp.StateReady || len(st.Tools) < 10 {
		t.Fatalf("status %+v", st)
	}
	if o := call(reg, "mcp__everything__echo", `{"message":"hello"}`); o.IsError || tools.TextOf(o.Content) != "Echo: hello" {
		t.Fatalf("echo: %+v", o)
	}
	if o := call(reg, "mcp__everything__get-sum", `{"a":2,"b":40}`); o.IsError || !strings.Contains(tools.TextOf(o.Content), "42") {
		t.Fatalf("get-sum: %+v", o)
	}
	// The server's environment: explicit entries and the scrubbed parent
	// environment, no credential-named variable.
	o := call(reg, "mcp__everything__get-env", `{}`)
	var env map[string]string
	if err := json.Unmarshal([]byte(tools.TextOf(o.Content)), &env); err != nil {
		t.Fatalf("get-env: %v: %s", err, tools.TextOf(o.Content))
	}
	if env["MCP_EXPLICIT"] != "given" || env["MCP_TEST_PLAIN"] != "inherited" {
		t.Fatalf("env lacks the explicit or plain variable: %v", env)
	}
	for k := range env {
		if credentialName.MatchString(k) {
			t.Errorf("server environment holds credential-named %s", k)
		}
	}
	if tool, _ := reg.Get("mcp__everything__get-env", nil); !tool.ReadOnly() {
		t.Error("get-env has readOnlyHint but is not read-only")
	}
	// structuredContent is carried by the text block: not sent twice.
	o = call(reg, "mcp__everything__get-structured-content", `{"location":"Chicago"}`)
	if o.IsError || len(o.Content) != 1 || !strings.Contains(o.Content[0].Text, `"temperature":36`) {
		t.Fatalf("structured content: %+v", o.Content)
	}
	o = call(reg, "mcp__everything__get-tiny-image", `{}`)
	var images int
	for _, c := range o.Content {
		if c.Type == "image" && c.MimeType == "image/png" && len(c.Data) > 100 {
			images++
		}
	}
	if o.IsError || images != 1 {
		t.Fatalf("tiny image: %+v", o.Content)
	}
	o = call(reg, "mcp__everything__get-resource-links", `{"count":2}`)
	if o.IsError || strings.Count(tools.TextOf(o.Content), "[resource link] ") != 2 {
		t.Fatalf("resource links: %s", tools.TextOf(o.Content))
	}
}

func TestLauncherAndServerDieTogether(t *testing.T) {
	t.Parallel()
	bin := npmBin(t, "mcp-server-everything")
	mark := marker()
	// bash stays the parent of node (the command is not its last), as npx
	// stays the parent of the real server.
	h, _, reg := boot(t, fmt.Sprintf("grace: 500ms\nservers:\n  launched:\n    command: bash\n    args: [-c, '%s stdio %s; true']\n", bin, mark))
	if o := call(reg, "mcp__launched__echo", `{"message":"x"}`); o.IsError {
		t.Fatalf("echo: %+v", o)
	}
	if s := survivors(mark); len(s) != 2 {
		t.Fatalf("want bash and node, got %v", s)
	}
	if err := h.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s := survivors(mark); len(s) != 0 {
		t.Fatalf("survivors: %v", s)
	}
}

func TestServerEverythingOverStreamableHTTP(t *testing.T) {
	t.Parallel()
	bin := npmBin(t, "mcp-server-everything")
	port := freePort(t)
	mark := marker()
	srv := exec.Command(bin, "streamableHttp", mark)
	srv.Env = append(os.Environ(), "PORT="+port)
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
		_ = srv.Wait()
	})
	url := "http://127.0.0.1:" + port + "/mcp"
	waitListening(t, port)
	_, m, reg := boot(t, fmt.Sprintf("mcpServers:\n  web:\n    type: http\n    url: %s\n    timeout: 1s\n", url))
	if st := status(t, m, "web"); st.State != mcp.StateReady || st.Transport != "http" {
		t.Fatalf("status %+v", st)
	}
	if o := call(reg, "mcp__web__echo", `{"message":"over http"}`); o.IsError || tools.TextOf(o.Content) != "Echo: over http" {
		t.Fatalf("echo: %+v", o)
	}
	o := call(reg, "mcp__web__trigger-long-running-operation", `{"duration":30,"steps":30}`)
	if !o.IsError || o.Error.Code != tools.CodeToolTimeout || !strings.Contains(tools.TextOf(o.Content), `mcp server "web": tool "trigger-long-running-operation" timed out after 1s`) {
		t.Fatalf("long-running operation past the timeout: %+v", o)
	}
}

// The configured headers reach an HTTP server on every request (a Go SDK
// server in this process records them).
func TestHTTPHeadersAreSent(t *testing.T) {
	t.Setenv("MCP_TEST_AUTH", "Bearer from-env")
	srv := sdk.NewServer(&sdk.Implementation{Name: "headers", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "ping"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil, nil
	})
	var mu sync.Mutex
	var seen []string
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close) // after the harness's cleanup: the event stream is open until then
	_, _, reg := boot(t, fmt.Sprintf("servers:\n  h:\n    url: %s\n    headers: {Authorization: !env MCP_TEST_AUTH}\n", hs.URL))
	if o := call(reg, "mcp__h__ping", `{}`); o.IsError || tools.TextOf(o.Content) != "pong" {
		t.Fatalf("ping: %+v", o)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < 3 {
		t.Fatalf("requests: %v", seen)
	}
	for _, s := range seen {
		if !strings.HasSuffix(s, " Bearer from-env") {
			t.Fatalf("a request without the header: %v", seen)
		}
	}
}

func TestServerFilesystemOverStdio(t *testing.T) {
	t.Parallel()
	bin := npmBin(t, "mcp-server-filesystem")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("remember the milk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The workspace (cwd) is the root the client advertises; the server
	// replaces its argument directories with the roots.
	_, m, reg := boot(t, fmt.Sprintf("cwd: %s\nservers:\n  fs:\n    command: %s\n    args: [%s]\n", dir, bin, dir))
	if st := status(t, m, "fs"); st.State != mcp.StateReady {
		t.Fatalf("status %+v", st)
	}
	o := call(reg, "mcp__fs__read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "notes.txt")))
	if o.IsError || !strings.Contains(tools.TextOf(o.Content), "remember the milk") {
		t.Fatalf("read_text_file: %+v", o)
	}
	// The server sends the file as a text block and again as
	// structuredContent {"content": …}: the model gets it once (issue 35).
	if len(o.Content) != 1 || strings.Count(tools.TextOf(o.Content), "remember the milk") != 1 {
		t.Fatalf("read_text_file: the file reaches the model %d times in %d blocks: %+v",
			strings.Count(tools.TextOf(o.Content), "remember the milk"), len(o.Content), o.Content)
	}
	o = call(reg, "mcp__fs__read_text_file", `{"path":"/etc/passwd"}`)
	if !o.IsError || o.Error.Code != mcp.CodeServerError || !strings.Contains(tools.TextOf(o.Content), "denied") {
		t.Fatalf("outside the allowed directory: %+v", o)
	}
}

func freePort(t *testing.T) string { return freePortTB(t) }

// waitListening waits until 127.0.0.1:port accepts connections.
func waitListening(tb testing.TB, port string) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("nothing listens on port %s", port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freePortTB(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// A stdio server with sandbox: read-only cannot write, even inside the
// directory it serves; the same server unsandboxed can.
func TestSandboxedServerCannotWrite(t *testing.T) {
	t.Parallel()
	bin := npmBin(t, "mcp-server-filesystem")
	// The sandbox's /tmp is private: a checkout under /tmp is hidden
	// inside it except for the server's working directory. So the working
	// directory is this package's (it holds the npm tree) and the victim
	// lives in it, wherever the checkout is.
	pkg, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(filepath.Join(pkg, "testdata"), "victim-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	_, m, reg := boot(t, fmt.Sprintf("cwd: %s\nservers:\n  ro:\n    command: %s\n    args: [%s]\n    sandbox: {mode: read-only}\n  rw:\n    command: %s\n    args: [%s]\n", pkg, bin, dir, bin, dir))
	st := status(t, m, "ro")
	if st.State != mcp.StateReady || st.Sandbox == nil || st.Sandbox.Enforcement == "none" {
		t.Fatalf("sandboxed server: %+v (sandbox %+v)", st, st.Sandbox)
	}
	if rw := status(t, m, "rw"); rw.Sandbox != nil {
		t.Fatalf("an entry without sandbox: is sandboxed: %+v", rw.Sandbox)
	}
	target := filepath.Join(dir, "out.txt")
	o := call(reg, "mcp__ro__write_file", fmt.Sprintf(`{"path":%q,"content":"x"}`, target))
	if !o.IsError {
		t.Fatalf("write in a read-only sandbox succeeded: %+v", o)
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("the sandboxed server wrote the file")
	}
	if o := call(reg, "mcp__rw__write_file", fmt.Sprintf(`{"path":%q,"content":"x"}`, target)); o.IsError {
		t.Fatalf("unsandboxed write: %+v", o)
	}
}
