//go:build unix

package subprocess

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

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
