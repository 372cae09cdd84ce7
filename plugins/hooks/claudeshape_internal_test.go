package hooks

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// claudeResponse builds Claude Code's tool_response from the harness
// tools' values (read as JSON): the cases the e2e goldens do not reach.
func TestClaudeResponseShapes(t *testing.T) {
	tests := []struct {
		name, tool, args, value, want string
	}{
		{"bash truncated and timed out", "bash", `{}`,
			`{"kind":"foreground","timedOut":true,"stdout":{"text":"tail\n","truncated":true,"head":"head"},"stderr":{"text":""}}`,
			`{"content":"c","isError":true,"stdout":"head\n…\ntail\n","stderr":"","interrupted":true,"isImage":false}`},
		{"bash in the background", "bash", `{}`,
			`{"kind":"background","shellId":"sh-1","stdout":{"text":""},"stderr":{"text":""}}`,
			`{"content":"c","isError":true,"stdout":"","stderr":"","interrupted":false,"isImage":false,"backgroundTaskId":"sh-1"}`},
		{"write over a file", "write", `{}`,
			`{"path":"/w/a.txt","operation":"update","before":"1\n2\n","after":"1\n3\n"}`,
			`{"type":"update","filePath":"/w/a.txt","content":"1\n3\n","isError":true,"structuredPatch":[{"oldStart":1,"oldLines":2,"newStart":1,"newLines":2,"lines":[" 1","-2","+3"]}],"originalFile":"1\n2\n"}`},
		{"edit, two hunks", "edit", `{"old_string":"x","new_string":"y","replace_all":true}`,
			`{"path":"/w/b","before":"x\n1\n2\n3\n4\n5\n6\n7\n8\nx\n","after":"y\n1\n2\n3\n4\n5\n6\n7\n8\ny\n"}`,
			`{"content":"c","isError":true,"filePath":"/w/b","oldString":"x","newString":"y","originalFile":"x\n1\n2\n3\n4\n5\n6\n7\n8\nx\n","structuredPatch":[{"oldStart":1,"oldLines":4,"newStart":1,"newLines":4,"lines":["-x","+y"," 1"," 2"," 3"]},{"oldStart":7,"oldLines":4,"newStart":7,"newLines":4,"lines":[" 6"," 7"," 8","-x","+y"]}],"userModified":false,"replaceAll":true}`},
		{"grep, no match", "grep", `{}`, `{"matches":[]}`,
			`{"isError":true,"mode":"content","numFiles":0,"filenames":[],"content":"","numLines":0}`},
		{"grep, two files", "grep", `{}`, `{"matches":[{"path":"a.go","lineNumber":1,"line":"x"},{"path":"a.go","lineNumber":3,"line":"x"},{"path":"/abs/b.go","lineNumber":2,"line":"x"}]}`,
			`{"isError":true,"mode":"content","numFiles":2,"filenames":["/w/a.go","/abs/b.go"],"content":"a.go:1:x\na.go:3:x\n/abs/b.go:2:x","numLines":3}`},
		{"glob, spilled", "glob", `{}`, `{"root":"src","paths":["a.go"],"spill":{"locator":"/s","hint":"h"}}`,
			`{"content":"c","isError":true,"filenames":["/w/src/a.go"],"durationMs":0,"numFiles":1,"truncated":true}`},
		{"read, window", "read", `{}`, `{"path":"/w/r","offset":5,"lines":[{"number":5,"text":"e"},{"number":6,"text":"f"}],"totalLines":9}`,
			`{"content":"c","isError":true,"type":"text","file":{"filePath":"/w/r","content":"e\nf","numLines":2,"startLine":5,"totalLines":9}}`},
	}
	for _, tt := range tests {
		got, ok := claudeResponse(tt.tool, json.RawMessage(tt.args), json.RawMessage(tt.value), "c", true, "/w")
		if !ok || string(got) != tt.want {
			t.Errorf("%s: ok=%v\n got %s\nwant %s", tt.name, ok, got, tt.want)
		}
	}
	for _, tt := range []struct{ tool, value string }{
		{"bash", `{"stdout":"x"}`}, {"mcp__fs__read", `{"text":"x"}`}, {"read", `[1]`}, {"grep", `{}`},
	} {
		if got, ok := claudeResponse(tt.tool, nil, json.RawMessage(tt.value), "c", false, "/w"); ok {
			t.Errorf("%s %s: a Claude shape %s from a value of another shape", tt.tool, tt.value, got)
		}
	}
}

// BenchmarkClaudeResponse measures building a PostToolUse tool_response in
// Claude's shape: a bash result, and an edit of one line in a 2000-line
// file (its structuredPatch diffs the file).
func BenchmarkClaudeResponse(b *testing.B) {
	var before, after strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&before, "line %d\n", i)
		if i == 1000 {
			after.WriteString("changed\n")
		} else {
			fmt.Fprintf(&after, "line %d\n", i)
		}
	}
	edit, _ := json.Marshal(map[string]string{"path": "/w/big.txt", "before": before.String(), "after": after.String()})
	for _, c := range []struct{ name, tool, value string }{
		{"bash", "bash", `{"kind":"foreground","stdout":{"text":"ok\n"},"stderr":{"text":""}}`},
		{"edit-2000-lines", "edit", string(edit)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := claudeResponse(c.tool, json.RawMessage(`{"old_string":"line 1000","new_string":"changed"}`), json.RawMessage(c.value), "c", false, "/w"); !ok {
					b.Fatal("no response")
				}
			}
		})
	}
}
