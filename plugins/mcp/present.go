package mcp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshgo/harness/services/tools"
)

// A server's tool says nothing about how its calls look, so its
// presentation is built from what it does declare: its annotations and its
// arguments' schema. The title is the argument that names what the call
// works on (the first of pathKeys, then of subjectKeys, that the call
// gives as a string), else the call's scalar arguments as key=value in the
// schema's order (required ones first); path-like arguments are the
// call's locations; the kind is read for a read-only tool, fetch for one
// that takes a URL, other otherwise; the result's text is the content.

// pathKeys are argument names whose string values are files.
var pathKeys = []string{"path", "file_path", "filePath", "file", "filename", "source", "destination"}

// subjectKeys are argument names whose string values say what a call is about.
var subjectKeys = []string{"url", "uri", "query", "pattern", "command", "name", "title", "text"}

// argsSchema is the part of an input schema a presentation reads.
type argsSchema struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
}

// presenter builds the presentation of server tool t's calls.
func presenter(t *mcp.Tool, schema json.RawMessage) func(in tools.PresentInput[json.RawMessage, any]) tools.Presentation {
	var s argsSchema
	_ = json.Unmarshal(schema, &s) // a schema that does not decode gives the generic order
	order := slices.Clone(s.Required)
	rest := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		if !slices.Contains(order, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	order = append(order, rest...)
	kind := tools.KindOther
	switch {
	case t.Annotations != nil && t.Annotations.ReadOnlyHint:
		kind = tools.KindRead
	case s.Properties["url"] != nil || s.Properties["uri"] != nil:
		kind = tools.KindFetch
	}
	return func(in tools.PresentInput[json.RawMessage, any]) tools.Presentation {
		var args map[string]any
		_ = json.Unmarshal(in.Args, &args) // not an object: no title, the generic one
		p := tools.Presentation{Kind: kind, Title: callTitle(args, order)}
		for _, k := range pathKeys {
			if v, ok := args[k].(string); ok && strings.TrimSpace(v) != "" {
				p.Locations = append(p.Locations, tools.Location{Path: absolute(in.Cwd, v)})
			}
		}
		if in.Succeeded() {
			if text := tools.TextOf(in.Outcome.Content); text != "" {
				p.Content = []tools.ToolCallContent{tools.TextContent(tools.HeadBytes(text, tools.MaxTerminalOutput))}
			}
		}
		return p
	}
}

// callTitle is the value of the first path or subject argument given,
// else the scalar arguments as key=value in order ("" when none).
func callTitle(args map[string]any, order []string) string {
	for _, keys := range [][]string{pathKeys, subjectKeys} {
		for _, k := range keys {
			if v, ok := args[k].(string); ok && strings.TrimSpace(v) != "" {
				return short(v)
			}
		}
	}
	var parts []string
	for _, k := range order {
		switch v := args[k].(type) {
		case string, float64, bool:
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	return short(strings.Join(parts, ", "))
}

// short is s's first line (" …" when more follow), at most 80 runes.
func short(s string) string {
	s = strings.TrimSpace(s)
	if first, _, more := strings.Cut(s, "\n"); more {
		s = strings.TrimSpace(first) + " …"
	}
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}

// absolute is path made absolute against cwd (unchanged when it is a URI,
// already absolute, or cwd is "").
func absolute(cwd, path string) string {
	if filepath.IsAbs(path) || cwd == "" || strings.Contains(path, "://") {
		return path
	}
	return filepath.Join(cwd, path)
}
