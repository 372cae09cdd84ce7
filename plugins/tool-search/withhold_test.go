package toolsearch

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/plugins/permission"
	"github.com/dshgo/harness/services/tools"
)

// A deny rule on reading a file also hides it from a grep of the directory
// that holds it (Claude Code applies Read rules to Grep), on both backends,
// and the model is told what was withheld and by which rules.
func TestGrepWithholdsFilesTheReadPolicyDenies(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"credentials.json":     `{"token": "TOKEN sk-live-123"}` + "\n",
		"secrets/key.txt":      "TOKEN one\nTOKEN two\n",
		"src/main.go":          "// TOKEN is read from the environment\n",
		"src/credentials.json": "TOKEN kept\n", // the rule is relative to the working directory
	} {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	backends := []string{"go"}
	if _, err := exec.LookPath("rg"); err == nil {
		backends = append(backends, "ripgrep")
	}
	for _, b := range backends {
		for _, withPolicy := range []bool{true, false} {
			reg := mountWithPermission(t, configFor(dir, b), withPolicy, "read(credentials.json)", "read(secrets/**)")
			o := reg.Execute(context.Background(), tools.Call{ID: "1", Name: "grep", Arguments: `{"pattern":"TOKEN"}`})
			text := tools.TextOf(o.Content)
			if o.IsError {
				t.Fatalf("%s: %s", b, text)
			}
			if !withPolicy {
				if !strings.Contains(text, "sk-live-123") || strings.Contains(text, "withheld") {
					t.Errorf("%s without a read policy: %q", b, text)
				}
				continue
			}
			want := "Found 2 matches\n\nsrc/credentials.json\nLine 1: TOKEN kept\n\nsrc/main.go\nLine 1: // TOKEN is read from the environment\n\n" +
				`(3 matches in 2 files withheld: reading them is denied by permission rules "read(credentials.json)", "read(secrets/**)")`
			if text != want {
				t.Errorf("%s:\n got %q\nwant %q", b, text, want)
			}
		}
	}
}

func TestWithholdEverythingAndNothing(t *testing.T) {
	v := GrepValue{Matches: []Match{{Path: "a", LineNumber: 1, Line: "x"}, {Path: "/abs/b", LineNumber: 2, Line: "y"}, {Path: "a", LineNumber: 3, Line: "z"}}}
	var asked []string
	all := Withhold(v, "/cwd", func(p string) (string, bool) { asked = append(asked, p); return "read", true })
	if w := all.Withheld; len(all.Matches) != 0 || w == nil || w.Files != 2 || w.Matches != 3 || len(w.Rules) != 1 || w.Rules[0] != "read" {
		t.Errorf("all withheld: %+v %+v", all.Matches, all.Withheld)
	}
	if strings.Join(asked, ",") != "/cwd/a,/abs/b" {
		t.Errorf("asked %v, want each file once, resolved against the working directory", asked)
	}
	if got := FormatGrep(all, DefaultCaps()); got != "No matches found\n\n(3 matches in 2 files withheld: reading them is denied by permission rule \"read\")" {
		t.Errorf("%q", got)
	}
	one := GrepValue{Withheld: &WithheldNote{Files: 1, Matches: 1, Rules: []string{"read(a)", "read(b)"}}}
	if got := FormatGrep(one, DefaultCaps()); got != "No matches found\n\n(1 match in 1 file withheld: reading it is denied by permission rules \"read(a)\", \"read(b)\")" {
		t.Errorf("%q", got)
	}
	none := Withhold(v, "/cwd", func(string) (string, bool) { return "", false })
	if len(none.Matches) != 3 || none.Withheld != nil {
		t.Errorf("nothing withheld: %+v", none)
	}
}

func mountWithPermission(t *testing.T, cfg Config, withPolicy bool, deny ...string) *tools.Registry {
	t.Helper()
	if !withPolicy {
		return mountRows(t, cfg)
	}
	var pc permission.Config
	pc.SetDefaults()
	pc.Cwd, pc.Deny = cfg.Cwd, deny
	return mountRows(t, cfg, mountRow{permission.Plugin, &pc})
}
