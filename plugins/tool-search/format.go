package toolsearch

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dshgo/harness/services/subprocess/sandbox"
)

// Caps are the limits of the search tools (plugin config after defaulting).
type Caps struct {
	// MaxMatches is how many grep matches are shown inline (dsh grepMaxMatches, 250).
	MaxMatches int
	// MaxLineBytes caps one grep preview line, in bytes (dsh grepMaxLineBytes, 2000).
	MaxLineBytes int
	// MaxResults is how many glob paths are shown inline (dsh globMaxResults, 100).
	MaxResults int
	// RawOutputMaxBytes caps ripgrep's stdout, in bytes (20 000 000).
	RawOutputMaxBytes int
	// StderrMaxBytes caps the retained ripgrep stderr tail, in bytes (65 536).
	StderrMaxBytes int
	// Timeout bounds one search (30 s).
	Timeout time.Duration
	// Grace is the SIGTERM→SIGKILL grace of a ripgrep process (3 s).
	Grace time.Duration
	// SampleOverCapGlob shows an over-cap glob page as a round-robin sample
	// across the root's top-level entries instead of the newest paths.
	SampleOverCapGlob bool
}

// DefaultCaps are dsh's search caps.
func DefaultCaps() Caps {
	return Caps{
		MaxMatches:        250,
		MaxLineBytes:      2000,
		MaxResults:        100,
		RawOutputMaxBytes: 20_000_000,
		StderrMaxBytes:    64 * 1024,
		Timeout:           30 * time.Second,
		Grace:             3 * time.Second,
	}
}

// Match is one matching line.
type Match struct {
	// Path is the file, relative to the session working directory when inside
	// it (slash-separated), else absolute.
	Path string `json:"path"`
	// LineNumber is the 1-based line number.
	LineNumber int `json:"lineNumber"`
	// Line is the matching line without its terminator, or
	// "(line is not valid UTF-8)".
	Line string `json:"line"`
}

// SpillNote locates the complete result of an over-cap search in the spill store.
type SpillNote struct {
	// Locator is the spill store's locator (a file path for the local store).
	Locator string `json:"locator"`
	// Hint tells the model how to read it.
	Hint string `json:"hint"`
}

// GrepValue is the canonical value of the grep tool.
type GrepValue struct {
	// Matches are all matches, sorted by path then line number.
	Matches []Match `json:"matches"`
	// Spill locates the complete formatted list when Matches exceeds the inline cap
	// and a spill store saved it.
	Spill *SpillNote `json:"spill,omitempty"`
	// Withheld counts the matches left out because reading their files is
	// denied (see [Withhold]); nil when none were.
	Withheld *WithheldNote `json:"withheld,omitempty"`
	// Hidden counts the files left out because the sandbox policy hides
	// them (denyRead, see Searcher.Contain); a last line says so.
	Hidden int `json:"hidden,omitempty"`
}

// WithheldNote says what a grep left out under the read policy.
type WithheldNote struct {
	// Files and Matches count the files withheld and their matches.
	Files   int `json:"files"`
	Matches int `json:"matches"`
	// Rules are the deny rules that withheld them, as written, in first-seen
	// order.
	Rules []string `json:"rules"`
}

// GlobValue is the canonical value of the glob tool.
type GlobValue struct {
	// Root is the searched directory as displayed ("." for the working directory).
	Root string `json:"root"`
	// Paths are all matching files, newest modification first (ties by path).
	Paths []string `json:"paths"`
	// Spill locates the complete list when Paths exceeds the inline cap and a
	// spill store saved it.
	Spill *SpillNote `json:"spill,omitempty"`
	// Hidden counts the files left out because the sandbox policy hides
	// them (denyRead); a last line says so.
	Hidden int `json:"hidden,omitempty"`
}

// hiddenLine is the line grep and glob add when the sandbox policy hid
// files: "(N files hidden by the sandbox policy (sandbox.denyRead))".
func hiddenLine(n int) string {
	if n == 0 {
		return ""
	}
	return "\n\n(" + sandbox.HiddenNote(n) + ")"
}

// PreviewLine keeps at most maxBytes bytes of line, cut at a character
// boundary, marking a cut with " (line truncated)".
func PreviewLine(line string, maxBytes int) string {
	if len(line) <= maxBytes {
		return line
	}
	cut := maxBytes
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return line[:cut] + " (line truncated)"
}

func matchNoun(n int) string {
	if n == 1 {
		return "match"
	}
	return "matches"
}

// formatMatches groups matches by file (in first-seen order): the path on its
// own line, then "Line N: preview" lines; groups are separated by a blank line.
func formatMatches(matches []Match, maxLineBytes int) string {
	var b strings.Builder
	prev := ""
	for i, m := range matches {
		if i == 0 || m.Path != prev {
			if i > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(m.Path)
			prev = m.Path
		}
		b.WriteString("\nLine ")
		b.WriteString(strconv.Itoa(m.LineNumber))
		b.WriteString(": ")
		b.WriteString(PreviewLine(m.Line, maxLineBytes))
	}
	return b.String()
}

// FullGrepText is the complete formatted match list saved to the spill store.
func FullGrepText(matches []Match, maxLineBytes int) string {
	return "Found " + strconv.Itoa(len(matches)) + " " + matchNoun(len(matches)) + "\n\n" + formatMatches(matches, maxLineBytes)
}

// FormatGrep renders a grep value (B5): "No matches found"; or "Found N
// match(es)" and the grouped matches; or, over the cap, "Found K of N matches",
// the first K matches, and a line saying where the complete list was saved (or
// that it could not be saved). When matches were withheld, a last line says
// "(M matches in F files withheld: reading them is denied by permission rules
// "r1", "r2")".
func FormatGrep(v GrepValue, caps Caps) string {
	return formatGrepMatches(v, caps) + withheldLine(v.Withheld) + hiddenLine(v.Hidden)
}

func formatGrepMatches(v GrepValue, caps Caps) string {
	n := len(v.Matches)
	if n == 0 {
		return "No matches found"
	}
	if n <= caps.MaxMatches {
		return "Found " + strconv.Itoa(n) + " " + matchNoun(n) + "\n\n" + formatMatches(v.Matches, caps.MaxLineBytes)
	}
	recovery := "The complete result could not be saved; narrow pattern, path, or include to see more."
	if v.Spill != nil {
		recovery = "Full grep result stored at: " + v.Spill.Locator + ". " + v.Spill.Hint
	}
	return "Found " + strconv.Itoa(caps.MaxMatches) + " of " + strconv.Itoa(n) + " matches\n\n" +
		formatMatches(v.Matches[:caps.MaxMatches], caps.MaxLineBytes) + "\n\n(" + recovery + ")"
}

// withheldLine is the line FormatGrep adds when matches were withheld.
func withheldLine(w *WithheldNote) string {
	if w == nil {
		return ""
	}
	files, them := "1 file", "it"
	if w.Files != 1 {
		files, them = strconv.Itoa(w.Files)+" files", "them"
	}
	rules := make([]string, len(w.Rules))
	for i, r := range w.Rules {
		rules[i] = strconv.Quote(r)
	}
	return "\n\n(" + strconv.Itoa(w.Matches) + " " + matchNoun(w.Matches) + " in " + files +
		" withheld: reading " + them + " is denied by permission " + plural(len(rules), "rule", "rules") + " " + strings.Join(rules, ", ") + ")"
}

// Withhold removes from v the matches in files that denied says may not be
// read, and notes what it removed in v.Withheld. Match paths are resolved
// against cwd, the directory the search displayed them relative to. denied
// is called once per file.
func Withhold(v GrepValue, cwd string, denied func(path string) (rule string, ok bool)) GrepValue {
	type verdict struct {
		rule   string
		denied bool
	}
	seen := map[string]verdict{}
	kept := v.Matches[:0:0]
	for _, m := range v.Matches {
		vd, ok := seen[m.Path]
		if !ok {
			abs := filepath.FromSlash(m.Path)
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(cwd, abs)
			}
			vd.rule, vd.denied = denied(abs)
			seen[m.Path] = vd
			if vd.denied {
				if v.Withheld == nil {
					v.Withheld = &WithheldNote{}
				}
				v.Withheld.Files++
				if !slices.Contains(v.Withheld.Rules, vd.rule) {
					v.Withheld.Rules = append(v.Withheld.Rules, vd.rule)
				}
			}
		}
		if vd.denied {
			v.Withheld.Matches++
			continue
		}
		kept = append(kept, m)
	}
	if v.Withheld != nil {
		v.Matches = kept
	}
	return v
}

// FullGlobText is the complete path list saved to the spill store.
func FullGlobText(paths []string) string { return strings.Join(paths, "\n") }

// FormatGlob renders a glob value (B6): "No files found"; or one path per line;
// or, over the cap, a page of MaxResults paths (the newest, or with
// SampleOverCapGlob a round-robin sample across the root's top-level entries)
// and a line with the count and where the complete sorted list was saved (or
// that it could not be saved).
func FormatGlob(v GlobValue, caps Caps) string {
	return formatGlobPaths(v, caps) + hiddenLine(v.Hidden)
}

func formatGlobPaths(v GlobValue, caps Caps) string {
	n := len(v.Paths)
	switch {
	case n == 0:
		return "No files found"
	case n <= caps.MaxResults:
		return strings.Join(v.Paths, "\n")
	}
	recovery := "The complete result could not be saved; narrow pattern or path to see more."
	if v.Spill != nil {
		recovery = "Full sorted result stored at: " + v.Spill.Locator + ". " + v.Spill.Hint
	}
	page, basis := v.Paths[:caps.MaxResults], "."
	if caps.SampleOverCapGlob {
		var shown, total int
		page, shown, total = SampleAcrossTopLevel(v.Paths, caps.MaxResults, v.Root)
		if total != n {
			basis = ", sampled across " + strconv.Itoa(shown) + " of the " + strconv.Itoa(total) +
				" top-level entries this pattern matched instead of taken in modification-time order."
			if shown < total {
				basis += " Narrow path to inspect a specific subtree."
			}
		}
	}
	return strings.Join(page, "\n") + "\n\n(Showing " + strconv.Itoa(len(page)) + " of " + strconv.Itoa(n) + " paths" + basis + " " + recovery + ")"
}

// SampleAcrossTopLevel picks at most max paths round-robin across the
// top-level entries of root (the first path segment below it), keeping each
// entry's paths in their given order and the entries in first-seen order. It
// returns the sample and how many entries it shows out of how many matched.
func SampleAcrossTopLevel(paths []string, max int, root string) (sample []string, shown, total int) {
	var keys []string
	groups := map[string][]string{}
	for _, p := range paths {
		rel := p
		if root != "." && root != "" {
			rel = strings.TrimPrefix(strings.TrimPrefix(p, strings.TrimSuffix(root, "/")), "/")
		}
		key, _, _ := strings.Cut(rel, "/")
		if _, ok := groups[key]; !ok {
			keys = append(keys, key)
		}
		groups[key] = append(groups[key], p)
	}
	taken := map[string][]string{}
	for round, count := 0, 0; count < max; round++ {
		progressed := false
		for _, k := range keys {
			if count >= max {
				break
			}
			if round < len(groups[k]) {
				taken[k] = append(taken[k], groups[k][round])
				count++
				progressed = true
			}
		}
		if !progressed {
			break
		}
	}
	for _, k := range keys {
		sample = append(sample, taken[k]...)
		if len(taken[k]) > 0 {
			shown++
		}
	}
	return sample, shown, len(keys)
}

// plural picks the word for n things.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
