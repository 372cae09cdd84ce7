package permission

import "strings"

// Options that make a read-only-looking command write a file or run a
// program. An allow rule is written for what a command usually does
// (`bash(git diff *)`, `bash(go test *)`); its `*` must not also cover
// `git diff --output=~/.bashrc`, `git -c core.pager=… log` or
// `go test -exec ./x`. A part whose argument vector has one of these
// options is covered only by an allow rule whose pattern names the option
// itself (`bash(go test -exec *)`). Deny and ask rules are unaffected. The
// table is documented in docs/policy.md ("Options that write or run").
var effectOptions = map[string]effectTable{
	"git": {
		// Global options (before the subcommand): another repository or
		// configuration, whose fsmonitor, pager or hooks then run.
		global: []string{"-c", "-C", "--config-env", "--exec-path", "--git-dir", "--work-tree"},
		long: []string{"--output", "--ext-diff", "--no-index", "--upload-pack", "--receive-pack", "--exec",
			"--open-files-in-pager", "--config-env"},
		// Short options by subcommand: git grep -O runs a pager, git
		// rebase -x a command, git clone -u an upload program.
		short: map[string]string{"grep": "O", "rebase": "x", "clone": "u"},
	},
	"go": {
		word: []string{"-exec", "-toolexec", "-vettool", "-o", "-overlay", "-modfile", "-pkgdir", "-C",
			"-coverprofile", "-cpuprofile", "-memprofile", "-blockprofile", "-mutexprofile", "-trace", "-outputdir",
			"-test.coverprofile", "-test.cpuprofile", "-test.memprofile", "-test.blockprofile", "-test.mutexprofile",
			"-test.trace", "-test.outputdir", "-test.gocoverdir"},
		// -ldflags runs an external linker or archiver named in its value.
		valueHas: map[string][]string{"-ldflags": {"extld", "extar", "tmpdir"}},
	},
	"find": {word: []string{"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}},
	"rg":   {long: []string{"--pre"}},
	"sort": {long: []string{"--output", "--compress-program"}, short: map[string]string{"": "o"}},
	"sed":  {long: []string{"--in-place"}, short: map[string]string{"": "i"}},
	"curl": {long: []string{"--output", "--remote-name", "--remote-name-all", "--upload-file", "--config", "--output-dir"}, short: map[string]string{"": "oOTK"}},
	"wget": {long: []string{"--output-document", "--output-file", "--append-output", "--directory-prefix"}, short: map[string]string{"": "oOaP"}},
}

// effectTable is one program's options that write or run.
type effectTable struct {
	// global are options before a subcommand (git's), matched as words
	// or `--name=value`.
	global []string
	// long are `--name` options, also written `--name=value` or as an
	// unambiguous prefix (git and GNU tools accept `--out` for --output).
	long []string
	// word are single-dash word options (go's and find's), also
	// `--name` and `-name=value`.
	word []string
	// short maps a subcommand ("" for any) to the option letters that
	// write or run, found also inside a cluster (`-nO`).
	short map[string]string
	// valueHas are word options that write or run only when their value
	// contains one of the texts.
	valueHas map[string][]string
}

// effectOption returns the first option of argv (program reduced to its
// name) that makes the command write a file or run a program, "" when none.
func effectOption(argv []string) string {
	if len(argv) < 2 {
		return ""
	}
	t, ok := effectOptions[argv[0]]
	if !ok {
		return ""
	}
	args := argv[1:]
	sub := ""
	if len(t.global) > 0 {
		for i := 0; i < len(args); i++ {
			a := args[i]
			if !strings.HasPrefix(a, "-") {
				sub, args = a, args[i+1:]
				break
			}
			name, _, _ := strings.Cut(a, "=")
			for _, g := range t.global {
				if name == g || (len(g) == 2 && strings.HasPrefix(a, g)) {
					return g
				}
			}
			if gitGlobalOptions[name] && !strings.Contains(a, "=") {
				i++
			}
		}
	}
	for i, a := range args {
		if a == "--" {
			break
		}
		if o := t.match(sub, a, args[i+1:]); o != "" {
			return o
		}
	}
	return ""
}

// match checks one argument (next are the arguments after it).
func (t effectTable) match(sub, a string, next []string) string {
	if !strings.HasPrefix(a, "-") || a == "-" {
		return ""
	}
	name, value, hasValue := strings.Cut(a, "=")
	for _, w := range t.word {
		if name == w || name == "-"+w {
			return w
		}
	}
	for w, texts := range t.valueHas {
		if name != w && name != "-"+w {
			continue
		}
		if !hasValue && len(next) > 0 {
			value = next[0]
		}
		for _, s := range texts {
			if strings.Contains(value, s) {
				return w
			}
		}
	}
	if strings.HasPrefix(name, "--") {
		for _, l := range t.long {
			if name == l || (len(name) >= 5 && strings.HasPrefix(l, name)) {
				return l
			}
		}
		return ""
	}
	letters := t.short[""] + t.short[sub]
	for _, c := range name[1:] {
		if strings.ContainsRune(letters, c) {
			return "-" + string(c)
		}
	}
	return ""
}

// namesOption reports whether the rule's pattern names the option o
// (`-exec`, `--output=…`, `-o`, `-ofile`).
func (r Rule) namesOption(o string) bool {
	for _, f := range strings.Fields(r.arg) {
		if f == o || strings.HasPrefix(f, o+"=") || (len(o) == 2 && strings.HasPrefix(f, o)) {
			return true
		}
	}
	return false
}

// namesOptions reports whether the rule's pattern names every option of os.
func (r Rule) namesOptions(os []string) bool {
	for _, o := range os {
		if !r.namesOption(o) {
			return false
		}
	}
	return true
}
