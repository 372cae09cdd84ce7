package tui

import (
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// completion is the menu under the editor: slash commands when the input
// is "/word", workspace files when the word at the end starts with "@".
type completion struct {
	items   []string // what replaces the word
	notes   []string // a note per item (a command's summary)
	sel     int
	start   int  // byte offset of the word in the input
	command bool // completing a command name
	noArgs  []bool
}

func (c *completion) active() bool { return len(c.items) > 0 }

func (c *completion) move(d int) {
	if n := len(c.items); n > 0 {
		c.sel = (c.sel + d + n) % n
	}
}

// maxCompletions bounds the menu.
const maxCompletions = 6

// view renders the menu (at most maxCompletions rows around the selection).
func (c *completion) view(m *Model) []string {
	if !c.active() {
		return nil
	}
	first := 0
	if c.sel >= maxCompletions {
		first = c.sel - maxCompletions + 1
	}
	var out []string
	for i := first; i < len(c.items) && i < first+maxCompletions; i++ {
		line := c.items[i]
		if c.notes[i] != "" {
			line += "  " + m.th.dim.Render(c.notes[i])
		}
		line = ansi.Truncate(line, m.w-2, "…")
		if i == c.sel {
			out = append(out, m.th.chosen.Render("›")+" "+line)
		} else {
			out = append(out, "  "+line)
		}
	}
	return out
}

// updateCompletion recomputes the menu for the editor's text.
func (m *Model) updateCompletion() {
	v := m.input.Value()
	m.comp = completion{}
	if strings.HasPrefix(v, "/") && !strings.ContainsAny(v, " \n") {
		for _, c := range m.cmds.Complete(v) {
			usage := "/" + c.Name
			m.comp.items = append(m.comp.items, usage)
			note := c.Summary
			if c.Args != "" {
				note = c.Args + " · " + note
			}
			m.comp.notes = append(m.comp.notes, note)
			m.comp.noArgs = append(m.comp.noArgs, c.Args == "")
		}
		m.comp.command = true
		if len(m.comp.items) == 1 && m.comp.items[0] == v {
			m.comp = completion{} // complete already
		}
		return
	}
	i := strings.LastIndexAny(v, " \n\t")
	word := v[i+1:]
	if !strings.HasPrefix(word, "@") {
		return
	}
	for _, f := range m.files.match(word[1:], 50) {
		m.comp.items = append(m.comp.items, "@"+f)
		m.comp.notes = append(m.comp.notes, "")
	}
	m.comp.start = i + 1
	if len(m.comp.items) == 1 && m.comp.items[0] == word {
		m.comp = completion{}
	}
}

// acceptCompletion puts the selected item in the editor; it reports
// whether Enter should then submit (a command without arguments).
func (m *Model) acceptCompletion() (submit bool) {
	c := m.comp
	m.comp = completion{}
	if !c.active() {
		return false
	}
	pick := c.items[c.sel]
	if c.command {
		if c.noArgs[c.sel] {
			m.input.SetValue(pick)
			return true
		}
		m.input.SetValue(pick + " ")
		return false
	}
	v := m.input.Value()
	m.input.SetValue(v[:c.start] + pick + " ")
	return false
}

// fileIndex lists the workspace's files (relative paths, skipping .git,
// node_modules and other dot directories), built on first use, at most
// maxIndexed files.
type fileIndex struct {
	root  string
	files []string
	built bool
}

const maxIndexed = 20000

func (x *fileIndex) build() {
	x.built = true
	if x.root == "" {
		return
	}
	_ = filepath.WalkDir(x.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if p != x.root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(x.root, p)
		x.files = append(x.files, filepath.ToSlash(rel))
		if len(x.files) >= maxIndexed {
			return filepath.SkipAll
		}
		return nil
	})
	sort.Strings(x.files)
}

// match returns up to n files whose path starts with q, then those whose
// base name starts with q, then those containing q.
func (x *fileIndex) match(q string, n int) []string {
	if !x.built {
		x.build()
	}
	var prefix, base, sub []string
	for _, f := range x.files {
		switch {
		case strings.HasPrefix(f, q):
			prefix = append(prefix, f)
		case strings.HasPrefix(filepath.Base(f), q):
			base = append(base, f)
		case strings.Contains(f, q):
			sub = append(sub, f)
		}
	}
	out := append(append(prefix, base...), sub...)
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// searchState is Ctrl+R: reverse search through the history.
type searchState struct {
	query string
	found string
	match int // index of the match; -1 none
}

func (s *searchState) view(m *Model) string {
	label := "(reverse-i-search)`" + s.query + "': "
	if s.match < 0 && s.query != "" {
		label = "(failing reverse-i-search)`" + s.query + "': "
	}
	return ansi.Truncate(m.th.accent.Render(label)+strings.ReplaceAll(s.found, "\n", "⏎"), m.w, "…")
}

// searchKey: typing narrows, Ctrl+R finds an older match, Enter or a
// movement key takes the match into the editor, Esc leaves it unchanged.
func (m *Model) searchKey(k tea.KeyPressMsg) tea.Cmd {
	s := m.search
	switch k.String() {
	case "esc", "ctrl+g":
		m.search = nil
		return nil
	case "enter", "tab", "right", "left":
		if s.match >= 0 {
			m.input.SetValue(s.found)
		}
		m.search = nil
		return nil
	case "ctrl+r":
		if f, i := m.hist.search(s.query, s.match); i >= 0 {
			s.found, s.match = f, i
		}
		return nil
	case "backspace":
		if s.query != "" {
			_, size := lastRune(s.query)
			s.query = s.query[:len(s.query)-size]
		}
	default:
		if k.Text == "" {
			return nil
		}
		s.query += k.Text
	}
	s.found, s.match = m.hist.search(s.query, -1)
	return nil
}

func lastRune(s string) (rune, int) {
	r := []rune(s)
	last := r[len(r)-1]
	return last, len(string(last))
}
