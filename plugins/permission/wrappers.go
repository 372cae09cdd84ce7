package permission

import (
	"path"
	"slices"
	"strings"
)

// wrapperSpec describes how a wrapper program (one that runs its arguments
// as another command) takes its own arguments, so that the wrapped command
// can be found whatever options are given: `timeout -s KILL 5 rm -rf v`,
// `exec -a name rm -rf v`, `nice -n 5 rm -rf v`, `env -u X A=1 rm -rf v`.
type wrapperSpec struct {
	// short lists the short options that take a value (`-s KILL`, `-sKILL`).
	short string
	// long lists the long options that take a value as the next word
	// (`--signal KILL`; `--signal=KILL` is one word anyway).
	long []string
	// operands is the number of operands before the command (timeout's
	// duration, chroot's directory, flock's lock file, taskset's mask).
	operands int
	// assigns: `NAME=value` operands come before the command (env).
	assigns bool
	// scriptShort and scriptLong are options whose value is a shell command
	// line (`su -c '…'`, `flock -c '…'`, `env -S '…'`).
	scriptShort string
	scriptLong  []string
	// joinFlags are short options that make the wrapper run the rest of its
	// arguments as one shell command line (`sudo -s rm -rf v`); joinScript
	// makes it always do so (watch).
	joinFlags  string
	joinScript bool
}

// wrappers are the programs that run their arguments as another command.
// The list is documented in docs/policy.md ("Wrappers").
var wrappers = map[string]wrapperSpec{
	"sudo": {short: "CDghpRrTtUu", long: []string{"close-from", "chdir", "group", "host", "prompt", "chroot", "role",
		"type", "command-timeout", "other-user", "user"}, joinFlags: "si"},
	"doas":       {short: "Cu"},
	"pkexec":     {long: []string{"user"}},
	"run0":       {long: []string{"user", "group", "unit", "property", "description", "slice", "chdir", "setenv", "nice", "machine"}},
	"env":        {short: "uCP", long: []string{"unset", "chdir", "block-signal", "default-signal", "ignore-signal"}, assigns: true, scriptShort: "S", scriptLong: []string{"split-string"}},
	"nohup":      {},
	"nice":       {short: "n", long: []string{"adjustment"}},
	"ionice":     {short: "cnp", long: []string{"class", "classdata", "pid", "pgid", "uid"}},
	"chrt":       {},
	"time":       {short: "fo", long: []string{"format", "output"}},
	"timeout":    {short: "ks", long: []string{"kill-after", "signal"}, operands: 1},
	"command":    {},
	"builtin":    {},
	"exec":       {short: "a"},
	"xargs":      {short: "adEeIiLlnPs", long: []string{"arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"}},
	"stdbuf":     {short: "ioe", long: []string{"input", "output", "error"}},
	"setsid":     {},
	"setpriv":    {long: []string{"reuid", "regid", "groups", "inh-caps", "ambient-caps", "bounding-set", "securebits", "pdeathsig", "selinux-label", "apparmor-profile", "landlock-access", "landlock-rule"}},
	"chronic":    {},
	"unbuffer":   {},
	"caffeinate": {},
	"nocache":    {},
	"chroot":     {long: []string{"userspec", "groups"}, operands: 1},
	"taskset":    {operands: 1},
	"numactl":    {short: "CcimNnp"},
	"flock":      {short: "wE", long: []string{"timeout", "wait", "conflict-exit-code"}, operands: 1, scriptShort: "c", scriptLong: []string{"command"}},
	"su":         {short: "gGsw", long: []string{"group", "supp-group", "shell", "whitelist-environment"}, scriptShort: "c", scriptLong: []string{"command"}},
	"runuser":    {short: "gGsuw", long: []string{"group", "supp-group", "shell", "user", "whitelist-environment"}, scriptShort: "c", scriptLong: []string{"command"}},
	"sg":         {operands: 1, scriptShort: "c"},
	"script":     {short: "ETIOBt", long: []string{"echo", "log-in", "log-out", "log-io", "log-timing", "logging-format", "output-limit"}, scriptShort: "c", scriptLong: []string{"command"}},
	"watch":      {short: "dnq", long: []string{"interval", "differences"}, joinScript: true},
	"strace":     {short: "abeEIoOpPsSuUX"},
	"ltrace":     {short: "aAeFlnopsSu"},
	"unshare":    {short: "RSGw", long: []string{"root", "wd", "setuid", "setgid", "propagation", "map-user", "map-group", "map-users", "map-groups"}},
	"nsenter":    {short: "tSGrw", long: []string{"target", "setuid", "setgid", "root", "wd"}},
	"firejail":   {},
	"systemd-run": {short: "pEM", long: []string{"unit", "property", "description", "slice", "uid", "gid", "nice",
		"working-directory", "setenv", "machine", "on-active", "on-calendar"}},
	"busybox":          {},
	"toybox":           {},
	"dbus-run-session": {},
	"xvfb-run":         {short: "nsfe", long: []string{"server-num", "server-args", "auth-file", "error-file"}},
	"valgrind":         {},
}

// shells run a `-c` argument, a script file, or their standard input as a
// command line.
var shells = map[string]bool{"bash": true, "sh": true, "dash": true, "zsh": true, "ksh": true, "mksh": true,
	"ash": true, "yash": true, "posh": true, "rbash": true, "fish": true, "ksh93": true, "pdksh": true}

// maxLooseStarts bounds the wrapper argument suffixes offered to deny rules.
const maxLooseStarts = 64

// commandStarts returns where commands begin in words: precise starts (0,
// then the command each known wrapper runs, found with its option table)
// and loose starts (after a wrapper, every other argument position, and
// after find's -exec/-execdir/-ok/-okdir), which only deny and ask rules
// see, so an option table that is wrong or incomplete cannot hide a wrapped
// command from them.
func commandStarts(words []word) (precise, loose []int) {
	precise = []int{0}
	for i := 0; i < len(words) && words[i].static; {
		spec, ok := wrappers[path.Base(words[i].val)]
		if !ok || spec.joinScript {
			break
		}
		next := spec.skip(words, i+1)
		if next >= len(words) {
			break
		}
		precise = append(precise, next)
		i = next
	}
	first := path.Base(words[0].val)
	_, wrapped := wrappers[first]
	for j := 1; j < len(words) && len(loose) < maxLooseStarts; j++ {
		if slices.Contains(precise, j) {
			continue
		}
		if wrapped {
			loose = append(loose, j)
			continue
		}
		if first == "find" {
			switch words[j-1].val {
			case "-exec", "-execdir", "-ok", "-okdir":
				loose = append(loose, j)
			}
		}
	}
	return precise, loose
}

// skip returns the index of the command a wrapper runs, given the index of
// its first argument.
func (s wrapperSpec) skip(words []word, i int) int {
	operands := s.operands
	for i < len(words) {
		w := words[i]
		switch {
		case w.static && w.val == "--":
			return min(i+1+operands, len(words))
		case w.static && strings.HasPrefix(w.val, "--") && len(w.val) > 2:
			name := w.val[2:]
			if !strings.Contains(name, "=") && (slices.Contains(s.long, name) || slices.Contains(s.scriptLong, name)) {
				i++
			}
			i++
		case w.static && strings.HasPrefix(w.val, "-") && len(w.val) > 1:
			cluster := w.val[1:]
			for k := 0; k < len(cluster); k++ {
				if strings.IndexByte(s.short+s.scriptShort, cluster[k]) >= 0 {
					if k == len(cluster)-1 {
						i++ // the value is the next word
					}
					break
				}
			}
			i++
		case s.assigns && w.static && isAssignment(w.val):
			i++
		case operands > 0:
			operands--
			i++
		default:
			return i
		}
	}
	return i
}

// isAssignment reports whether s is `NAME=value`.
func isAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// wrapperScripts analyses the shell command lines a wrapper takes as an
// option value (`su -c '…'`, `env -S '…'`) or builds from its arguments
// (`sudo -s …`, `watch …`).
func (a *analyzer) wrapperScripts(idx int, words []word, depth int) {
	if len(words) == 0 || !words[0].static {
		return
	}
	name := path.Base(words[0].val)
	spec, ok := wrappers[name]
	if !ok {
		return
	}
	join := spec.joinScript
	for i := 1; i < len(words); i++ {
		w := words[i]
		if !w.static || !strings.HasPrefix(w.val, "-") || w.val == "-" {
			continue
		}
		if w.val == "--" {
			break
		}
		if long, ok := strings.CutPrefix(w.val, "--"); ok {
			key, value, hasValue := strings.Cut(long, "=")
			if slices.Contains(spec.scriptLong, key) {
				if hasValue {
					a.scriptWord(idx, word{val: value, static: true, node: w.node}, depth, "the command given to "+name+" --"+key)
				} else if i+1 < len(words) {
					a.scriptWord(idx, words[i+1], depth, "the command given to "+name+" --"+key)
				}
			}
			continue
		}
		cluster := w.val[1:]
		for k := 0; k < len(cluster); k++ {
			c := cluster[k]
			if strings.IndexByte(spec.joinFlags, c) >= 0 {
				join = true
			}
			if strings.IndexByte(spec.scriptShort, c) >= 0 {
				what := "the command given to " + name + " -" + string(c)
				if k < len(cluster)-1 {
					a.scriptWord(idx, word{val: cluster[k+1:], static: true, node: w.node}, depth, what)
				} else if i+1 < len(words) {
					a.scriptWord(idx, words[i+1], depth, what)
				}
				break
			}
			if strings.IndexByte(spec.short, c) >= 0 {
				break
			}
		}
	}
	if !join {
		return
	}
	start := spec.skip(words, 1)
	if start >= len(words) {
		return
	}
	var text []string
	for _, w := range words[start:] {
		if !w.static {
			a.markUnknown(idx, name+" runs text that is not literal ("+w.val+")")
			return
		}
		text = append(text, w.val)
	}
	a.nested(strings.Join(text, " "), depth+1, "the command "+name+" runs")
}

// Shell operand kinds (see shellOperand).
const (
	operandNone = iota
	operandScript
	operandFile
	operandStdin
)

// shellOperand finds what a shell invocation runs: the `-c` script (with
// any options before or after `-c`, `--`, `-o opt`, `--rcfile f` …), a
// script file operand, or its standard input; i is the operand's index.
func shellOperand(words []word) (kind, i int) {
	cflag, sflag := false, false
	for i = 1; i < len(words); i++ {
		w := words[i]
		if !w.static {
			break
		}
		v := w.val
		if v == "--" || v == "-" {
			i++
			break
		}
		if strings.HasPrefix(v, "--") {
			switch v {
			case "--rcfile", "--init-file":
				i++
			}
			continue
		}
		if len(v) < 2 || (v[0] != '-' && v[0] != '+') {
			break
		}
		takes := 0
		for _, c := range v[1:] {
			switch c {
			case 'c':
				cflag = cflag || v[0] == '-'
			case 's':
				sflag = sflag || v[0] == '-'
			case 'o', 'O':
				takes++
			}
		}
		i += takes
	}
	switch {
	case cflag && i < len(words):
		return operandScript, i
	case cflag:
		return operandNone, i
	case i < len(words) && !sflag:
		return operandFile, i
	}
	return operandStdin, i
}
