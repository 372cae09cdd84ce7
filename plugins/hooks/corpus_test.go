package hooks_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	root "github.com/dshgo/harness"
	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/plugins/hooks"
	"github.com/dshgo/harness/plugins/std"
)

// The Claude Code settings corpus: testdata/claude/<name> holds a project
// as people commit it (.claude/settings.json and its hook scripts, in bash
// with jq and in Python). Each test copies one into a fresh directory and
// runs the CLI on the embedded default manifest there, as a user would.

// corpusProject copies testdata/claude/name into a new directory (a git
// repository, so discovery stops there) and returns it.
func corpusProject(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("testdata", "claude", name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, info.Mode().Perm()|0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// harnessDefault runs the CLI with the embedded default manifest and the
// standard plugins in dir (the process's working directory: the caller
// did t.Chdir(dir), as the rows that default to it need), HOME an empty directory, no other environment.
func harnessDefault(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	home := t.TempDir()
	var out, errOut bytes.Buffer
	env := &cli.Env{
		Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader(""),
		DefaultManifest: root.DefaultManifest, Plugins: std.Plugins(),
		LookupEnv: func(k string) (string, bool) {
			switch k {
			case "HOME":
				return home, true
			case "XDG_STATE_HOME":
				return filepath.Join(home, "state"), true
			}
			return "", false
		},
		Getwd: func() (string, error) { return dir, nil },
		Ctx:   context.Background(),
	}
	code = cli.Run(args, env)
	return code, out.String(), errOut.String()
}

// keyPos is where `"key"` first occurs in text after the first occurrence
// of each of the strings in after (to find a nested key): "LINE:COL".
func keyPos(t *testing.T, text, key string, after ...string) string {
	t.Helper()
	off := 0
	for _, a := range after {
		i := strings.Index(text[off:], a)
		if i < 0 {
			t.Fatalf("%q not in the settings file", a)
		}
		off += i + len(a)
	}
	i := strings.Index(text[off:], `"`+key+`"`)
	if i < 0 {
		t.Fatalf("key %q not in the settings file", key)
	}
	before := text[:off+i]
	line := strings.Count(before, "\n") + 1
	col := len(before) - strings.LastIndex(before, "\n")
	return fmt.Sprintf("%d:%d", line, col)
}

// events reads the hook log of a corpus project: one JSON payload a line.
func events(t *testing.T, dir string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, ".claude", "events.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("events.jsonl: %v: %s", err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// A settings file with every kind of key people have (issue 35 item 1)
// loads: `harness tool bash` runs; what the harness does not implement (top
// level keys, a permissions key, hook events it does not fire, a prompt
// hook, a hook's async key) is one warning each naming FILE:LINE:COL of the
// key; the hook events it fires run with the real permission mode
// (dontAsk, Claude's mode: what would be asked is denied); the settings'
// model names a configured route and becomes the agent's model.
func TestCorpusEveryEventLoads(t *testing.T) {
	// Serial: t.Chdir.
	dir := corpusProject(t, "everyevent")
	t.Chdir(dir)
	file := filepath.Join(dir, ".claude", "settings.json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)

	code, out, stderr := harnessDefault(t, dir, "tool", "bash", bashArgs("ls -a"))
	if code != 0 || !strings.Contains(out, ".claude\n") {
		t.Fatalf("tool bash ls: exit %d\n%s\n%s", code, out, stderr)
	}
	want := map[string]string{ // key path → where
		"includeCoAuthoredBy": keyPos(t, text, "includeCoAuthoredBy"),
		"cleanupPeriodDays":   keyPos(t, text, "cleanupPeriodDays"),
		"statusLine":          keyPos(t, text, "statusLine"),
		"enabledPlugins":      keyPos(t, text, "enabledPlugins"),
		"permissions.disableBypassPermissionsMode": keyPos(t, text, "disableBypassPermissionsMode"),
		"hooks.Stop[0].hooks[0].type":              keyPos(t, text, "type", `"Stop"`),
		"hooks.Stop[0].hooks[1].async":             keyPos(t, text, "async", `"Stop"`),
	}
	var settingsEvents map[string]json.RawMessage
	var top struct {
		Hooks map[string]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	settingsEvents = top.Hooks
	for ev := range settingsEvents {
		supported := false
		for _, n := range hooks.EventNames() {
			supported = supported || n == ev
		}
		if !supported {
			want["hooks."+ev] = keyPos(t, text, ev, `"hooks"`)
		}
	}
	if _, ok := want["hooks.TeammateIdle"]; !ok {
		t.Fatal("TeammateIdle is expected to stay unsupported")
	}
	for key, at := range want {
		line := "harness: warning: claude settings " + file + ":" + at + ": " + key + ": "
		if n := strings.Count(stderr, line); n != 1 {
			t.Errorf("want one warning %q, got %d in:\n%s", line, n, stderr)
		}
	}
	if n := strings.Count(stderr, "harness: warning: claude settings "); n != len(want) {
		t.Errorf("%d settings warnings, want %d:\n%s", n, len(want), stderr)
	}
	if !strings.Contains(stderr, "ANTHROPIC_API_KEY") || strings.Contains(stderr, "sk-not-passed") {
		t.Errorf("the credential-shaped env entry is not named (or its value is shown):\n%s", stderr)
	}

	// The hooks that run were told the real mode.
	evs := events(t, dir)
	seen := map[string]bool{}
	for _, e := range evs {
		name, _ := e["hook_event_name"].(string)
		seen[name] = true
		if e["permission_mode"] != "dontAsk" {
			t.Errorf("%s: permission_mode %v, want dontAsk", name, e["permission_mode"])
		}
	}
	if !seen["PreToolUse"] || !seen["PostToolUse"] {
		t.Errorf("hook events heard: %v, want PreToolUse and PostToolUse", seen)
	}

	// dontAsk: a write no allow rule covers is denied without asking.
	code, out, _ = harnessDefault(t, dir, "tool", "write", `{"file_path":"new.txt","content":"x"}`)
	if code != 1 || !strings.Contains(out, "the permission mode is dontAsk: what would be asked is denied") {
		t.Errorf("write in dontAsk: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); !os.IsNotExist(err) {
		t.Error("the write ran")
	}

	// model: a model name of a configured route becomes the agent's model.
	code, out, stderr = harnessDefault(t, dir, "config")
	if code != 0 || !strings.Contains(out, "model: deepseek/deepseek-v4-pro") {
		t.Errorf("harness config: exit %d, the agent's model is not the settings' route\n%s\n%s", code, out, stderr)
	}
}
