package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// TestRewindAPIRefusesWhatTheTUIRefuses: the rewind endpoints sit behind
// the same checks as the rest of the API (token, Origin) and answer bad
// input with the field named: an unknown `what` (400), a checkpoint that
// is not one of this session's prompts (404), a session of another
// workspace (404), a checkpoint number that is not a number (400); a
// diff over its bound is cut (the counts stay right); a
// conversation rewind to a turn already rewound away is 409; the changes
// list counts the file's lines.
func TestRewindAPIRefusesWhatTheTUIRefuses(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // the checkpoints' state directory (no t.Parallel)
	repo := t.TempDir()
	target := filepath.Join(repo, "n.txt")
	args, _ := json.Marshal(map[string]string{"file_path": target, "content": "a\nb\n"})
	e := startWith(t, []llmtest.Turn{
		llmtest.Calls(llmtest.Call{ID: "w", Name: "write", Args: string(args)}),
		llmtest.Reply("wrote"),
		llmtest.Reply("second"),
	}, func(modelURL, state string) string {
		return testManifest(modelURL, state, "bypass", "  - name: checkpoint\n")
	})
	ws := e.workspace(repo)
	id := e.newSession(ws)
	base := "/api/workspaces/" + ws.ID + "/sessions/" + id
	s := e.stream(ws, id, "")
	for i, p := range []string{"write it", "again"} {
		e.must(http.StatusAccepted, "POST", base+"/prompt", map[string]string{"text": p}, nil)
		s.until(fmt.Sprintf("result %d", i+1), isType("result"))
	}
	var ch struct {
		Checkpoints bool
		Files       []struct {
			Path, Status   string
			Added, Removed int
		}
		Prompts []struct{ Checkpoint, Turn int }
	}
	e.must(http.StatusOK, "GET", base+"/changes", nil, &ch)
	if !ch.Checkpoints || len(ch.Files) != 1 || ch.Files[0].Path != "n.txt" || ch.Files[0].Status != "added" || ch.Files[0].Added != 2 || len(ch.Prompts) != 2 || ch.Prompts[0].Turn != 2 {
		t.Fatalf("changes: %+v", ch)
	}
	second := ch.Prompts[0].Checkpoint
	// A file over the diff bound (one line of 300 KB, written by a
	// person): listed with its counts, its diff cut to the bound.
	if err := os.WriteFile(filepath.Join(repo, "big.txt"), []byte(strings.Repeat("x", 300<<10)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var big struct {
		Files []struct {
			Path, Diff     string
			Added, Removed int
		}
	}
	e.must(http.StatusOK, "GET", base+"/changes", nil, &big)
	if len(big.Files) != 2 || big.Files[0].Path != "big.txt" || big.Files[0].Added != 1 || len(big.Files[0].Diff) > 65<<10 || !strings.HasSuffix(big.Files[0].Diff, "more lines\n") {
		t.Fatalf("the big file in the changes: %d files, first %q +%d, a diff of %d bytes ending %q", len(big.Files), big.Files[0].Path, big.Files[0].Added, len(big.Files[0].Diff), big.Files[0].Diff[max(0, len(big.Files[0].Diff)-40):])
	}

	other := e.workspace(t.TempDir())
	req := func(method, path, body string, hdr map[string]string) int {
		t.Helper()
		r, _ := http.NewRequest(method, e.base+path, strings.NewReader(body))
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		resp, err := e.http.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	auth := map[string]string{"Authorization": "Bearer " + e.srv.Token(), "Origin": e.base, "Content-Type": "application/json"}
	noOrigin := map[string]string{"Authorization": "Bearer " + e.srv.Token(), "Content-Type": "application/json"}
	body := fmt.Sprintf(`{"checkpoint": %d, "what": "code"}`, second)
	for _, tt := range []struct {
		name, method, path, body string
		hdr                      map[string]string
		want                     int
	}{
		{"no token", "POST", base + "/rewind", body, map[string]string{"Origin": e.base, "Content-Type": "application/json"}, 401},
		{"no Origin", "POST", base + "/rewind", body, noOrigin, 403},
		{"unknown what", "POST", base + "/rewind", fmt.Sprintf(`{"checkpoint": %d, "what": "all"}`, second), auth, 400},
		{"unknown field", "POST", base + "/rewind", fmt.Sprintf(`{"checkpoint": %d, "what": "code", "hard": true}`, second), auth, 400},
		{"not a prompt checkpoint of the session", "POST", base + "/rewind", `{"checkpoint": 999, "what": "code"}`, auth, 404},
		{"a session of another workspace", "POST", "/api/workspaces/" + other.ID + "/sessions/" + id + "/rewind", body, auth, 404},
		{"a preview of a non-number", "GET", base + "/rewind/abc", "", auth, 400},
		{"changes of another workspace's session", "GET", "/api/workspaces/" + other.ID + "/sessions/" + id + "/changes", "", auth, 404},
	} {
		if got := req(tt.method, tt.path, tt.body, tt.hdr); got != tt.want {
			t.Errorf("%s: %s %s = %d, want %d", tt.name, tt.method, tt.path, got, tt.want)
		}
	}
	conv := map[string]any{"checkpoint": second, "what": "conversation"}
	e.must(http.StatusOK, "POST", base+"/rewind", conv, nil)
	if code, b := e.req("POST", base+"/rewind", conv); code != http.StatusConflict || !strings.Contains(string(b), "not in the conversation") {
		t.Errorf("a second conversation rewind to the same turn: %d %s, want 409", code, b)
	}
	if b, _ := os.ReadFile(target); string(b) != "a\nb\n" {
		t.Errorf("a conversation rewind changed the file to %q", b)
	}
}
