package worktrees

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrExists is wrapped by Create's error when the name's directory or
// branch already exists.
var ErrExists = errors.New("worktree already exists")

// ErrDirty is wrapped by Remove's error for a worktree with uncommitted
// changes or untracked files: it is never removed.
var ErrDirty = errors.New("worktree has uncommitted changes or untracked files")

// Manager creates and removes the worktrees of the repositories it is
// given. Its zero value is not usable; make one with New.
type Manager struct {
	dir string
}

// New returns a manager that puts worktrees under dir: an absolute dir
// holds one directory per repository (dir/<repo-id>/NAME); a relative
// one is inside each repository's main working tree (dir/NAME, for
// example .harness/worktrees/NAME, with a .gitignore of "*" so the main
// tree does not list them).
func New(dir string) *Manager { return &Manager{dir: filepath.Clean(dir)} }

// Worktree is one worktree the manager made.
type Worktree struct {
	// Name is the worktree's name; Branch is harness/Name.
	Name   string `json:"name"`
	Branch string `json:"branch"`
	// Dir is the worktree's directory (absolute).
	Dir string `json:"dir"`
	// Repo is the main working tree of the repository (the user's).
	Repo string `json:"repo"`
	// CommonDir is the repository's git directory (Repo/.git).
	CommonDir string `json:"commonDir"`
	// GitDir is the worktree's own git directory (CommonDir/worktrees/ID).
	GitDir string `json:"gitDir"`
	// Base is the commit the branch started from.
	Base string `json:"base"`
	// Created is when Create made it.
	Created time.Time `json:"created"`
}

// Writable are the directories a sandbox confined to the worktree must
// write, as its writable roots: the worktree itself, and in the
// repository's git directory what git add and git commit there write —
// the worktree's own git directory (index, HEAD, logs), the object store,
// and the directories of the harness/* branches' refs and reflogs.
// Nothing git executes is among them: not config, hooks, info, the other
// worktrees' directories. The worktree comes first and must stay among
// the roots: from it the sandbox finds the worktree's .git file, and so
// protects its git directory's commondir, config and hooks.
func (w *Worktree) Writable() []string {
	return []string{
		w.Dir,
		w.GitDir,
		filepath.Join(w.CommonDir, "objects"),
		filepath.Join(w.CommonDir, "refs", "heads", "harness"),
		filepath.Join(w.CommonDir, "logs", "refs", "heads", "harness"),
	}
}

// repo is a repository as git resolves it from a directory in it.
type repo struct {
	top, commonDir string
}

func resolve(ctx context.Context, dir string) (repo, error) {
	out, err := git(ctx, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return repo{}, fmt.Errorf("%s: not in a git repository: %w", dir, err)
	}
	common := filepath.Clean(strings.TrimSpace(out))
	if filepath.Base(common) != ".git" {
		return repo{}, fmt.Errorf("%s: the repository's git directory %s is not a main working tree's .git (a bare repository has no working tree to branch from)", dir, common)
	}
	return repo{top: filepath.Dir(common), commonDir: common}, nil
}

// parent is the directory that holds r's worktrees.
func (m *Manager) parent(r repo) string {
	if !filepath.IsAbs(m.dir) {
		return filepath.Join(r.top, m.dir)
	}
	sum := sha256.Sum256([]byte(r.commonDir))
	return filepath.Join(m.dir, filepath.Base(r.top)+"-"+hex.EncodeToString(sum[:4]))
}

// Create makes worktree name of the repository that holds repoDir: a new
// branch harness/NAME at repoDir's HEAD commit, checked out in the
// manager's directory. An empty name is generated (adjective-noun). A
// name whose directory or branch exists is refused (ErrExists); the
// repository must have a commit.
func (m *Manager) Create(ctx context.Context, repoDir, name string) (*Worktree, error) {
	r, err := resolve(ctx, repoDir)
	if err != nil {
		return nil, err
	}
	parent := m.parent(r)
	taken := func(n string) bool {
		if _, err := os.Lstat(filepath.Join(parent, n)); err == nil {
			return true
		}
		_, err := git(ctx, r.top, "show-ref", "--verify", "--quiet", "refs/heads/"+BranchPrefix+n)
		return err == nil
	}
	if name == "" {
		if name, err = generateName(taken); err != nil {
			return nil, err
		}
	} else if err := ValidateName(name); err != nil {
		return nil, err
	} else if taken(name) {
		return nil, fmt.Errorf("worktree %q of %s: %w (branch %s%s or directory %s); pick another name, or `harness worktree prune`", name, r.top, ErrExists, BranchPrefix, name, filepath.Join(parent, name))
	}
	base, err := git(ctx, repoDir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		return nil, fmt.Errorf("%s: the repository has no commit to branch from", repoDir)
	}
	if err := m.makeParent(parent); err != nil {
		return nil, err
	}
	w := &Worktree{Name: name, Branch: BranchPrefix + name, Dir: filepath.Join(parent, name), Repo: r.top,
		CommonDir: r.commonDir, Base: strings.TrimSpace(base), Created: time.Now().UTC().Truncate(time.Second)}
	if _, err := git(ctx, r.top, "worktree", "add", "--quiet", "-b", w.Branch, w.Dir, w.Base); err != nil {
		return nil, fmt.Errorf("creating worktree %q: %w", name, err)
	}
	gd, err := git(ctx, w.Dir, "rev-parse", "--absolute-git-dir")
	if err == nil {
		w.GitDir = filepath.Clean(strings.TrimSpace(gd))
		err = writeMeta(w)
	}
	if err != nil {
		_, _ = git(context.WithoutCancel(ctx), r.top, "worktree", "remove", "--force", w.Dir)
		_, _ = git(context.WithoutCancel(ctx), r.top, "branch", "-D", w.Branch)
		return nil, fmt.Errorf("creating worktree %q: %w", name, err)
	}
	return w, nil
}

// makeParent creates the worktrees' directory (0700); inside a
// repository it also writes a .gitignore of "*" there.
func (m *Manager) makeParent(parent string) error {
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return fmt.Errorf("worktrees directory: %w", err)
	}
	if filepath.IsAbs(m.dir) {
		return nil
	}
	ign := filepath.Join(parent, ".gitignore")
	if _, err := os.Lstat(ign); err == nil {
		return nil
	}
	if err := os.WriteFile(ign, []byte("# harness worktrees (harness worktree list)\n*\n"), 0o644); err != nil {
		return fmt.Errorf("worktrees directory: %w", err)
	}
	return nil
}

func metaPath(w *Worktree) string { return w.Dir + ".json" }

func writeMeta(w *Worktree) error {
	b, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(metaPath(w), append(b, '\n'), 0o600)
}

// maxMeta is the largest metadata file read.
const maxMeta = 64 << 10

func readMeta(dir string) (*Worktree, error) {
	f := dir + ".json"
	st, err := os.Stat(f)
	if err != nil {
		return nil, err
	}
	if st.Size() > maxMeta {
		return nil, fmt.Errorf("%s: larger than %d bytes", f, maxMeta)
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return nil, err
	}
	var w Worktree
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	return &w, nil
}

// List returns the live worktrees the manager made for the repository
// that holds repoDir (those git lists on a harness/ branch in the
// manager's directory, with their metadata), in git's order.
func (m *Manager) List(ctx context.Context, repoDir string) ([]*Worktree, error) {
	r, err := resolve(ctx, repoDir)
	if err != nil {
		return nil, err
	}
	out, err := git(ctx, r.top, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	parent := m.parent(r)
	var list []*Worktree
	var path string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "worktree "):
			path = filepath.Clean(strings.TrimPrefix(l, "worktree "))
		case strings.HasPrefix(l, "branch refs/heads/"+BranchPrefix):
			name := strings.TrimPrefix(l, "branch refs/heads/"+BranchPrefix)
			if path != filepath.Join(parent, name) {
				continue
			}
			w, err := readMeta(path)
			if err != nil {
				continue // not one the manager made (or its metadata was removed)
			}
			w.Name, w.Branch, w.Dir, w.Repo, w.CommonDir = name, BranchPrefix+name, path, r.top, r.commonDir
			list = append(list, w)
		}
	}
	return list, nil
}

// Remove deletes a clean worktree: its directory (git worktree remove,
// which itself refuses a dirty tree), its metadata, and its branch when
// the branch has no commit that no other branch has. A branch with
// commits of its own is kept (branchKept true), so the work stays. A
// dirty worktree is never removed: the error wraps ErrDirty.
func (m *Manager) Remove(ctx context.Context, w *Worktree) (branchKept bool, err error) {
	s, err := Summarize(ctx, w)
	if err != nil {
		return false, err
	}
	if s.Dirty() {
		return false, fmt.Errorf("worktree %q (%s): %w: %d changed, %d untracked; kept", w.Name, w.Dir, ErrDirty, s.count(func(c Change) bool { return c.Uncommitted }), s.count(func(c Change) bool { return c.Untracked }))
	}
	if _, err := git(ctx, w.Repo, "worktree", "remove", w.Dir); err != nil {
		return false, fmt.Errorf("removing worktree %q: %w", w.Name, err)
	}
	_ = os.Remove(metaPath(w))
	if s.Unmerged > 0 {
		return true, nil
	}
	if _, err := git(ctx, w.Repo, "branch", "-D", "--quiet", w.Branch); err != nil {
		return false, fmt.Errorf("worktree %q removed, deleting its branch: %w", w.Name, err)
	}
	return false, nil
}

// Pruned is what Prune did with one worktree.
type Pruned struct {
	Worktree *Worktree
	// Removed: the directory is gone; BranchKept: its branch stays (it
	// has commits of its own).
	Removed, BranchKept bool
	// Err says why it was kept (wraps ErrDirty for a dirty tree).
	Err error
}

// Prune removes every clean worktree of the repository that holds
// repoDir and keeps the dirty ones, reporting each.
func (m *Manager) Prune(ctx context.Context, repoDir string) ([]Pruned, error) {
	list, err := m.List(ctx, repoDir)
	if err != nil {
		return nil, err
	}
	out := make([]Pruned, 0, len(list))
	for _, w := range list {
		kept, err := m.Remove(ctx, w)
		out = append(out, Pruned{Worktree: w, Removed: err == nil, BranchKept: kept, Err: err})
	}
	return out, nil
}

// Subdir returns where dir lies in its working tree (git rev-parse
// --show-prefix: "" at the top, else a relative path such as "cmd/app"),
// so a task started in a subdirectory can start in the same one of its
// worktree.
func Subdir(ctx context.Context, dir string) (string, error) {
	out, err := git(ctx, dir, "rev-parse", "--show-prefix")
	if err != nil {
		return "", err
	}
	return filepath.Clean("./" + strings.TrimSpace(out)), nil
}
