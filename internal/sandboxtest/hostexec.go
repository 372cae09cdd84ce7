package sandboxtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// HostEnv is one attack's world: the workspace the agent writes (a git
// repository unless the attack says otherwise), the home directory of the
// user's git outside the sandbox, and the marker file a planted command
// creates when it runs.
type HostEnv struct {
	// WS is the workspace (symlinks resolved).
	WS string
	// Home is HOME for the host-side git (its ~/.gitconfig).
	Home string
	// Out is a directory outside the workspace (linked worktrees, an
	// upstream repository).
	Out string
	// Marker is the file a planted command touches.
	Marker string
}

// Ran reports whether the planted command ran.
func (e *HostEnv) Ran() bool {
	_, err := os.Lstat(e.Marker)
	return err == nil
}

// Git runs the real git outside any sandbox, as the user would, in dir
// (relative to WS unless absolute), with HOME=Home and no system config;
// it returns the combined output and the error (a failing git is no test
// failure: the attack may have broken the repository).
func (e *HostEnv) Git(tb testing.TB, dir string, args ...string) (string, error) {
	tb.Helper()
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(e.WS, dir)
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + e.Home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C"}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// MustGit is Git that fails the test when git fails (for setup).
func (e *HostEnv) MustGit(tb testing.TB, dir string, args ...string) {
	tb.Helper()
	if out, err := e.Git(tb, dir, args...); err != nil {
		tb.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
}

// Write writes a file relative to WS (or absolute), making its parents.
func (e *HostEnv) Write(tb testing.TB, rel, content string, mode os.FileMode) {
	tb.Helper()
	p := rel
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.WS, rel)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		tb.Fatal(err)
	}
}

// FileWrite is one write of the write file tool: Path relative to the
// workspace, Content with MARK replaced by the marker.
type FileWrite struct {
	Path, Content string
}

// HostExec is one host-executed-file attack: a sandboxed command (or a
// file tool) plants something that a program the user runs later outside
// the sandbox executes.
type HostExec struct {
	// Name names the attack (and the test).
	Name string
	// Plain: the workspace is no repository (the attack creates one).
	Plain bool
	// Setup prepares the workspace (after git init and a first commit,
	// unless Plain), on the host.
	Setup func(tb testing.TB, e *HostEnv)
	// Script is the attack as a bash script run in the workspace, with
	// MARK replaced by the marker path.
	Script string
	// Writes is the same attack through the write file tool (nil: not
	// possible with that tool); the last write is the protected one.
	Writes []FileWrite
	// Host runs what the user runs next outside the sandbox; nil when the
	// program is not installed here (then only the refusal is checked).
	Host func(tb testing.TB, e *HostEnv)
	// Protected is the path (relative to the workspace) the attack must
	// not get to change.
	Protected string
}

// fsmonitor is a git config section whose fsmonitor hook touches MARK.
const fsmonitor = `[core]\n\tfsmonitor = "touch MARK; false"\n`

// fsmonitorText is fsmonitor as file content (for FileWrite).
const fsmonitorText = "[core]\n\tfsmonitor = \"touch MARK; false\"\n"

func gitStatus(tb testing.TB, e *HostEnv) { _, _ = e.Git(tb, ".", "status") }

// HostExecAttacks are the attacks of issue 32 on git's indirection and on
// the other tools that run code on entering a directory or opening a
// project, each with what the user runs next.
func HostExecAttacks() []HostExec {
	return []HostExec{
		{Name: "git-config", Protected: ".git/config",
			Script: `printf '` + fsmonitor + `' >> .git/config`,
			Writes: []FileWrite{{".git/config", fsmonitorText}},
			Host:   gitStatus},
		{Name: "git-commondir", Protected: ".git/commondir",
			Script: `mkdir -p evilgit && cp -r .git/objects .git/refs .git/HEAD evilgit/ && printf '[core]\n\trepositoryformatversion = 0\n' > evilgit/config && printf '` + fsmonitor + `' >> evilgit/config && echo ../evilgit > .git/commondir`,
			Writes: []FileWrite{{"evilgit/HEAD", "ref: refs/heads/main\n"}, {"evilgit/objects/info/x", ""}, {"evilgit/refs/heads/x", ""},
				{"evilgit/config", "[core]\n\trepositoryformatversion = 0\n" + fsmonitorText}, {".git/commondir", "../evilgit\n"}},
			Host: gitStatus},
		{Name: "git-dir-swapped-for-file", Protected: ".git",
			Script: `mv .git .gitY; cp -r .gitY evil2 && printf '` + fsmonitor + `' >> evil2/config && echo "gitdir: evil2" > .git`,
			Host:   gitStatus},
		{Name: "git-config-worktree", Protected: ".git/config.worktree",
			Setup:  func(tb testing.TB, e *HostEnv) { e.MustGit(tb, ".", "config", "extensions.worktreeConfig", "true") },
			Script: `printf '` + fsmonitor + `' > .git/config.worktree`,
			Writes: []FileWrite{{".git/config.worktree", fsmonitorText}},
			Host:   gitStatus},
		{Name: "git-hooks", Protected: ".git/hooks/pre-commit",
			Setup:  func(tb testing.TB, e *HostEnv) { e.Write(tb, ".git/hooks/pre-commit", "#!/bin/sh\ntrue\n", 0o755) },
			Script: `printf '#!/bin/sh\ntouch MARK\n' > .git/hooks/pre-commit; printf '#!/bin/sh\ntouch MARK\n' > .git/hooks/post-commit; chmod +x .git/hooks/post-commit`,
			Writes: []FileWrite{{".git/hooks/pre-commit", "#!/bin/sh\ntouch MARK\n"}},
			Host:   func(tb testing.TB, e *HostEnv) { _, _ = e.Git(tb, ".", "commit", "-q", "--allow-empty", "-m", "next") }},
		{Name: "git-info-attributes", Protected: ".git/info/attributes",
			// The user's own filter, configured globally; the attributes
			// choose which files go through it.
			Setup: func(tb testing.TB, e *HostEnv) {
				e.MustGit(tb, ".", "config", "--global", "filter.mark.clean", "touch MARKER; cat")
			},
			Script: `echo change >> a.txt; mkdir -p .git/info && echo '* filter=mark' > .git/info/attributes`,
			Writes: []FileWrite{{"a.txt", "change\n"}, {".git/info/attributes", "* filter=mark\n"}},
			Host:   func(tb testing.TB, e *HostEnv) { _, _ = e.Git(tb, ".", "add", "-A") }},
		{Name: "git-modules-config", Protected: ".git/modules/sub/config",
			Setup: func(tb testing.TB, e *HostEnv) {
				up := filepath.Join(e.Out, "upstream")
				e.MustGit(tb, e.Out, "init", "-q", "-b", "main", up)
				e.MustGit(tb, up, "commit", "-q", "--allow-empty", "-m", "up")
				e.MustGit(tb, ".", "-c", "protocol.file.allow=always", "submodule", "add", "-q", up, "sub")
				e.MustGit(tb, ".", "commit", "-q", "-m", "sub")
			},
			Script: `printf '` + fsmonitor + `' >> .git/modules/sub/config`,
			Writes: []FileWrite{{".git/modules/sub/config", fsmonitorText}},
			Host:   gitStatus},
		{Name: "git-worktrees-commondir", Protected: ".git/worktrees/wt/commondir",
			Setup: func(tb testing.TB, e *HostEnv) {
				e.MustGit(tb, ".", "worktree", "add", "-q", filepath.Join(e.Out, "wt"))
			},
			Script: `cp -r .git evilc && printf '` + fsmonitor + `' >> evilc/config && echo ../../../evilc > .git/worktrees/wt/commondir`,
			Writes: []FileWrite{{"evilc/HEAD", "ref: refs/heads/main\n"}, {"evilc/objects/info/x", ""}, {"evilc/refs/heads/x", ""},
				{"evilc/config", "[core]\n\trepositoryformatversion = 0\n" + fsmonitorText}, {".git/worktrees/wt/commondir", "../../../evilc\n"}},
			Host: func(tb testing.TB, e *HostEnv) { _, _ = e.Git(tb, filepath.Join(e.Out, "wt"), "status") }},
		{Name: "git-include", Protected: "shared.gitconfig",
			Setup: func(tb testing.TB, e *HostEnv) {
				e.Write(tb, "shared.gitconfig", "[color]\n\tui = auto\n", 0o644)
				e.MustGit(tb, ".", "config", "include.path", "../shared.gitconfig")
			},
			Script: `printf '` + fsmonitor + `' >> shared.gitconfig`,
			Writes: []FileWrite{{"shared.gitconfig", fsmonitorText}},
			Host:   gitStatus},
		{Name: "git-dir-created", Plain: true, Protected: ".git",
			Script: `mkdir -p .git/objects .git/refs && echo 'ref: refs/heads/main' > .git/HEAD && printf '[core]\n\trepositoryformatversion = 0\n' > .git/config && printf '` + fsmonitor + `' >> .git/config`,
			Writes: []FileWrite{{".git/HEAD", "ref: refs/heads/main\n"}, {".git/objects/info/x", ""}, {".git/refs/heads/x", ""},
				{".git/config", "[core]\n\trepositoryformatversion = 0\n" + fsmonitorText}},
			Host: gitStatus},
		{Name: "git-file-created", Plain: true, Protected: ".git",
			Script: `mkdir -p e/objects e/refs && echo 'ref: refs/heads/main' > e/HEAD && printf '[core]\n\trepositoryformatversion = 0\n' > e/config && printf '` + fsmonitor + `' >> e/config && echo 'gitdir: e' > .git`,
			Writes: []FileWrite{{"e/HEAD", "ref: refs/heads/main\n"}, {"e/objects/info/x", ""}, {"e/refs/heads/x", ""},
				{"e/config", "[core]\n\trepositoryformatversion = 0\n" + fsmonitorText}, {".git", "gitdir: e\n"}},
			Host: gitStatus},
		{Name: "direnv-envrc", Protected: ".envrc",
			Script: `echo 'touch MARK' > .envrc`, Writes: []FileWrite{{".envrc", "touch MARK\n"}}},
		{Name: "vscode-tasks", Protected: ".vscode/tasks.json",
			Script: `mkdir -p .vscode && echo '{"version":"2.0.0","tasks":[{"label":"x","type":"shell","command":"touch MARK","runOptions":{"runOn":"folderOpen"}}]}' > .vscode/tasks.json`,
			Writes: []FileWrite{{".vscode/tasks.json", `{"version":"2.0.0","tasks":[{"label":"x","type":"shell","command":"touch MARK","runOptions":{"runOn":"folderOpen"}}]}`}}},
		{Name: "mise-hooks", Protected: "mise.toml",
			Script: `printf '[hooks]\nenter = "touch MARK"\n' > mise.toml`, Writes: []FileWrite{{"mise.toml", "[hooks]\nenter = \"touch MARK\"\n"}}},
	}
}

// NewHostEnv prepares a's world in fresh temporary directories: a git
// repository with one commit (branch main, a tracked a.txt) unless
// a.Plain, then a.Setup. MARKER in a.Setup's git config values is the
// marker path.
func NewHostEnv(tb testing.TB, a HostExec) *HostEnv {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("git not installed in CI: %v", err)
		}
		tb.Skipf("git not installed: %v", err)
	}
	eval := func(d string) string {
		r, err := filepath.EvalSymlinks(d)
		if err != nil {
			tb.Fatal(err)
		}
		return r
	}
	e := &HostEnv{WS: eval(tb.TempDir()), Home: eval(tb.TempDir()), Out: eval(tb.TempDir())}
	e.Marker = filepath.Join(e.Out, "RAN")
	e.Write(tb, filepath.Join(e.Home, ".gitconfig"), "[user]\n\tname = t\n\temail = t@example.invalid\n[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n", 0o644)
	if !a.Plain {
		e.MustGit(tb, ".", "init", "-q")
		e.Write(tb, "a.txt", "a\n", 0o644)
		e.MustGit(tb, ".", "add", "a.txt")
		e.MustGit(tb, ".", "commit", "-q", "-m", "first")
	}
	if a.Setup != nil {
		a.Setup(tb, e)
		// A setup's config may name the marker as MARKER.
		cfg := filepath.Join(e.Home, ".gitconfig")
		b, err := os.ReadFile(cfg)
		if err != nil {
			tb.Fatal(err)
		}
		e.Write(tb, cfg, strings.ReplaceAll(string(b), "MARKER", e.Marker), 0o644)
	}
	return e
}

// AttackScript is a.Script for e (temporary paths need no quoting).
func (a HostExec) AttackScript(e *HostEnv) string {
	return strings.ReplaceAll(a.Script, "MARK", e.Marker)
}

// AttackWrites are a.Writes for e.
func (a HostExec) AttackWrites(e *HostEnv) []FileWrite {
	out := make([]FileWrite, len(a.Writes))
	for i, w := range a.Writes {
		out[i] = FileWrite{Path: w.Path, Content: strings.ReplaceAll(w.Content, "MARK", e.Marker)}
	}
	return out
}
