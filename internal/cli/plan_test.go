package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// TestTUIInTmuxApprovesAPlanAndSwitchesTheMode drives the real binary in
// plan mode: a write is refused, exit_plan_mode shows the plan in the
// modal with the plan question's own choices; a first draft is sent back
// with the person's words (the session stays in plan mode); "a" (auto-accept edits)
// approves it, the status bar says acceptEdits, and the edit of the next
// step runs without asking; the model got the approval and the plan.
func TestTUIInTmuxApprovesAPlanAndSwitchesTheMode(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	repo := gitRepo(t, map[string]string{"a.txt": "alpha\nbeta\n"})
	const plan = "# Rename beta\\n\\n1. In a.txt, replace beta with gamma.\\n2. Read it back."
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("c0", "read", `{"file_path":"a.txt"}`),
		toolCall("c1", "edit", `{"file_path":"a.txt","old_string":"beta","new_string":"gamma"}`),
		toolCall("c1b", "exit_plan_mode", `{"plan":"# First draft"}`),
		toolCall("c2", "exit_plan_mode", `{"plan":"`+plan+`"}`),
		toolCall("c3", "edit", `{"file_path":"a.txt","old_string":"beta","new_string":"gamma"}`),
		text("Done: beta is now gamma."),
	})
	extra := "  - name: approval\n  - name: permission\n    config: {mode: plan}\n  - name: plan-mode\n"
	s := startHarnessTUI(t, repo, srv.URL, extra, 100, 30)

	s.waitFor("Ask anything", "perm plan")
	s.keys(true, "rename beta")
	s.keys(false, "Enter")
	// The first draft: "r", the person's words, Enter: the model keeps
	// planning with them.
	s.waitFor("Approve this plan?", "First draft", "No, and tell the model what to change")
	s.keys(true, "r")
	s.keys(true, "say how to check it")
	s.keys(false, "Enter")
	scr := s.waitFor("Approve this plan?", "In a.txt, replace beta with gamma", "auto-accept edits", "No, keep planning")
	if !strings.Contains(scr, "perm plan") {
		t.Errorf("the status bar left plan mode on a rejected plan:\n%s", scr)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "alpha\nbeta\n" {
		t.Fatalf("a.txt changed in plan mode: %q\n%s", b, scr)
	}
	s.keys(true, "a")
	scr = s.waitFor("Done: beta is now gamma.", "perm acceptEdits")
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "alpha\ngamma\n" {
		t.Fatalf("a.txt = %q after the approved plan; screen:\n%s", b, scr)
	}
	if strings.Contains(scr, "Allow edit?") {
		t.Errorf("the edit after the approval asked:\n%s", scr)
	}
	var approved, refused, rejected bool
	for _, r := range srv.Requests() {
		w, err := r.Wire()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range w.Messages {
			approved = approved || (m.Role == "tool" && m.ToolCallID == "c2" && strings.Contains(m.Text(), "permission mode is now acceptEdits") && strings.Contains(m.Text(), "replace beta with gamma"))
			refused = refused || (m.Role == "tool" && m.ToolCallID == "c1" && strings.Contains(m.Text(), "plan mode allows only read-only tools"))
			rejected = rejected || (m.Role == "tool" && m.ToolCallID == "c1b" && strings.Contains(m.Text(), "did not approve the plan and said: say how to check it"))
		}
	}
	if !approved || !refused || !rejected {
		t.Errorf("the model got: approval with the plan %v, the refusal in plan mode %v, the rejection with the words %v", approved, refused, rejected)
	}
	s.quit()
}

// exit_plan_mode is offered only where the permission mode is plan: the
// default manifest's tools lack it, and have it with the mode patched to
// plan (as --permission-mode plan sets it), so the tools of a session
// that does not plan stay as they were.
func TestExitPlanModeOfferedOnlyInPlanMode(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	patch := filepath.Join(dir, "plan.yml")
	if err := os.WriteFile(patch, []byte("- id: permission\n  config: {mode: plan}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	list := func(args ...string) string {
		cmd := exec.Command(harnessBinary(t), append([]string{"tools", "--no-claude-settings"}, args...)...)
		cmd.Dir, cmd.Env = dir, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_STATE_HOME=" + filepath.Join(dir, "state"), "DEEPSEEK_API_KEY=sk-test"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("harness tools %q: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := list(); strings.Contains(out, "exit_plan_mode") || !strings.Contains(out, "write") {
		t.Errorf("the default manifest's tools:\n%s", out)
	}
	if out := list("--patch", patch); !strings.Contains(out, "exit_plan_mode") {
		t.Errorf("the tools in plan mode lack exit_plan_mode:\n%s", out)
	}
}
