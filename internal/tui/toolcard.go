package tui

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/aymanbagabas/go-udiff"
	"github.com/charmbracelet/x/ansi"

	"github.com/dshgo/harness/services/tools"
)

// toolState is where a tool call is.
type toolState uint8

const (
	toolRunning toolState = iota
	toolDone
	toolFailed
)

// toolCard is one tool call as the transcript shows it, drawn from the
// call's presentation (tools.Presentation) alone: the TUI decodes no
// tool's arguments.
type toolCard struct {
	id, name  string
	cwd       string // paths under it are shown relative to it in diff headers
	started   time.Time
	state     toolState
	duration  time.Duration
	pres      tools.Presentation // the latest presentation (pending, then final)
	diff      []string           // the unified diff of the presentation's diff content
	live      string             // the output so far while it runs (the last tool_progress tail)
	liveBytes int64              // output bytes so far while it runs
}

func (c *toolCard) running() bool { return c.state == toolRunning }

// maxDiffLines and maxTailLines bound what a card shows.
const (
	maxDiffLines = 24
	maxTailLines = 8
)

// newToolCard describes a call from its presentation (nil: the generic
// one, computed from the arguments, as for a replayed call).
func newToolCard(id, name, args string, p *tools.Presentation, cwd string, now time.Time) *toolCard {
	c := &toolCard{id: id, name: name, cwd: cwd, started: now}
	if p == nil {
		g := tools.Present(nil, tools.PresentCall{ID: id, Name: name, Arguments: args, Cwd: cwd})
		p = &g
	}
	c.update(*p)
	return c
}

// update applies a later presentation of the call: the fields it omits
// stay as they were (ACP's tool_call_update).
func (c *toolCard) update(p tools.Presentation) {
	if p.Title != "" {
		c.pres.Title = p.Title
	}
	if p.Kind != "" {
		c.pres.Kind = p.Kind
	}
	if p.Status != "" {
		c.pres.Status = p.Status
	}
	if p.Content != nil {
		c.pres.Content = p.Content
		c.diff = c.unifiedDiff()
	}
	if p.Locations != nil {
		c.pres.Locations = p.Locations
	}
	if p.RawInput != nil {
		c.pres.RawInput = p.RawInput
	}
	if p.Meta != nil {
		c.pres.Meta = p.Meta
	}
	switch c.pres.Status {
	case tools.StatusCompleted:
		c.state = toolDone
	case tools.StatusFailed:
		c.state = toolFailed
	default:
		c.state = toolRunning
	}
}

// label is the card's one-line name: the tool's name and the title.
func (c *toolCard) label() string { return oneLine(tools.Label(c.name, &c.pres)) }

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}

// unifiedDiff is the unified diff of the presentation's first diff
// content (nil when it has none).
func (c *toolCard) unifiedDiff() []string {
	for _, ct := range c.pres.Content {
		if ct.Type != tools.ContentDiff || ct.NewText == nil {
			continue
		}
		var before string
		if ct.OldText != nil {
			before = *ct.OldText
		}
		// git's header form: a/ and b/ prefixes, no doubled slash for an
		// absolute path; a path under the working directory relative to it.
		path := ct.Path
		if rel, err := filepath.Rel(c.cwd, path); c.cwd != "" && err == nil && filepath.IsAbs(path) && !strings.HasPrefix(rel, "..") {
			path = rel
		}
		header := strings.TrimPrefix(path, "/")
		d := udiff.Unified("a/"+header, "b/"+header, before, *ct.NewText)
		if d == "" {
			return []string{"(no change)"}
		}
		return strings.Split(strings.TrimRight(d, "\n"), "\n")
	}
	return nil
}

// output is what the card shows of a call's result: the terminal's
// output, else the text content ("" when it has neither).
func (c *toolCard) output() string {
	var texts []string
	for _, ct := range c.pres.Content {
		switch {
		case ct.Type == tools.ContentTerminal && ct.Terminal != nil:
			return clean(ct.Terminal.Output)
		case ct.Type == tools.ContentBlock && ct.Content != nil && ct.Content.Type == "text":
			texts = append(texts, ct.Content.Text)
		}
	}
	return clean(strings.Join(texts, "\n"))
}

// toolLines renders a card: a header with state and time, then the diff,
// the output so far or its tail, or the failure's reason and the tail.
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
		icon, when = t.th.bad.Render("✗"), t.th.bad.Render("failed · "+fmtDur(c.duration))
	}
	name, rest, _ := strings.Cut(c.label(), " ")
	head := fmt.Sprintf("%s %s %s", icon, t.th.accent.Render(name), ansi.Truncate(visible(rest), max(w-30, 10), "…"))
	lines := []string{head + "  " + when}
	body := func(l string) string { return t.th.dim.Render("  │ ") + ansi.Truncate(visible(l), w-4, "…") }
	switch {
	case c.state == toolFailed:
		if r := c.pres.Reason(); r != "" {
			lines = append(lines, t.th.dim.Render("  │ ")+t.th.bad.Render(ansi.Truncate(visible(r), w-4, "…")))
		}
		for _, l := range tail(c.output(), 3, false) {
			lines = append(lines, body(l))
		}
	case len(c.diff) > 0:
		lines = append(lines, t.diffLines(c.diff, w, maxDiffLines)...)
	case c.state == toolRunning && c.live != "":
		for _, l := range lastLines(c.live, maxTailLines) {
			lines = append(lines, body(l))
		}
	case c.state == toolDone:
		for _, l := range tail(c.output(), maxTailLines, false) {
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
// command's output) so they cannot redraw the screen; tabs are expanded to
// the next tab stop.
func visible(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return '�'
		}
		return r
	}, expandTabs(s))
}

// tabWidth is the distance between tab stops where the TUI expands tabs.
const tabWidth = 4

// expandTabs replaces each tab in s with spaces up to the next tab stop of
// its line (columns counted in cells), so indentation survives a renderer
// that would drop or squash a raw tab.
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, r := range s {
		switch r {
		case '\t':
			n := tabWidth - col%tabWidth
			b.WriteString(strings.Repeat(" ", n))
			col += n
		case '\n':
			b.WriteRune(r)
			col = 0
		default:
			b.WriteRune(r)
			col += ansi.StringWidth(string(r))
		}
	}
	return b.String()
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
