package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dshgo/harness/internal/acp"
	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/internal/cli/agente2e"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// acpClient is the client side of an in-process `harness acp`, on the Go
// ACP SDK: it records the updates and permission requests, answers each
// question with allow, and cancels the turn when cancelOn starts running.
type acpClient struct {
	conn     *sdk.ClientSideConnection
	cancelOn string

	mu      sync.Mutex
	updates []sdk.SessionNotification
	asked   []sdk.RequestPermissionRequest
}

var _ sdk.Client = (*acpClient)(nil)

func (c *acpClient) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n)
	c.mu.Unlock()
	if u := n.Update.ToolCallUpdate; u != nil && string(u.ToolCallId) == c.cancelOn && u.Status != nil && *u.Status == sdk.ToolCallStatusInProgress {
		return c.conn.Cancel(ctx, sdk.CancelNotification{SessionId: n.SessionId})
	}
	return nil
}

func (c *acpClient) RequestPermission(_ context.Context, r sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asked = append(c.asked, r)
	c.mu.Unlock()
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("allow_once")}, nil
}

func (c *acpClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodFsReadTextFile)
}

func (c *acpClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodFsWriteTextFile)
}

func (c *acpClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalCreate)
}

func (c *acpClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalKill)
}

func (c *acpClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalOutput)
}

func (c *acpClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalRelease)
}

func (c *acpClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalWaitForExit)
}

// seen returns the updates and questions so far.
func (c *acpClient) seen() ([]sdk.SessionNotification, []sdk.RequestPermissionRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sdk.SessionNotification(nil), c.updates...), append([]sdk.RequestPermissionRequest(nil), c.asked...)
}

// `harness acp` in this process (so the race detector watches the
// server), driven by the Go ACP SDK's client: in the permission row's
// default mode a command asks (the client allows it) and streams pending
// → in_progress → completed; a todo list becomes a plan update; a long
// command is cancelled (failed, stopReason cancelled); the end of stdin
// ends the command with exit 0.
func TestACPInProcess(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("t1", "todo_write", `{"todos":[{"content":"Greet","status":"in_progress","activeForm":"Greeting"},{"content":"Wait","status":"pending"}]}`),
		toolCall("b1", "bash", `{"command":"echo hi-from-acp"}`),
		text("Greeted."),
		toolCall("b2", "bash", `{"command":"sleep 30"}`),
	})
	dir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	extra := "  - name: approval\n  - name: permission\n    config: {mode: default}\n  - name: tool-todo\n"
	if err := os.WriteFile(cfg, []byte(agentManifest(srv.URL, t.TempDir(), extra)), 0o644); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errb := &syncBuffer{}
	env := &cli.Env{Stdin: inR, Stdout: outW, Stderr: errb, Plugins: agente2e.Needed(),
		LookupEnv: func(string) (string, bool) { return "", false }, Getwd: func() (string, error) { return dir, nil },
		Ctx: context.Background()}
	code := make(chan int, 1)
	go func() {
		code <- cli.Run([]string{"--config", cfg, "acp"}, env)
		_ = outW.Close()
	}()
	c := &acpClient{cancelOn: "b2"}
	c.conn = sdk.NewClientSideConnection(c, inW, outR)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	s, err := c.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v\n%s", err, errb.String())
	}
	if s.Modes == nil || s.Modes.CurrentModeId != "default" {
		t.Errorf("modes: %+v", s.Modes)
	}
	r, err := c.conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("Greet.")}})
	if err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("first prompt: %+v %v\n%s", r, err, errb.String())
	}
	if _, asked := c.seen(); len(asked) != 1 || asked[0].ToolCall.ToolCallId != "b1" {
		t.Fatalf("after the first prompt: want one question, for b1: %+v\n%s", asked, errb.String())
	}
	r, err = c.conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("Wait.")}})
	if err != nil || r.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("second prompt: %+v %v\n%s", r, err, errb.String())
	}
	_ = inW.Close()
	select {
	case got := <-code:
		if got != 0 {
			t.Errorf("exit %d\n%s", got, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("harness acp did not end\n%s", errb.String())
	}
	<-c.conn.Done()

	updates, asked := c.seen()
	var b1, b2 []string
	var plan *sdk.SessionUpdatePlan
	for _, n := range updates {
		u := n.Update
		switch {
		case u.ToolCall != nil:
			if u.ToolCall.ToolCallId == "b1" {
				b1 = append(b1, string(u.ToolCall.Status))
			}
		case u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil:
			switch u.ToolCallUpdate.ToolCallId {
			case "b1":
				b1 = append(b1, string(*u.ToolCallUpdate.Status))
			case "b2":
				b2 = append(b2, string(*u.ToolCallUpdate.Status))
			}
		case u.Plan != nil:
			plan = u.Plan
		}
	}
	if got := strings.Join(b1, " "); got != "pending in_progress completed" {
		t.Errorf("b1 statuses %q", got)
	}
	if len(b2) == 0 || b2[len(b2)-1] != "failed" {
		t.Errorf("b2 statuses %q, want failed last", b2)
	}
	if plan == nil || len(plan.Entries) != 2 || plan.Entries[0].Content != "Greet" || plan.Entries[0].Status != sdk.PlanEntryStatusInProgress {
		p, _ := json.Marshal(plan)
		t.Errorf("plan update: %s", p)
	}
	var askedIDs []string
	for _, a := range asked {
		askedIDs = append(askedIDs, string(a.ToolCall.ToolCallId))
	}
	if got := strings.Join(askedIDs, " "); got != "b1 b2" {
		t.Errorf("questions for %q, want b1 b2", got)
	}
}

// An MCP server the client passes in session/new runs for the session, as
// if the mcp row named it: the model is offered its tools and calls one.
func TestACPClientMCPServerRuns(t *testing.T) {
	fx := mcpFixture(t)
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("m1", "mcp__fx__echo", `{"text":"through the client's server"}`),
		text("Echoed."),
	})
	dir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(cfg, []byte(agentManifest(srv.URL, t.TempDir(), "  - name: mcp\n    config: {grace: 300ms}\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errb := &syncBuffer{}
	env := &cli.Env{Stdin: inR, Stdout: outW, Stderr: errb, Plugins: agente2e.Needed(),
		LookupEnv: func(string) (string, bool) { return "", false }, Getwd: func() (string, error) { return dir, nil },
		Ctx: context.Background()}
	code := make(chan int, 1)
	go func() {
		code <- cli.Run([]string{"--config", cfg, "acp"}, env)
		_ = outW.Close()
	}()
	c := &acpClient{}
	c.conn = sdk.NewClientSideConnection(c, inW, outR)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	init, err := c.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err != nil || !init.AgentCapabilities.McpCapabilities.Http || !init.AgentCapabilities.McpCapabilities.Sse {
		t.Fatalf("initialize: %+v %v", init.AgentCapabilities.McpCapabilities, err)
	}
	if _, err := c.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{{Stdio: &sdk.McpServerStdio{Name: "fx"}}}}); err == nil ||
		!strings.Contains(err.Error(), "mcpServers[0] (fx): no command") {
		t.Errorf("a server without a command: %v", err)
	}
	s, err := c.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "fx", Command: fx, Args: []string{"ok"}, Env: []sdk.EnvVariable{}}}}})
	if err != nil {
		t.Fatalf("session/new: %v\n%s", err, errb.String())
	}
	r, err := c.conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("Echo.")}})
	if err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v\n%s", r, err, errb.String())
	}
	_ = inW.Close()
	if got := <-code; got != 0 {
		t.Errorf("exit %d\n%s", got, errb.String())
	}
	<-c.conn.Done()
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	second, err := reqs[1].Wire()
	if err != nil {
		t.Fatal(err)
	}
	if h := second.History(); !strings.Contains(h, "through the client's server") {
		t.Errorf("the echo tool's result did not reach the model:\n%s", h)
	}
	updates, _ := c.seen()
	done := false
	for _, n := range updates {
		if u := n.Update.ToolCallUpdate; u != nil && u.ToolCallId == "m1" && u.Status != nil {
			done = *u.Status == sdk.ToolCallStatusCompleted
		}
	}
	if !done {
		t.Errorf("m1 did not complete: %+v", updates)
	}
}

// At most acp.MaxOpenSessions sessions stay open: opening one more closes
// the least recently used idle one, which another process can then resume
// (it is not in use); a prompt for it opens it again from its log, with
// what the other process added.
func TestACPClosesIdleSessionsPastTheLimit(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{text("A1"), text("R2"), text("A3")})
	dir := t.TempDir()
	manifest := agentManifest(srv.URL, t.TempDir(), "")
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(cfg, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errb := &syncBuffer{}
	env := &cli.Env{Stdin: inR, Stdout: outW, Stderr: errb, Plugins: agente2e.Needed(),
		LookupEnv: func(string) (string, bool) { return "", false }, Getwd: func() (string, error) { return dir, nil },
		Ctx: context.Background()}
	code := make(chan int, 1)
	go func() {
		code <- cli.Run([]string{"--config", cfg, "acp"}, env)
		_ = outW.Close()
	}()
	c := &acpClient{}
	c.conn = sdk.NewClientSideConnection(c, inW, outR)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	prompt := func(id sdk.SessionId, text string) {
		t.Helper()
		if r, err := c.conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}}); err != nil || r.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("prompt %q: %+v %v\n%s", text, r, err, errb.String())
		}
	}
	var ids []sdk.SessionId
	for range acp.MaxOpenSessions + 1 {
		s, err := c.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
		if err != nil {
			t.Fatalf("session/new %d: %v", len(ids), err)
		}
		ids = append(ids, s.SessionId)
		if len(ids) == 1 {
			prompt(ids[0], "one")
		}
	}
	if r := runAgent(t, dir, manifest, "", "run", "--session", string(ids[0]), "two"); r.code != 0 || r.stdout != "R2\n" {
		t.Fatalf("harness run --session on the closed session: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	prompt(ids[0], "three")
	_ = inW.Close()
	if got := <-code; got != 0 {
		t.Errorf("exit %d\n%s", got, errb.String())
	}
	<-c.conn.Done()
	reqs := srv.Requests()
	last, err := reqs[len(reqs)-1].Wire()
	if err != nil {
		t.Fatal(err)
	}
	if h := last.History(); !strings.Contains(h, "one") || !strings.Contains(h, "R2") || !strings.Contains(h, "three") {
		t.Errorf("the reopened session's request lacks its history:\n%s", h)
	}
}

// The slash commands that run outside the terminal UI are announced after
// session/new (available_commands_update); a prompt `/name args` for a
// command file runs its body, a terminal UI command (/model) is answered
// with a message and no model call, and `/word` naming no command is a
// prompt as written.
func TestACPSlashCommands(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	repo := gitRepo(t, map[string]string{"go.mod": "module calc\n"})
	writeFile(t, repo, ".claude/commands/greet.md", "---\ndescription: Greet someone\nargument-hint: [name]\n---\nSay hello to $ARGUMENTS.\n")
	srv := llmtest.New(t, []llmtest.Turn{text("Hello, Ada."), text("A path.")})
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(cfg, []byte(agentManifest(srv.URL, t.TempDir(), "  - name: commands\n  - name: skills\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errb := &syncBuffer{}
	env := &cli.Env{Stdin: inR, Stdout: outW, Stderr: errb, Plugins: agente2e.Needed(),
		LookupEnv: func(string) (string, bool) { return "", false }, Getwd: func() (string, error) { return repo, nil },
		Ctx: context.Background()}
	code := make(chan int, 1)
	go func() {
		code <- cli.Run([]string{"--config", cfg, "acp"}, env)
		_ = outW.Close()
	}()
	c := &acpClient{}
	c.conn = sdk.NewClientSideConnection(c, inW, outR)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	s, err := c.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: repo, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v\n%s", err, errb.String())
	}
	for _, p := range []string{"/greet Ada", "/model", "/etc/hosts is what?"} {
		if r, err := c.conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(p)}}); err != nil || r.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("prompt %q: %+v %v\n%s", p, r, err, errb.String())
		}
	}
	_ = inW.Close()
	if got := <-code; got != 0 {
		t.Errorf("exit %d\n%s", got, errb.String())
	}
	<-c.conn.Done()
	updates, _ := c.seen()
	var names []string
	var messages strings.Builder
	for _, n := range updates {
		if u := n.Update.AvailableCommandsUpdate; u != nil {
			for _, ac := range u.AvailableCommands {
				names = append(names, ac.Name)
			}
		}
		if u := n.Update.AgentMessageChunk; u != nil && u.Content.Text != nil {
			messages.WriteString(u.Content.Text.Text + "|")
		}
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "greet") || !strings.Contains(got, "help") || strings.Contains(got, "model") {
		t.Errorf("available commands %q: want greet and help, not the terminal UI's model", got)
	}
	if got := messages.String(); !strings.Contains(got, "Hello, Ada.") || !strings.Contains(got, "/model is a command of the terminal UI") || !strings.Contains(got, "A path.") {
		t.Errorf("messages %q", got)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2 (/model makes none)", len(reqs))
	}
	first, _ := reqs[0].Wire()
	second, _ := reqs[1].Wire()
	if got := first.Messages[len(first.Messages)-1].Text(); !strings.Contains(got, "Say hello to Ada.") {
		t.Errorf("the command file's prompt = %q", got)
	}
	if got := second.Messages[len(second.Messages)-1].Text(); !strings.Contains(got, "/etc/hosts is what?") {
		t.Errorf("a path prompt = %q", got)
	}
}
