// Package checkpoints snapshots a workspace into a content-addressed store
// and restores it.
//
//	Store (dir per workspace, 0700)
//	├── blobs/ab/cdef…   file contents by sha256, 0600, written atomically
//	├── ckpt-000001.json manifest: path → kind, mode, size, blob (or link target)
//	├── ckpt-000002.json   + metadata: session, turn, prompt excerpt, time, skipped
//	└── statcache.json   size, mtime, inode, mode → blob, from the last scan
//
// Take walks the tree (never .git, never gitignored paths, never files over
// the size limit: those are listed in Checkpoint.Skipped), so it covers what
// any process changed, not only what a tool reported. A file whose stat
// matches the cache is not re-read. Plan compares a checkpoint with the
// current tree and with the state the agent last left (a later
// checkpoint): a file that differs from the latter was changed by someone
// else and is refused unless forced. Apply restores bytes, modes and
// symlinks (as symlinks) and deletes what the checkpoint did not have.
//
// Not covered: anything outside the workspace, ignored and oversized files,
// ownership, extended attributes, timestamps, and side effects such as
// network calls.
package checkpoints
