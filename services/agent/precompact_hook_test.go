package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/internal/hookstest"
	"github.com/dshgo/harness/plugins/hooks"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/compaction"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/subprocess"
)

// A PreCompact command hook as Claude Code users write one (a bash script
// reading the event JSON on stdin), through the real hooks plugin, the agent
// and the llmtest scripted model: it fires before the automatic compactions
// (trigger "auto", custom_instructions "") and before manual ones (trigger
// "manual" with the user's instructions), with session_id, transcript_path
// and cwd; its exit 2 cancels a manual compaction with the hook's reason
// (the model is not asked for a summary and the history stays), while a
// block answered to an automatic compaction is not honoured (documented:
// a block cancels a manual compaction only).
func TestPreCompactCommandHook(t *testing.T) {
	t.Parallel()
	cs := &compactionServer{}
	f := newCompactionFixture(t, append(steps(16), thinkingSteps(16, 20, "four more read")...), cs, nil)
	f.write("big.txt", strings.Repeat("line of a big file\n", 40))
	hook := hookstest.NewScript(t,
		hookstest.Rule{
			Contains: []string{`"trigger":"manual"`, "do not compact"},
			Stderr:   "compaction refused: the user asked to keep everything", Exit: 2,
		},
		hookstest.Rule{
			Contains: []string{`"trigger":"auto"`},
			Stdout:   `{"decision":"block","reason":"auto compaction is not wanted"}`,
		})
	f.rc.Plugin(subprocess.Plugin, nil)
	hf := f.rc.Plugin(hooks.Plugin, hooks.Config{Cwd: filepath.Dir(hook.Path), Hooks: hooks.Events{PreCompact: []hooks.MatcherGroup{
		{Matcher: "manual|auto", Hooks: []hooks.CommandHook{{Type: "command", Command: hook.Path}}},
	}}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := hf.Await(ctx); err != nil {
		t.Fatal(err)
	}
	var compactions []agent.CompactionInfo
	ss := f.open(agent.Options{Cwd: f.dir, Observer: func(e agent.Event) {
		if e.Type == agent.EventCompaction {
			compactions = append(compactions, *e.Compaction)
		}
	}})
	if res, err := ss.Run(ctx, "read big.txt sixteen times"); err != nil || res.Text != "all done" {
		t.Fatalf("run: %v %+v", err, res)
	}
	// More steps, so that a manual compaction has something to summarize.
	if res, err := ss.Run(ctx, "read it four more times"); err != nil || res.Text != "four more read" {
		t.Fatalf("second run: %v %+v", err, res)
	}
	autos := len(compactions)
	if autos == 0 || cs.summaries != autos {
		t.Fatalf("automatic compactions %d (summaries %d): the hook's block must not cancel them", autos, cs.summaries)
	}

	// A manual compaction the hook refuses: nothing changes.
	hist, _ := json.Marshal(ss.History())
	_, err := ss.Compact(ctx, "please do not compact yet")
	if !errors.Is(err, agent.ErrCompactBlocked) || !strings.Contains(err.Error(), "compaction refused: the user asked to keep everything") {
		t.Fatalf("blocked compaction: %v", err)
	}
	if after, _ := json.Marshal(ss.History()); string(after) != string(hist) || cs.summaries != autos || len(compactions) != autos {
		t.Fatalf("a blocked compaction changed the session (summaries %d, compactions %d)", cs.summaries, len(compactions))
	}
	// One the hook lets through.
	info, err := ss.Compact(ctx, "focus on the files read")
	if err != nil || info.Trigger != "manual" || cs.summaries != autos+1 {
		t.Fatalf("manual compaction: %+v %v (summaries %d)", info, err, cs.summaries)
	}
	if h := ss.History(); len(h) == 0 || h[0].Role != llm.RoleUser || !strings.HasPrefix(h[0].Content, compaction.SummaryPrefix) {
		t.Fatalf("history after the manual compaction does not start with the summary")
	}

	payloads := hook.PreCompacts(t)
	if len(payloads) != autos+2 {
		t.Fatalf("the hook ran %d times, want %d (%d auto + 2 manual):\n%s", len(payloads), autos+2, autos, strings.Join(hook.Lines(t), "\n"))
	}
	for i, p := range payloads {
		trigger, instr := "auto", ""
		switch i {
		case autos:
			trigger, instr = "manual", "please do not compact yet"
		case autos + 1:
			trigger, instr = "manual", "focus on the files read"
		}
		if bad := p.Mismatch(trigger, instr, f.dir, ss.ID()); bad != "" {
			t.Errorf("payload %d: %s: %s", i+1, bad, hook.Lines(t)[i])
			continue
		}
		if _, err := os.Stat(*p.TranscriptPath); err != nil {
			t.Errorf("payload %d: transcript_path: %v", i+1, err)
		}
	}
}
