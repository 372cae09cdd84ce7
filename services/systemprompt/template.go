package systemprompt

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Sentinel errors of strict interpolation (C8); the errors Render returns
// wrap one of them (test with errors.Is) and carry the exact dsh message.
var (
	// ErrMalformedReference: a "{{" that does not open a complete simple
	// {{name}} group while a later "}}" exists, or a group whose name does
	// not match ^[a-z][a-z0-9_]*$.
	ErrMalformedReference = errors.New("malformed prompt variable reference")
	// ErrUnknownVariable: a well-formed reference to a variable that is not
	// registered.
	ErrUnknownVariable = errors.New("unknown prompt variable")
	// ErrNoValue: a reference to a registered variable whose provider had no
	// value for this assembly.
	ErrNoValue = errors.New("prompt variable has no value")
)

// ReferenceError is the error of one failed {{var}} reference. Its message
// is the dsh wording; Unwrap yields one of the sentinel errors above.
type ReferenceError struct {
	// Kind is "section" or "context".
	Kind string
	// Owner is the section or context name.
	Owner string
	// Variable is the referenced name (for ErrMalformedReference, the raw
	// text between the braces, or "" when no group was complete).
	Variable string
	err      error
	msg      string
}

// Error returns the dsh-worded message.
func (e *ReferenceError) Error() string { return e.msg }

// Unwrap returns the sentinel error classifying e.
func (e *ReferenceError) Unwrap() error { return e.err }

// variableNamePattern is the documented form of a variable name, used in
// error messages exactly as dsh prints it.
const variableNamePattern = "/^[a-z][a-z0-9_]*$/"

// validVariableName reports whether name matches ^[a-z][a-z0-9_]*$.
func validVariableName(name string) bool {
	if name == "" || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// interpolate returns text with every {{name}} reference substituted (see
// appendInterpolated).
func interpolate(text, kind, owner string, vars map[string]Variable, anyName bool) (string, error) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	out, err := appendInterpolated(make([]byte, 0, len(text)), text, kind, owner, vars, anyName)
	return string(out), err
}

// appendInterpolated appends text to dst with every {{name}} reference
// substituted from vars in a single pass (substituted values are never
// scanned again). A "{{" with no later "}}" is literal prose. kind and
// owner attribute errors. With anyName, every well-formed name counts as
// registered and set (syntax check only).
func appendInterpolated(dst []byte, text, kind, owner string, vars map[string]Variable, anyName bool) ([]byte, error) {
	last := 0
	for open := strings.Index(text, "{{"); open >= 0; open = nextOpen(text, last) {
		name, end, ok := groupAt(text, open)
		if !ok {
			if strings.Contains(text[open+2:], "}}") {
				return dst, refError(ErrMalformedReference, kind, owner, "",
					fmt.Sprintf("malformed prompt variable reference at \"%s\" in %s \"%s\" (references are complete simple {{name}} groups)",
						prefixRunes(text[open:], 16)+"…", kind, owner))
			}
			dst = append(dst, text[last:open+2]...)
			last = open + 2
			continue
		}
		if !validVariableName(name) {
			return dst, refError(ErrMalformedReference, kind, owner, name,
				fmt.Sprintf("malformed prompt variable reference \"%s\" in %s \"%s\" (variable names match %s)",
					"{{"+name+"}}", kind, owner, variableNamePattern))
		}
		v, registered := vars[name]
		if anyName {
			v, registered = Variable{Set: true}, true
		}
		if !registered {
			return dst, refError(ErrUnknownVariable, kind, owner, name,
				fmt.Sprintf("unknown prompt variable \"%s\" in %s \"%s\"; registered variables: %s",
					"{{"+name+"}}", kind, owner, nameList(mapKeys(vars))))
		}
		if !v.Set {
			return dst, refError(ErrNoValue, kind, owner, name,
				fmt.Sprintf("prompt variable \"%s\" has no value for this assembly (%s \"%s\")", "{{"+name+"}}", kind, owner))
		}
		dst = append(dst, text[last:open]...)
		dst = append(dst, v.Value...)
		last = end
	}
	return append(dst, text[last:]...), nil
}

// nextOpen returns the index of the next "{{" at or after from, or -1.
func nextOpen(text string, from int) int {
	i := strings.Index(text[from:], "{{")
	if i < 0 {
		return -1
	}
	return from + i
}

// groupAt reports whether a complete group "{{X}}", X free of braces,
// starts at open, returning X and the index just past the group.
func groupAt(text string, open int) (name string, end int, ok bool) {
	j := open + 2
	for j < len(text) && text[j] != '{' && text[j] != '}' {
		j++
	}
	if j+1 < len(text) && text[j] == '}' && text[j+1] == '}' {
		return text[open+2 : j], j + 2, true
	}
	return "", 0, false
}

// prefixRunes returns at most n runes of s, never splitting a UTF-8
// sequence (dsh cuts 16 UTF-16 code units; we cut 16 characters).
func prefixRunes(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

func refError(sentinel error, kind, owner, variable, msg string) *ReferenceError {
	return &ReferenceError{Kind: kind, Owner: owner, Variable: variable, err: sentinel, msg: msg}
}

// nameList renders names sorted and comma-separated, or "(none)".
func nameList(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	names = slices.Clone(names)
	slices.SortFunc(names, compareCodeUnits)
	return strings.Join(names, ", ")
}

// mapKeys returns the keys of m in unspecified order.
func mapKeys(m map[string]Variable) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	return names
}

// Render renders the system prompt of an assembly (C8): each section is
// interpolated with the assembly's variables (sections with Interpolate
// false are taken verbatim), empty results are dropped, and the rest are
// joined with a blank line. No section yields "". The first failed
// reference is returned as a *ReferenceError naming the section.
func Render(a *Assembly) (string, error) {
	size := 0
	for _, s := range a.Sections {
		size += len(s.Text) + 2
	}
	buf := make([]byte, 0, size+size/4)
	for _, s := range a.Sections {
		mark := len(buf)
		if mark > 0 {
			buf = append(buf, "\n\n"...)
		}
		body := len(buf)
		if s.Interpolate {
			var err error
			if buf, err = appendInterpolated(buf, s.Text, "section", s.Name, a.Variables, false); err != nil {
				return "", err
			}
		} else {
			buf = append(buf, s.Text...)
		}
		if len(buf) == body {
			buf = buf[:mark] // empty section: dropped with its separator
		}
	}
	return string(buf), nil
}

// RenderedSection is one section of the system prompt after rendering.
type RenderedSection struct {
	// Name is the section's name.
	Name string `json:"name"`
	// Order is the section's order.
	Order float64 `json:"order"`
	// Text is the rendered, non-empty text.
	Text string `json:"text"`
}

// RenderSections renders each section as Render does and keeps the
// non-empty ones with their names, so a caller can attribute the prompt
// (for example `harness prompt --json`). Joining the texts with "\n\n"
// gives Render's result.
func RenderSections(a *Assembly) ([]RenderedSection, error) {
	out := make([]RenderedSection, 0, len(a.Sections))
	for _, s := range a.Sections {
		text := s.Text
		if s.Interpolate {
			var err error
			if text, err = interpolate(text, "section", s.Name, a.Variables, false); err != nil {
				return nil, err
			}
		}
		if text != "" {
			out = append(out, RenderedSection{Name: s.Name, Order: s.Order, Text: text})
		}
	}
	return out, nil
}

// RenderedContext is one runtime-context contribution after rendering.
type RenderedContext struct {
	// Name is the contributing context's name.
	Name string `json:"name"`
	// Text is the rendered, non-empty text.
	Text string `json:"text"`
}

// RenderContexts renders an assembly's contexts the way Render renders
// sections, keeping each non-empty result with its name (dsh
// renderContextSections). Contexts that did not opt in to interpolation are
// verbatim, so runtime data containing "{{" never fails (B27).
func RenderContexts(a *Assembly) ([]RenderedContext, error) {
	var out []RenderedContext
	for _, c := range a.Contexts {
		text := c.Text
		if c.Interpolate {
			var err error
			if text, err = interpolate(text, "context", c.Name, a.Variables, false); err != nil {
				return nil, err
			}
		}
		if text != "" {
			out = append(out, RenderedContext{Name: c.Name, Text: text})
		}
	}
	return out, nil
}

// ContextSnapshotHeader opens every non-empty runtime-context snapshot.
const ContextSnapshotHeader = "Current runtime context. This snapshot supersedes earlier runtime-context snapshots."

// ContextSnapshotCleared is the message that tells the model an earlier
// snapshot no longer applies once no context is active any more (C10).
const ContextSnapshotCleared = "Current runtime context: none. Earlier runtime-context snapshots no longer apply."

// JoinContexts joins rendered contexts into the one user-role snapshot
// message: the header, a blank line, and the texts separated by blank
// lines; "" when the list is empty.
func JoinContexts(contexts []RenderedContext) string {
	if len(contexts) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(ContextSnapshotHeader)
	for _, c := range contexts {
		b.WriteString("\n\n")
		b.WriteString(c.Text)
	}
	return b.String()
}

// RenderContextSnapshot is JoinContexts(RenderContexts(a)).
func RenderContextSnapshot(a *Assembly) (string, error) {
	contexts, err := RenderContexts(a)
	if err != nil {
		return "", err
	}
	return JoinContexts(contexts), nil
}
