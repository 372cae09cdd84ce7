package sandbox

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// protectedPaths is the list ProtectedPaths returns a copy of: files a
// program the user runs outside the sandbox trusts and executes (docs/sandbox.md,
// "Host-executed files", cites the source for each).
var protectedPaths = [...]string{
	// The harness: manifest, project patch, agent definitions.
	"harness.yml",
	"harness.patch.yml",
	".harness/",
	// Claude Code settings (hooks), MCP servers.
	".claude/",
	".mcp.json",
	// git: a .git file redirects the repository (gitdir:), config and
	// config.worktree run programs (core.fsmonitor, core.hooksPath,
	// filters, aliases), commondir redirects to another config, hooks run,
	// info/ holds attributes and excludes, worktrees/ holds each linked
	// worktree's commondir and config.worktree, .gitmodules submodule URLs
	// and update commands. The submodules' git directories
	// (.git/modules/NAME) are expanded per request (protectedIn).
	".git",
	".git/config",
	".git/config.worktree",
	".git/commondir",
	".git/info/",
	".git/hooks/",
	".git/worktrees/",
	".gitmodules",
	// Programs that run code on entering a directory or opening a project.
	".envrc",    // direnv (once allowed)
	".vscode/",  // VS Code: tasks with runOn folderOpen, settings naming programs
	"mise.toml", // mise: [hooks] enter/cd, [env] _.source (once trusted; trust is by path)
	".mise.toml",
	"mise.local.toml",
	".mise.local.toml",
	".mise/",
	".config/mise.toml",
	".config/mise/",
}

// gitDirEntries are the entries of a git directory that make git run
// something (relative to it; a trailing slash covers a directory): they
// are protected in the workspace's .git, in each submodule's git
// directory under .git/modules, and in the directory a .git file points
// to when that one is writable.
var gitDirEntries = [...]string{"config", "config.worktree", "commondir", "info/", "hooks/", "worktrees/"}

// ProtectedPaths returns the paths, relative to a workspace and to each
// other directory an agent may write, that an agent must not change
// unasked, because the harness, git or a tool the user runs later trusts
// them and runs what they say outside any sandbox: the harness's manifest
// and project patch, its agent definitions (.harness/), Claude Code
// settings with their hooks and agents (.claude/), MCP servers
// (.mcp.json), git's indirection and configuration (.git as a file,
// config, config.worktree, commondir, info/, hooks/, worktrees/,
// .gitmodules), and the files of tools that run code on entering a
// directory or opening a project (direnv's .envrc, .vscode/, mise's
// configuration). A trailing slash marks a directory, protected with
// everything in it. ".git" itself is protected as a file; a .git
// directory keeps its objects, refs, index, HEAD and logs writable. Each
// call returns a new slice.
//
// It is the one list of both enforcers, which must agree: the sandbox
// binds these paths read-only and undoes what a sandboxed command changed
// in them, and the permission plugin asks before a file tool writes one
// (see [IsProtectedPath]), whatever its allow rules say.
func ProtectedPaths() []string { return append([]string(nil), protectedPaths[:]...) }

// IsProtectedPath reports whether rel, a slash-separated clean path
// relative to a workspace root, is one of [ProtectedPaths], lies inside a
// protected directory, or is git's indirection at any depth: a ".git"
// entry (file or directory) anywhere in the tree, and in any .git
// directory the entries that make git run something (config,
// config.worktree, commondir, info/, hooks/, worktrees/, and the same in
// the submodules' git directories under modules/). It does not allocate.
func IsProtectedPath(rel string) bool {
	for _, p := range protectedPaths {
		if underEntry(rel, p) {
			return true
		}
	}
	// Any .git component: the .git entry itself, or what makes git run
	// something inside a git directory at any depth (sub/.git/config of
	// a nested repository, .git/modules/a/b/hooks/x of a submodule).
	for rest := rel; ; {
		i := strings.Index(rest, ".git")
		if i < 0 {
			return false
		}
		if i == 0 || rest[i-1] == '/' {
			after := rest[i+len(".git"):]
			if after == "" {
				return true
			}
			if after[0] == '/' && gitDirProtected(after[1:]) {
				return true
			}
		}
		rest = rest[i+len(".git"):]
	}
}

// gitDirProtected reports whether rel (relative to a git directory) is
// one of gitDirEntries or inside one, directly or in a submodule's git
// directory under modules/.
func gitDirProtected(rel string) bool {
	for _, e := range gitDirEntries {
		if underEntry(rel, e) {
			return true
		}
	}
	rest, ok := strings.CutPrefix(rel, "modules/")
	if !ok {
		return false
	}
	// modules/NAME/... where NAME may hold slashes (submodule names are
	// paths): protected when any later component starts a git-dir entry.
	for rest != "" {
		if gitDirProtected(rest) {
			return true
		}
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return false
		}
		rest = rest[i+1:]
	}
	return false
}

// underEntry reports whether rel is entry p of the list (a trailing slash:
// the directory or anything in it).
func underEntry(rel, p string) bool {
	if dir, ok := strings.CutSuffix(p, "/"); ok {
		return rel == dir || strings.HasPrefix(rel, p)
	}
	return rel == p
}

// maxGitDirs bounds the git directories (the workspace's, submodules',
// a .git file's target) whose entries one request protects.
const maxGitDirs = 64

// protectedUnderRoot lists the absolute protected paths of one writable
// root: the fixed list, the git-dir entries of each git directory of the
// root (the submodules' under .git/modules, and the target of a .git file
// or a commondir when inside a writable directory), and the files the
// repository's configuration and the user's global one include
// (include.path, includeIf) that lie in a writable directory. Only what
// exists is expanded; the fixed list is returned whether it exists or
// not. writable are the request's writable directories. The second
// result are the git directories found (existing directories, in
// writable ones): the backends pin them (a rename of one away, to put
// another in its place, is refused or undone).
func protectedUnderRoot(root string, writable []string) (paths, gitDirs []string) {
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, p := range protectedPaths {
		add(filepath.Join(root, strings.TrimSuffix(p, "/")))
	}
	inWritable := func(p string) bool {
		return slices.ContainsFunc(writable, func(w string) bool { return within(p, w) })
	}
	// Git directories to expand: .git (a directory), or where a .git file
	// points; then what each one's commondir points to and its modules.
	addGitDir := func(d string) {
		r, err := filepath.EvalSymlinks(d)
		if err != nil || len(gitDirs) >= maxGitDirs || slices.Contains(gitDirs, r) || !inWritable(r) {
			return
		}
		if st, err := os.Stat(r); err == nil && st.IsDir() {
			gitDirs = append(gitDirs, r)
		}
	}
	dotGit := filepath.Join(root, ".git")
	if st, err := os.Lstat(dotGit); err == nil {
		switch {
		case st.IsDir():
			addGitDir(dotGit)
		case st.Mode().IsRegular():
			if t := readPointer(dotGit, "gitdir:"); t != "" {
				addGitDir(t)
			}
		}
	}
	for i := 0; i < len(gitDirs); i++ {
		g := gitDirs[i]
		if g != dotGit {
			for _, e := range gitDirEntries {
				add(filepath.Join(g, strings.TrimSuffix(e, "/")))
			}
		}
		if t := readPointer(filepath.Join(g, "commondir"), ""); t != "" {
			addGitDir(t)
		}
		for _, m := range moduleGitDirs(filepath.Join(g, "modules")) {
			addGitDir(m)
		}
	}
	// Includes: of each repository config here, and of the user's
	// global configuration (an includeIf gitdir: may name a file in the
	// workspace).
	configs := globalGitConfigs()
	for _, g := range gitDirs {
		configs = append(configs, filepath.Join(g, "config"), filepath.Join(g, "config.worktree"))
	}
	for _, c := range configs {
		for _, inc := range includes(c, 0) {
			if inWritable(inc) {
				add(inc)
			}
		}
	}
	return out, gitDirs
}

// globalGitConfigs are the user's global git configuration files
// ($XDG_CONFIG_HOME/git/config or ~/.config/git/config, and ~/.gitconfig).
func globalGitConfigs() []string {
	var out []string
	h, _ := os.UserHomeDir()
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		out = append(out, filepath.Join(x, "git", "config"))
	} else if h != "" {
		out = append(out, filepath.Join(h, ".config", "git", "config"))
	}
	if h != "" {
		out = append(out, filepath.Join(h, ".gitconfig"))
	}
	return out
}

// maxPointer is the largest .git file or commondir read.
const maxPointer = 4096

// readPointer reads a one-line pointer file (a .git file's "gitdir: X",
// a commondir's "X") and returns X made absolute against the file's
// directory; "" when it is missing, larger than maxPointer, or lacks the
// prefix.
func readPointer(file, prefix string) string {
	b, err := readSmall(file, maxPointer)
	if err != nil {
		return ""
	}
	s, ok := strings.CutPrefix(strings.TrimSpace(string(b)), prefix)
	if !ok {
		return ""
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(filepath.Dir(file), s)
	}
	return filepath.Clean(s)
}

// readSmall reads file when it is a regular file of at most limit bytes.
func readSmall(file string, limit int64) ([]byte, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > limit {
		return nil, fs.ErrInvalid
	}
	return os.ReadFile(file)
}

// moduleGitDirs returns the submodules' git directories under dir
// (.git/modules): each directory holding a HEAD file, found at any depth
// (a submodule's name may hold slashes; a nested submodule's git
// directory is under its parent's modules/), without descending into a
// git directory's objects, refs or logs. At most maxGitDirs.
func moduleGitDirs(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if len(out) >= maxGitDirs {
			return filepath.SkipAll
		}
		if st, err := os.Lstat(filepath.Join(p, "HEAD")); err == nil && st.Mode().IsRegular() {
			out = append(out, p)
			// Its own modules/ is walked when it is expanded.
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

// maxIncludeDepth bounds include chains (git's own limit is 10).
const maxIncludeDepth = 10

// maxConfigSize is the largest git config file parsed for includes.
const maxConfigSize = 1 << 20

// includes returns the files a git config file includes (include.path and
// includeIf.*.path, whatever the condition), absolute, and recursively
// what those include. A relative path is relative to the including
// file's directory; "~/" is the home directory.
func includes(file string, depth int) []string {
	if depth >= maxIncludeDepth {
		return nil
	}
	b, err := readSmall(file, maxConfigSize)
	if err != nil {
		return nil
	}
	var out []string
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), maxConfigSize)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			head := strings.TrimSpace(line[1:end])
			name, _, _ := strings.Cut(head, " ")
			name, _, _ = strings.Cut(name, ".")
			section = strings.ToLower(strings.TrimSpace(name))
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		if section != "include" && section != "includeif" {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(key), "path") {
			continue
		}
		val = strings.TrimSpace(val)
		if c := strings.IndexAny(val, "#;"); c >= 0 && !strings.HasPrefix(val, `"`) {
			val = strings.TrimSpace(val[:c])
		}
		val = strings.Trim(val, `"`)
		if val == "" {
			continue
		}
		val = expandHome(val)
		if !filepath.IsAbs(val) {
			val = filepath.Join(filepath.Dir(file), val)
		}
		val = filepath.Clean(val)
		if !slices.Contains(out, val) {
			out = append(out, val)
			out = append(out, includes(val, depth+1)...)
		}
	}
	return out
}

// IsProtected reports whether abs (absolute, clean) is protected in the
// workspace root: [IsProtectedPath] of its path relative to root, or one
// of what the sandbox protects for root beyond the fixed list (the git-dir
// entries of a submodule's or a linked worktree's git directory, the files
// git's configuration includes), with roots as the writable directories.
// The latter may lie outside root: a linked worktree's git directory is
// in the main repository's .git, protected when a writable root holds it,
// as the sandbox protects it for commands. It reads the repository's
// pointers and configuration (a few small files) on each call: for file
// tools, not for hot paths.
func IsProtected(root, abs string, roots []string) bool {
	rel, err := filepath.Rel(root, abs)
	inside := err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	if inside && IsProtectedPath(filepath.ToSlash(rel)) {
		return true
	}
	paths, _ := protectedUnderRoot(root, roots)
	for _, p := range paths[len(protectedPaths):] {
		if within(abs, p) {
			return true
		}
	}
	return false
}
