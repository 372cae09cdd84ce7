package cli

import "testing"

func TestLineCountOfToolResults(t *testing.T) {
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
