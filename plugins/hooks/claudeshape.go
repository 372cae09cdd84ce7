package hooks

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// This file gives PostToolUse hooks the tool_response Claude Code sends
// for its built-in tools (Bash, Read, Write, Edit, Grep, Glob), built from
// the harness tool's structured value, which is read here as JSON by field
// name: the hooks plugin imports no tool plugin.

// bashResponse is Claude Code's Bash tool_response.
type bashResponse struct {
	Content          string `json:"content"`
	IsError          bool   `json:"isError"`
	Stdout           string `json:"stdout"`
	Stderr           string `json:"stderr"`
	Interrupted      bool   `json:"interrupted"`
	IsImage          bool   `json:"isImage"`
	BackgroundTaskID string `json:"backgroundTaskId,omitempty"`
}

// readResponse is Claude Code's Read tool_response for a text file.
type readResponse struct {
	Content string   `json:"content"`
	IsError bool     `json:"isError"`
	Type    string   `json:"type"`
	File    readFile `json:"file"`
}

type readFile struct {
	FilePath   string `json:"filePath"`
	Content    string `json:"content"`
	NumLines   int    `json:"numLines"`
	StartLine  int    `json:"startLine"`
	TotalLines int    `json:"totalLines"`
}

// writeResponse is Claude Code's Write tool_response; Content is the
// file's new text, as in Claude Code.
type writeResponse struct {
	Type            string  `json:"type"`
	FilePath        string  `json:"filePath"`
	Content         string  `json:"content"`
	IsError         bool    `json:"isError"`
	StructuredPatch []hunk  `json:"structuredPatch"`
	OriginalFile    *string `json:"originalFile"`
}

// editResponse is Claude Code's Edit tool_response.
type editResponse struct {
	Content         string `json:"content"`
	IsError         bool   `json:"isError"`
	FilePath        string `json:"filePath"`
	OldString       string `json:"oldString"`
	NewString       string `json:"newString"`
	OriginalFile    string `json:"originalFile"`
	StructuredPatch []hunk `json:"structuredPatch"`
	UserModified    bool   `json:"userModified"`
	ReplaceAll      bool   `json:"replaceAll"`
}

// grepResponse is Claude Code's Grep tool_response in its content mode
// (the harness's grep returns matching lines).
type grepResponse struct {
	IsError   bool     `json:"isError"`
	Mode      string   `json:"mode"`
	NumFiles  int      `json:"numFiles"`
	Filenames []string `json:"filenames"`
	Content   string   `json:"content"`
	NumLines  int      `json:"numLines"`
}

// globResponse is Claude Code's Glob tool_response.
type globResponse struct {
	Content    string   `json:"content"`
	IsError    bool     `json:"isError"`
	Filenames  []string `json:"filenames"`
	DurationMs int      `json:"durationMs"`
	NumFiles   int      `json:"numFiles"`
	Truncated  bool     `json:"truncated"`
}

// hunk is one hunk of Claude Code's structuredPatch.
type hunk struct {
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

// claudeResponse returns the tool_response of a call of the harness tool
// named tool (its harness name) with arguments args and structured value
// value, in Claude Code's shape, plus the harness's content (the result
// text as the model sees it; for Write Claude's content, the file's new
// text) and isError. cwd resolves relative paths. ok is false for a tool
// Claude Code has no built-in counterpart of, or a value of another shape.
func claudeResponse(tool string, args, value json.RawMessage, content string, isError bool, cwd string) (json.RawMessage, bool) {
	var out any
	switch tool {
	case "bash":
		var v struct {
			Kind     string          `json:"kind"`
			ShellID  string          `json:"shellId"`
			TimedOut bool            `json:"timedOut"`
			Aborted  bool            `json:"aborted"`
			Stdout   json.RawMessage `json:"stdout"`
			Stderr   json.RawMessage `json:"stderr"`
		}
		if json.Unmarshal(value, &v) != nil || v.Kind == "" {
			return nil, false
		}
		out = bashResponse{Content: content, IsError: isError, Stdout: streamText(v.Stdout), Stderr: streamText(v.Stderr),
			Interrupted: v.TimedOut || v.Aborted, BackgroundTaskID: v.ShellID}
	case "read":
		var v struct {
			Path  string `json:"path"`
			Lines []struct {
				Number int    `json:"number"`
				Text   string `json:"text"`
			} `json:"lines"`
			Offset     int `json:"offset"`
			TotalLines int `json:"totalLines"`
		}
		if json.Unmarshal(value, &v) != nil || v.Path == "" {
			return nil, false
		}
		texts := make([]string, len(v.Lines))
		start := max(v.Offset, 1)
		for i, l := range v.Lines {
			texts[i] = l.Text
			if i == 0 {
				start = l.Number
			}
		}
		out = readResponse{Content: content, IsError: isError, Type: "text",
			File: readFile{FilePath: v.Path, Content: strings.Join(texts, "\n"), NumLines: len(v.Lines), StartLine: start, TotalLines: v.TotalLines}}
	case "write":
		var v struct {
			Path      string  `json:"path"`
			Operation string  `json:"operation"`
			Before    *string `json:"before"`
			After     string  `json:"after"`
		}
		if json.Unmarshal(value, &v) != nil || v.Path == "" {
			return nil, false
		}
		before := ""
		if v.Before != nil {
			before = *v.Before
		}
		patch := []hunk{}
		if v.Operation == "update" {
			patch = structuredPatch(v.Path, before, v.After)
		}
		out = writeResponse{Type: v.Operation, FilePath: v.Path, Content: v.After, IsError: isError, StructuredPatch: patch, OriginalFile: v.Before}
	case "edit":
		var v struct {
			Path   string `json:"path"`
			Before string `json:"before"`
			After  string `json:"after"`
		}
		var a struct {
			OldString  string `json:"old_string"`
			NewString  string `json:"new_string"`
			ReplaceAll bool   `json:"replace_all"`
		}
		if json.Unmarshal(value, &v) != nil || v.Path == "" {
			return nil, false
		}
		_ = json.Unmarshal(args, &a)
		out = editResponse{Content: content, IsError: isError, FilePath: v.Path, OldString: a.OldString, NewString: a.NewString,
			OriginalFile: v.Before, StructuredPatch: structuredPatch(v.Path, v.Before, v.After), ReplaceAll: a.ReplaceAll}
	case "grep":
		var v struct {
			Matches *[]struct {
				Path       string `json:"path"`
				LineNumber int    `json:"lineNumber"`
				Line       string `json:"line"`
			} `json:"matches"`
		}
		if json.Unmarshal(value, &v) != nil || v.Matches == nil {
			return nil, false
		}
		r := grepResponse{IsError: isError, Mode: "content", Filenames: []string{}}
		lines := make([]string, 0, len(*v.Matches))
		for _, m := range *v.Matches {
			lines = append(lines, m.Path+":"+strconv.Itoa(m.LineNumber)+":"+m.Line)
			if p := absPath(m.Path, cwd); len(r.Filenames) == 0 || r.Filenames[len(r.Filenames)-1] != p {
				r.Filenames = append(r.Filenames, p)
			}
		}
		r.Content, r.NumLines, r.NumFiles = strings.Join(lines, "\n"), len(lines), len(r.Filenames)
		out = r
	case "glob":
		var v struct {
			Root  string    `json:"root"`
			Paths *[]string `json:"paths"`
			Spill *struct{} `json:"spill"`
		}
		if json.Unmarshal(value, &v) != nil || v.Paths == nil {
			return nil, false
		}
		root := absPath(v.Root, cwd)
		names := make([]string, 0, len(*v.Paths))
		for _, p := range *v.Paths {
			names = append(names, absPath(p, root))
		}
		out = globResponse{Content: content, IsError: isError, Filenames: names, NumFiles: len(names), Truncated: v.Spill != nil}
	default:
		return nil, false
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, false
	}
	return b, true
}

// streamText is the text of a bash stream value ({text, head, …}): the
// head and the tail when the middle was left out.
func streamText(raw json.RawMessage) string {
	var s struct {
		Text string `json:"text"`
		Head string `json:"head"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	if s.Head != "" {
		return s.Head + "\n…\n" + s.Text
	}
	return s.Text
}

// absPath makes p absolute against dir ("" and "." are dir).
func absPath(p, dir string) string {
	if p == "" || p == "." {
		return dir
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, filepath.FromSlash(p))
}

// hunkHeader is a unified diff hunk header: @@ -a,b +c,d @@.
var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// structuredPatch is Claude Code's structuredPatch of a change of path from
// before to after: unified diff hunks with 3 lines of context, each line
// prefixed by " ", "-" or "+".
func structuredPatch(path, before, after string) []hunk {
	out := []hunk{}
	if before == after {
		return out
	}
	diff := udiff.Unified(path, path, before, after)
	for _, line := range strings.Split(diff, "\n") {
		if m := hunkHeader.FindStringSubmatch(line); m != nil {
			out = append(out, hunk{OldStart: atoi(m[1]), OldLines: count(m[2]), NewStart: atoi(m[3]), NewLines: count(m[4]), Lines: []string{}})
			continue
		}
		if len(out) == 0 || line == "" || strings.HasPrefix(line, `\`) {
			continue
		}
		if c := line[0]; c == ' ' || c == '-' || c == '+' {
			h := &out[len(out)-1]
			h.Lines = append(h.Lines, line)
		}
	}
	return out
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// count is a hunk header's line count: absent means 1.
func count(s string) int {
	if s == "" {
		return 1
	}
	return atoi(s)
}
