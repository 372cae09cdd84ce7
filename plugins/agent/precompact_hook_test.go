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

	"github.com/dshgo/harness/plugins/agent"
	"github.com/dshgo/harness/plugins/hooks"
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
	dir := t.TempDir()
	payloads := filepath.Join(dir, "precompact-payloads")
	hook := filepath.Join(dir, "pre-compact.sh")
	body := `#!/usr/bin/env bash
input=$(cat)
printf '%s\n' "$input" >> "` + payloads + `"
case "$input" in
  *'"trigger":"manual"'*'do not compact'*) echo "compaction refused: the user asked to keep everything" >&2; exit 2 ;;
  *'"trigger":"auto"'*) echo '{"decision":"block","reason":"auto compaction is not wanted"}' ;;
esac
exit 0
`
	if err := os.WriteFile(hook, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	f.rc.Plugin(subprocess.Plugin, nil)
	hf := f.rc.Plugin(hooks.Plugin, hooks.Config{Cwd: dir, Hooks: hooks.Events{PreCompact: []hooks.MatcherGroup{
		{Matcher: "manual|auto", Hooks: []hooks.CommandHook{{Type: "command", Command: hook}}},
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

	raw, err := os.ReadFile(payloads)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != autos+2 {
		t.Fatalf("the hook ran %d times, want %d (%d auto + 2 manual):\n%s", len(lines), autos+2, autos, raw)
	}
	type payload struct {
		SessionID          *string `json:"session_id"`
		TranscriptPath     *string `json:"transcript_path"`
		Cwd                *string `json:"cwd"`
		HookEventName      *string `json:"hook_event_name"`
		Trigger            *string `json:"trigger"`
		CustomInstructions *string `json:"custom_instructions"`
	}
	for i, line := range lines {
		var p payload
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("payload %d: %v: %s", i+1, err, line)
		}
		trigger, instr := "auto", ""
		switch i {
		case autos:
			trigger, instr = "manual", "please do not compact yet"
		case autos + 1:
			trigger, instr = "manual", "focus on the files read"
		}
		if p.HookEventName == nil || *p.HookEventName != "PreCompact" || p.Trigger == nil || *p.Trigger != trigger ||
			p.CustomInstructions == nil || *p.CustomInstructions != instr || p.SessionID == nil || *p.SessionID != ss.ID() ||
			p.Cwd == nil || *p.Cwd != f.dir || p.TranscriptPath == nil || !filepath.IsAbs(*p.TranscriptPath) {
			t.Errorf("payload %d: %s\nwant PreCompact, trigger %q, custom_instructions %q, session %s, cwd %s, an absolute transcript_path", i+1, line, trigger, instr, ss.ID(), f.dir)
			continue
		}
		if _, err := os.Stat(*p.TranscriptPath); err != nil {
			t.Errorf("payload %d: transcript_path: %v", i+1, err)
		}
	}
}
