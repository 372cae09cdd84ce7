package cli

import (
	"strings"
	"testing"
)

func TestLineCountOfToolResults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"ok", 1},
		{"ok\n", 1},
		{"a\nb", 2},
		{"a\nb\n", 2},
		{"\n", 1},
	} {
		if got := lineCount(tc.text); got != tc.want {
			t.Errorf("lineCount(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

func TestDeletedSpillNotesNameBothMarkers(t *testing.T) {
	t.Parallel()
	var errb strings.Builder
	env := &Env{Stderr: &errb}
	noteDeletedSpills(env, "a\n[output truncated; full output: /nonexistent/b25-stdout.log]\n"+
		"(Omitted 9 bytes. Full formatted result stored at: /nonexistent/r.txt. Use read…)")
	for _, p := range []string{"/nonexistent/b25-stdout.log was deleted", "/nonexistent/r.txt was deleted"} {
		if !strings.Contains(errb.String(), p) {
			t.Errorf("no note %q in %q", p, errb.String())
		}
	}
}

// Counts read "1 line", "2 lines", "0 lines" (result lines, `check`).
func TestPluralWording(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0 lines", 1: "1 line", 2: "2 lines"} {
		if got := plural(n, "line"); got != want {
			t.Errorf("plural(%d) = %q, want %q", n, got, want)
		}
	}
}
