package lsp

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// maxMessageChars bounds one diagnostic's message in a result.
const maxMessageChars = 500

var severityNames = [...]string{"error", "error", "warning", "info", "hint"}

// Format renders rep for the model: "LSP diagnostics for calc.go:" and one
// line per diagnostic at or above minSeverity ("calc.go:12:5: error:
// undefined: foo (compiler)"), errors first, at most maxN, paths relative
// to cwd. It returns "" when nothing is shown and there is no note.
func Format(rep FileReport, cwd, minSeverity string, maxN int) string {
	name := rep.Path
	if rel, err := filepath.Rel(cwd, rep.Path); err == nil && !strings.HasPrefix(rel, "..") {
		name = rel
	}
	if rep.Note != "" && len(rep.Diagnostics) == 0 {
		return fmt.Sprintf("LSP diagnostics for %s: none (%s)", name, rep.Note)
	}
	limit := severityRank(minSeverity)
	var shown []Diagnostic
	for _, d := range rep.Diagnostics {
		if sev(d) <= limit {
			shown = append(shown, d)
		}
	}
	if len(shown) == 0 {
		return ""
	}
	slices.SortStableFunc(shown, func(a, b Diagnostic) int {
		if sev(a) != sev(b) {
			return sev(a) - sev(b)
		}
		if a.Range.Start.Line != b.Range.Start.Line {
			return a.Range.Start.Line - b.Range.Start.Line
		}
		return a.Range.Start.Character - b.Range.Start.Character
	})
	var b strings.Builder
	fmt.Fprintf(&b, "LSP diagnostics for %s:", name)
	for i, d := range shown {
		if i == maxN {
			fmt.Fprintf(&b, "\n  … and %d more", len(shown)-maxN)
			break
		}
		msg := strings.ReplaceAll(truncate(strings.TrimSpace(d.Message), maxMessageChars), "\n", "\n    ")
		fmt.Fprintf(&b, "\n  %s:%d:%d: %s: %s", name, d.Range.Start.Line+1, d.Range.Start.Character+1, severityNames[sev(d)], msg)
		if d.Source != "" {
			fmt.Fprintf(&b, " (%s)", d.Source)
		}
	}
	if rep.Note != "" {
		fmt.Fprintf(&b, "\n  (%s)", rep.Note)
	}
	return b.String()
}

// sev is d's severity, 1 (error) to 4 (hint); unset or unknown reads as
// error.
func sev(d Diagnostic) int {
	if d.Severity < 1 || d.Severity > 4 {
		return 1
	}
	return d.Severity
}
