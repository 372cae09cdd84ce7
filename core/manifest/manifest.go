package manifest

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Pos is a place in a manifest or patch file (1-based line and column).
type Pos struct {
	File string
	Line int
	Col  int
}

// String renders FILE:LINE:COL (FILE:LINE when the column is unknown).
func (p Pos) String() string {
	switch {
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Error is one manifest problem at a place. Resolving a manifest (unknown
// plugin names, configs that do not decode or validate) reports each
// problem as an *Error, several joined with errors.Join.
type Error struct {
	Pos Pos
	Msg string
	// Err is the cause when there is a typed one: the *core.ConfigError a
	// plugin's Validate returned (so errors.As finds it through the
	// loader), else nil.
	Err error
}

// Error renders "FILE:LINE:COL: message".
func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// Unwrap returns the cause (nil for most problems).
func (e *Error) Unwrap() error { return e.Err }

func errAt(file string, n *yaml.Node, format string, args ...any) *Error {
	p := Pos{File: file}
	if n != nil {
		p.Line, p.Col = n.Line, n.Column
	}
	return &Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

// Manifest is a parsed (and possibly composed) harness.yml.
type Manifest struct {
	// File is the path the manifest was read from.
	File string
	// StartTimeout bounds booting the plugin tree (0 = the host default).
	StartTimeout time.Duration
	// StopTimeout bounds disposing it (0 = the host default).
	StopTimeout time.Duration
	// Plugins are the rows in order.
	Plugins []Entry
	// Patches are the files of the patches [Compose] applied, in order.
	Patches []string
}

// Entry is one manifest row.
type Entry struct {
	// ID is the row's unique id.
	ID string
	// Name is the plugin's catalog name (empty for a group row).
	Name string
	// Config is the raw config node (nil when absent or null). Decode it
	// with [DecodeConfig].
	Config *yaml.Node
	// Disabled keeps the row without mounting it.
	Disabled bool
	// Group marks a row whose Children are nested rows.
	Group bool
	// Children are a group's rows.
	Children []Entry
	// Pos is where the row starts.
	Pos Pos
	// NamePos is where the row's name was written (its `name:` value, or
	// the patch row that set it); the zero Pos when the row has no name.
	// Errors about the plugin name point there.
	NamePos Pos
	// Source is the file that last defined or patched the row.
	Source string
	// ConfigSource is the file that last wrote the row's Config: the file
	// that defined the row, or the last patch that set or merged its
	// config. A patch that sets only name or disabled leaves it (and the
	// config) as it was. Empty means Source.
	ConfigSource string
	// ConfigSources names the file of each top-level config key that a
	// patch merge kept from an earlier file; a key not listed was written
	// in ConfigSource.
	ConfigSources map[string]string
}

// configFile returns the file that last wrote the row's config.
func (e *Entry) configFile() string {
	if e.ConfigSource != "" {
		return e.ConfigSource
	}
	return e.Source
}

// configSource returns the file that wrote the top-level config key.
func (e *Entry) configSource(key string) string {
	if f, ok := e.ConfigSources[key]; ok {
		return f
	}
	return e.configFile()
}

// clone deep-copies e.
func (e Entry) clone() Entry {
	e.Config = cloneNode(e.Config)
	e.ConfigSources = maps.Clone(e.ConfigSources)
	if e.Children != nil {
		kids := make([]Entry, len(e.Children))
		for i, k := range e.Children {
			kids[i] = k.clone()
		}
		e.Children = kids
	}
	return e
}

func cloneNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, k := range n.Content {
			c.Content[i] = cloneNode(k)
		}
	}
	return &c
}

// Clone returns a deep copy of m.
func (m *Manifest) Clone() *Manifest {
	c := *m
	c.Patches = slices.Clone(m.Patches)
	c.Plugins = make([]Entry, len(m.Plugins))
	for i, e := range m.Plugins {
		c.Plugins[i] = e.clone()
	}
	return &c
}

// Flatten returns every non-group row in tree order, with Disabled set when
// the row or an enclosing group is disabled.
func (m *Manifest) Flatten() []Entry {
	var out []Entry
	var walk func(es []Entry, disabled bool)
	walk = func(es []Entry, disabled bool) {
		for _, e := range es {
			if e.Group {
				walk(e.Children, disabled || e.Disabled)
				continue
			}
			e.Disabled = e.Disabled || disabled
			out = append(out, e)
		}
	}
	walk(m.Plugins, false)
	return out
}

// ReadFile parses the manifest at path.
func ReadFile(path string) (*Manifest, error) {
	data, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// MaxFileBytes bounds a manifest or patch file (8 MiB); a larger file, or a
// device such as /dev/zero, is an error rather than an unbounded read.
const MaxFileBytes = 8 << 20

// readBounded reads a manifest or patch file of at most MaxFileBytes bytes.
// Devices, sockets and directories are refused before they are opened;
// pipes (e.g. /dev/stdin) are read up to the bound.
func readBounded(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode()&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeSocket|fs.ModeDir) != 0 {
		return nil, &Error{Pos: Pos{File: path}, Msg: "not a regular file"}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, &Error{Pos: Pos{File: path}, Msg: fmt.Sprintf("file is larger than %d MiB", MaxFileBytes>>20)}
	}
	return data, nil
}

// decodeDocument reads exactly one YAML document from data into a node.
func decodeDocument(file string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil // empty file
		}
		// Tabs are legal inside block scalars, quoted strings and flow
		// collections, so they are only blamed once yaml.v3 has failed.
		if tabErr := checkTabs(file, data, yamlLine(err)); tabErr != nil {
			return nil, tabErr
		}
		if msg := err.Error(); strings.Contains(msg, "UTF-8") || strings.Contains(msg, "control characters") {
			if textErr := checkText(file, data); textErr != nil {
				return nil, textErr
			}
		}
		return nil, yamlError(file, data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if err != nil {
			line = yamlLine(err)
		}
		return nil, &Error{Pos: Pos{File: file, Line: line}, Msg: "manifest must contain exactly one YAML document"}
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if err := checkNode(file, root); err != nil {
		return nil, err
	}
	return root, nil
}

// checkText locates what yaml.v3's reader rejects without a line (invalid
// UTF-8, control characters other than tab, LF, CR and NEL) and names its
// line and column (in bytes).
func checkText(file string, data []byte) error {
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return &Error{Pos: Pos{File: file, Line: line, Col: col}, Msg: "invalid UTF-8 (the file must be UTF-8 text)"}
		case r == '\n':
			line, col = line+1, 0
		case r == '\t' || r == '\r' || r == 0x85:
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0xfffe || r == 0xffff:
			return &Error{Pos: Pos{File: file, Line: line, Col: col}, Msg: fmt.Sprintf("control character %U is not allowed", r)}
		}
		i += size
		col += size
	}
	return nil
}

// checkTabs names the tab indentation that made yaml.v3 fail at errLine
// (yaml.v3 only says "found character that cannot start any token"): the
// last tab-indented line at or before it (yaml.v3 sometimes reports the line
// before the offending one), or the first anywhere when errLine is 0.
func checkTabs(file string, data []byte, errLine int) *Error {
	var found *Error
	for i, line := range strings.Split(string(data), "\n") {
		if errLine > 0 && i+1 > errLine+1 {
			break
		}
		trimmed := strings.TrimLeft(line, " ")
		if strings.HasPrefix(trimmed, "\t") {
			found = &Error{Pos: Pos{File: file, Line: i + 1, Col: len(line) - len(trimmed) + 1},
				Msg: "tab character used for indentation; YAML indentation must use spaces"}
			if errLine == 0 {
				break
			}
		}
	}
	return found
}

func yamlLine(err error) int {
	var line int
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		_, _ = fmt.Sscanf(msg[i+5:], "%d", &line) // no number: line stays 0
	}
	return line
}

func yamlError(file string, data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := yamlLine(err)
	if line > 0 {
		if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "line ") {
			msg = msg[i+2:]
		}
	}
	if at, ok := locateYAMLError(data, err.Error(), line); ok {
		line = at
	} else if line > 0 {
		msg = "near here (yaml.v3 names the start of the enclosing block): " + msg
	}
	if strings.Contains(msg, "did not find expected key") || strings.Contains(msg, "did not find expected <document start>") {
		msg = "manifest must contain exactly one YAML document (" + msg + "; a flow value such as [] cannot be followed by block entries)"
	}
	return &Error{Pos: Pos{File: file, Line: line}, Msg: msg}
}

// locateBudget bounds the bytes locateYAMLError decodes in all.
const locateBudget = 8 << 20

// locateYAMLError finds the line yaml.v3's error is really about. yaml.v3
// names the start of the enclosing block for parser errors ("line 1: did not
// find expected '-' indicator" for a bad indentation on line 4) and no line
// at all for an unknown alias, so this decodes growing prefixes of data (one
// more line each time, from the reported line on) and returns the first line
// whose prefix fails with the very same error text: that line holds the token
// yaml.v3 rejected. It reports false when no prefix reproduces the error
// within locateBudget bytes decoded.
func locateYAMLError(data []byte, want string, from int) (int, bool) {
	from = max(from, 1)
	lines := bytes.SplitAfter(data, []byte("\n"))
	end, spent := 0, 0
	for i, l := range lines {
		end += len(l)
		if i+1 < from {
			continue
		}
		if spent += end; spent > locateBudget {
			return 0, false
		}
		var doc yaml.Node
		if err := yaml.NewDecoder(bytes.NewReader(data[:end])).Decode(&doc); err != nil && err.Error() == want {
			return i + 1, true
		}
	}
	return 0, false
}

// checkNode rejects duplicate mapping keys, aliases and unknown tags
// anywhere in the tree, and !env outside config (checked by the row parser).
func checkNode(file string, n *yaml.Node) error {
	switch n.Kind {
	case yaml.AliasNode:
		return errAt(file, n, "YAML aliases are not supported in manifests")
	case yaml.MappingNode:
		seen := map[string]*yaml.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode {
				if prev, ok := seen[k.Value]; ok {
					return errAt(file, k, "key %s already defined at line %d", k.Value, prev.Line)
				}
				seen[k.Value] = k
			}
		}
	}
	if err := checkTag(file, n); err != nil {
		return err
	}
	for _, c := range n.Content {
		if err := checkNode(file, c); err != nil {
			return err
		}
	}
	return nil
}

func checkTag(file string, n *yaml.Node) error {
	switch n.Tag {
	case "", "!!str", "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq", "!!timestamp", "!!binary", "!":
		return nil
	case "!env", AppendTag:
		return nil
	}
	return errAt(file, n, "unknown tag %s (harness.yml supports !env and, on a top-level config key, !append)", n.Tag)
}

// Parse reads a harness.yml document: a mapping with `plugins` (a list of
// rows) and optional `startTimeout` / `stopTimeout` durations. An
// empty document, a mapping without `plugins`, or `plugins:` with no value
// at all, is an *Error (most likely a truncated or mistaken file);
// `plugins: []` or `plugins: ~` boots nothing on purpose.
func Parse(file string, data []byte) (*Manifest, error) {
	root, err := decodeDocument(file, data)
	if err != nil {
		return nil, err
	}
	m := &Manifest{File: file}
	if root == nil || (root.Kind == yaml.ScalarNode && root.Tag == "!!null") {
		// Most likely a truncated or mistaken file: booting nothing
		// would hide that. `plugins: []` asks for nothing explicitly.
		return nil, errAt(file, nil, "empty manifest: no `plugins:` list (write `plugins: []` to boot no plugins)")
	}
	if root.Kind != yaml.MappingNode {
		return nil, errAt(file, root, "manifest must be a mapping with a `plugins:` list")
	}
	hasPlugins := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if v.Tag == "!env" {
			return nil, errAt(file, v, "!env is only allowed inside a plugin's config")
		}
		if err := noAppend(file, v); err != nil && k.Value != "plugins" {
			return nil, err
		}
		switch k.Value {
		case "plugins":
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" && v.Value == "" && v.Style&yaml.TaggedStyle == 0 {
				// `plugins:` with nothing after it: as truncated as an
				// empty file. An explicit `plugins: ~` (case c2) or
				// `plugins: []` boots nothing on purpose.
				return nil, errAt(file, k, "plugins: has no rows (write `plugins: []` to boot no plugins)")
			}
			hasPlugins = true
			rows, err := parseRows(file, v)
			if err != nil {
				return nil, err
			}
			m.Plugins = rows
		case "startTimeout", "stopTimeout":
			var d time.Duration
			if err := v.Decode(&d); err != nil || d < 0 {
				return nil, errAt(file, v, "%s: want a duration such as 15s", k.Value)
			}
			if k.Value == "startTimeout" {
				m.StartTimeout = d
			} else {
				m.StopTimeout = d
			}
		default:
			return nil, errAt(file, k, "unknown key %q (known keys: plugins, startTimeout, stopTimeout)", k.Value)
		}
	}
	if !hasPlugins {
		return nil, errAt(file, root, "no `plugins:` list (write `plugins: []` to boot no plugins)")
	}
	if err := checkIDs(m.Plugins, map[string]Pos{}); err != nil {
		return nil, err
	}
	return m, nil
}

func parseRows(file string, n *yaml.Node) ([]Entry, error) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, errAt(file, n, "plugins must be a list of rows")
	}
	rows := make([]Entry, 0, len(n.Content))
	names := map[string]int{}
	for _, item := range n.Content {
		e, err := parseRow(file, item)
		if err != nil {
			return nil, err
		}
		rows = append(rows, e)
		if e.Name != "" {
			names[e.Name]++
		}
	}
	for i := range rows {
		if rows[i].ID != "" {
			continue
		}
		if rows[i].Group {
			return nil, &Error{Pos: rows[i].Pos, Msg: "a group row needs an id"}
		}
		if names[rows[i].Name] > 1 {
			return nil, &Error{Pos: rows[i].Pos, Msg: fmt.Sprintf("plugin %q is used by several rows: give each an id", rows[i].Name)}
		}
		rows[i].ID = rows[i].Name
	}
	return rows, nil
}

func parseRow(file string, n *yaml.Node) (Entry, error) {
	e := Entry{Pos: Pos{File: file, Line: n.Line, Col: n.Column}, Source: file, ConfigSource: file}
	if n.Kind != yaml.MappingNode {
		return e, errAt(file, n, "a plugin row must be a mapping with at least `name`")
	}
	var cfg *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value != "config" {
			if err := noEnv(file, v); err != nil {
				return e, err
			}
			if err := noAppend(file, v); err != nil {
				return e, err
			}
		}
		switch k.Value {
		case "id", "name":
			if v.Kind != yaml.ScalarNode || v.Tag != "!!str" || v.Value == "" {
				return e, errAt(file, v, "%s must be a non-empty string", k.Value)
			}
			if k.Value == "id" {
				e.ID = v.Value
			} else {
				e.Name = v.Value
				e.NamePos = Pos{File: file, Line: v.Line, Col: v.Column}
			}
		case "config":
			if !(v.Kind == yaml.ScalarNode && v.Tag == "!!null") {
				cfg = v
			}
		case "disabled", "group":
			var b bool
			if err := v.Decode(&b); err != nil {
				return e, errAt(file, v, "%s must be true or false", k.Value)
			}
			if k.Value == "disabled" {
				e.Disabled = b
			} else {
				e.Group = b
			}
		default:
			return e, errAt(file, k, "unknown row key %q (known keys: id, name, config, disabled, group)", k.Value)
		}
	}
	if e.Group {
		if e.Name != "" {
			return e, errAt(file, n, "a group row has no name")
		}
		if cfg != nil && cfg.Tag == AppendTag {
			return e, errAt(file, cfg, "!append is only allowed on a top-level key of a plugin's config")
		}
		kids, err := parseRows(file, nullIfNil(cfg))
		if err != nil {
			return e, err
		}
		e.Children = kids
		return e, nil
	}
	if e.Name == "" {
		return e, errAt(file, n, "row has no name (the plugin to mount)")
	}
	if err := checkAppends(file, cfg); err != nil {
		return e, err
	}
	e.Config = cfg
	return e, nil
}

func nullIfNil(n *yaml.Node) *yaml.Node {
	if n == nil {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
	}
	return n
}

func noEnv(file string, n *yaml.Node) error {
	if n.Tag == "!env" {
		return errAt(file, n, "!env is only allowed inside a plugin's config")
	}
	for _, c := range n.Content {
		if err := noEnv(file, c); err != nil {
			return err
		}
	}
	return nil
}

func checkIDs(es []Entry, seen map[string]Pos) error {
	for _, e := range es {
		if prev, ok := seen[e.ID]; ok {
			return &Error{Pos: e.Pos, Msg: fmt.Sprintf("duplicate id %q (first used at %s)", e.ID, prev)}
		}
		seen[e.ID] = e.Pos
		if err := checkIDs(e.Children, seen); err != nil {
			return err
		}
	}
	return nil
}

// SortProblems returns errs, with joined errors (errors.Join) split into
// their parts, in file order: the *Error values of m.File first, then those
// of each patch in m.Patches in the order applied, then those of any other
// file by name, each file's by line and column; errors without a place
// follow in their original order. It is how a check of every row lists its
// problems.
func (m *Manifest) SortProblems(errs []error) []error {
	var flat []error
	var split func(err error)
	split = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			parts := j.Unwrap()
			msgs := make([]string, len(parts))
			for i, p := range parts {
				msgs[i] = p.Error()
			}
			if strings.Join(msgs, "\n") == err.Error() { // a join, not a wrapper with its own words
				for _, p := range parts {
					split(p)
				}
				return
			}
		}
		if err != nil {
			flat = append(flat, err)
		}
	}
	for _, err := range errs {
		split(err)
	}
	rank := func(file string) int {
		if file == m.File {
			return 0
		}
		if i := slices.Index(m.Patches, file); i >= 0 {
			return 1 + i
		}
		return 1 + len(m.Patches)
	}
	slices.SortStableFunc(flat, func(a, b error) int {
		ea, oka := a.(*Error)
		eb, okb := b.(*Error)
		switch {
		case !oka || !okb:
			if oka == okb {
				return 0
			}
			if oka {
				return -1
			}
			return 1
		}
		pa, pb := ea.Pos, eb.Pos
		if c := cmp.Compare(rank(pa.File), rank(pb.File)); c != 0 {
			return c
		}
		if c := strings.Compare(pa.File, pb.File); c != 0 {
			return c
		}
		if c := cmp.Compare(pa.Line, pb.Line); c != 0 {
			return c
		}
		return cmp.Compare(pa.Col, pb.Col)
	})
	return flat
}
