package configdoc_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/dshgo/harness/internal/configdoc"
	"github.com/dshgo/harness/plugins/std"
)

// sentenceEnd splits a description into sentences: after . ; : or ) and
// before a capital letter.
var sentenceEnd = regexp.MustCompile(`[.;:)]\s+[A-Z]`)

// contentWords are the words of s that carry meaning (three letters or
// more, not in the small stop list).
func contentWords(s string) map[string]bool {
	stop := map[string]bool{"the": true, "and": true, "for": true, "its": true, "not": true, "this": true, "that": true, "are": true,
		"from": true, "any": true, "each": true, "which": true, "default": true, "true": true, "false": true, "when": true, "with": true}
	out := map[string]bool{}
	for _, w := range regexp.MustCompile(`[a-z0-9]+`).FindAllString(strings.ToLower(s), -1) {
		if len(w) > 2 && !stop[w] {
			out[w] = true
		}
	}
	return out
}

func sentences(d string) []string {
	var out []string
	for {
		loc := sentenceEnd.FindStringIndex(d)
		if loc == nil {
			return append(out, d)
		}
		out = append(out, d[:loc[0]+1])
		d = d[loc[1]-1:]
	}
}

// TestNoDescriptionSaysItTwice: no config field's description (its Go doc
// comment, shown by `harness schema` and the web settings cards) has two
// sentences that say the same thing, as "Servers are the MCP servers by
// name. MCP servers by name (…)" did: two sentences of four or more
// content words sharing 70% of the shorter one's.
func TestNoDescriptionSaysItTwice(t *testing.T) {
	t.Parallel()
	m, err := configdoc.Comments("../..", configdoc.ConfigTypes(std.Plugins()))
	if err != nil {
		t.Fatal(err)
	}
	for key, d := range m {
		ss := sentences(d)
		for i := range ss {
			for j := i + 1; j < len(ss); j++ {
				a, b := contentWords(ss[i]), contentWords(ss[j])
				if len(a) < 4 || len(b) < 4 {
					continue
				}
				shared := 0
				for w := range a {
					if b[w] {
						shared++
					}
				}
				if 10*shared >= 7*min(len(a), len(b)) {
					t.Errorf("%s says it twice:\n  %s\n  %s", key, ss[i], ss[j])
				}
			}
		}
	}
}
