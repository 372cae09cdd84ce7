package acp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// missing skips a test whose tool is not installed, and fails it in CI
// (.ci/run installs it).
func missing(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s: CI must have it (.ci/run installs it)", why)
	}
	t.Skip(why)
}

// nodeClient returns node and the client script, after checking that the
// ACP SDK is installed (npm ci --prefix internal/acp/testdata/npm).
func nodeClient(t *testing.T) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not installed")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "npm"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk", "package.json")); err != nil {
		missing(t, "the ACP TypeScript SDK is not installed: npm ci --prefix internal/acp/testdata/npm")
	}
	return node, filepath.Join(dir, "client.mjs")
}

// workspace is one test's directories, outside /tmp when it can be (the
// sandbox replaces /tmp with a private one): the project, HOME and the
// state directory.
type workspace struct {
	project, home, state, cache string
}

func newWorkspace(t *testing.T, modelURL string) workspace {
	t.Helper()
	base := os.TempDir()
	if st, err := os.Stat("/var/tmp"); err == nil && st.IsDir() {
		base = "/var/tmp"
	}
	root, err := os.MkdirTemp(base, "harness-acp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	w := workspace{project: filepath.Join(root, "project"), home: filepath.Join(root, "home"), state: filepath.Join(root, "state"), cache: filepath.Join(root, "cache")}
	for _, d := range []string{w.project, w.state, w.cache, filepath.Join(w.home, ".config", "harness")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The user's patch points the default manifest's DeepSeek row at the
	// scripted model, as a user with a proxy would.
	patch := "- {id: deepseek, config: {baseURL: '" + modelURL + "', maxRetries: 0}}\n"
	if err := os.WriteFile(filepath.Join(w.home, ".config", "harness", "harness.yml"), []byte(patch), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w workspace) env() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.home, "LANG=C.UTF-8", "XDG_STATE_HOME=" + w.state,
		"XDG_CACHE_HOME=" + w.cache, "DEEPSEEK_API_KEY=sk-acp-test-not-a-real-key"}
}

// line is one JSON line the client printed.
type line struct {
	Kind      string          `json:"kind"`
	SessionID string          `json:"sessionId"`
	Update    json.RawMessage `json:"update"`
	Params    json.RawMessage `json:"params"`
	Method    string          `json:"method"`
	Result    json.RawMessage `json:"result"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Code *int `json:"code"`
}

// update is the part of a session update the tests look at.
type update struct {
	SessionUpdate string          `json:"sessionUpdate"`
	ToolCallID    string          `json:"toolCallId"`
	Title         string          `json:"title"`
	Kind          string          `json:"kind"`
	Status        string          `json:"status"`
	RawContent    json.RawMessage `json:"content"`
}

// String shows an update in a failure message.
func (u update) String() string {
	return fmt.Sprintf("{%s %s %q %s %s %q}", u.SessionUpdate, u.ToolCallID, u.Title, u.Kind, u.Status, u.text())
}

// text is an update's text: a chunk's, or a tool call's content blocks.
func (u update) text() string {
	var chunk struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(u.RawContent, &chunk) == nil && chunk.Text != "" {
		return chunk.Text
	}
	var items []struct {
		Content struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(u.RawContent, &items)
	var b strings.Builder
	for _, it := range items {
		b.WriteString(it.Content.Text)
	}
	return b.String()
}

// runClient runs the node client and returns its lines.
func runClient(t *testing.T, w workspace, args ...string) []line {
	t.Helper()
	node, script := nodeClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script, harnessBinary(t)}, args...)...)
	cmd.Dir, cmd.Env = w.project, w.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, stdout.String(), stderr.String())
	}
	raw := stdout.String()
	var out []line
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("client line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("client %v printed:\n%s\nharness stderr:\n%s", args, raw, stderr.String())
		}
	})
	return out
}

// turn is what the client saw between two responses: the updates, the
// permission requests and the response that ended it.
type turn struct {
	updates     []update
	permissions []json.RawMessage
	resp        line
}

// turns cuts lines at each response.
func turns(t *testing.T, lines []line) []turn {
	t.Helper()
	var out []turn
	var cur turn
	for _, l := range lines {
		switch l.Kind {
		case "update":
			var u update
			if err := json.Unmarshal(l.Update, &u); err != nil {
				t.Fatal(err)
			}
			cur.updates = append(cur.updates, u)
		case "permission":
			cur.permissions = append(cur.permissions, l.Params)
		case "response":
			cur.resp = l
			out = append(out, cur)
			cur = turn{}
		case "exit":
			if l.Code == nil || *l.Code != 0 {
				t.Errorf("harness acp exited with %v, want 0", l.Code)
			}
		}
	}
	return out
}

// callUpdates returns the tool_call and tool_call_update updates of call id.
func (tr turn) callUpdates(id string) []update {
	var out []update
	for _, u := range tr.updates {
		if u.ToolCallID == id {
			out = append(out, u)
		}
	}
	return out
}

// message joins the turn's agent_message_chunk texts.
func (tr turn) message(kind string) string {
	var b strings.Builder
	for _, u := range tr.updates {
		if u.SessionUpdate == kind {
			b.WriteString(u.text())
		}
	}
	return b.String()
}

// kinds lists the updates' kinds.
func kinds(us []update) string {
	var out []string
	for _, u := range us {
		out = append(out, u.SessionUpdate)
	}
	return strings.Join(out, " ")
}

func statuses(us []update) []string {
	var out []string
	for _, u := range us {
		if u.Status != "" {
			out = append(out, u.SessionUpdate+":"+u.Status)
		}
	}
	return out
}

func bashCall(id string, args map[string]any) llmtest.Turn {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return llmtest.Calls(llmtest.Call{ID: id, Name: "bash", Args: string(b)}).WithReasoning("Next: bash.")
}

func answer(text string) llmtest.Turn { return llmtest.Reply(text).WithReasoning("Done.") }

// The protocol's TypeScript SDK drives `harness acp` (the default
// configuration: no harness.yml, the sandbox, the permission row's mode)
// through a session: a sandboxed command streams as a tool call from
// pending to completed with its output; a command that asks to leave the
// sandbox puts a permission request to the client, whose allow_once lets
// it run; a long command is cancelled (the call ends failed, the prompt
// cancelled); the sandbox network's question about a loopback server is
// put to the client, whose allow_once lets the request through; set_mode takes a permission mode and refuses an unknown
// one; bad requests get JSON-RPC errors. A second `harness acp` loads the
// stored session: the client sees the conversation replayed, and the next
// prompt continues it.
func TestTypeScriptClientDrivesASession(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		missing(t, "bwrap is not installed")
	}
	nodeClient(t)
	if _, err := exec.LookPath("curl"); err != nil {
		missing(t, "curl is not installed")
	}
	var hits atomic.Int32
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, "hello from the loopback server\n")
	}))
	defer page.Close()
	srv := llmtest.New(t, []llmtest.Turn{
		bashCall("c-echo", map[string]any{"command": "echo hello-acp", "description": "say hello"}),
		answer("Said hello."),
		bashCall("c-off", map[string]any{"command": "echo outside-the-sandbox", "sandbox": "off", "justification": "it must reach the network"}),
		answer("Fetched."),
		bashCall("c-sleep", map[string]any{"command": "sleep 60", "description": "wait"}),
		bashCall("c-net", map[string]any{"command": "curl -fsS -m 30 --noproxy '' " + page.URL + "/hello", "description": "fetch the page"}),
		answer("Fetched loopback."),
		answer("Continued."),
	}, llmtest.WithCheck(llmtest.DeepSeekReasoningCheck))
	w := newWorkspace(t, srv.URL)

	first := turns(t, runClient(t, w, "new", w.project))
	if len(first) != 10 {
		t.Fatalf("want 10 responses (initialize, new, 4 prompts, 2 set_mode, new, prompt), got %d: %+v", len(first), first)
	}
	var init struct {
		ProtocolVersion   int `json:"protocolVersion"`
		AgentCapabilities struct {
			LoadSession bool `json:"loadSession"`
		} `json:"agentCapabilities"`
		AuthMethods []any `json:"authMethods"`
	}
	mustDecode(t, first[0].resp, &init)
	if init.ProtocolVersion != 1 || !init.AgentCapabilities.LoadSession || init.AuthMethods == nil || len(init.AuthMethods) != 0 {
		t.Errorf("initialize: %s", first[0].resp.Result)
	}
	var created struct {
		SessionID string `json:"sessionId"`
		Modes     struct {
			CurrentModeID  string `json:"currentModeId"`
			AvailableModes []struct {
				ID string `json:"id"`
			} `json:"availableModes"`
		} `json:"modes"`
	}
	mustDecode(t, first[1].resp, &created)
	if created.SessionID == "" || created.Modes.CurrentModeID != "acceptEdits" || len(created.Modes.AvailableModes) != 5 {
		t.Errorf("session/new: %s", first[1].resp.Result)
	}

	echo := first[2]
	if got := kinds(echo.updates); !strings.HasPrefix(got, "available_commands_update ") {
		t.Errorf("after session/new, want the available commands first: %s", got)
	}
	if got, want := strings.Join(statuses(echo.callUpdates("c-echo")), " "), "tool_call:pending tool_call_update:in_progress tool_call_update:completed"; got != want {
		t.Errorf("c-echo statuses %q, want %q", got, want)
	}
	if us := echo.callUpdates("c-echo"); len(us) == 0 || us[0].Kind != "execute" || !strings.Contains(us[0].Title, "echo hello-acp") ||
		!strings.Contains(us[len(us)-1].text(), "hello-acp") {
		t.Errorf("c-echo updates: %+v", us)
	}
	if got := echo.message("agent_message_chunk"); got != "Said hello." {
		t.Errorf("message %q, want %q", got, "Said hello.")
	}
	if got := echo.message("agent_thought_chunk"); !strings.Contains(got, "Next: bash.") {
		t.Errorf("thoughts %q", got)
	}
	mustStop(t, echo.resp, "end_turn")

	off := first[3]
	if len(off.permissions) != 1 {
		t.Fatalf("want one permission request for c-off, got %d", len(off.permissions))
	}
	var perm struct {
		ToolCall struct {
			ToolCallID string `json:"toolCallId"`
			Title      string `json:"title"`
		} `json:"toolCall"`
		Options []struct {
			OptionID string `json:"optionId"`
			Kind     string `json:"kind"`
		} `json:"options"`
	}
	if err := json.Unmarshal(off.permissions[0], &perm); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range perm.Options {
		kinds = append(kinds, o.Kind)
	}
	if perm.ToolCall.ToolCallID != "c-off" || !strings.Contains(perm.ToolCall.Title, "echo outside-the-sandbox") ||
		strings.Join(kinds, " ") != "allow_once allow_always reject_once" {
		t.Errorf("permission request: %s", off.permissions[0])
	}
	if us := off.callUpdates("c-off"); len(us) == 0 || us[len(us)-1].Status != "completed" || !strings.Contains(us[len(us)-1].text(), "outside-the-sandbox") {
		t.Errorf("c-off after allow_once: %+v", us)
	}
	mustStop(t, off.resp, "end_turn")

	long := first[4]
	if us := long.callUpdates("c-sleep"); len(us) == 0 || us[len(us)-1].Status != "failed" {
		t.Errorf("c-sleep after cancel: want its last update failed: %+v", us)
	}
	mustStop(t, long.resp, "cancelled")

	// The sandbox network's question about 127.0.0.1 (no call of its own)
	// goes to the client of the running prompt; allow_once lets the
	// request through.
	netTurn := first[5]
	if len(netTurn.permissions) != 1 || !strings.Contains(string(netTurn.permissions[0]), "127.0.0.1") {
		t.Errorf("want one question about 127.0.0.1, got %d: %s", len(netTurn.permissions), netTurn.permissions)
	}
	if us := netTurn.callUpdates("c-net"); len(us) == 0 || us[len(us)-1].Status != "completed" || !strings.Contains(us[len(us)-1].text(), "hello from the loopback server") {
		t.Errorf("c-net after the network question: %+v", us)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("the loopback server got %d requests, want 1", n)
	}
	mustStop(t, netTurn.resp, "end_turn")

	if first[6].resp.Error != nil {
		t.Errorf("set_mode plan: %+v", first[6].resp.Error)
	}
	for i, what := range map[int]string{7: "yolo", 8: "must be an absolute path", 9: "no-such-session"} {
		if e := first[i].resp.Error; e == nil || e.Code != -32602 || !strings.Contains(e.Message, what) {
			t.Errorf("%s: want an Invalid params error naming %q, got %+v %s", first[i].resp.Method, what, e, first[i].resp.Result)
		}
	}

	second := turns(t, runClient(t, w, "load", w.project, created.SessionID))
	if len(second) != 3 {
		t.Fatalf("want 3 responses (initialize, load, prompt), got %d", len(second))
	}
	load := second[1]
	if load.resp.Error != nil {
		t.Fatalf("session/load: %+v", load.resp.Error)
	}
	if got := load.message("user_message_chunk"); got != "Say hello with echo.Fetch the page.Wait a while.Fetch the loopback page." {
		t.Errorf("replayed prompts %q", got)
	}
	if got := load.message("agent_message_chunk"); got != "Said hello.Fetched.Fetched loopback." {
		t.Errorf("replayed answers %q", got)
	}
	if us := load.callUpdates("c-echo"); len(us) < 2 || us[0].SessionUpdate != "tool_call" || us[len(us)-1].Status != "completed" ||
		!strings.Contains(us[len(us)-1].text(), "hello-acp") {
		t.Errorf("replayed c-echo: %+v", us)
	}
	if us := load.callUpdates("c-sleep"); len(us) == 0 || us[len(us)-1].Status != "failed" {
		t.Errorf("replayed c-sleep: want failed: %+v", us)
	}
	mustStop(t, second[2].resp, "end_turn")
	if got := second[2].message("agent_message_chunk"); got != "Continued." {
		t.Errorf("continued answer %q", got)
	}
	reqs := srv.Requests()
	wire, err := reqs[len(reqs)-1].Wire()
	if err != nil {
		t.Fatal(err)
	}
	if h := wire.History(); !strings.Contains(h, "Say hello with echo.") || !strings.Contains(h, "Go on.") {
		t.Errorf("the continued prompt's request lacks the loaded history:\n%s", h)
	}
}

func mustDecode(t *testing.T, l line, v any) {
	t.Helper()
	if l.Error != nil {
		t.Fatalf("%s: error %+v", l.Method, l.Error)
	}
	if err := json.Unmarshal(l.Result, v); err != nil {
		t.Fatalf("%s: %v: %s", l.Method, err, l.Result)
	}
}

func mustStop(t *testing.T, l line, want string) {
	t.Helper()
	var r struct {
		StopReason string `json:"stopReason"`
	}
	if l.Error != nil {
		t.Errorf("%s: error %+v, want stopReason %s", l.Method, l.Error, want)
		return
	}
	if err := json.Unmarshal(l.Result, &r); err != nil || r.StopReason != want {
		t.Errorf("%s: %s, want stopReason %s", l.Method, l.Result, want)
	}
}

// `harness acp` answers every malformed message with a JSON-RPC error
// and keeps serving: a line that is not JSON, a batch, an unknown
// method, params of the wrong shape, a prompt for a session it does not
// have, a message over the size limit; then initialize still answers, and
// the end of stdin ends it with exit 0.
func TestMalformedInputGetsJSONRPCErrors(t *testing.T) {
	w := newWorkspace(t, "http://127.0.0.1:9")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, harnessBinary(t), "acp")
	cmd.Dir, cmd.Env = w.project, w.env()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":`,
		`[{"jsonrpc":"2.0","id":2,"method":"initialize"}]`,
		`{"jsonrpc":"2.0","id":3,"method":"no/such/method","params":{}}`,
		`{"jsonrpc":"2.0","id":4,"method":"initialize","params":"not an object"}`,
		`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"nope","prompt":[{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","id":6,"method":"session/load","params":{"sessionId":"../../etc/passwd","cwd":"/","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":7,"method":"x","params":"` + strings.Repeat("a", 9<<20) + `"}`,
		`{"jsonrpc":"2.0","id":8,"method":"initialize","params":{"protocolVersion":1}}`,
	}
	wrote := make(chan error, 1)
	go func() {
		for _, l := range lines {
			if _, err := io.WriteString(stdin, l+"\n"); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}()
	// Read the answers; initialize's (id 8) is the last one asked for:
	// then end stdin, and read to the end.
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), `"id":8`) {
			if err := <-wrote; err != nil {
				t.Fatal(err)
			}
			_ = stdin.Close()
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("harness acp: %v\nstderr: %s", err, stderr.String())
	}
	type resp struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	byID := map[string]resp{}
	var nullIDs []int
	for l := range strings.Lines(out.String()) {
		var r resp
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("stdout line %q: %v", l, err)
		}
		if string(r.ID) == "null" {
			nullIDs = append(nullIDs, r.Error.Code)
			continue
		}
		byID[string(r.ID)] = r
	}
	if got := fmt.Sprint(nullIDs); got != "[-32700 -32600 -32600]" {
		t.Errorf("errors without an id: %s, want parse error, batch, oversized\nstdout: %s", got, out.String())
	}
	for id, code := range map[string]int{"3": -32601, "4": -32602, "5": -32602, "6": -32602} {
		if r, ok := byID[id]; !ok || r.Error == nil || r.Error.Code != code {
			t.Errorf("id %s: want error %d, got %+v", id, code, r)
		}
	}
	if r := byID["8"]; r.Error != nil || !strings.Contains(string(r.Result), `"protocolVersion":1`) {
		t.Errorf("initialize after the bad input: %+v %s", r.Error, r.Result)
	}
	if strings.Contains(stderr.String(), "panic") {
		t.Errorf("stderr: %s", stderr.String())
	}
}
