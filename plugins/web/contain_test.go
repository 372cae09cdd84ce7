package web_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The workspace file list shows nothing the sandbox policy hides from
// commands: .env files and a hard link to a denied credential file are
// left out of the listing (counted) and refused when asked for (403).
func TestWorkspaceFilesHideWhatTheSandboxHides(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	secret := filepath.Join(tmp, "home", ".netrc")
	repo := filepath.Join(tmp, "repo")
	for p, text := range map[string]string{secret: "password SECRET_NETRC", repo + "/.env": "K=SECRET_ENV", repo + "/a.txt": "hello"} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(secret, repo+"/netrc-link"); err != nil {
		t.Fatal(err)
	}
	e := startWith(t, nil, func(modelURL, state string) string {
		return strings.Replace(testManifest(modelURL, state, "default", ""), "{sandbox: {mode: off}}",
			`{sandbox: {mode: workspace-write, denyRead: ["`+secret+`", "**/.env{,.*}"]}}`, 1)
	})
	ws := e.workspace(repo)
	code, body := e.req("GET", "/api/workspaces/"+ws.ID+"/files?path=.", nil)
	var v struct {
		Entries []struct{ Name string } `json:"entries"`
		Hidden  int                     `json:"hidden"`
	}
	if err := json.Unmarshal(body, &v); err != nil || code != http.StatusOK {
		t.Fatalf("listing: %d %s", code, body)
	}
	if len(v.Entries) != 1 || v.Entries[0].Name != "a.txt" || v.Hidden != 2 {
		t.Errorf("listing: %s", body)
	}
	for _, p := range []string{".env", "netrc-link"} {
		code, body := e.req("GET", "/api/workspaces/"+ws.ID+"/files?path="+q(p), nil)
		if code != http.StatusForbidden || strings.Contains(string(body), "SECRET") || !strings.Contains(string(body), "sandbox.denyRead") {
			t.Errorf("%s: %d %s", p, code, body)
		}
	}
}
