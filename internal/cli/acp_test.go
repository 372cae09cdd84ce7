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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	extra := "  - name: approval\n  - name: permission\n    config: {mode: default}\n  - name: tool-todo\n"
	a := startACP(t, ctx, dir, agentManifest(srv.URL, t.TempDir(), extra), "b2")
	c := a.c
	s, err := c.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v\n%s", err, a.errb.String())
	}
	if s.Modes == nil || s.Modes.CurrentModeId != "default" {
		t.Errorf("modes: %+v", s.Modes)
	}
	a.prompt(ctx, s.SessionId, "Greet.", sdk.StopReasonEndTurn)
	if _, asked := c.seen(); len(asked) != 1 || asked[0].ToolCall.ToolCallId != "b1" {
		t.Fatalf("after the first prompt: want one question, for b1: %+v\n%s", asked, a.errb.String())
	}
	a.prompt(ctx, s.SessionId, "Wait.", sdk.StopReasonCancelled)
	a.end()

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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a := startACP(t, ctx, dir, agentManifest(srv.URL, t.TempDir(), "  - name: mcp\n    config: {grace: 300ms}\n"), "")
	c := a.c
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
		t.Fatalf("session/new: %v\n%s", err, a.errb.String())
	}
	a.prompt(ctx, s.SessionId, "Echo.", sdk.StopReasonEndTurn)
	a.end()
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a := startACP(t, ctx, dir, manifest, "")
	var ids []sdk.SessionId
	for range acp.MaxOpenSessions + 1 {
		ids = append(ids, a.newSession(ctx, dir))
		if len(ids) == 1 {
			a.prompt(ctx, ids[0], "one", sdk.StopReasonEndTurn)
		}
	}
	if r := runAgent(t, dir, manifest, "", "run", "--session", string(ids[0]), "two"); r.code != 0 || r.stdout != "R2\n" {
		t.Fatalf("harness run --session on the closed session: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	a.prompt(ctx, ids[0], "three", sdk.StopReasonEndTurn)
	a.end()
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a := startACP(t, ctx, repo, agentManifest(srv.URL, t.TempDir(), "  - name: commands\n  - name: skills\n"), "")
	c := a.c
	id := a.newSession(ctx, repo)
	for _, p := range []string{"/greet Ada", "/model", "/etc/hosts is what?"} {
		a.prompt(ctx, id, p, sdk.StopReasonEndTurn)
	}
	// The commands are announced in a notification after session/new's
	// answer: on a loaded machine it may come after the prompts.
	announced := func() bool {
		updates, _ := c.seen()
		for _, n := range updates {
			if n.Update.AvailableCommandsUpdate != nil {
				return true
			}
		}
		return false
	}
	for !announced() && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	a.end()
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

// inACP is `harness --config CFG acp` run in this process with dir as the
// working directory, driven by the Go ACP SDK's client c.
type inACP struct {
	t    *testing.T
	c    *acpClient
	in   *io.PipeWriter
	errb *syncBuffer
	code chan int
}

// startACP starts `harness acp` on manifest and initializes the
// connection; cancelOn is the call whose in_progress update cancels its
// turn ("" for none).
func startACP(t *testing.T, ctx context.Context, dir, manifest, cancelOn string) *inACP {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(cfg, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	a := &inACP{t: t, in: inW, errb: &syncBuffer{}, code: make(chan int, 1), c: &acpClient{cancelOn: cancelOn}}
	env := &cli.Env{Stdin: inR, Stdout: outW, Stderr: a.errb, Plugins: agente2e.Needed(),
		LookupEnv: func(string) (string, bool) { return "", false }, Getwd: func() (string, error) { return dir, nil },
		Ctx: context.Background()}
	go func() {
		a.code <- cli.Run([]string{"--config", cfg, "acp"}, env)
		_ = outW.Close()
	}()
	a.c.conn = sdk.NewClientSideConnection(a.c, inW, outR)
	if _, err := a.c.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	return a
}

// newSession opens a session in dir.
func (a *inACP) newSession(ctx context.Context, dir string) sdk.SessionId {
	a.t.Helper()
	s, err := a.c.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		a.t.Fatalf("session/new: %v\n%s", err, a.errb.String())
	}
	return s.SessionId
}

// prompt runs one prompt and checks its stop reason.
func (a *inACP) prompt(ctx context.Context, id sdk.SessionId, text string, want sdk.StopReason) {
	a.t.Helper()
	if r, err := a.c.conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}}); err != nil || r.StopReason != want {
		a.t.Fatalf("prompt %q: %+v %v, want %s\n%s", text, r, err, want, a.errb.String())
	}
}

// end closes stdin and checks that the command exits 0.
func (a *inACP) end() {
	a.t.Helper()
	_ = a.in.Close()
	select {
	case got := <-a.code:
		if got != 0 {
			a.t.Errorf("exit %d\n%s", got, a.errb.String())
		}
	case <-time.After(30 * time.Second):
		a.t.Fatalf("harness acp did not end\n%s", a.errb.String())
	}
	<-a.c.conn.Done()
}

// finals returns each call's last status and _meta.reason.
func (a *inACP) finals() map[string][2]string {
	updates, _ := a.c.seen()
	out := map[string][2]string{}
	for _, n := range updates {
		if u := n.Update.ToolCallUpdate; u != nil && u.Status != nil {
			reason, _ := u.Meta["reason"].(string)
			out[string(u.ToolCallId)] = [2]string{string(*u.Status), reason}
		}
	}
	return out
}

// A command that exits non-zero and one that times out end failed, with
// the reason, although the model was told their output (not an error).
func TestACPFailedCommandsEndFailed(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("x1", "bash", `{"command":"echo nope; exit 3"}`),
		toolCall("x2", "bash", `{"command":"sleep 10","timeoutMs":300}`),
		text("Both failed."),
	})
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a := startACP(t, ctx, dir, agentManifest(srv.URL, t.TempDir(), ""), "")
	a.prompt(ctx, a.newSession(ctx, dir), "Run them.", sdk.StopReasonEndTurn)
	a.end()
	got := a.finals()
	if f := got["x1"]; f[0] != "failed" || f[1] != "exit code 3" {
		t.Errorf("x1 (exit 3): %q", f)
	}
	if f := got["x2"]; f[0] != "failed" || !strings.Contains(f[1], "timed out") {
		t.Errorf("x2 (timed out): %q", f)
	}
}

// At most acp.MaxHosts harnesses stay booted: a session in one more
// directory stops the least recently used harness whose sessions are idle,
// closing them (another process can then resume one); a prompt for such a
// session boots its harness again and continues it.
func TestACPStopsIdleHarnessesPastTheLimit(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{text("A1"), text("R2"), text("A3")})
	manifest := agentManifest(srv.URL, t.TempDir(), "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dirs := make([]string, acp.MaxHosts+1)
	for i := range dirs {
		dirs[i] = t.TempDir()
	}
	a := startACP(t, ctx, dirs[0], manifest, "")
	first := a.newSession(ctx, dirs[0])
	a.prompt(ctx, first, "one", sdk.StopReasonEndTurn)
	for _, d := range dirs[1:] {
		a.newSession(ctx, d)
	}
	if r := runAgent(t, dirs[0], manifest, "", "run", "--session", string(first), "two"); r.code != 0 || r.stdout != "R2\n" {
		t.Fatalf("harness run --session on the session of the stopped harness: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	a.prompt(ctx, first, "three", sdk.StopReasonEndTurn)
	a.end()
	reqs := srv.Requests()
	last, err := reqs[len(reqs)-1].Wire()
	if err != nil {
		t.Fatal(err)
	}
	if h := last.History(); !strings.Contains(h, "one") || !strings.Contains(h, "R2") || !strings.Contains(h, "three") {
		t.Errorf("the reopened session's request lacks its history:\n%s", h)
	}
}
