package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
)

// A command file's body may hold bash lines (!`git status`) and file
// references (@src/main.go), as Claude Code's do. When the command runs,
// each bash command runs as a call of the bash tool and its output takes
// the place of the line's !`…`; each referenced file is read with the read
// tool and its contents are appended to the prompt. Both go through the
// tools pipeline of the person's session, as the model's own calls would:
// the permission rules, PreToolUse hooks, the approval service and the
// sandbox decide, so a command file can do nothing the session could not.
// A call that fails or is denied leaves its error in the prompt, so the
// model (and the person, in the reply's text) sees what happened.

const (
	// maxInlineCalls bounds the bash lines and file references one
	// command runs; the rest stay as written.
	maxInlineCalls = 16
	// maxInlineBytes bounds the text one call adds to the prompt.
	maxInlineBytes = 32 << 10
)

// fileRefRE finds `@path` at the start of the body or after a blank or an
// opening bracket; the path ends at a blank or at trailing punctuation.
var fileRefRE = regexp.MustCompile("(?:^|[\\s(\\[])@([^\\s`'\"()\\[\\]<>]+)")

// inliner runs the bash lines and reads the files of one command.
type inliner struct {
	reg   *tools.Registry
	scope *core.ScopeID
	cwd   string
	name  string // the command, for call ids
	calls int
	notes []string // one per call, for the reply's text
}

// inline returns prompt with its bash lines replaced by their output and
// the files it references appended; without a tools registry, prompt is
// returned unchanged.
func (p *plugin) inline(ctx context.Context, name, cwd string, scope *core.ScopeID, prompt string) (string, []string) {
	reg, ok := core.Lookup(p.c, tools.Key)
	if !ok || reg == nil {
		return prompt, nil
	}
	in := &inliner{reg: reg, scope: scope, cwd: cwd, name: name}
	prompt = bangRE.ReplaceAllStringFunc(prompt, func(m string) string {
		cmd := strings.TrimSpace(m[2 : len(m)-1])
		if cmd == "" || in.calls >= maxInlineCalls {
			return m
		}
		out, ok := in.call(ctx, "bash", map[string]any{"command": cmd, "description": "/" + name + " bash line"})
		in.note(fmt.Sprintf("ran `%s`", cmd), ok)
		return out
	})
	var files []string
	seen := map[string]bool{}
	for _, m := range fileRefRE.FindAllStringSubmatch(prompt, -1) {
		ref := strings.TrimRight(m[1], ".,;:!?")
		if seen[ref] || in.calls >= maxInlineCalls || !isFile(cwd, ref) {
			continue
		}
		seen[ref] = true
		out, ok := in.call(ctx, "read", map[string]any{"file_path": ref})
		in.note("read @"+ref, ok)
		files = append(files, fmt.Sprintf("Contents of @%s:\n%s", ref, out))
	}
	if len(files) > 0 {
		prompt = strings.TrimRight(prompt, "\n") + "\n\n" + strings.Join(files, "\n\n")
	}
	return prompt, in.notes
}

// call runs one tool call in the session's scope and returns the text it
// gave the model (its error message when it failed) and whether it
// succeeded.
func (in *inliner) call(ctx context.Context, tool string, args map[string]any) (string, bool) {
	in.calls++
	raw, err := json.Marshal(args)
	if err != nil {
		return "[" + err.Error() + "]", false
	}
	call := tools.Call{ID: fmt.Sprintf("command-%s-%d", in.name, in.calls), Name: tool, Arguments: string(raw), Scope: in.scope}
	o := in.reg.Execute(ctx, call)
	text := strings.TrimRight(tools.TextOf(o.Content), "\n")
	if o.IsError {
		msg := o.ErrorMessage
		if msg == "" {
			msg = text
		}
		return "[" + tool + " failed: " + cut(msg, maxInlineBytes) + "]", false
	}
	// The presentation says whether a call that returned did its job (a
	// command that exited non-zero is failed); its text goes in as the
	// model would have read it.
	t, _ := in.reg.Get(tool, in.scope)
	pr := tools.Present(t, tools.PresentCall{ID: call.ID, Name: tool, Arguments: call.Arguments, Cwd: in.cwd, Outcome: o})
	return cut(text, maxInlineBytes), pr.Status != tools.StatusFailed
}

// note records one call for the reply's text.
func (in *inliner) note(what string, ok bool) {
	if !ok {
		what += " (failed: its error is in the prompt)"
	}
	in.notes = append(in.notes, what)
}

// isFile reports whether ref names a regular file, relative to cwd unless
// absolute. Anything else (an e-mail address, a @mention, a directory)
// stays as written.
func isFile(cwd, ref string) bool {
	if !filepath.IsAbs(ref) {
		ref = filepath.Join(cwd, ref)
	}
	fi, err := os.Stat(ref)
	return err == nil && fi.Mode().IsRegular()
}
