package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aymanbagabas/go-udiff"
	"github.com/charmbracelet/x/ansi"

	toolfs "github.com/dshgo/harness/plugins/tool-fs"
)

// toolState is where a tool call is.
type toolState uint8

const (
	toolRunning toolState = iota
	toolDone
	toolFailed
)

// toolCard is one tool call as the transcript shows it.
type toolCard struct {
	id, name, args string
	started        time.Time
	state          toolState
	duration       time.Duration
	content        string   // the result the model saw
	diff           []string // unified diff for edit/write (computed when the call was announced)
	summary        string   // the one-line argument summary
	live           string   // the output so far while it runs (the last tool_progress tail)
	liveBytes      int64    // output bytes so far while it runs
}

func (c *toolCard) running() bool { return c.state == toolRunning }

// maxDiffLines and maxTailLines bound what a card shows.
const (
	maxDiffLines = 24
	maxTailLines = 8
)

// newToolCard describes a call from its arguments; cwd resolves relative
// file paths for the diff of edit and write.
func newToolCard(id, name, args, cwd string, now time.Time) *toolCard {
	c := &toolCard{id: id, name: name, args: args, started: now}
	c.summary = argSummary(name, args)
	c.diff = proposedDiff(name, args, cwd)
	return c
}

// argSummary is one line saying what the call does.
func argSummary(name, args string) string {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil {
		return oneLine(args)
	}
	for _, k := range []string{"command", "file_path", "path", "pattern", "query", "url"} {
		if v, ok := m[k].(string); ok && v != "" {
			return oneLine(v)
		}
	}
	return oneLine(args)
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}

// proposedDiff is the unified diff an edit or write call would make, read
// from the file as it is now (nil for other tools or unreadable input).
func proposedDiff(name, args, cwd string) []string {
	var path, before, after string
	switch name {
	case "write":
		var a toolfs.WriteArgs
		if json.Unmarshal([]byte(args), &a) != nil || a.FilePath == "" {
			return nil
		}
		path, after = a.FilePath, a.Content
		before = readSmall(resolve(cwd, path))
	case "edit":
		var a toolfs.EditArgs
		if json.Unmarshal([]byte(args), &a) != nil || a.FilePath == "" {
			return nil
		}
		path = a.FilePath
		before = readSmall(resolve(cwd, path))
		if before == "" || !strings.Contains(before, a.OldString) || a.OldString == "" {
			before, after = a.OldString, a.NewString // show the replacement alone
		} else if a.ReplaceAll {
			after = strings.ReplaceAll(before, a.OldString, a.NewString)
		} else {
			after = strings.Replace(before, a.OldString, a.NewString, 1)
		}
	default:
		return nil
	}
	// git's header form: a/ and b/ prefixes, no doubled slash for an
	// absolute path.
	header := strings.TrimPrefix(path, "/")
	d := udiff.Unified("a/"+header, "b/"+header, before, after)
	if d == "" {
		return []string{"(no change)"}
	}
	return strings.Split(strings.TrimRight(d, "\n"), "\n")
}

func resolve(cwd, p string) string {
	if filepath.IsAbs(p) || cwd == "" {
		return p
	}
	return filepath.Join(cwd, p)
}

// readSmall reads a file of at most 1 MiB ("" otherwise).
func readSmall(path string) string {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() > 1<<20 {
		return ""
	}
	b, _ := os.ReadFile(path)
	return string(b)
}

// toolLines renders a card: a header with state and time, then the diff
// (edit, write), the output tail (bash) or the error.
func (t *transcript) toolLines(c *toolCard, w int) []string {
	var icon, when string
	switch c.state {
	case toolRunning:
		icon, when = t.th.warn.Render("●"), t.th.dim.Render(fmt.Sprintf("running %s", fmtDur(t.now().Sub(c.started))))
		if c.liveBytes > 0 {
			when += t.th.dim.Render(" · " + fmtBytes(c.liveBytes))
		}
	case toolDone:
		icon, when = t.th.ok.Render("✓"), t.th.dim.Render(fmtDur(c.duration))
	default:
		icon, when = t.th.bad.Render("✗"), t.th.bad.Render("error · "+fmtDur(c.duration))
	}
	head := fmt.Sprintf("%s %s %s", icon, t.th.accent.Render(c.name), ansi.Truncate(visible(c.summary), max(w-30, 10), "…"))
	lines := []string{head + "  " + when}
	body := func(l string) string { return t.th.dim.Render("  │ ") + ansi.Truncate(visible(l), w-4, "…") }
	switch {
	case len(c.diff) > 0 && c.state != toolFailed:
		lines = append(lines, t.diffLines(c.diff, w, maxDiffLines)...)
	case c.state == toolFailed:
		for _, l := range tail(c.content, 3, true) {
			lines = append(lines, t.th.dim.Render("  │ ")+t.th.bad.Render(ansi.Truncate(visible(l), w-4, "…")))
		}
	case c.state == toolRunning && c.live != "":
		for _, l := range lastLines(c.live, maxTailLines) {
			lines = append(lines, body(l))
		}
	case c.state == toolDone && c.name == "bash":
		for _, l := range tail(c.content, maxTailLines, false) {
			lines = append(lines, body(l))
		}
	}
	return lines
}

// diffLines colours a unified diff, at most n lines.
func (t *transcript) diffLines(diff []string, w, n int) []string {
	var out []string
	for i, l := range diff {
		if i == n {
			out = append(out, t.th.dim.Render(fmt.Sprintf("  … %d more diff lines", len(diff)-n)))
			break
		}
		s := "  " + ansi.Truncate(visible(l), w-2, "…")
		switch {
		case strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---") || strings.HasPrefix(l, "@@"):
			s = t.th.dim.Render(s)
		case strings.HasPrefix(l, "+"):
			s = t.th.added.Render(s)
		case strings.HasPrefix(l, "-"):
			s = t.th.removed.Render(s)
		}
		out = append(out, s)
	}
	return out
}

// tail returns the last n lines of s (the first n when head is set).
func tail(s string, n int, head bool) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	if len(lines) > n {
		if head {
			return lines[:n]
		}
		return append([]string{fmt.Sprintf("… %d lines above", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return lines
}

// lastLines returns the last n lines of s (no trailing empty line) as a
// terminal shows them: a carriage return (a progress bar redrawing its
// line) keeps what follows it.
func lastLines(s string, n int) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	lines = lines[max(0, len(lines)-n):]
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if j := strings.LastIndexByte(l, '\r'); j >= 0 {
			l = l[j+1:]
		}
		lines[i] = l
	}
	return lines
}

// fmtBytes formats a byte count: 980 B, 12.3 KB, 4.1 MB.
func fmtBytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000_000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// visible replaces control characters (escape sequences from a model or a
// command's output) so they cannot redraw the screen; tabs become spaces.
func visible(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return '�'
		}
		return r
	}, s)
}

// fmtDur formats a duration for cards and the status bar: 850ms, 3.2s, 2m05s.
func fmtDur(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}
