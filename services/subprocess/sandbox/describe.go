package sandbox

import "strings"

// Part is one part of a policy as `harness sandbox --report` prints it:
// its setting, and for each enforcer the mechanism, or what it leaves
// open.
type Part struct {
	// Name is writes, denyRead, visible, protected paths or network.
	Name string
	// Value is the setting, one line each.
	Value []string
	// By says how each enforcer applies it: "bwrap: …", "landlock: …",
	// "seatbelt: …", "in process: …".
	By []string
}

// inProcess names the consumers of [Checker].
const inProcess = "in process (read, write, edit, grep, glob, the web file list)"

// Describe renders the enabled policy p part by part, with the mechanism
// of backend ("bwrap", "landlock" or "seatbelt") and of the in-process [Checker]. It
// says what is not enforced as plainly as what is. A policy that is not
// enabled has no parts.
func Describe(p Policy, backend string) []Part {
	if !p.Enabled() {
		return nil
	}
	parts := []Part{describeWrites(p, backend), describeDeny(p, backend)}
	if len(p.Visible) > 0 {
		parts = append(parts, Part{Name: "visible", Value: p.Visible, By: []string{
			pick(backend, "bwrap: the denied directory is an empty tmpfs with only these bound into it",
				"landlock: these are granted read; the other names in the denied directory stay listable",
				"seatbelt: these are readable (and writable inside a writable directory); of the rest of the denied directory only the directories on the way to them can be stat'ed"),
			inProcess + ": readable; the rest of the denied directory is refused",
		}})
	}
	if p.Mode == ModeWorkspaceWrite {
		parts = append(parts, Part{Name: "protected paths",
			Value: []string{"at the top of the workspace and each writable root: " + strings.Join(protectedPaths[:], " "),
				"and git's indirection: a .git file's gitdir, commondir, worktrees, submodules' git directories, included configuration"},
			By: []string{
				pick(backend, "bwrap: existing ones bound read-only; ones a command creates are moved aside when its process range ends",
					"landlock: writable while the command runs; put back (or moved aside) when its process range ends",
					"seatbelt: not writable by path, whether they exist or not (a command cannot create them); a git directory itself cannot be renamed or removed"),
				inProcess + ": write and edit refuse them",
			}})
	}
	return append(parts, describeNetwork(p, backend))
}

// pick is the text of backend: landlock's, seatbelt's, else bwrap's.
func pick(backend, bwrap, landlock, seatbelt string) string {
	switch backend {
	case BackendLandlock:
		return landlock
	case BackendSeatbelt:
		return seatbelt
	}
	return bwrap
}

func describeWrites(p Policy, backend string) Part {
	w := Part{Name: "writes"}
	if p.Mode == ModeReadOnly {
		w.Value = []string{"nowhere but a private /tmp (read-only mode)"}
	} else {
		w.Value = []string{"the workspace (the command's working directory; for the bash tool also the session's)"}
		for _, r := range p.WritableRoots {
			w.Value = append(w.Value, "writableRoots: "+r)
		}
		if names := p.Caches.Names(); len(names) > 0 {
			root, err := CacheRoot()
			if err != nil {
				root = "(" + err.Error() + ")"
			}
			w.Value = append(w.Value, "the cache root "+root+" ("+strings.Join(names, ", ")+")")
		}
	}
	w.By = []string{
		pick(backend, "bwrap: / is mounted read-only, these are bound writable, /tmp is a private tmpfs",
			"landlock: write rules on these only; /tmp is read-only and TMPDIR is a private directory",
			"seatbelt: the profile's write rule names these only; /tmp is read-only and TMPDIR is a private directory"),
		inProcess + ": not checked; write and edit outside the workspace are asked by the permission plugin (mode acceptEdits), not refused",
	}
	return w
}

func describeDeny(p Policy, backend string) Part {
	d := Part{Name: "denyRead", Value: p.DenyReadPaths()}
	if len(d.Value) == 0 {
		d.Value = []string{"(none: every file is readable)"}
	}
	d.By = []string{
		pick(backend, "bwrap: each match masked by path when a command starts (an empty tmpfs or file; a symlink's target is masked); relative patterns in the workspace and writable roots only; not masked: another hard link to a denied file",
			"landlock: read not granted on the matches; in workspace-write mode, matches inside writable directories stay readable, and denied directories stay listable",
			"seatbelt: neither readable nor writable, by path, also inside writable directories; a literal path whether it exists or not, a glob by its matches when a command starts; not denied: another hard link to a denied file"),
		inProcess + ": read, write and edit refuse them, grep, glob and the file list leave them out and count them; the path is judged as written, resolved, and by inode for a file with several hard links",
	}
	return d
}

func describeNetwork(p Policy, backend string) Part {
	n := Part{Name: "network", Value: []string{p.Network.String()}}
	switch {
	case p.Network.On():
		n.By = []string{"not restricted: the host's network"}
	case backend == BackendSeatbelt && p.Network.Proxied():
		n.By = []string{"seatbelt: outbound connections only to the loopback port of the harness's proxy, which reaches the allowed hosts"}
	case backend == BackendSeatbelt:
		n.By = []string{"seatbelt: no network rule in the profile: every socket connect and bind is refused"}
	case backend == BackendLandlock && p.Network.Proxied():
		n.By = []string{"landlock: no proxy (it needs bwrap); restricted as with network off: TCP connect and bind blocked on ABI 4 and later, UDP and pathname unix sockets not restricted (see the reasons above)"}
	case backend == BackendLandlock:
		n.By = []string{"landlock: TCP connect and bind blocked on ABI 4 and later, UDP and pathname unix sockets not restricted (see the reasons above)"}
	case p.Network.Proxied():
		n.By = []string{"bwrap: a network namespace with only loopback; the allowed hosts through the harness's proxy"}
	default:
		n.By = []string{"bwrap: a network namespace with only loopback"}
	}
	return n
}
