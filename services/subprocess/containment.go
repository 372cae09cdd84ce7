package subprocess

import (
	"log/slog"
	"sync"
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
	if c.Reason == reasonJobObject {
		return "job objects: each command and every process it starts in a job of its own, ended together by Terminate (TerminateJobObject) " +
			"and when the harness exits (kill on job close)"
	}
	fix := "run the harness in a delegated cgroup, e.g. " + DelegateHint
	if c.Reason == reasonConfigured {
		fix = "set isolation: auto in the subprocess row"
	}
	return "process groups (" + c.Reason + "): a command's descendants that call setsid or setpgid " +
		"(daemons) escape Terminate and outlive the harness; to contain them, " + fix
}

// reasonJobObject is the Reason on Windows, where a job object, not a
// process group, bounds each command.
const reasonJobObject = "Windows: job objects"

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
