package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Plan mode on the default manifest, headless, no -y (the permission
// row's mode: plan in the user's patch, as --permission-mode plan sets
// it): a write is refused, exit_plan_mode ends the turn with the plan
// printed on stdout, exit 5, and stderr says how to carry it out; the
// session then continues in the default mode (acceptEdits), the plan in
// its history, and the write runs.
func TestPlanModeHeadlessPrintsThePlanThenContinues(t *testing.T) {
	t.Parallel()
	needTools(t, "bwrap")
	const plan = "# Add a greeting\n\n1. Create `hello.txt` with the line `hello`.\n2. Check it with `cat hello.txt`.\n"
	p := newProject(t, map[string]string{"README.md": "a project\n"})
	p.patch = "- id: permission\n  config: {mode: plan}\n"
	o := p.run("Plan a greeting file.",
		read("r1", "README.md"),
		call("w1", "write", map[string]any{"file_path": "hello.txt", "content": "hello\n"}),
		call("p1", "exit_plan_mode", map[string]any{"plan": plan}))
	if o.code != 5 {
		t.Fatalf("exit %d, want 5 (a plan awaits approval)\nstdout: %s\nstderr: %s", o.code, o.stdout, o.stderr)
	}
	if r := o.toolResult(t, "w1"); !strings.Contains(r, "plan mode allows only read-only tools") {
		t.Errorf("write in plan mode: %s", r)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "hello.txt")); err == nil {
		t.Fatal("plan mode let write create hello.txt")
	}
	t.Logf("stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	if !strings.Contains(o.stdout, strings.TrimSpace(plan)) {
		t.Errorf("stdout lacks the plan:\n%s", o.stdout)
	}
	if !strings.Contains(o.stderr, "awaits your approval") || !strings.Contains(o.stderr, "--permission-mode acceptEdits") {
		t.Errorf("stderr does not say how to carry the plan out:\n%s", o.stderr)
	}

	p.patch, p.args = "", []string{"--continue"}
	o = p.run("Go ahead.",
		call("w2", "write", map[string]any{"file_path": "hello.txt", "content": "hello\n"}),
		answer("Created hello.txt."))
	o.mustSucceed(t, "Created hello.txt.")
	if b, err := os.ReadFile(filepath.Join(p.dir, "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("hello.txt after the approved run: %q, %v", b, err)
	}
	w, err := o.srv.Requests()[0].Wire()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range w.Messages {
		for _, c := range m.ToolCalls {
			found = found || (c.Function.Name == "exit_plan_mode" && strings.Contains(c.Function.Arguments, "Add a greeting"))
		}
	}
	if !found {
		t.Errorf("the continued session's first request lacks the plan")
	}
}
