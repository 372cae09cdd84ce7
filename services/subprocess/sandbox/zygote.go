package sandbox

import "os"

// ZygoteSpawn is what the caller hands to the command being started.
type ZygoteSpawn struct {
	// Files become the command's descriptors 0, 1, 2, … in order (at
	// least three). The caller keeps them and closes its copies after
	// Spawn returns.
	Files []*os.File
	// Terminal: Files[0] is a PTY slave; the command becomes a session
	// leader with it as controlling terminal. Otherwise the command runs
	// in a new session with no controlling terminal.
	Terminal bool
	// CgroupFD is the directory descriptor of the cgroup leaf the command
	// must start in (clone3 CLONE_INTO_CGROUP). Required: a shared sandbox
	// is only offered when the caller bounds each command by a cgroup.
	CgroupFD int
}
