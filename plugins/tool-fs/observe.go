package toolfs

import (
	"io/fs"
	"sync"
)

// Version identifies one state of a file: device, inode, size, and modification
// and change times in nanoseconds. Any write through any path changes ctime, so
// two equal versions mean the file was not touched in between.
type Version struct {
	Dev, Ino         uint64
	Size             int64
	MtimeNs, CtimeNs int64
}

// versionOf derives the Version of a stat result.
func versionOf(info fs.FileInfo) Version {
	v := Version{Size: info.Size(), MtimeNs: info.ModTime().UnixNano()}
	addInode(&v, info)
	return v
}

// Observation is what one owner last saw of one path: absent, or present at a version.
type Observation struct {
	// Present is false for a confirmed absence (a read that found nothing).
	Present bool
	// Version is the observed version when Present.
	Version Version
}

// Observations is the read-before-write policy state (dsh fs-observation-policy):
// per owner (normally the agent session's scope) and absolute path, the last
// observation made by read, write or edit. It is safe for concurrent use.
//
// Rules enforced by FS.Write and FS.Edit through it:
//   - overwriting an existing file requires a present observation at the file's
//     current version (FS_NOT_OBSERVED without one, FS_STALE_VERSION if it changed);
//   - creating a file that was never seen or was seen absent is allowed, and
//     fails with FS_NOT_OBSERVED if the file appeared meanwhile;
//   - editing requires a present observation (FS_NOT_OBSERVED, or FS_NOT_FOUND
//     after a confirmed absence) at the current version (FS_STALE_VERSION).
type Observations struct {
	mu      sync.Mutex
	byOwner map[any]map[string]Observation
}

// NewObservations returns empty policy state.
func NewObservations() *Observations {
	return &Observations{byOwner: map[any]map[string]Observation{}}
}

// Get returns owner's last observation of path.
func (o *Observations) Get(owner any, path string) (Observation, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	obs, ok := o.byOwner[owner][path]
	return obs, ok
}

// Record stores owner's observation of path, replacing any earlier one.
func (o *Observations) Record(owner any, path string, obs Observation) {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := o.byOwner[owner]
	if m == nil {
		m = map[string]Observation{}
		o.byOwner[owner] = m
	}
	m[path] = obs
}

// Forget drops everything recorded for owner (call when its scope ends).
func (o *Observations) Forget(owner any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.byOwner, owner)
}
