package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rewindCmd runs the real `harness rewind ARGS` in the project with the
// harness's environment (so the same state directory) and returns its
// stdout, stderr and exit code.
func (p *project) rewindCmd(args ...string) (stdout, stderr string, code int) {
	t := p.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, harnessBinary(t), append([]string{"rewind"}, args...)...)
	cmd.Dir, cmd.Env = p.dir, p.env()
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("harness rewind %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// A scripted agent breaks the build with an edit and deletes a file with
// bash's rm (in the sandbox: the checkpoint is of the tree, not of the
// tools); `harness rewind --to 1 --code` puts both back and the tests pass
// again. Then a second run breaks it again and the user edits a file
// after it: that file is refused (exit 1, nothing changed) until --force.
func TestRewindRestoresABrokenBuild(t *testing.T) {
	t.Parallel()
	needTools(t, "go", "bwrap")
	const calc = "// Package calc does arithmetic.\npackage calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int { return a + b }\n"
	const sub = "package calc\n\n// Sub returns a minus b.\nfunc Sub(a, b int) int { return a - b }\n"
	p := newProject(t, map[string]string{
		"go.mod":  "module example.com/calc\n\ngo 1.22\n",
		"calc.go": calc,
		"sub.go":  sub,
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestCalc(t *testing.T) {\n" +
			"\tif Add(1, 2) != 3 || Sub(3, 1) != 2 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n",
	})
	goTest := func() error {
		t.Helper()
		out, err := inDir(t, p.dir, nil, "go", "test", "-count=1", "./...")
		if err != nil {
			t.Logf("go test: %v\n%s", err, out)
		}
		return err
	}
	if err := goTest(); err != nil {
		t.Fatal("the project's tests fail before the run")
	}

	o := p.run("Simplify calc.",
		read("c1", "calc.go"),
		edit("c2", "calc.go", "return a + b }", "return a + b +- }"),
		bash("c3", "rm sub.go", "remove sub.go"),
		answer("Simplified."),
	)
	o.mustSucceed(t, "Simplified.")
	if _, err := os.Stat(filepath.Join(p.dir, "sub.go")); !os.IsNotExist(err) {
		t.Fatalf("bash rm did not delete sub.go: %v\n%s", err, o.toolResult(t, "c3"))
	}
	if goTest() == nil {
		t.Fatal("go test passes after the agent broke the build")
	}

	list, stderr, code := p.rewindCmd()
	if code != 0 {
		t.Fatalf("harness rewind: exit %d\n%s", code, stderr)
	}
	t.Logf("harness rewind:\n%s", list)
	if !strings.Contains(list, "turn-end") || !rowMatches(list, "1", "prompt", "Simplify calc.") {
		t.Fatalf("the list has no prompt checkpoint 1 and a turn end:\n%s%s", list, stderr)
	}

	plan, stderr, code := p.rewindCmd("--to", "1", "--code", "--dry-run")
	if code != 0 || !rowMatches(plan, "restore", "calc.go") || !rowMatches(plan, "restore", "sub.go") {
		t.Fatalf("harness rewind --dry-run: exit %d, want restore calc.go and sub.go:\n%s%s", code, plan, stderr)
	}
	if goTest() == nil {
		t.Fatal("--dry-run changed the files")
	}

	out, stderr, code := p.rewindCmd("--to", "1", "--code")
	if code != 0 {
		t.Fatalf("harness rewind --to 1 --code: exit %d\n%s%s", code, out, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "calc.go")); string(b) != calc {
		t.Fatalf("calc.go after the rewind:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "sub.go")); string(b) != sub {
		t.Fatalf("sub.go after the rewind:\n%s", b)
	}
	if err := goTest(); err != nil {
		t.Fatal("go test fails after the rewind")
	}

	// A second session breaks the build again; then the user edits sub.go.
	o = p.run("Simplify calc again.",
		read("c1", "calc.go"),
		edit("c2", "calc.go", "return a + b }", "return a + b +- }"),
		answer("Simplified again."),
	)
	o.mustSucceed(t, "Simplified again.")
	const mine = "package calc\n\n// Sub returns a minus b (the user's edit).\nfunc Sub(a, b int) int { return a - b }\n"
	writeFile(t, filepath.Join(p.dir, "sub.go"), mine)
	list, _, _ = p.rewindCmd()
	n := promptRow(list, "Simplify calc again.")
	if n == "" {
		t.Fatalf("the list has no prompt checkpoint of the second session:\n%s", list)
	}
	out, stderr, code = p.rewindCmd("--to", n, "--code")
	if code != 1 || !strings.Contains(stderr, "sub.go") || strings.Contains(stderr, "calc.go") {
		t.Fatalf("harness rewind --to %s --code after the user's edit: exit %d, want 1 refusing sub.go only\n%s%s", n, code, out, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "sub.go")); string(b) != mine {
		t.Fatalf("the refused rewind changed sub.go:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "calc.go")); string(b) == calc {
		t.Fatal("the refused rewind changed calc.go")
	}
	if out, stderr, code = p.rewindCmd("--to", n, "--code", "--force"); code != 0 {
		t.Fatalf("harness rewind --force: exit %d\n%s%s", code, out, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "calc.go")); string(b) != calc {
		t.Fatalf("calc.go after the forced rewind:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "sub.go")); string(b) != sub {
		t.Fatalf("sub.go after the forced rewind:\n%s", b)
	}
	if err := goTest(); err != nil {
		t.Fatal("go test fails after the forced rewind")
	}

	// The conversation too: the second session goes back to before its
	// prompt, and resuming it sends the model none of that turn.
	var session string
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[0] == n {
			session = f[3]
		}
	}
	out, stderr, code = p.rewindCmd("--to", n, "--conversation")
	if code != 0 || !strings.Contains(out, "is back to before turn 1") || session == "" || !strings.Contains(out, session) {
		t.Fatalf("harness rewind --to %s --conversation: exit %d (session %q)\n%s%s", n, code, session, out, stderr)
	}
	p.args = []string{"--session", session}
	o = p.run("Leave calc as it is.", answer("Left as it is."))
	o.mustSucceed(t, "Left as it is.")
	if body := string(o.srv.Requests()[0].Body); strings.Contains(body, "Simplify calc again.") || strings.Contains(body, "Simplified again.") || !strings.Contains(body, "Leave calc as it is.") {
		t.Fatalf("the resumed session after the conversation rewind still has the rewound turn:\n%s", body)
	}
}

// rowMatches reports whether a line of out starts with first and holds
// each of rest as a field (or, for the last, as its tail).
func rowMatches(out, first string, rest ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != first {
			continue
		}
		ok := true
		for _, r := range rest {
			if !strings.Contains(line, r) {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// promptRow returns N of the list's prompt checkpoint whose prompt is
// prompt, or "".
func promptRow(out, prompt string) string {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(line, " prompt ") && strings.HasSuffix(line, prompt) {
			return f[0]
		}
	}
	return ""
}
