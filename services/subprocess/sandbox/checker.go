package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
)

// Checker applies a policy in process, to the harness's own file access on
// behalf of the model (the read, write, edit, grep and glob tools, the web
// app's file list), with the path resolution the OS backends use: a path
// is judged lexically (after `..` is cleaned) and with every symlink
// resolved, a denyRead entry both as written and resolved, and a file with
// more than one hard link by inode and device against the denied files
// (the backends mask by path, so a hard link made before the command ran
// would show through there; the Checker refuses it).
//
// What it refuses: reading (and writing) a denyRead path, unless it lies in
// a Visible directory inside the denied one; writing a protected path of
// a workspace or writable root (ProtectedPaths, git's indirection). It does
// not refuse writes outside the writable roots: the permission plugin asks
// for those (docs/sandbox.md, Threat model). A policy that is not enabled
// refuses nothing. A Checker is built per call (NewChecker is cheap: the
// inode set is computed on the first multi-link file) and is safe for
// concurrent use.
type Checker struct {
	policy Policy
	deny   []string
	pats   []denyPattern
	roots  []string // workspaces then writable roots, absolute, clean
	// rootForms are the roots as given and resolved.
	rootForms []string
	visible   []string // Visible, expanded and resolved

	inoOnce sync.Once
	inodes  map[fileID]string // denied files by identity → the entry
}

// denyPattern is one denyRead entry prepared for matching: its absolute
// patterns (as written and with the base's symlinks resolved), or its
// pattern relative to each root.
type denyPattern struct {
	entry string
	abs   []string
	rel   string
}

func prepare(e string) denyPattern {
	x := expandHome(e)
	if !filepath.IsAbs(x) {
		return denyPattern{entry: e, rel: filepath.ToSlash(x)}
	}
	dp := denyPattern{entry: e, abs: []string{filepath.Clean(x)}}
	if hasMeta(x) {
		base, rel := doublestar.SplitPattern(filepath.ToSlash(x))
		if r, err := filepath.EvalSymlinks(base); err == nil && r != base {
			dp.abs = append(dp.abs, filepath.Join(r, rel))
		}
	} else if r, err := filepath.EvalSymlinks(dp.abs[0]); err == nil && r != dp.abs[0] {
		dp.abs = append(dp.abs, r)
	}
	return dp
}

// fileID is a file's identity: device and inode.
type fileID struct{ dev, ino uint64 } //nolint:unused // dev is set only where files have one (not Windows)

// NewChecker returns the Checker of policy p for commands whose workspaces
// are the given absolute directories (a tool call's working directory and
// the session's; the first is where relative paths resolve).
func NewChecker(p Policy, workspaces ...string) *Checker {
	c := &Checker{policy: p, deny: p.DenyReadPaths()}
	for _, w := range append(slices.Clone(workspaces), expandAll(p.WritableRoots)...) {
		if w != "" && filepath.IsAbs(w) && !slices.Contains(c.roots, filepath.Clean(w)) {
			c.roots = append(c.roots, filepath.Clean(w))
		}
	}
	for _, v := range expandAll(p.Visible) {
		c.visible = append(c.visible, forms(v)...)
	}
	if p.Enabled() {
		for _, e := range c.deny {
			c.pats = append(c.pats, prepare(e))
		}
		for _, r := range c.roots {
			for _, f := range forms(r) {
				if !slices.Contains(c.rootForms, f) {
					c.rootForms = append(c.rootForms, f)
				}
			}
		}
	}
	return c
}

func expandAll(list []string) []string {
	out := make([]string, 0, len(list))
	for _, p := range list {
		out = append(out, filepath.Clean(expandHome(p)))
	}
	return out
}

// Enabled reports whether the checker's policy is on (otherwise every
// check passes).
func (c *Checker) Enabled() bool { return c.policy.Enabled() }

// DeniedError is a path the sandbox policy refuses to the harness's file
// access: the rule says which part of the policy (a denyRead entry as
// written, or "protected path").
type DeniedError struct {
	// Op is "read" or "write".
	Op string
	// Path is the path as asked for, absolute.
	Path string
	// Rule is the denyRead entry that matched (as written in the policy),
	// or ProtectedRule.
	Rule string
}

// ProtectedRule is the DeniedError.Rule of a write to a protected path.
const ProtectedRule = "protected path"

func (e *DeniedError) Error() string {
	if e.Rule == ProtectedRule {
		return fmt.Sprintf("sandbox: writing %s is refused: it is a protected path (a file that programs run outside the sandbox execute, such as git's configuration and hooks; docs/sandbox.md, Host-executed files); sandboxed commands cannot change it either", e.Path)
	}
	return fmt.Sprintf("sandbox: %s %s is refused: it is hidden by sandbox.denyRead entry %q (the subprocess row of harness.yml); sandboxed commands cannot read it either", verb(e.Op), e.Path, e.Rule)
}

func verb(op string) string {
	if op == "write" {
		return "writing"
	}
	return "reading"
}

// ErrDenied is matched (errors.Is) by every *DeniedError.
var ErrDenied = errors.New("sandbox: refused by the sandbox policy")

// Is makes errors.Is(err, ErrDenied) hold.
func (e *DeniedError) Is(target error) bool { return target == ErrDenied }

// Read returns a *DeniedError when the policy hides path (absolute, or
// relative to the first workspace) from sandboxed commands, else nil.
func (c *Checker) Read(path string) error {
	abs := c.abs(path)
	if rule, ok := c.denied(abs); ok {
		return &DeniedError{Op: "read", Path: abs, Rule: rule}
	}
	return nil
}

// Hidden reports whether Read refuses path: grep and glob leave such files
// out of their results (and count them).
func (c *Checker) Hidden(path string) bool { return c.Read(path) != nil }

// Write returns a *DeniedError when the policy refuses writing path: a
// denyRead path, or a protected path of a workspace or writable root.
func (c *Checker) Write(path string) error {
	abs := c.abs(path)
	if rule, ok := c.denied(abs); ok {
		return &DeniedError{Op: "write", Path: abs, Rule: rule}
	}
	if c.Enabled() && c.policy.Mode == ModeWorkspaceWrite && c.protected(abs) {
		return &DeniedError{Op: "write", Path: abs, Rule: ProtectedRule}
	}
	return nil
}

// abs makes path absolute against the first workspace, cleaned.
func (c *Checker) abs(path string) string {
	path = expandHome(path)
	if !filepath.IsAbs(path) && len(c.roots) > 0 {
		path = filepath.Join(c.roots[0], path)
	}
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return filepath.Clean(path)
}

// forms are p and, when it differs, p with every symlink of its longest
// existing prefix resolved.
func forms(p string) []string {
	r := resolvePrefix(p)
	if r == p {
		return []string{p}
	}
	return []string{p, r}
}

// resolvePrefix resolves the symlinks of p's longest existing prefix and
// appends the rest (a file about to be created resolves by its directory).
func resolvePrefix(p string) string {
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// denied returns the denyRead entry that hides abs (in any of its forms,
// or as a hard link of a denied file).
func (c *Checker) denied(abs string) (string, bool) {
	if len(c.pats) == 0 {
		return "", false
	}
	for _, f := range forms(abs) {
		for _, p := range c.pats {
			if d, ok := c.match(p, f); ok && !c.keptVisible(f, d) {
				return p.entry, true
			}
		}
	}
	return c.linkOfDenied(abs)
}

// keptVisible reports whether f lies in a Visible directory strictly
// inside the denied path d (shown there by the backends).
func (c *Checker) keptVisible(f, d string) bool {
	return slices.ContainsFunc(c.visible, func(k string) bool { return k != d && within(k, d) && within(f, k) })
}

// match reports whether p hides f, and the denied path (f or the ancestor
// of f that p names). A relative pattern applies in the roots only.
func (c *Checker) match(p denyPattern, f string) (string, bool) {
	for _, a := range p.abs {
		if d, ok := ancestorMatch(a, f, "/"); ok {
			return d, true
		}
	}
	if p.rel == "" {
		return "", false
	}
	for _, r := range c.rootForms {
		if within(f, r) && f != r {
			if d, ok := ancestorMatch(p.rel, f, r); ok {
				return d, true
			}
		}
	}
	return "", false
}

// ancestorMatch matches pattern (absolute, or relative to root) against f
// and each of its ancestors below root: a denied directory hides what it
// holds. It returns the ancestor that matched.
func ancestorMatch(pattern, f, root string) (string, bool) {
	for cur := f; within(cur, root) && cur != root; cur = filepath.Dir(cur) {
		name := cur
		if root != "/" {
			name, _ = filepath.Rel(root, cur)
		}
		if ok, _ := doublestar.Match(filepath.ToSlash(pattern), filepath.ToSlash(name)); ok {
			return cur, true
		}
	}
	return "", false
}

// linkOfDenied reports a regular file with more than one link that is the
// same file (device and inode) as a denied one.
func (c *Checker) linkOfDenied(abs string) (string, bool) {
	st, err := os.Stat(abs)
	if err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	id, nlink, ok := fileIdentity(st)
	if !ok || nlink < 2 {
		return "", false
	}
	c.inoOnce.Do(c.collectInodes)
	e, ok := c.inodes[id]
	return e, ok
}

// maxInodeWalk bounds the files of denied directories whose identities the
// hard-link check records.
const maxInodeWalk = 100000

// collectInodes records the identity of every denied file: the entries'
// matches (as the backends expand them) and the files inside denied
// directories, up to maxInodeWalk.
func (c *Checker) collectInodes() {
	c.inodes = map[fileID]string{}
	n := 0
	for _, e := range c.deny {
		one := Policy{Mode: c.policy.Mode, DenyRead: []string{e}}
		req := Request{Policy: one}
		if len(c.roots) > 0 {
			req.Dir = c.roots[0]
			req.Policy.WritableRoots = append(req.Policy.WritableRoots, c.roots[1:]...)
		}
		paths, _ := deniedPaths(req)
		for _, p := range paths {
			_ = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
				if err != nil || n >= maxInodeWalk {
					return filepath.SkipDir
				}
				if d.Type().IsRegular() {
					if info, err := d.Info(); err == nil {
						if id, _, ok := fileIdentity(info); ok {
							c.inodes[id] = e
							n++
						}
					}
				}
				return nil
			})
		}
	}
}

// protected reports whether abs (or its resolved form) is a protected path
// of one of the roots.
func (c *Checker) protected(abs string) bool {
	var resolved []string
	for _, r := range c.roots {
		resolved = append(resolved, resolvePrefix(r))
	}
	for _, f := range forms(abs) {
		for i, r := range c.roots {
			if IsProtected(r, f, c.roots) || IsProtected(resolved[i], f, resolved) {
				return true
			}
		}
	}
	return false
}

// HiddenNote is the line grep and glob add when they left n files out:
// "N files hidden by the sandbox policy (sandbox.denyRead)".
func HiddenNote(n int) string {
	if n == 1 {
		return "1 file hidden by the sandbox policy (sandbox.denyRead)"
	}
	return fmt.Sprintf("%d files hidden by the sandbox policy (sandbox.denyRead)", n)
}
