package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/internal/cli"
)

// runIn runs the CLI in-process with the hello plugins, the working
// directory wd (Env.Getwd; the process never changes directory) and the
// environment vars only (no HOME unless given: the real user's files are
// never read).
func runIn(t *testing.T, wd string, vars map[string]string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{
		Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""),
		DefaultManifest: []byte("plugins:\n  - name: hello\n    config: {greeting: from-default}\n"),
		Plugins:         []core.Plugin{hello, user},
		LookupEnv:       func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		Getwd:           func() (string, error) { return wd, nil },
		Ctx:             context.Background(),
	}
	code := cli.Run(append(args, "--no-claude-settings"), env)
	return out.String(), errb.String(), code
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// Discovery: the nearest harness.yml from the working directory up to the
// repository root (the directory holding .git) replaces the default, and
// check says so; a harness.yml above the root, or above a directory that
// is in no repository, is not read.
func TestConfigDiscoveryWalksUpToTheRepositoryRoot(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	repo := filepath.Join(top, "repo")
	sub := filepath.Join(repo, "a", "b")
	mkdirs(t, filepath.Join(repo, ".git"), sub)
	write(t, top, "harness.yml", "plugins:\n  - name: hello\n    config: {greeting: from-above-the-root}\n")

	// Nothing in the repository: the built-in default.
	out, errOut, code := runIn(t, sub, nil, "check")
	if code != 0 || out != "ok: 1 plugin active\nmanifest: built-in default\n" {
		t.Fatalf("no project file: exit %d %q %q", code, out, errOut)
	}
	// The repository root's harness.yml, found from a/b.
	proj := write(t, repo, "harness.yml", "plugins:\n  - name: hello\n    config: {greeting: from-project}\n  - name: hello-user\n")
	out, errOut, code = runIn(t, sub, nil, "check")
	if code != 0 || !strings.HasPrefix(out, "ok: 2 plugins active\nmanifest: "+proj+" (project file: it replaces the built-in default; to patch the default instead, write its changes as a patch list in harness.patch.yml)\n") {
		t.Fatalf("project file: exit %d %q %q", code, out, errOut)
	}
	// A nearer one wins.
	near := write(t, filepath.Join(repo, "a"), "harness.yml", "plugins:\n  - name: hello\n    config: {greeting: from-a}\n")
	out, _, code = runIn(t, sub, nil, "config")
	if code != 0 || !strings.Contains(out, "greeting: from-a") || !strings.Contains(out, near) {
		t.Fatalf("nearest file: exit %d %q", code, out)
	}
	// Outside any repository only the working directory itself is looked at.
	plain := filepath.Join(top, "plain", "dir")
	mkdirs(t, plain)
	write(t, filepath.Join(top, "plain"), "harness.yml", "plugins:\n  - name: hello\n    config: {greeting: from-parent}\n")
	out, _, code = runIn(t, plain, nil, "config")
	if code != 0 || !strings.Contains(out, "greeting: from-default") {
		t.Fatalf("outside a repository: exit %d %q", code, out)
	}
}

// Layers, in order: the manifest (built-in default or project file), the
// project's harness.patch.yml, the user's $XDG_CONFIG_HOME/harness/harness.yml
// (else ~/.config/harness/harness.yml), then --patch files; a later layer
// wins, and check lists them.
func TestConfigLayersProjectPatchUserPatchAndFlags(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	mkdirs(t, filepath.Join(repo, ".git"))
	xdg, home := t.TempDir(), t.TempDir()
	mkdirs(t, filepath.Join(xdg, "harness"), filepath.Join(home, ".config", "harness"))

	projPatch := write(t, repo, "harness.patch.yml", "- {id: hello, config: {greeting: from-project-patch}}\n")
	out, errOut, code := runIn(t, repo, nil, "config")
	if code != 0 || !strings.Contains(out, "greeting: from-project-patch") {
		t.Fatalf("project patch: exit %d %q %q", code, out, errOut)
	}
	userPatch := write(t, filepath.Join(xdg, "harness"), "harness.yml", "- {id: hello, config: {greeting: from-user}}\n")
	vars := map[string]string{"XDG_CONFIG_HOME": xdg, "HOME": home}
	out, _, code = runIn(t, repo, vars, "config")
	if code != 0 || !strings.Contains(out, "greeting: from-user") {
		t.Fatalf("user patch: exit %d %q", code, out)
	}
	flagPatch := write(t, t.TempDir(), "p.yml", "- {id: hello, config: {greeting: from-flag}}\n")
	out, _, code = runIn(t, repo, vars, "config", "--patch", flagPatch)
	if code != 0 || !strings.Contains(out, "greeting: from-flag") {
		t.Fatalf("--patch: exit %d %q", code, out)
	}
	out, errOut, code = runIn(t, repo, vars, "check", "--patch", flagPatch)
	want := "ok: 1 plugin active\nmanifest: built-in default\npatch: " + projPatch + " (project patch)\npatch: " + userPatch + " (user)\npatch: " + flagPatch + " (--patch)\n"
	if code != 0 || out != want {
		t.Fatalf("check: exit %d\n%s\nwant\n%s\n%s", code, out, want, errOut)
	}
	// Without XDG_CONFIG_HOME: ~/.config/harness/harness.yml.
	homePatch := write(t, filepath.Join(home, ".config", "harness"), "harness.yml", "- {id: hello, config: {greeting: from-home}}\n")
	out, _, code = runIn(t, repo, map[string]string{"HOME": home}, "check")
	if code != 0 || !strings.Contains(out, "patch: "+homePatch+" (user)\n") {
		t.Fatalf("HOME: exit %d %q", code, out)
	}
	// A user file that is not a patch list names itself.
	write(t, filepath.Join(home, ".config", "harness"), "harness.yml", "plugins:\n  - name: hello\n")
	_, errOut, code = runIn(t, repo, map[string]string{"HOME": home}, "check")
	if code != 2 || !strings.Contains(errOut, homePatch) {
		t.Fatalf("bad user patch: exit %d %q", code, errOut)
	}
}
