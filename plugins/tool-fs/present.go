package toolfs

import (
	"fmt"
	"strings"

	"github.com/dshgo/harness/services/tools"
)

// The file tools' presentations (tools.WithPresent): what a person sees
// of a call. A pending edit or write shows the change it asks for from its
// arguments alone (the file is not read to draw a card: a path the policy
// refuses must not reach a front end); the result shows the real change,
// the whole file before and after. A title is the path as the model gave
// it (front ends print it after the tool's name and kind).

// PresentRead is the read tool's presentation: kind read, titled with the
// path (and the first line asked for), the file as its location.
func PresentRead(in tools.PresentInput[ReadArgs, ReadValue]) tools.Presentation {
	p := tools.Presentation{Kind: tools.KindRead, Title: in.Args.FilePath}
	loc := tools.Location{Path: resolved(in.Cwd, in.Args.FilePath)}
	if in.Args.Offset != nil && *in.Args.Offset > 0 {
		loc.Line = *in.Args.Offset
		p.Title += fmt.Sprintf(":%d", *in.Args.Offset)
	}
	p.Locations = []tools.Location{loc}
	if in.Succeeded() {
		v := in.Out
		switch n := len(v.Lines); {
		case n == 0:
			p.Summarize(fmt.Sprintf("no lines (%d in the file)", v.TotalLines))
		default:
			p.Summarize(fmt.Sprintf("lines %d-%d of %d", v.Offset, v.Offset+n-1, v.TotalLines))
		}
	}
	return p
}

// PresentWrite is the write tool's presentation: kind edit; pending, the
// new content as a diff from unknown; done, the diff from the file's old
// text (none for a new file).
func PresentWrite(in tools.PresentInput[WriteArgs, WriteValue]) tools.Presentation {
	path := resolved(in.Cwd, in.Args.FilePath)
	p := tools.Presentation{Kind: tools.KindEdit, Title: in.Args.FilePath, Locations: []tools.Location{{Path: path}}}
	switch {
	case in.Pending():
		p.Content = []tools.ToolCallContent{tools.DiffContent(path, nil, NormalizeLineEndings(in.Args.Content))}
	case in.Succeeded():
		v := in.Out
		p.Locations = []tools.Location{{Path: v.Path}}
		p.Content = []tools.ToolCallContent{tools.DiffContent(v.Path, v.Before, v.After)}
		if v.Operation == OpCreate {
			p.Summarize(fmt.Sprintf("created, %s", lines(v.After)))
		} else {
			p.Summarize(fmt.Sprintf("updated, %s", lines(v.After)))
		}
	}
	return p
}

// PresentEdit is the edit tool's presentation: kind edit; pending, the
// replacement (old_string to new_string) as a diff; done, the diff of the
// whole file, located at the first changed line.
func PresentEdit(in tools.PresentInput[EditArgs, EditValue]) tools.Presentation {
	path := resolved(in.Cwd, in.Args.FilePath)
	p := tools.Presentation{Kind: tools.KindEdit, Title: in.Args.FilePath, Locations: []tools.Location{{Path: path}}}
	switch {
	case in.Pending():
		// Fragments, not files: each ends its last line (no "no newline
		// at end of file" in a front end's diff).
		old, new := fragment(in.Args.OldString), fragment(in.Args.NewString)
		p.Content = []tools.ToolCallContent{tools.DiffContent(path, &old, new)}
	case in.Succeeded():
		v := in.Out
		p.Locations = []tools.Location{{Path: v.Path, Line: firstChangedLine(v.Before, v.After)}}
		p.Content = []tools.ToolCallContent{tools.DiffContent(v.Path, &v.Before, v.After)}
		if in.Args.ReplaceAll {
			p.Summarize("edited, every occurrence replaced")
		} else {
			p.Summarize("edited")
		}
	}
	return p
}

// fragment is s with LF line endings and a final newline (unless empty).
func fragment(s string) string {
	s = NormalizeLineEndings(s)
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

// resolved is p made absolute against cwd ("" stays "").
func resolved(cwd, p string) string {
	if strings.TrimSpace(p) == "" {
		return p
	}
	if abs, err := Resolve(cwd, p); err == nil {
		return abs
	}
	return p
}

// firstChangedLine is the 1-based number of the first line where before
// and after differ (0 when they are equal).
func firstChangedLine(before, after string) int {
	n := 1
	for i := 0; i < len(before) && i < len(after); i++ {
		if before[i] != after[i] {
			return n
		}
		if before[i] == '\n' {
			n++
		}
	}
	if len(before) == len(after) {
		return 0
	}
	return n
}

// lines is "N lines" of text.
func lines(s string) string {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}
