package skills

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Expand returns a command body with its arguments substituted:
// `$ARGUMENTS` is args (trimmed); `$1`, `$2`, … are the arguments split
// at blanks, a pair of single or double quotes grouping (a missing one is
// empty). A body that uses neither gets "\n\nARGUMENTS: args" appended
// when args is not empty, so the arguments are never lost. Nothing else
// is interpreted: `$0`, `$HOME`, `!`-lines and `@file` stay as written
// (the plugin runs and reads those when the command runs).
func Expand(body, args string) string {
	args = strings.TrimSpace(args)
	fields := SplitArgs(args)
	var b strings.Builder
	used := false
	for i := 0; i < len(body); {
		j := strings.IndexByte(body[i:], '$')
		if j < 0 {
			b.WriteString(body[i:])
			break
		}
		b.WriteString(body[i : i+j])
		i += j
		rest := body[i+1:]
		switch {
		case strings.HasPrefix(rest, "ARGUMENTS"):
			b.WriteString(args)
			i += 1 + len("ARGUMENTS")
			used = true
		case len(rest) > 0 && rest[0] >= '1' && rest[0] <= '9':
			n := 1
			for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
				n++
			}
			k, _ := strconv.Atoi(rest[:n])
			if k <= len(fields) {
				b.WriteString(fields[k-1])
			}
			i += 1 + n
			used = true
		default:
			b.WriteByte('$')
			i++
		}
	}
	out := b.String()
	if !used && args != "" {
		out = strings.TrimRight(out, "\n") + "\n\nARGUMENTS: " + args
	}
	return out
}

// SplitArgs splits args at blanks; single or double quotes group a field
// (and are removed). An unclosed quote runs to the end.
func SplitArgs(args string) []string {
	var out []string
	var f strings.Builder
	in, quote := false, rune(0)
	for _, r := range args {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			f.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				out = append(out, f.String())
				f.Reset()
				in = false
			}
		default:
			f.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, f.String())
	}
	return out
}

// cut returns s cut to at most n bytes at a UTF-8 boundary, with "…" when
// it was cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
