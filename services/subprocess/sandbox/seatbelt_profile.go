package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// A Seatbelt profile is written in SBPL, the Scheme dialect of macOS's
// sandbox (sandbox-exec -p). The profile this file generates holds no path
// at all: every path is a parameter, (param "W0"), whose value goes on
// sandbox-exec's command line as -DW0=/the/path. A path with quotes,
// parentheses, newlines or any other byte therefore cannot change the
// profile: there is nothing to escape. Seatbelt matches the real path of
// the file a process opens (symlinks resolved; on macOS /tmp is
// /private/tmp), so every path is resolved as far as it exists.

// seatbeltSpec is the containment of one spawn, resolved to the real
// paths Seatbelt matches. Its zero value allows reading everything and
// writing nowhere, with no network.
type seatbeltSpec struct {
	// Writable are directories writable with everything beneath them:
	// the workspace and writable roots (workspace-write), the cache root,
	// the private TMPDIR, the runtime's extra directories.
	Writable []string
	// Protected are files and directories inside Writable that stay
	// read-only, with everything beneath them (ProtectedPaths at the top
	// of each writable directory, whether they exist or not; the git
	// directories' entries; the files git includes).
	Protected []string
	// Pinned are directories that may not be renamed or removed
	// themselves while what is inside stays writable (the git
	// directories).
	Pinned []string
	// Masked are the denyRead paths: neither readable nor writable, with
	// everything beneath them.
	Masked []string
	// Holders are denied directories that hold Visible paths: hidden but
	// for those.
	Holders []string
	// Visible are the paths inside Holders that stay readable (writable
	// too when inside Writable), and VisibleWay the directories between a
	// holder and a visible path, whose metadata (not content) is readable
	// so that the path can be reached.
	Visible, VisibleWay []string
	// Network is off, on, or proxied; ProxyPort is the loopback port of
	// the harness's proxy forwarder when proxied.
	Network   NetworkMode
	ProxyPort int
}

// seatbeltDevices are the device files every command may read and write
// (and ioctl: terminals), by literal path.
var seatbeltDevices = []string{"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/dtracehelper"}

// seatbeltServices are the Mach services a command may look up: user and
// group lookups (getpwuid: the shell's ~), notifications, logging and
// preferences, which ordinary command-line programs use.
var seatbeltServices = []string{
	"com.apple.system.opendirectoryd.libinfo",
	"com.apple.system.notification_center",
	"com.apple.system.logger",
	"com.apple.logd",
	"com.apple.cfprefsd.daemon",
	"com.apple.cfprefsd.agent",
}

// seatbeltNetServices are the Mach services of name resolution and
// certificate checks, looked up only when the network is on.
var seatbeltNetServices = []string{
	"com.apple.dnssd.service",
	"com.apple.SystemConfiguration.configd",
	"com.apple.trustd.agent",
}

// render returns the SBPL profile of s and the parameters it names, as
// sandbox-exec's -D arguments (NAME=value), in order. The profile depends
// on how many paths of each kind there are, never on what they are.
func (s seatbeltSpec) render() (profile string, params []string) {
	var b strings.Builder
	refs := func(kind, prefix string, paths []string) string {
		var r []string
		for i, p := range paths {
			name := prefix + strconv.Itoa(i)
			params = append(params, name+"="+p)
			r = append(r, "("+kind+" (param \""+name+"\"))")
		}
		return strings.Join(r, " ")
	}
	var visW []string
	for _, v := range s.Visible {
		if slices.ContainsFunc(s.Writable, func(w string) bool { return within(v, w) }) {
			visW = append(visW, v)
		}
	}
	// Parameters in the order of their kinds: writable, protected, pinned,
	// denied, holders, visible, the way to them, visible and writable.
	writable := refs("subpath", "W", s.Writable)
	keep := strings.TrimSpace(refs("subpath", "P", s.Protected) + " " + refs("literal", "G", s.Pinned))
	denied := refs("subpath", "D", s.Masked)
	held := refs("subpath", "H", s.Holders)
	visible, way, visibleW := refs("subpath", "V", s.Visible), refs("literal", "A", s.VisibleWay), refs("subpath", "X", visW)
	keep = strings.TrimSpace(keep + " " + denied)

	b.WriteString("(version 1)\n(deny default)\n\n")
	b.WriteString("; Processes: fork and exec what is readable; signals and process\n; information only within this sandbox.\n")
	b.WriteString("(allow process-fork)\n(allow process-exec)\n(allow signal (target same-sandbox))\n(allow process-info* (target same-sandbox))\n\n")
	b.WriteString("; What command-line programs need from the system.\n")
	b.WriteString("(allow sysctl-read)\n(allow ipc-posix-sem)\n(allow ipc-posix-shm)\n(allow pseudo-tty)\n")
	b.WriteString("(allow mach-lookup" + globalNames(seatbeltServices) + ")\n")
	b.WriteString("(allow file-read* file-write-data file-ioctl" + literals(seatbeltDevices) +
		" (regex #\"^/dev/ttys[0-9]+$\") (regex #\"^/dev/fd/[0-9]+$\"))\n\n")

	b.WriteString("; Reads: everything but the denied paths.\n")
	if hidden := strings.TrimSpace(denied + " " + held); hidden != "" {
		b.WriteString("(allow file-read* (require-not (require-any " + hidden + ")))\n")
	} else {
		b.WriteString("(allow file-read*)\n")
	}
	if visible != "" {
		b.WriteString("; In a denied directory that holds visible paths: those, and the way to them.\n")
		b.WriteString("(allow file-read* " + visible + ")\n")
		if way != "" {
			b.WriteString("(allow file-read-metadata " + way + ")\n")
		}
	}
	b.WriteString("\n; Writes: the writable directories, but not their protected paths, the\n; git directories themselves, or denied paths.\n")
	switch {
	case writable == "":
		b.WriteString("; (none)\n")
	default:
		b.WriteString("(allow file-write* " + writeRule(writable, strings.TrimSpace(keep+" "+held)) + ")\n")
		if visibleW != "" {
			b.WriteString("(allow file-write* " + writeRule(visibleW, keep) + ")\n")
		}
	}
	b.WriteString("\n")
	switch s.Network {
	case NetworkOn:
		b.WriteString("; Network: on (the host's network, unfiltered).\n(allow network*)\n(allow system-socket)\n")
		b.WriteString("(allow mach-lookup" + globalNames(seatbeltNetServices) + ")\n")
	case NetworkProxy:
		b.WriteString("; Network: only the harness's proxy, on a loopback port.\n")
		b.WriteString("(allow network-outbound (remote ip \"localhost:" + strconv.Itoa(s.ProxyPort) + "\"))\n")
	default:
		b.WriteString("; Network: off (no rule allows it).\n")
	}
	return b.String(), params
}

// writeRule is the filter "in one of these, and in none of those".
func writeRule(in, except string) string {
	if except == "" {
		return "(require-any " + in + ")"
	}
	return "(require-all (require-any " + in + ") (require-not (require-any " + except + ")))"
}

// literals renders fixed paths of this file (never user input) as
// literal filters.
func literals(paths []string) string {
	var b strings.Builder
	for _, p := range paths {
		b.WriteString(" (literal \"" + p + "\")")
	}
	return b.String()
}

// globalNames renders fixed Mach service names as global-name filters.
func globalNames(names []string) string {
	var b strings.Builder
	for _, n := range names {
		b.WriteString(" (global-name \"" + n + "\")")
	}
	return b.String()
}

// seatbeltSpecFor resolves req's policy on the file system: home expands
// "~/", tmp is the private TMPDIR and caches the cache root ("" for
// none), both writable. A literal denyRead path is denied whether it
// exists or not (a credential file created later is covered too); a glob
// is expanded to what it matches when the command starts, and the second
// result lists the patterns whose expansion was cut short. It fails when
// the working directory or a writable directory is hidden by a denied
// directory that holds visible paths.
func seatbeltSpecFor(req Request, home, tmp, caches string) (seatbeltSpec, []string, error) {
	s := seatbeltSpec{Network: req.Policy.Network.Mode}
	s.Writable = writableDirs(req)
	for _, d := range []string{caches, tmp} {
		if d != "" {
			if r := resolvePartial(d); !slices.Contains(s.Writable, r) {
				s.Writable = append(s.Writable, r)
			}
		}
	}
	prot := protectedIn(req)
	for _, p := range prot.Paths {
		if slices.Contains(prot.GitDirs, p) {
			continue
		}
		s.Protected = appendNew(s.Protected, resolvePartial(p))
	}
	s.Pinned = slices.Clone(prot.GitDirs)
	denied, incomplete := seatbeltDenied(req, home)
	var kept []string
	s.Holders, s.Masked, kept = splitHoldersIn(denied, req.Policy, home)
	if err := checkHeld(req, s.Writable, s.Holders, kept); err != nil {
		return seatbeltSpec{}, nil, err
	}
	for _, k := range kept {
		i := slices.IndexFunc(s.Holders, func(h string) bool { return within(k, h) })
		if i < 0 {
			continue
		}
		s.Visible = append(s.Visible, k)
		for d := filepath.Dir(k); within(d, s.Holders[i]); d = filepath.Dir(d) {
			s.VisibleWay = appendNew(s.VisibleWay, d)
		}
	}
	return s, incomplete, nil
}

// seatbeltDenied expands the policy's denyRead for Seatbelt: a literal
// path (absolute, ~/, or relative to the workspace and each writable
// root) whether it exists or not, a glob by its matches; each resolved.
func seatbeltDenied(req Request, home string) (out, incomplete []string) {
	add := func(p string) { out = appendNew(out, resolvePartial(p)) }
	roots := []string{req.Dir}
	for _, r := range req.Policy.WritableRoots {
		roots = append(roots, expandHomeIn(r, home))
	}
	for _, pat := range req.Policy.DenyReadPaths() {
		pat = expandHomeIn(pat, home)
		switch {
		case filepath.IsAbs(pat) && !hasMeta(pat):
			add(filepath.Clean(pat))
		case filepath.IsAbs(pat):
			base, rel := doublestar.SplitPattern(filepath.ToSlash(pat))
			if globInto(base, rel, add) < 0 {
				incomplete = append(incomplete, pat)
			}
		default:
			for _, root := range roots {
				if !hasMeta(pat) {
					add(filepath.Join(root, pat))
				} else if globInto(root, filepath.ToSlash(pat), add) < 0 {
					incomplete = append(incomplete, pat+" in "+root)
				}
			}
		}
	}
	return out, incomplete
}

// splitHoldersIn is splitHolders with the Visible paths' "~/" expanded
// by home.
func splitHoldersIn(denied []string, p Policy, home string) (holders, masks, kept []string) {
	p.Visible = slices.Clone(p.Visible)
	for i, v := range p.Visible {
		p.Visible[i] = expandHomeIn(v, home)
	}
	return splitHolders(denied, p)
}

// expandHomeIn turns "~" and "~/x" into paths under home ("" leaves them).
func expandHomeIn(p, home string) string {
	if home == "" {
		return p
	}
	if p == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return p
}

// resolvePartial resolves the symlinks of the longest part of the
// absolute path p that exists and appends the rest as it is.
func resolvePartial(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	var rest []string
	for d := p; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			r, err := filepath.EvalSymlinks(d)
			if err != nil {
				return p
			}
			slices.Reverse(rest)
			return filepath.Join(append([]string{r}, rest...)...)
		}
		if d == filepath.Dir(d) {
			return p
		}
		rest = append(rest, filepath.Base(d))
	}
}

// appendNew appends p to list unless it is there.
func appendNew(list []string, p string) []string {
	if slices.Contains(list, p) {
		return list
	}
	return append(list, p)
}

// seatbeltArgs is sandbox-exec's command line for the profile and its
// parameters, then the program and its arguments (argv[1:]).
func seatbeltArgs(sandboxExec, profile string, params []string, path string, argv []string) []string {
	args := make([]string, 0, 4+len(params)+len(argv))
	args = append(args, sandboxExec, "-p", profile)
	for _, p := range params {
		args = append(args, "-D"+p)
	}
	args = append(args, "--", path)
	if len(argv) > 1 {
		args = append(args, argv[1:]...)
	}
	return args
}
