package permission

import (
	"strings"
)

// optionPattern is the option-aware reading of a shell rule's pattern, used
// by deny and ask rules only: `rm -rf *` reads as program `rm`, options r
// and f, operands `*`. It matches a command whose leading words match the
// program words, whose options include the pattern's options however they
// are spelled (`-rf`, `-fr`, `-r -f`, `-Rf`, `--recursive --force`, with
// more options besides), and whose operands, joined by spaces, match the
// rest of the pattern. Options are compared after normalisation through
// optionTables.
type optionPattern struct {
	lead []textGlob
	key  string
	opts []string
	rest textGlob
}

// parseOptionPattern reads a shell rule pattern; nil when the pattern names
// no option or does not start with a program word.
func parseOptionPattern(arg string) *optionPattern {
	fields := strings.Fields(arg)
	var lead []string
	for len(fields) > 0 && !isOption(fields[0]) {
		lead = append(lead, fields[0])
		fields = fields[1:]
	}
	if len(lead) == 0 || len(fields) == 0 || strings.ContainsAny(lead[0], "*?\\") {
		return nil
	}
	p := &optionPattern{key: tableKey(lead)}
	for _, l := range lead {
		p.lead = append(p.lead, compileTextGlob(l))
	}
	opts, operands := normalizeOptions(p.key, fields)
	if len(opts) == 0 {
		return nil
	}
	for o := range opts {
		p.opts = append(p.opts, o)
	}
	p.rest = compileTextGlob(strings.Join(operands, " "))
	return p
}

func isOption(s string) bool { return len(s) > 1 && s[0] == '-' }

// tableKey picks the option table for a command's leading words: "git push"
// when there is a table for the subcommand, else the program.
func tableKey(lead []string) string {
	if len(lead) > 1 {
		if _, ok := optionTables[lead[0]+" "+lead[1]]; ok {
			return lead[0] + " " + lead[1]
		}
	}
	return lead[0]
}

// leads reports whether argv runs the pattern's program words (its options
// and operands aside).
func (p *optionPattern) leads(argv []string) bool {
	if len(argv) <= len(p.lead) {
		return false
	}
	for i, g := range p.lead {
		if !g.match(argv[i]) {
			return false
		}
	}
	return true
}

// match reports whether argv (program reduced to its name) matches.
func (p *optionPattern) match(argv []string) bool {
	if len(argv) <= len(p.lead) {
		return false
	}
	for i, g := range p.lead {
		if !g.match(argv[i]) {
			return false
		}
	}
	have, operands := normalizeOptions(p.key, argv[len(p.lead):])
	for _, o := range p.opts {
		if !have[o] {
			return false
		}
	}
	return p.rest.match(strings.Join(operands, " "))
}

// optionTable normalises the option spellings of one command: short
// options that mean the same (rm's -R is -r; git branch's -D is -d -f) and
// long options with a short equivalent (--recursive is -r).
type optionTable struct {
	alias map[byte]string
	long  map[string]string
	// words: single-dash options are whole words (find -delete), not
	// clusters of letters.
	words bool
}

// optionTables is the long-option table of common tools, documented in
// docs/policy.md ("Option spellings").
var optionTables = map[string]optionTable{
	"rm":           {alias: map[byte]string{'R': "r"}, long: map[string]string{"recursive": "r", "force": "f", "dir": "d", "interactive": "i", "verbose": "v"}},
	"cp":           {alias: map[byte]string{'R': "r"}, long: map[string]string{"recursive": "r", "force": "f", "archive": "a", "link": "l", "symbolic-link": "s", "verbose": "v"}},
	"mv":           {long: map[string]string{"force": "f", "interactive": "i", "no-clobber": "n", "verbose": "v"}},
	"ln":           {long: map[string]string{"symbolic": "s", "force": "f", "no-dereference": "n", "verbose": "v"}},
	"chmod":        {long: map[string]string{"recursive": "R", "verbose": "v"}},
	"chown":        {long: map[string]string{"recursive": "R", "verbose": "v"}},
	"chgrp":        {long: map[string]string{"recursive": "R", "verbose": "v"}},
	"shred":        {long: map[string]string{"remove": "u", "zero": "z", "force": "f", "iterations": "n"}},
	"sed":          {long: map[string]string{"in-place": "i", "expression": "e", "quiet": "n", "silent": "n"}},
	"curl":         {long: map[string]string{"output": "o", "insecure": "k", "location": "L", "data": "d", "upload-file": "T", "request": "X"}},
	"wget":         {long: map[string]string{"output-document": "O", "quiet": "q"}},
	"tar":          {long: map[string]string{"extract": "x", "create": "c", "file": "f", "gzip": "z", "verbose": "v", "directory": "C"}},
	"rsync":        {long: map[string]string{"recursive": "r", "archive": "a", "verbose": "v", "compress": "z"}},
	"find":         {words: true},
	"git push":     {long: map[string]string{"force": "f", "delete": "d", "dry-run": "n", "quiet": "q", "verbose": "v", "set-upstream": "u"}},
	"git clean":    {long: map[string]string{"force": "f", "dry-run": "n", "quiet": "q", "interactive": "i"}},
	"git branch":   {alias: map[byte]string{'D': "df", 'M': "mf", 'C': "cf"}, long: map[string]string{"delete": "d", "force": "f", "move": "m", "copy": "c"}},
	"git checkout": {long: map[string]string{"force": "f", "quiet": "q"}},
	"git switch":   {long: map[string]string{"force": "f", "discard-changes": "f", "create": "c", "force-create": "C"}},
	"git commit":   {long: map[string]string{"all": "a", "message": "m", "no-verify": "n", "quiet": "q"}},
	"docker run":   {long: map[string]string{"volume": "v", "interactive": "i", "tty": "t", "detach": "d", "env": "e", "user": "u", "publish": "p"}},
	"docker rm":    {long: map[string]string{"force": "f", "volumes": "v"}},
	"npm install":  {long: map[string]string{"global": "g", "force": "f", "save-dev": "D"}},
	"npm i":        {long: map[string]string{"global": "g", "force": "f", "save-dev": "D"}},
}

// normalizeOptions splits args into the set of options they give (short
// options as their letter after aliasing, long options without a short
// equivalent as `--name`) and the operands, in order. Everything after
// `--` is an operand.
func normalizeOptions(key string, args []string) (map[string]bool, []string) {
	table := optionTables[key]
	opts := map[string]bool{}
	var operands []string
	for i, a := range args {
		switch {
		case a == "--":
			return opts, append(operands, args[i+1:]...)
		case strings.HasPrefix(a, "--"):
			name, _, _ := strings.Cut(a[2:], "=")
			if short, ok := table.long[name]; ok {
				for j := 0; j < len(short); j++ {
					opts[short[j:j+1]] = true
				}
			} else {
				opts["--"+name] = true
			}
		case isOption(a) && table.words:
			opts[a] = true
		case isOption(a):
			for j := 1; j < len(a); j++ {
				letters := string(a[j])
				if alias, ok := table.alias[a[j]]; ok {
					letters = alias
				}
				for k := 0; k < len(letters); k++ {
					opts[letters[k:k+1]] = true
				}
			}
		default:
			operands = append(operands, a)
		}
	}
	return opts, operands
}

// gitGlobalOptions are git's options before the subcommand that take a
// value as the next word.
var gitGlobalOptions = map[string]bool{"-C": true, "-c": true, "--git-dir": true, "--work-tree": true,
	"--namespace": true, "--exec-path": false, "--config-env": true, "--super-prefix": true, "--list-cmds": false}

// stripGitGlobals returns git's argv without the global options before the
// subcommand (`git -C d -c k=v push` → `git push`), or nil when there are
// none.
func stripGitGlobals(argv []string) []string {
	if len(argv) < 2 || argv[0] != "git" {
		return nil
	}
	i := 1
	for i < len(argv) && strings.HasPrefix(argv[i], "-") {
		name, _, hasValue := strings.Cut(argv[i], "=")
		i++
		if gitGlobalOptions[name] && !hasValue {
			i++
		}
	}
	if i == 1 || i >= len(argv) {
		return nil
	}
	return append([]string{"git"}, argv[i:]...)
}
