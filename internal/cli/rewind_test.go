package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/checkpoints"
)

// harness rewind over a store the checkpoint row would have written:
// the list, the dry run, the refusal of a path changed after the
// session's last checkpoint, --force, and the usage errors.
func TestRewindCommand(t *testing.T) {
	t.Parallel()
	dir, state := t.TempDir(), t.TempDir()
	vars := map[string]string{"XDG_STATE_HOME": state}
	a := filepath.Join(dir, "a.txt")
	put := func(s string) {
		t.Helper()
		if err := os.WriteFile(a, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("one\n")
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("build/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := runWithEnv(t, dir, vars, "rewind"); code != 0 || out != "" || !strings.Contains(stderr, "no checkpoints of "+dir) {
		t.Fatalf("rewind with no store: %d %q %q", code, out, stderr)
	}
	s, err := checkpoints.Open(filepath.Join(state, "harness"), dir, checkpoints.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Take(ctx, checkpoints.Meta{Session: "s1", Prompt: "make it two\nplease", Reason: "prompt"}); err != nil {
		t.Fatal(err)
	}
	put("two\n")
	if _, err := s.Take(ctx, checkpoints.Meta{Session: "s1", Reason: "turn-end"}); err != nil {
		t.Fatal(err)
	}

	out, stderr, code := runWithEnv(t, dir, vars, "rewind")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[1], "2 ") || !strings.Contains(lines[1], "turn-end") ||
		!strings.HasPrefix(lines[2], "1 ") || !strings.HasSuffix(lines[2], "make it two…") || !strings.Contains(lines[2], "s1") {
		t.Fatalf("rewind: %d\n%s%s", code, out, stderr)
	}

	out, stderr, code = runWithEnv(t, dir, vars, "rewind", "--to", "1", "--code", "--dry-run")
	if code != 0 || !regexp.MustCompile(`(?m)^restore +a\.txt$`).MatchString(out) || !regexp.MustCompile(`(?m)^skipped \(ignored\) +build$`).MatchString(out) || strings.Contains(out, ".gitignore") {
		t.Fatalf("dry run: %d\n%s%s", code, out, stderr)
	}
	put("mine\n") // the user's edit after the turn end
	out, stderr, code = runWithEnv(t, dir, vars, "rewind", "--to", "1", "--code")
	if b, _ := os.ReadFile(a); code != 1 || !strings.Contains(stderr, "a.txt") || string(b) != "mine\n" {
		t.Fatalf("rewind over the user's edit: %d %q\n%s%s", code, b, out, stderr)
	}
	out, stderr, code = runWithEnv(t, dir, vars, "rewind", "--to", "1", "--code", "--force")
	if b, _ := os.ReadFile(a); code != 0 || string(b) != "one\n" {
		t.Fatalf("forced rewind: %d %q\n%s%s", code, b, out, stderr)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--both"}, "need --to N"},
		{[]string{"--to", "1"}, "--to needs one of --code"},
		{[]string{"--to", "1", "--code", "--both"}, "--to needs one of --code"},
		{[]string{"--code"}, "need --to N"},
		{[]string{"--to", "9", "--code"}, "no such checkpoint"},
		{[]string{"--to", "1", "--code", "--session", "s2"}, "belongs to session s1"},
	} {
		if _, stderr, code := runWithEnv(t, dir, vars, append([]string{"rewind"}, c.args...)...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("rewind %v: exit %d, want 2 and %q\n%s", c.args, code, c.want, stderr)
		}
	}
}
