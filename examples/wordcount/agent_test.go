package wordcount_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	_ "example.com/wordcount/filecount"  // registers tool-file-word-count
	_ "example.com/wordcount/wordpolicy" // registers word-count-policy
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// agentRows mounts an agent on a scripted model at url: the prompt and tool
// services, prompt-tools (without it the model is offered no tools and the
// agent refuses to run), the plugins under test, a loopback llm-openai row
// and a session store in stateDir.
func agentRows(url, stateDir string) string {
	return fmt.Sprintf(`plugins:
  - {id: prompt, name: systemprompt}
  - {id: tools, name: tools}
  - {id: prompt-tools, name: prompt-tools}
  - {id: file-word-count, name: tool-file-word-count}
  - {id: policy, name: word-count-policy}
  - {id: llm, name: llm}
  - {id: model, name: llm-openai, config: {provider: test, baseURL: %q, models: [{name: m1, default: true}]}}
  - {id: sessions, name: sessions-jsonl, config: {stateDir: %q}}
  - {id: agent, name: agent, config: {model: test}}
`, url, stateDir)
}

// An agent run against a scripted model that calls the tool: the first
// request offers the tool and the policy's prompt section, and the second
// carries the tool's result. The relative path resolves against the
// session's working directory (Options.Cwd), not the test's.
func TestAgentRunCallsTheTool(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{
		llmtest.Stream(
			llmtest.ToolCallStart(0, "call_1", "file_word_count", `{"pa`),
			llmtest.ToolCallArgs(0, `th":"notes.txt"}`),
			llmtest.Finish("tool_calls")),
		llmtest.Stream(llmtest.TextDelta("notes.txt has 4 words."), llmtest.Finish("stop")),
	})
	h := harnesstest.Start(t, agentRows(srv.URL, t.TempDir()))
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "notes.txt"), []byte("four words in here\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	ss, err := harnesstest.Service(t, h, agent.Key).Open(ctx, agent.Options{Cwd: work})
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close(ctx)
	res, err := ss.Run(ctx, "How many words are in notes.txt?")
	if err != nil || res.Text != "notes.txt has 4 words." {
		t.Fatalf("run: %v, %+v", err, res)
	}

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	first, _ := reqs[0].Wire()
	if len(first.Tools) != 1 || first.Tools[0].Function.Name != "file_word_count" {
		t.Errorf("tools offered: %+v", first.Tools)
	}
	if !strings.Contains(first.Messages[0].Text(), "at most 10000 words") {
		t.Errorf("system prompt lacks the policy section:\n%s", first.Messages[0].Text())
	}
	second, _ := reqs[1].Wire()
	last := second.Messages[len(second.Messages)-1]
	if last.Role != "tool" || last.ToolCallID != "call_1" || last.Text() != "4" {
		t.Fatalf("second request ends with %s %q: %q", last.Role, last.ToolCallID, last.Text())
	}
}
