// Package worktrees gives a task a git worktree of its own: a new branch
// harness/NAME checked out in a directory the harness owns, so that an
// agent (a run, later a subagent or a fleet job) changes files and commits
// without touching the user's working tree.
//
//	repository (the user's)          Manager.Dir/<repo-id>/
//	├── .git/                        ├── fix/          ← worktree, branch harness/fix
//	│   ├── objects/        ◄─┐      ├── fix.json      ← base commit, creation time
//	│   ├── refs/heads/harness/ ◄┤   └── brave-otter/  ← a generated name
//	│   ├── logs/refs/heads/harness/ ◄┤
//	│   └── worktrees/fix/  ◄─┘  (what git add and commit in the worktree write:
//	└── …                         Worktree.Writable)
//
// Create runs `git worktree add -b harness/NAME DIR HEAD` (git on the host,
// unsandboxed: the harness acts, not the agent). Summary says what the
// branch holds: changed files (committed, uncommitted, untracked), commits
// since the base, a diff stat. Remove deletes a clean worktree's directory
// and never a dirty one (uncommitted changes or untracked files); the
// branch is deleted too when it has no commits of its own, and kept when
// it has (so no work is lost). Prune does that for every worktree of a
// repository and reports the dirty ones it kept. Overlaps names the files
// that two live worktrees of the same repository both change.
//
// Not covered: ignored files count as clean (git worktree remove deletes
// them); submodules are not initialised in a new worktree; the sandbox may
// write every harness/* branch's ref, not only its own (git creates a
// ref's lock file beside it).
package worktrees
