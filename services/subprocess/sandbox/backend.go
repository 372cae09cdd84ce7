package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/dshgo/harness/services/subprocess/sandbox/netproxy"
)

// Request is one spawn to confine.
type Request struct {
	// Policy is the enabled policy to enforce.
	Policy Policy
	// Dir is the working directory; it is the workspace (writable in
	// workspace-write mode). Absolute.
	Dir string
	// Path is the resolved program (absolute) and Argv its arguments
	// (Argv[0] is the name the program sees).
	Path string
	Argv []string
	// Env is the child's environment; the backend may add to it.
	Env []string
	// Terminal is set for a PTY session: the program must keep the PTY as
	// its controlling terminal (no new session).
	Terminal bool
	// ExtraWritable are directories the runtime itself needs writable
	// inside the sandbox (a terminal's shell-integration directory).
	ExtraWritable []string
	// Shareable says the caller can start the command through
	// Command.Zygote with a cgroup leaf of its own, so the backend may run
	// it in a sandbox shared with other commands of the same policy (bwrap:
	// a zygote). False: a sandbox of its own.
	Shareable bool
	// NetworkHosts maps host names to addresses for the network proxy of a
	// proxied policy, ahead of DNS (netproxy.Options.Hosts: trusted, may
	// be loopback).
	NetworkHosts map[string]string
	// NetworkAsk answers for a host no rule decides, when the policy's
	// network has ask set (nil: refused).
	NetworkAsk netproxy.Asker
}

// Command is what to exec instead of the request's program.
type Command struct {
	Path string
	Args []string
	Env  []string
	// Start, when set, must be used to start the command: the caller
	// passes the function that forks and execs it (exec.Cmd.Start, a PTY
	// start), and Start runs it where the child inherits the confinement
	// (Landlock: a dedicated OS thread, restricted and then discarded).
	// It returns start's error, or why the confinement could not be set up
	// (then nothing was started). Nil: call start directly.
	Start func(start func() error) error
	// ReadOnly are the protected paths (ProtectedPaths) the backend bound
	// read-only for this command, and the git directories it pinned
	// (bwrap); pass them to NewGuard.
	ReadOnly []string
	// Zygote, when set, means the command is not exec'd at all: the caller
	// starts it with Zygote.Spawn in a long-lived sandbox shared with the
	// other commands of the same policy (Path, Args and Env then describe
	// the command itself, for diagnostics). Only set when
	// Request.Shareable.
	Zygote *ZygoteLaunch
	// Network, for a proxied network policy, lists what the proxy refused
	// while the command ran (nil otherwise).
	Network *NetworkLog
}

// Launch starts the command with start, through c.Start when the backend
// set one.
func (c Command) Launch(start func() error) error {
	if c.Start == nil {
		return start()
	}
	return c.Start(start)
}

// Backend enforces policies on spawns. Implementations are safe for
// concurrent use.
type Backend interface {
	// Name is "bwrap", "landlock", "seatbelt" or "none".
	Name() string
	// Check reports what the backend enforces for p, without spawning.
	Check(p Policy) Report
	// Wrap returns the command that runs req confined, and the report for
	// this spawn.
	Wrap(req Request) (Command, Report, error)
}

// Names of the backends, for Options.Backend and reports.
const (
	BackendAuto     = "auto"
	BackendBwrap    = "bwrap"
	BackendLandlock = "landlock"
	BackendSeatbelt = "seatbelt"
	// BackendNone is the backend of a platform without an OS sandbox
	// (Windows): it runs commands unconfined and says so in every report.
	BackendNone = "none"
)

// probe is one backend's probe, under the backend's name.
type probe struct {
	name string
	run  func(context.Context) (Backend, error)
}

// Probe picks the first working backend of this platform: prefer is
// "auto" (or empty: every backend of the platform in order; Linux: bwrap,
// then landlock; macOS: seatbelt) or one backend's name (that backend
// only). It returns nil and the failure of every backend tried when none
// works. A probe of bwrap runs it once (a few milliseconds).
func Probe(prefer string) (Backend, []error) {
	return ProbeContext(context.Background(), prefer)
}

// ProbeContext is Probe with a context: when ctx ends, a bwrap probe still
// running is killed and bwrap counts as not working.
func ProbeContext(ctx context.Context, prefer string) (Backend, []error) {
	order := platformProbes()
	if prefer != "" && prefer != BackendAuto {
		i := slices.IndexFunc(order, func(p probe) bool { return p.name == prefer })
		if i < 0 {
			return nil, []error{fmt.Errorf("sandbox backend %q: must be %s", prefer, BackendChoices())}
		}
		order = order[i : i+1]
	}
	var errs []error
	for _, p := range order {
		b, err := p.run(ctx)
		if err == nil {
			return b, nil
		}
		errs = append(errs, err)
	}
	return nil, errs
}

// BackendNames are the backends of this platform in probe order (Linux:
// bwrap, landlock; macOS: seatbelt).
func BackendNames() []string {
	var names []string
	for _, p := range platformProbes() {
		names = append(names, p.name)
	}
	return names
}

// FixHint is the short advice for a machine where no backend works, as a
// clause: "install bubblewrap" on Linux; on macOS, to run where
// sandbox-exec works.
func FixHint() string { return fixHint }

// BackendChoices is what a backend setting may say on this platform, as
// an error message lists it: "auto, bwrap or landlock" on Linux, "auto or
// seatbelt" on macOS.
func BackendChoices() string {
	names := append([]string{BackendAuto}, BackendNames()...)
	last := len(names) - 1
	return strings.Join(names[:last], ", ") + " or " + names[last]
}

// within reports whether p is dir or beneath it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// home is the harness user's home directory ("" when unknown).
var home = sync.OnceValue(func() string { h, _ := os.UserHomeDir(); return h })

// expandHome turns "~" and "~/x" into absolute paths; other paths are
// returned as they are.
func expandHome(p string) string {
	if p == "~" {
		return home()
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok && home() != "" {
		return filepath.Join(home(), rest)
	}
	return p
}

// writableDirs are the directories a request may write: nothing in
// read-only mode, else the workspace and the writable roots that exist
// (resolved through symlinks), plus the runtime's own extra directories.
func writableDirs(req Request) []string {
	var out []string
	add := func(p string) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			if st, err := os.Stat(r); err == nil && st.IsDir() && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	if req.Policy.Mode == ModeWorkspaceWrite {
		add(req.Dir)
		for _, r := range req.Policy.WritableRoots {
			add(expandHome(r))
		}
	}
	for _, r := range req.ExtraWritable {
		add(r)
	}
	return out
}

// splitHolders takes out of denied the directories that hold one of the
// policy's Visible paths (strictly inside): such a directory hides
// everything in it but those (a fleet's work root hides the other jobs'
// work dirs, not the job's own). bwrap mounts the holder's mask first and
// binds the visible paths into it; Landlock grants them read. kept is the
// Visible paths that exist, resolved. A holder of /tmp, /dev or /proc
// stays a plain mask, and so does a denied path inside a holder but
// outside kept (hidden already).
func splitHolders(denied []string, p Policy) (holders, masks, kept []string) {
	for _, v := range p.Visible {
		if r, err := filepath.EvalSymlinks(expandHome(v)); err == nil && !slices.Contains(kept, r) {
			kept = append(kept, r)
		}
	}
	for _, d := range denied {
		st, err := os.Stat(d)
		holds := err == nil && st.IsDir() &&
			slices.ContainsFunc(kept, func(k string) bool { return k != d && within(k, d) }) &&
			!slices.ContainsFunc([]string{"/tmp", "/dev", "/proc"}, func(sys string) bool { return within(sys, d) })
		if holds {
			holders = append(holders, d)
		} else {
			masks = append(masks, d)
		}
	}
	// Outer holders first: an inner one is mounted inside the outer's mask.
	slices.SortFunc(holders, func(a, b string) int { return len(a) - len(b) })
	masks = slices.DeleteFunc(masks, func(m string) bool { return heldOut(m, holders, kept) })
	return holders, masks, kept
}

// heldOut reports whether p is inside a holder but outside what it keeps:
// hidden.
func heldOut(p string, holders, kept []string) bool {
	return slices.ContainsFunc(holders, func(h string) bool { return within(p, h) }) &&
		!slices.ContainsFunc(kept, func(k string) bool { return within(p, k) })
}

// checkHeld refuses a spawn whose working directory or a writable
// directory is hidden by a holder (inside it, outside its Visible paths):
// a command pointed at another job's work dir.
func checkHeld(req Request, writable, holders, kept []string) error {
	dirs := append([]string{req.Dir}, writable...)
	if r, err := filepath.EvalSymlinks(req.Dir); err == nil {
		dirs = append(dirs, r)
	}
	for _, d := range dirs {
		if heldOut(d, holders, kept) {
			return fmt.Errorf("directory %s is not visible inside the sandbox: it is in sandbox.denyRead, which shows only %s there", d, strings.Join(kept, ", "))
		}
	}
	return nil
}

// maxDenyMatches bounds how many paths one relative deny pattern may
// expand to in one root (a walk of a huge tree stops there).
const maxDenyMatches = 10000

// errTooMany stops a pattern walk.
var errTooMany = errors.New("too many matches")

// deniedPaths expands the policy's DenyRead into existing absolute paths,
// resolved through symlinks (the target is what must be hidden). Absolute
// and ~/ entries are globbed on the file system; relative patterns inside
// the workspace and each writable root. The second result lists patterns
// that could not be expanded completely.
func deniedPaths(req Request) ([]string, []string) {
	var out, incomplete []string
	add := func(p string) {
		if r, err := filepath.EvalSymlinks(p); err == nil && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	roots := []string{req.Dir}
	for _, r := range req.Policy.WritableRoots {
		roots = append(roots, expandHome(r))
	}
	for _, pat := range req.Policy.DenyReadPaths() {
		pat = expandHome(pat)
		if filepath.IsAbs(pat) {
			if !hasMeta(pat) {
				add(filepath.Clean(pat))
				continue
			}
			base, rel := doublestar.SplitPattern(filepath.ToSlash(pat))
			if n := globInto(base, rel, add); n < 0 {
				incomplete = append(incomplete, pat)
			}
			continue
		}
		for _, root := range roots {
			if !hasMeta(pat) {
				if _, err := os.Lstat(filepath.Join(root, pat)); err == nil {
					add(filepath.Join(root, pat))
				}
				continue
			}
			if n := globInto(root, filepath.ToSlash(pat), add); n < 0 {
				incomplete = append(incomplete, pat+" in "+root)
			}
		}
	}
	return out, incomplete
}

func hasMeta(p string) bool { return strings.ContainsAny(p, "*?[{\\") }

// globInto adds the matches of pattern under base; it returns -1 when the
// walk was cut short.
func globInto(base, pattern string, add func(string)) int {
	n := 0
	err := doublestar.GlobWalk(os.DirFS(base), pattern, func(p string, _ fs.DirEntry) error {
		add(filepath.Join(base, filepath.FromSlash(p)))
		if n++; n >= maxDenyMatches {
			return errTooMany
		}
		return nil
	}, doublestar.WithNoFollow())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return -1
	}
	return n
}
