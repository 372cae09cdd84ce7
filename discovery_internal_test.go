package harness

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/plugins/std"
)

// TestNewWithDiscoveryComposesWhatTheCommandDoes: for one directory (a
// repository with a project patch, a user patch layer and Claude Code
// settings at user, project and local level), New with WithDiscovery and
// the command line compose the same manifest, row for row and source for
// source, through the one discovery path (issue 33 item 3); each layer is
// seen in it.
func TestNewWithDiscoveryComposesWhatTheCommandDoes(t *testing.T) {
	repo, home := t.TempDir(), t.TempDir()
	sub := filepath.Join(repo, "pkg", "deep")
	write := func(p, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(filepath.Join(repo, "harness.patch.yml"), "- id: agent\n  config: {maxSteps: 7}\n")
	write(filepath.Join(home, ".config", "harness", "harness.yml"), "- id: permission\n  config: {deny: [\"bash(curl:*)\"]}\n")
	write(filepath.Join(home, ".claude", "settings.json"), `{"permissions": {"deny": ["Read(~/.aws/**)"]}, "unknownKey": 1}`)
	write(filepath.Join(sub, ".claude", "settings.json"), `{"permissions": {"allow": ["Bash(go test:*)"]}}`)
	write(filepath.Join(sub, ".claude", "settings.local.json"), `{"permissions": {"ask": ["Bash(git push:*)"]}}`)
	env := map[string]string{"HOME": home}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	c := &cli.Env{DefaultManifest: DefaultManifest, LookupEnv: lookup, Stderr: &strings.Builder{},
		Getwd: func() (string, error) { return sub, nil }}
	fromCLI, err := c.LoadManifest()
	if err != nil {
		t.Fatal(err)
	}
	o := options{logger: slog.New(slog.DiscardHandler), env: lookup}
	WithDiscovery(sub).applyHarness(&o)
	fromNew, err := o.manifest()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := core.NewCatalog(std.Plugins()...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := manifest.Dump(fromCLI, cat)
	if err != nil {
		t.Fatal(err)
	}
	b, err := manifest.Dump(fromNew, cat)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Fatalf("the command line and New(WithDiscovery) compose different manifests:\n--- cli\n%s\n--- New\n%s", a, b)
	}
	for _, want := range []string{"maxSteps: 7", "bash(curl:*)", "Bash(go test:*)", "Bash(git push:*)", ".aws/**", "harness.patch.yml"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the composed manifest lacks %q (a layer was not read):\n%s", want, b)
		}
	}
	// Without the option New reads only what the options name.
	plain, err := (&options{logger: slog.New(slog.DiscardHandler), env: lookup}).manifest()
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := manifest.Dump(plain, cat); strings.Contains(string(p), "maxSteps: 7") {
		t.Error("New without WithDiscovery read the project patch")
	}
}
