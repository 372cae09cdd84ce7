package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// served is a running `harness serve` of a project.
type served struct {
	t     *testing.T
	ctx   context.Context
	base  string
	token string
	stop  func()
}

// serve starts `harness serve` in the workspace (the project's
// environment, so the same state directory) and returns once it printed
// its URL; stop interrupts it and waits for it.
func (p *project) serve(t *testing.T) *served {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, harnessBinary(t), "serve")
	cmd.Dir, cmd.Env = p.dir, p.env()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
			cancel()
		}
	}
	t.Cleanup(stop)
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
	return &served{t: t, ctx: ctx, base: u.Scheme + "://" + u.Host, token: u.Query().Get("token"), stop: stop}
}

// do sends an authorized same-origin request; a non-nil body is sent as
// JSON. It decodes a 2xx answer into out.
func (s *served) do(method, path string, body, out any) (int, string) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, _ := http.NewRequestWithContext(s.ctx, method, s.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+s.token)
	if method != http.MethodGet {
		req.Header.Set("Origin", s.base)
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
	return resp.StatusCode, string(b)
}

// Two `harness run`s of one session (the default manifest, sandboxed, no
// -y) edit notes.txt; `harness serve` in the workspace shows the file
// changed since the session's first checkpoint with its counts, previews
// the rewind to before the second prompt with the diff back, restores the
// file, then takes the conversation back; the next `run --continue` sends
// the model the first turn and not the second.
func TestServeShowsAndRewindsARunsChanges(t *testing.T) {
	t.Parallel()
	needTools(t, "bwrap")
	p := newProject(t, map[string]string{"notes.txt": "zero\n"})
	p.run("Add one.", read("c1", "notes.txt"), edit("c2", "notes.txt", "zero\n", "zero\none\n"), answer("Added one.")).mustSucceed(t, "Added one.")
	p.args = []string{"--continue"}
	p.run("Add two.", read("c1", "notes.txt"), edit("c2", "notes.txt", "one\n", "one\ntwo\n"), answer("Added two.")).mustSucceed(t, "Added two.")

	s := p.serve(t)
	var wss []struct{ ID string }
	s.do("GET", "/api/workspaces", nil, &wss)
	if len(wss) != 1 {
		t.Fatalf("workspaces: %+v", wss)
	}
	var list []struct{ ID string }
	s.do("GET", "/api/workspaces/"+wss[0].ID+"/sessions", nil, &list)
	if len(list) != 1 {
		t.Fatalf("sessions: %+v", list)
	}
	base := "/api/workspaces/" + wss[0].ID + "/sessions/" + list[0].ID
	var ch struct {
		Files []struct {
			Path, Status, Diff string
			Added, Removed     int
		}
		Prompts []struct {
			Checkpoint, Turn int
			Prompt           string
		}
	}
	if code, body := s.do("GET", base+"/changes", nil, &ch); code != http.StatusOK || len(ch.Files) != 1 || ch.Files[0].Path != "notes.txt" ||
		ch.Files[0].Status != "modified" || ch.Files[0].Added != 2 || ch.Files[0].Removed != 0 || len(ch.Prompts) != 2 || ch.Prompts[0].Prompt != "Add two." {
		t.Fatalf("changes: %d %s", code, body)
	}
	second := ch.Prompts[0].Checkpoint
	var preview struct {
		Changes []struct{ Path, Action, Diff string }
	}
	if code, body := s.do("GET", base+"/rewind/"+strconv.Itoa(second), nil, &preview); code != http.StatusOK || len(preview.Changes) != 1 ||
		preview.Changes[0].Action != "write" || !strings.Contains(preview.Changes[0].Diff, "-two") {
		t.Fatalf("preview: %d %s", code, body)
	}
	if code, body := s.do("POST", base+"/rewind", map[string]any{"checkpoint": second, "what": "code"}, nil); code != http.StatusOK {
		t.Fatalf("rewind code: %d %s", code, body)
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "notes.txt")); string(b) != "zero\none\n" {
		t.Fatalf("notes.txt after rewinding the code to before the second prompt: %q", b)
	}
	if code, body := s.do("POST", base+"/rewind", map[string]any{"checkpoint": second, "what": "conversation"}, nil); code != http.StatusOK || !strings.Contains(body, `"draft":"Add two."`) {
		t.Fatalf("rewind conversation: %d %s", code, body)
	}
	s.stop()

	o := p.run("What is left?", answer("One line."))
	o.mustSucceed(t, "One line.")
	w, err := o.srv.Requests()[0].Wire()
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, m := range w.Messages {
		if m.Role == "user" {
			users = append(users, m.Text())
		}
	}
	all := strings.Join(users, "\n")
	if !strings.Contains(all, "Add one.") || strings.Contains(all, "Add two.") || !strings.Contains(all, "What is left?") {
		t.Fatalf("after the web's conversation rewind the model was sent the user messages:\n%s", all)
	}
}
