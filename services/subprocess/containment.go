package subprocess

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// DelegateHint is how a user without a delegated cgroup gets one: run the
// harness in a transient systemd user scope that owns its cgroup.
const DelegateHint = "systemd-run --user --scope -p Delegate=yes harness ..."

// Containment says how a runtime bounds the processes of each command, and,
// for the process-group fallback, why it is used.
type Containment struct {
	// Isolation is IsolationCgroup or IsolationProcessGroup.
	Isolation Isolation
	// Cgroup is the runtime's cgroup v2 directory; "" with process groups.
	Cgroup string
	// Delegated reports that Cgroup lies inside a cgroup delegated to this
	// (non-root) user, not one this process may write as root.
	Delegated bool
	// Reason says why cgroups are not used; "" with cgroups.
	Reason string
}

// String is the account `harness check` and `harness sandbox --report`
// print: the mechanism, and for the fallback what it costs and the fix.
func (c Containment) String() string {
	switch {
	case c.Isolation == IsolationCgroup && c.Delegated:
		return "cgroup v2, delegated: each command in a leaf of " + c.Cgroup + " (setsid descendants and double forks included)"
	case c.Isolation == IsolationCgroup:
		return "cgroup v2: each command in a leaf of " + c.Cgroup + " (setsid descendants and double forks included)"
	}
	fix := "run the harness in a delegated cgroup, e.g. " + DelegateHint
	if c.Reason == reasonConfigured {
		fix = "set isolation: auto in the subprocess row"
	}
	return "process groups (" + c.Reason + "): a command's descendants that call setsid or setpgid " +
		"(daemons) escape Terminate and outlive the harness; to contain them, " + fix
}

// reasonConfigured is the Reason of a runtime configured with isolation:
// pgid.
const reasonConfigured = "isolation: pgid"

// Containment reports the mechanism this runtime uses.
func (r *Runtime) Containment() Containment {
	if r.cg != nil {
		return Containment{Isolation: IsolationCgroup, Cgroup: r.cg.dir, Delegated: r.cg.delegated}
	}
	return Containment{Isolation: IsolationProcessGroup, Reason: r.pgidReason}
}

// fallbackLogged makes the process-group fallback a debug line once per
// process: whether this process may create cgroups is a fact about the
// process (its cgroup and user), the same for every runtime it starts.
var fallbackLogged sync.Once

// logFallback logs the fallback once per process, at debug level.
func logFallback(log *slog.Logger, reason string) {
	fallbackLogged.Do(func() {
		log.Debug("subprocess-local: commands are bounded by process groups, not cgroups (setsid descendants escape; `harness check` says more)",
			"reason", reason, "fix", DelegateHint)
	})
}

// cgroupUnavailableError says why this process cannot have cgroup
// isolation; Reason is the short account Containment carries.
type cgroupUnavailableError struct {
	Reason string
	Err    error // the underlying error, if any
}

func (e *cgroupUnavailableError) Error() string {
	if e.Err != nil {
		return "subprocess: cgroup: " + e.Reason + ": " + e.Err.Error()
	}
	return "subprocess: cgroup: " + e.Reason
}

func (e *cgroupUnavailableError) Unwrap() error { return e.Err }

func unavailable(reason string, err error) error {
	return &cgroupUnavailableError{Reason: reason, Err: err}
}

// probeCgroup creates the runtime's private cgroup directory in this
// process's own cgroup v2 (the 0:: line of /proc/self/cgroup, under the
// cgroup2 mount: /sys/fs/cgroup on pure v2, /sys/fs/cgroup/unified on
// hybrid hierarchies). Any failure means the process-group fallback.
//
// As root, the own cgroup is used whatever it is (the root of the
// hierarchy included). Any other user needs the own cgroup delegated to it
// (delegatedTo): never the hierarchy's root, and the directory, its
// cgroup.procs (the common ancestor of every migration into the runtime's
// leaves) and cgroup.subtree_control writable. That is how systemd
// delegates (Delegate=yes) and how .ci/run sets one up.
//
// The harness process stays in its own cgroup, beside the runtime's
// directory. The rule against processes in inner cgroups binds only a
// cgroup whose cgroup.subtree_control enables controllers; the runtime
// enables none (cgroup.kill, cgroup.events and cgroup.procs are core
// files), so its leaves can be created next to running processes. Moving
// the harness into a leaf of its own would put it out of reach of the
// SIGTERM of a harness that runs it (a range signals the members its own
// cgroup.procs lists).
func probeCgroup() (*cgroupParent, error) {
	mount, err := cgroup2Mount()
	if err != nil {
		return nil, unavailable("no cgroup v2 mount", err)
	}
	own, err := ownCgroup()
	if err != nil {
		return nil, unavailable("no cgroup v2 membership in /proc/self/cgroup", err)
	}
	parent := filepath.Join(mount, own)
	delegated := os.Geteuid() != 0
	if delegated {
		if err := delegatedTo(mount, own); err != nil {
			return nil, err
		}
	}
	sweepStale(parent)
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	dir := filepath.Join(parent, fmt.Sprintf("harness-subprocess-%s-%d-%s", pidNamespace(), os.Getpid(), hex.EncodeToString(rnd[:])))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, unavailable("cannot create a cgroup in "+parent, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		_ = os.Remove(dir)
		return nil, unavailable("no cgroup.kill (kernel before 5.14)", err)
	}
	return &cgroupParent{dir: dir, delegated: delegated}, nil
}

// delegatedTo checks that the cgroup own (a path under mount) is delegated
// to this process's effective user: not the hierarchy's root, and the
// directory, cgroup.procs and cgroup.subtree_control writable.
func delegatedTo(mount, own string) error {
	uid := strconv.Itoa(os.Geteuid())
	if own == "/" {
		return unavailable("this process's cgroup is the root of the cgroup v2 hierarchy at "+mount+
			", which only root may write, and no cgroup is delegated to uid "+uid, nil)
	}
	dir := filepath.Join(mount, own)
	for _, name := range []string{"", "cgroup.procs", "cgroup.subtree_control"} {
		if err := unix.Faccessat(unix.AT_FDCWD, filepath.Join(dir, name), unix.W_OK, unix.AT_EACCESS); err != nil {
			what := "the directory"
			if name != "" {
				what = name
			}
			return unavailable("this process's cgroup "+dir+" is not delegated to uid "+uid+" ("+what+" not writable)", err)
		}
	}
	return nil
}
