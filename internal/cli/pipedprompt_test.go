package cli_test

import (
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// `harness run` takes its prompt from piped stdin, and puts piped text
// before the arguments' prompt when both are given (as `claude -p`).
func TestRunReadsThePromptFromPipedStdin(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "alpha\n"})
	lastUser := func(t *testing.T, srv *llmtest.Server) string {
		t.Helper()
		reqs := srv.Requests()
		if len(reqs) == 0 {
			t.Fatal("no model request")
		}
		w, err := reqs[0].Wire()
		if err != nil {
			t.Fatal(err)
		}
		for i := len(w.Messages) - 1; i >= 0; i-- {
			if w.Messages[i].Role == "user" {
				return w.Messages[i].Text()
			}
		}
		return ""
	}
	t.Run("stdin only", func(t *testing.T) {
		srv := llmtest.New(t, []llmtest.Turn{text("ok")})
		r := runAgent(t, repo, agentManifest(srv.URL, t.TempDir(), ""), "explain the build\n", "run")
		if r.code != 0 || !strings.HasSuffix(lastUser(t, srv), "explain the build") {
			t.Fatalf("exit %d, prompt %q, stderr %s", r.code, lastUser(t, srv), r.stderr)
		}
	})
	t.Run("stdin before the argument", func(t *testing.T) {
		srv := llmtest.New(t, []llmtest.Turn{toolCall("c1", "read", `{"file_path":"a.txt"}`), text("ok")})
		r := runAgent(t, repo, agentManifest(srv.URL, t.TempDir(), ""), "panic: boom\nat main.go:3\n", "run", "why does this fail?")
		if r.code != 0 || !strings.HasSuffix(lastUser(t, srv), "panic: boom\nat main.go:3\n\n why does this fail?") {
			t.Fatalf("exit %d, prompt %q, stderr %s", r.code, lastUser(t, srv), r.stderr)
		}
	})
	t.Run("nothing at all", func(t *testing.T) {
		r := runAgent(t, repo, agentManifest("http://127.0.0.1:1", t.TempDir(), ""), "", "run")
		if r.code != 2 || !strings.Contains(r.stderr, "pipe it to stdin") {
			t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
		}
	})
}
