package permission

import (
	"regexp"
	"strings"
	"sync"
)

// textGlob is a compiled glob over free text (a shell command, a JSON
// document): `*` matches any run of characters including `/` and spaces, `?`
// one character, `\x` the literal x. Two shorthands keep Claude Code rules
// working unchanged: a trailing `:*` means "this prefix, alone or followed by
// anything" (`git push:*`), and a trailing ` *` also matches the bare prefix
// (`git *` matches `git`).
//
// The regular expression is compiled on the first match, not when the rule
// is parsed: a harness that boots and exits (`harness check`) or never calls
// a tool does not pay for compiling every rule.
type textGlob struct {
	source string
	re     func() *regexp.Regexp
}

// compileTextGlob makes the glob of pattern (its regexp is built on the
// first match); it never fails because every rune has a literal meaning
// outside the three metacharacters.
func compileTextGlob(pattern string) textGlob {
	return textGlob{source: pattern, re: sync.OnceValue(func() *regexp.Regexp { return globRegexp(pattern) })}
}

// globRegexp is the regular expression of a text glob.
func globRegexp(pattern string) *regexp.Regexp {
	body, optionalTail := pattern, false
	switch {
	case strings.HasSuffix(body, ":*") && !strings.HasSuffix(body, `\:*`):
		body, optionalTail = strings.TrimSuffix(body, ":*"), true
	case strings.HasSuffix(body, " *") && len(body) > 2:
		body, optionalTail = strings.TrimSuffix(body, " *"), true
	}
	var b strings.Builder
	b.WriteString(`(?s)\A`)
	writeGlobRegexp(&b, body)
	if optionalTail {
		b.WriteString(`(?:\s.*)?`)
	}
	b.WriteString(`\z`)
	return regexp.MustCompile(b.String())
}

// writeGlobRegexp appends the regular expression for a glob body.
func writeGlobRegexp(b *strings.Builder, body string) {
	runes := []rune(body)
	for i := 0; i < len(runes); i++ {
		switch r := runes[i]; r {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '\\':
			if i+1 < len(runes) {
				i++
				b.WriteString(regexp.QuoteMeta(string(runes[i])))
			} else {
				b.WriteString(`\\`)
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
}

// match reports whether the whole of s matches the glob.
func (g textGlob) match(s string) bool { return g.re().MatchString(s) }
