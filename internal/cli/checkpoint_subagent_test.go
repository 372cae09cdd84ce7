package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/internal/cli/agente2e"
	"github.com/dshgo/harness/plugins/checkpoint"
	subagentinprocess "github.com/dshgo/harness/plugins/subagent-inprocess"
	subagenttools "github.com/dshgo/harness/plugins/subagent-tools"
	"github.com/dshgo/harness/services/checkpoints"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/subagent"
)

// With the checkpoint row, a run that delegates to two in-process
// subagents checkpoints the working directory before each of the three
// sessions' prompts and at each turn end (docs/long-tasks.md, subagents).
func TestCheckpointsCoverSubagentSessions(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state) // the checkpoint row's state directory rule
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".claude", "agents"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".claude", "agents", "reader.md"), []byte("---\nname: reader\ndescription: Reads files\ntools: Read\n---\nYou read files.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &convRouter{scripts: delegationScript()}
	srv := llmtest.New(t, nil, llmtest.WithCheck(r.check))
	manifest := agentManifest(srv.URL, t.TempDir(), "  - name: subagents\n  - name: subagent-inprocess\n  - name: subagent-tools\n  - name: checkpoint\n")
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(cfg, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	mods := append(agente2e.Needed(), subagent.Plugin, subagentinprocess.Plugin, subagenttools.Plugin, checkpoint.Plugin)
	var out, errb bytes.Buffer
	env := &cli.Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), Plugins: mods,
		LookupEnv: func(string) (string, bool) { return "", false }, Getwd: func() (string, error) { return dir, nil },
		Ctx: context.Background()}
	if code := cli.Run(append([]string{"--config", cfg}, inDir(dir, []string{"run", "read the notes twice"})...), env); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	s, err := checkpoints.Open(filepath.Join(state, "harness"), dir, checkpoints.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string][]string{}
	for _, c := range list {
		reasons[c.Meta.Session] = append(reasons[c.Meta.Session], c.Meta.Reason)
	}
	if len(reasons) != 3 {
		t.Fatalf("checkpoints by session: %v, want the parent's and two subagents'", reasons)
	}
	for id, rs := range reasons {
		if strings.Join(rs, ",") != "prompt,turn-end" {
			t.Errorf("session %s: checkpoints %v, want prompt,turn-end", id, rs)
		}
	}
}
