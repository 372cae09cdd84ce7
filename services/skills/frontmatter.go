package skills

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Warning is a problem with one file: the file is skipped (or, for a
// shadowed name or an unsupported construct, kept and noted).
type Warning struct {
	// Path is the file; Line its 1-based line (0: the whole file).
	Path string
	Line int
	// Message says what is wrong and what happens.
	Message string
}

// String is "path:line: message".
func (w Warning) String() string {
	if w.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", w.Path, w.Line, w.Message)
	}
	return w.Path + ": " + w.Message
}

// meta is the frontmatter keys this package reads; others are ignored.
type meta struct {
	Name                   string    `yaml:"name"`
	Description            string    `yaml:"description"`
	AllowedTools           yaml.Node `yaml:"allowed-tools"`
	Model                  string    `yaml:"model"`
	ArgumentHint           string    `yaml:"argument-hint"`
	License                string    `yaml:"license"`
	DisableModelInvocation bool      `yaml:"disable-model-invocation"`
	UserInvocable          *bool     `yaml:"user-invocable"`
}

// errNoFrontmatter: the file does not open with a `---` line.
var errNoFrontmatter = errors.New("no frontmatter")

// document is a parsed Markdown file with optional YAML frontmatter.
type document struct {
	meta     meta
	tools    []string
	body     string
	bodyLine int // the file line the body starts on
}

// hintRE finds an argument-hint whose value opens with '[': Claude Code's
// files write `argument-hint: [pr-number] [priority]` unquoted, which is
// not YAML; the raw text is the hint.
var hintRE = regexp.MustCompile(`(?m)^argument-hint:[ \t]*(\[.*?)[ \t]*\r?$`)

// parse splits data into frontmatter and body and decodes the frontmatter.
// Errors carry the file line (a *lineError) where YAML says one.
func parse(data []byte) (document, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	if strings.TrimRight(string(first), " \t\r") != "---" {
		return document{body: string(data), bodyLine: 1}, errNoFrontmatter
	}
	fm, body, line, ok := closeFrontmatter(rest)
	if !ok {
		return document{}, &lineError{line: 1, msg: "the frontmatter opened on line 1 is not closed by a `---` line"}
	}
	fm = hintRE.ReplaceAllFunc(fm, func(m []byte) []byte {
		v := hintRE.FindSubmatch(m)[1]
		return []byte("argument-hint: " + strconv.Quote(string(v)))
	})
	var d document
	if err := yaml.Unmarshal(fm, &d.meta); err != nil {
		return document{}, yamlError(err, 1)
	}
	tools, err := toolList(&d.meta.AllowedTools)
	if err != nil {
		return document{}, &lineError{line: d.meta.AllowedTools.Line + 1, msg: err.Error()}
	}
	d.tools, d.body, d.bodyLine = tools, string(body), line
	return d, nil
}

// closeFrontmatter finds the closing `---` line in rest (the text after the
// opening line): the frontmatter, the body after it and the body's line.
func closeFrontmatter(rest []byte) (fm, body []byte, bodyLine int, ok bool) {
	off := 0
	for n := 2; off <= len(rest); n++ {
		end := bytes.IndexByte(rest[off:], '\n')
		line := rest[off:]
		if end >= 0 {
			line = rest[off : off+end]
		}
		if strings.TrimRight(string(line), " \t\r") == "---" {
			if end < 0 {
				return rest[:off], nil, n + 1, true
			}
			return rest[:off], rest[off+end+1:], n + 1, true
		}
		if end < 0 {
			return nil, nil, 0, false
		}
		off += end + 1
	}
	return nil, nil, 0, false
}

// lineError is a problem at a line of the file.
type lineError struct {
	line int
	msg  string
}

func (e *lineError) Error() string { return e.msg }

var yamlLineRE = regexp.MustCompile(`line (\d+): (.*)`)

// yamlError turns a YAML error into a *lineError with the file line (the
// YAML text starts after offset lines).
func yamlError(err error, offset int) error {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &lineError{line: n + offset, msg: "frontmatter: " + m[2]}
	}
	return &lineError{line: offset, msg: "frontmatter: " + strings.TrimPrefix(msg, "yaml: ")}
}

// toolList reads allowed-tools: a YAML list, or one string of names
// separated by commas (Claude Code) or, without a comma, by blanks outside
// parentheses (the Agent Skills spec).
func toolList(n *yaml.Node) ([]string, error) {
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.ScalarNode:
		return splitTools(n.Value), nil
	case yaml.SequenceNode:
		var out []string
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, errors.New("allowed-tools: want a list of tool names or one string")
			}
			if v := strings.TrimSpace(c.Value); v != "" {
				out = append(out, v)
			}
		}
		return out, nil
	}
	return nil, errors.New("allowed-tools: want a list of tool names or one string")
}

func splitTools(s string) []string {
	var out []string
	add := func(v string) {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	if strings.Contains(s, ",") {
		for _, v := range strings.Split(s, ",") {
			add(v)
		}
		return out
	}
	depth, start := 0, 0
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case (r == ' ' || r == '\t') && depth == 0:
			add(s[start:i])
			start = i + 1
		}
	}
	add(s[start:])
	return out
}
