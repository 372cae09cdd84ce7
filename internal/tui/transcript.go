package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/glamour/v2"
	"github.com/charmbracelet/x/ansi"
)

// itemKind is what a transcript item shows.
type itemKind uint8

const (
	kindUser      itemKind = iota // the user's prompt
	kindAssistant                 // assistant text, rendered as Markdown
	kindReasoning                 // reasoning, dimmed, collapsible
	kindTool                      // one tool call card
	kindNotice                    // a dim line (session opened, compaction, notices)
	kindError                     // an error line
	kindInfo                      // command output, rendered as Markdown
)

// item is one block of the transcript. gen counts changes; the rendered
// lines are cached for (width, gen, thinking) and reused until one changes.
type item struct {
	kind itemKind
	text string
	done bool
	tool *toolCard
	gen  int

	cacheW, cacheGen int
	cacheOpen        bool
	lines            []string

	// Streaming Markdown: the text up to stableLen (a paragraph boundary
	// outside a code fence) is rendered once into stable.
	stableLen, stableW int
	stable             []string
}

func (it *item) appendText(s string) { it.text += s; it.gen++ }

// transcript is the list of items and the renderers they share.
type transcript struct {
	items    []*item
	th       theme
	md       map[int]*glamour.TermRenderer // per wrap width
	thinking bool                          // reasoning expanded
	now      func() time.Time
}

func newTranscript(th theme) *transcript {
	return &transcript{th: th, md: map[int]*glamour.TermRenderer{}, now: time.Now}
}

func (t *transcript) add(it *item) *item { t.items = append(t.items, it); return it }

// setTheme switches the theme and drops every cache.
func (t *transcript) setTheme(th theme) {
	t.th, t.md = th, map[int]*glamour.TermRenderer{}
	for _, it := range t.items {
		it.gen++
		it.stableW = 0
	}
}

// markdown renders s as Markdown wrapped to width w (plain wrapped text when
// the renderer fails).
func (t *transcript) markdown(s string, w int) []string {
	r := t.md[w]
	if r == nil {
		var err error
		r, err = glamour.NewTermRenderer(glamour.WithStandardStyle(t.th.glamourStyle()), glamour.WithWordWrap(w-2))
		if err != nil {
			return wrapLines(s, w)
		}
		t.md[w] = r
	}
	s = expandTabs(s) // CommonMark's tab stops are 4 columns too
	out, err := r.Render(s)
	if err != nil {
		return wrapLines(s, w)
	}
	return trimBlank(strings.Split(strings.TrimRight(out, "\n"), "\n"))
}

// trimBlank drops leading and trailing blank lines.
func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[0])) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[len(lines)-1])) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// wrapLines wraps plain text to w columns.
func wrapLines(s string, w int) []string {
	if w < 10 {
		w = 10
	}
	return strings.Split(ansi.Wrap(s, w, ""), "\n")
}

// render returns the lines of it at width w, from the cache when valid.
func (t *transcript) render(it *item, w int) []string {
	live := it.kind == kindTool && it.tool.running()
	if !live && it.lines != nil && it.cacheW == w && it.cacheGen == it.gen && it.cacheOpen == t.thinking {
		return it.lines
	}
	var lines []string
	switch it.kind {
	case kindUser:
		for i, l := range wrapLines(it.text, w-2) {
			p := "  "
			if i == 0 {
				p = "> "
			}
			lines = append(lines, t.th.user.Render(p+l))
		}
	case kindAssistant:
		lines = t.streamMarkdown(it, w)
	case kindInfo:
		lines = t.markdown(it.text, w)
	case kindReasoning:
		lines = t.reasoning(it, w)
	case kindTool:
		lines = t.toolLines(it.tool, w)
	case kindNotice:
		for _, l := range wrapLines(it.text, w) {
			lines = append(lines, t.th.dim.Render(l))
		}
	case kindError:
		for _, l := range wrapLines(it.text, w) {
			lines = append(lines, t.th.bad.Render(l))
		}
	}
	lines = append(lines, "") // a blank line between items
	it.lines, it.cacheW, it.cacheGen, it.cacheOpen = lines, w, it.gen, t.thinking
	return lines
}

// streamMarkdown renders assistant text: while it streams, the part before
// the last paragraph break outside a code fence is rendered as Markdown once
// and kept; only the tail (plain, wrapped) is redone per token.
func (t *transcript) streamMarkdown(it *item, w int) []string {
	if it.done {
		return t.markdown(it.text, w)
	}
	cut := stableCut(it.text)
	if cut != it.stableLen || w != it.stableW {
		it.stableLen, it.stableW = cut, w
		it.stable = nil
		if cut > 0 {
			it.stable = t.markdown(it.text[:cut], w)
		}
	}
	out := append([]string(nil), it.stable...)
	if tail := strings.TrimSpace(it.text[cut:]); tail != "" {
		if len(out) > 0 {
			out = append(out, "")
		}
		// The paragraph being written is shown as wrapped text; it becomes
		// Markdown when it is complete (one glamour pass per paragraph,
		// not per token).
		for _, l := range wrapLines(tail, w-4) {
			out = append(out, "  "+l)
		}
	}
	return out
}

// stableCut is the end of the last complete paragraph of s: the last "\n\n"
// not inside a ``` fence (0 when none).
func stableCut(s string) int {
	cut, inFence, pos := 0, false, 0
	for _, line := range strings.SplitAfter(s, "\n") {
		pos += len(line)
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			inFence = !inFence
			if !inFence && strings.HasSuffix(line, "\n") {
				cut = pos
			}
			continue
		}
		if !inFence && trimmed == "" && strings.HasSuffix(line, "\n") && pos < len(s) {
			cut = pos
		}
	}
	return cut
}

// reasoning renders a reasoning block: collapsed, a one-line summary (and,
// while it streams, its last line); expanded (Ctrl+O), the whole text.
func (t *transcript) reasoning(it *item, w int) []string {
	text := strings.TrimSpace(it.text)
	n := strings.Count(text, "\n") + 1
	if !t.thinking {
		head := fmt.Sprintf("▸ thinking · %d lines (ctrl+o to show)", n)
		lines := []string{t.th.dim.Render(head)}
		if !it.done {
			last := text[strings.LastIndexByte(text, '\n')+1:]
			lines = append(lines, t.th.dim.Render("  "+ansi.Truncate(last, w-4, "…")))
		}
		return lines
	}
	lines := []string{t.th.dim.Render("▾ thinking (ctrl+o to hide)")}
	for _, l := range wrapLines(text, w-2) {
		lines = append(lines, t.th.dim.Render("  "+l))
	}
	return lines
}

// window returns the h lines of the transcript that end scroll lines above
// the bottom, rendering only the items it needs, and the total line count
// of the items it rendered (for the scroll limit).
func (t *transcript) window(w, h, scroll int) (lines []string, atTop bool) {
	need := h + scroll
	var chunks [][]string
	got := 0
	i := len(t.items) - 1
	for ; i >= 0 && got < need; i-- {
		l := t.render(t.items[i], w)
		chunks = append(chunks, l)
		got += len(l)
	}
	all := make([]string, 0, got)
	for j := len(chunks) - 1; j >= 0; j-- {
		all = append(all, chunks[j]...)
	}
	end := len(all) - scroll
	if end < 0 {
		end = 0
	}
	start := end - h
	if start < 0 {
		start = 0
		end = min(h, len(all))
		atTop = i < 0
	}
	return all[start:end], atTop
}
