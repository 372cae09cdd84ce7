package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The in-process checker refuses what the OS sandbox hides, reached by any
// spelling of the path: as written, through `..`, through a symlink, and
// through a hard link (which the backends, masking by path, do not see).
func TestCheckerRefusesDeniedPathsHoweverTheyAreReached(t *testing.T) {
	tmp := t.TempDir()
	home, ws, other := filepath.Join(tmp, "home"), filepath.Join(tmp, "ws"), filepath.Join(tmp, "other")
	files := map[string]string{
		"home/.netrc":                  "machine x password SECRET",
		"home/.ssh/id_ed25519":         "KEY",
		"home/.cargo/credentials.toml": "TOKEN",
		"home/.cargo/config.toml":      "ok",
		"work/app/main.go":             "ok",
		"work/other-job/patch.yml":     "apiKey: SECRET",
		"ws/main.go":                   "package main",
		"ws/sub/.env.local":            "K=V",
		"ws/.git/config":               "[core]",
		"other/.env":                   "outside the roots",
	}
	for name, text := range files {
		p := filepath.Join(tmp, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(ws, "keys")))
	must(t, os.Link(filepath.Join(home, ".netrc"), filepath.Join(ws, "notes.txt")))
	p := Policy{Mode: ModeWorkspaceWrite,
		DenyRead: []string{home + "/.netrc", home + "/.ssh", home + "/.cargo/credentials*", tmp + "/work", "**/.env{,.*}"},
		Visible:  []string{tmp + "/work/app"}}
	c := NewChecker(p, ws)
	for _, tc := range []struct{ path, rule string }{
		{home + "/.netrc", home + "/.netrc"},
		{ws + "/../home/.netrc", home + "/.netrc"},
		{"notes.txt", home + "/.netrc"},
		{"keys/id_ed25519", home + "/.ssh"},
		{home + "/.ssh", home + "/.ssh"},
		{home + "/.cargo/credentials.toml", home + "/.cargo/credentials*"},
		{"sub/.env.local", "**/.env{,.*}"},
		{tmp + "/work/other-job/patch.yml", tmp + "/work"},
		{"", ""},
		{"main.go", ""},
		{home + "/.cargo/config.toml", ""},
		{other + "/.env", ""}, // a relative pattern applies in the workspace and the writable roots only, as in bwrap
		{tmp + "/work/app/main.go", ""},
	} {
		if tc.path == "" {
			continue
		}
		err := c.Read(tc.path)
		var de *DeniedError
		switch {
		case tc.rule == "" && err != nil:
			t.Errorf("Read(%s): %v, want allowed", tc.path, err)
		case tc.rule != "" && (!errors.As(err, &de) || de.Rule != tc.rule || !errors.Is(err, ErrDenied)):
			t.Errorf("Read(%s) = %v, want refused by %q", tc.path, err, tc.rule)
		}
	}
	if err := c.Write(".git/config"); err == nil || err.(*DeniedError).Rule != ProtectedRule {
		t.Errorf("Write(.git/config) = %v, want refused as a protected path", err)
	}
	if err := c.Write("new.go"); err != nil {
		t.Errorf("Write(new.go) = %v", err)
	}
	if err := c.Write("keys/new"); err == nil {
		t.Error("Write(keys/new) through a symlink into a denied directory: allowed")
	}
	off := NewChecker(Policy{Mode: ModeOff, DenyRead: p.DenyRead}, ws)
	if err := off.Read(home + "/.netrc"); err != nil {
		t.Errorf("mode off: %v", err)
	}
	want := `sandbox: reading ` + home + `/.netrc is refused: it is hidden by sandbox.denyRead entry "` + home + `/.netrc" (the subprocess row of harness.yml); sandboxed commands cannot read it either`
	if err := c.Read(home + "/.netrc"); err == nil || err.Error() != want {
		t.Errorf("message:\n got %v\nwant %s", err, want)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
