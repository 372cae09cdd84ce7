package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/internal/cli/agente2e"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// --cwd does not change the process's directory: two in-process runs in
// parallel, each with its own --cwd, each find their own harness.yml
// there, read their own a.txt, run bash in their own directory and tell
// the model their own working directory; the process's directory is the
// same before and after.
func TestCwdFlagRunsInParallelWithoutChdir(t *testing.T) {
	t.Parallel()
	before, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"left", "right"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := gitRepo(t, map[string]string{"a.txt": "content of " + name + "\n"})
			srv := llmtest.New(t, []llmtest.Turn{
				llmtest.Calls(
					llmtest.Call{ID: "r", Name: "read", Args: `{"file_path":"a.txt"}`},
					llmtest.Call{ID: "p", Name: "bash", Args: `{"command":"pwd","description":"where"}`},
				),
				text("done " + name),
			})
			write(t, dir, "harness.yml", agentManifest(srv.URL, t.TempDir(), ""))
			mods := agente2e.Needed()
			var out, errb bytes.Buffer
			code := cli.Run([]string{"run", "--no-claude-settings", "--cwd", dir, "-o", "stream-json", "go"}, &cli.Env{
				Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), Plugins: mods,
				DefaultManifest: []byte("plugins: []\n"), // would fail the run: the project file must be found
				LookupEnv:       func(string) (string, bool) { return "", false },
				Ctx:             context.Background(),
			})
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			results := map[string]string{}
			var cwd string
			sc := bufio.NewScanner(&out)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var e struct {
					Type       string `json:"type"`
					Cwd        string `json:"cwd"`
					ToolResult *struct {
						CallID  string `json:"callId"`
						Content string `json:"content"`
					} `json:"toolResult"`
				}
				if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
					t.Fatal(err)
				}
				switch e.Type {
				case "session":
					cwd = e.Cwd
				case "tool_result":
					results[e.ToolResult.CallID] = e.ToolResult.Content
				}
			}
			real, _ := filepath.EvalSymlinks(dir)
			if cwd != dir || !strings.Contains(results["r"], "content of "+name) ||
				(strings.TrimSpace(results["p"]) != dir && strings.TrimSpace(results["p"]) != real) {
				t.Fatalf("session cwd %q, results %q; want %s", cwd, results, dir)
			}
			reqs := srv.Requests()
			if len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), "Working directory: "+dir) {
				t.Fatalf("the system prompt does not name %s", dir)
			}
		})
	}
	t.Cleanup(func() {
		if after, _ := os.Getwd(); after != before {
			t.Errorf("the process's directory changed: %s → %s", before, after)
		}
	})
}
