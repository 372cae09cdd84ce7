package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/internal/cli"
	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines and removes the binaries the tests
// built (the e2e harness and the MCP fixture, each ~100 MB under the OS temp
// dir) whatever the outcome.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { removeBuiltBinaries() }))
}

type helloCfg struct {
	Greeting string `yaml:"greeting"`
	Token    string `yaml:"token" harness:"secret"`
}

var helloKey = core.NewKey[string]("hello")

var (
	hello = core.Define("hello", func(c *core.Context, cfg helloCfg) error {
		return core.Provide(c, helloKey, cfg.Greeting)
	}, core.WithProvides("hello"), core.WithDescription("says hello"))
	user = core.Define("hello-user", func(c *core.Context, _ struct{}) error { return nil }, core.WithInject("hello"))
)

func run(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	return runWithEnv(t, dir, nil, args...)
}

// runWithEnv is run with the environment variables vars. A dir that is
// not "" is the working directory (Env.Getwd; the process never changes
// directory), else the process's.
func runWithEnv(t *testing.T, dir string, vars map[string]string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{
		Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""),
		DefaultManifest: []byte("plugins:\n  - name: hello\n"),
		Plugins:         []core.Plugin{hello, user},
		LookupEnv:       func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		Ctx:             context.Background(),
	}
	if dir != "" {
		env.Getwd = func() (string, error) { return dir, nil }
	}
	code := cli.Run(args, env)
	return out.String(), errb.String(), code
}

func write(t *testing.T, dir, name, s string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckOnEmbeddedDefaultAndOnAFile(t *testing.T) {
	t.Parallel()
	out, errOut, code := run(t, t.TempDir(), "check")
	if code != 0 || out != "ok: 1 plugin active\nmanifest: built-in default\n" {
		t.Fatalf("code %d out %q err %q", code, out, errOut)
	}
	dir := t.TempDir()
	write(t, dir, "harness.yml", "plugins:\n  - name: hello\n  - name: hello-user\n")
	const project = " (project file: it replaces the built-in default; to patch the default instead, write its changes as a patch list in harness.patch.yml)\n"
	// In-process, the working directory (Env.Getwd) is not the process's:
	// the file is named by its absolute path.
	out, errOut, code = run(t, dir, "check")
	if code != 0 || out != "ok: 2 plugins active\nmanifest: "+filepath.Join(dir, "harness.yml")+project {
		t.Fatalf("code %d out %q err %q", code, out, errOut)
	}
	// The binary started in dir names it relative to there.
	write(t, dir, "harness.yml", "plugins:\n  - name: tools\n")
	cmd := exec.Command(harnessBinary(t), "check", "--no-claude-settings")
	cmd.Dir, cmd.Env = dir, baseEnv()
	if b, err := cmd.Output(); err != nil || string(b) != "ok: 1 plugin active\nmanifest: harness.yml"+project {
		t.Fatalf("harness check in %s: %v %q", dir, err, b)
	}
}

func TestBadManifestsExit2WithPlace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ yml, want string }{
		{"plugins:\n  - name: nope\n", `bad.yml:2:11: unknown plugin "nope"`},
		{"plugins:\n  - name: hello\n    config: {greting: hi}\n", `bad.yml:3:14: plugin "hello" (id hello): invalid config: unknown key "greting" (allowed: greeting, token)`},
		{"plugins:\n\t- name: hello\n", "bad.yml:2:1: tab character"},
		{"plugins:\n  - name: hello-user\n", "hello-user (hello-user): pending (waiting for service: hello)"},
	} {
		p := write(t, dir, "bad.yml", tc.yml)
		_, errOut, code := run(t, "", "check", "--config", p)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("yml %q: code %d stderr %q, want %q", tc.yml, code, errOut, tc.want)
		}
	}
}

// A manifest or patch file that cannot be read is a usage error that says
// which file it is and where its name came from.
func TestUnreadableManifestSaysItIsTheManifest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ok := write(t, dir, "ok.yml", "plugins:\n  - name: hello\n")
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
		want string
	}{
		{"--config", nil, []string{"-c", "nope.yml", "check"}, "harness: manifest nope.yml: no such file or directory\n"},
		{"$HARNESS_CONFIG", map[string]string{"HARNESS_CONFIG": "nope.yml"}, []string{"check"}, "harness: manifest nope.yml (from $HARNESS_CONFIG): no such file or directory\n"},
		{"--patch", nil, []string{"-c", ok, "--patch", "nope.yml", "check"}, "harness: patch nope.yml: no such file or directory\n"},
		{"config command", nil, []string{"-c", "nope.yml", "config"}, "harness: manifest nope.yml: no such file or directory\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runWithEnv(t, dir, tc.vars, tc.args...)
			if code != 2 || errOut != tc.want {
				t.Fatalf("code %d stderr %q, want 2 and %q", code, errOut, tc.want)
			}
		})
	}
}

// pluginsJSON runs `harness plugins --json -c manifest` and returns its
// rows and its output, failing t unless it exits 0 with a JSON array.
func pluginsJSON(t *testing.T, manifest string) ([]map[string]any, string) {
	t.Helper()
	out, errOut, code := run(t, "", "plugins", "--json", "-c", manifest)
	if code != 0 {
		t.Fatalf("code %d %s", code, errOut)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err, out)
	}
	return rows, out
}

func TestPluginsJSONHasExactlyTheDocumentedKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := write(t, dir, "h.yml", "plugins:\n  - name: hello-user\n  - name: hello\n    config: {greeting: hi}\n")
	rows, out := pluginsJSON(t, p)
	if len(rows) != 2 {
		t.Fatal(out)
	}
	for _, r := range rows {
		if len(r) != 7 {
			t.Fatalf("keys: %v", r)
		}
		for _, k := range []string{"id", "name", "state", "provides", "injects", "pendingOn", "error"} {
			if _, ok := r[k]; !ok {
				t.Fatalf("missing %s in %v", k, r)
			}
		}
	}
	if rows[0]["state"] != "active" || rows[1]["provides"].([]any)[0] != "hello" {
		t.Fatalf("rows %v", rows)
	}
}

func TestConfigRedactsSecretsAndPatchesApply(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := write(t, dir, "h.yml", "plugins:\n  - name: hello\n    config: {greeting: hi, token: tok-secret-1}\n")
	patch := write(t, dir, "p.yml", "- {id: hello, config: {greeting: bye, token: tok-secret-2}}\n")
	out, errOut, code := run(t, "", "config", "-c", p, "--patch", patch)
	if code != 0 || strings.Contains(out, "tok-secret") || !strings.Contains(out, "greeting: bye") || !strings.Contains(out, "# source: "+patch) {
		t.Fatalf("code %d out:\n%s\nerr %s", code, out, errOut)
	}
}

// config prints the composition even when a row would not boot, then
// lists every problem with its position and exits 2.
func TestConfigReportsInvalidRows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := write(t, dir, "h.yml", "plugins:\n  - name: hello\n    config: {greetng: hi}\n  - {id: u, name: nope}\n  - {id: off, name: nope, disabled: true}\n")
	out, errOut, code := run(t, "", "config", "-c", p)
	if code != 2 || !strings.Contains(out, "greetng: hi") {
		t.Fatalf("code %d out:\n%s", code, out)
	}
	for _, want := range []string{p + `:3:14: plugin "hello" (id hello): invalid config: unknown key "greetng"`, p + `:4:19: unknown plugin "nope" (id u)`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "(id off)") {
		t.Errorf("a disabled row was checked:\n%s", errOut)
	}
}

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	out, _, code := run(t, t.TempDir(), "--version")
	if code != 0 || out != "harness "+cli.Version+"\n" {
		t.Fatalf("--version: code %d out %q", code, out)
	}
}

func TestSchemaAndUsageErrors(t *testing.T) {
	t.Parallel()
	out, _, code := run(t, t.TempDir(), "schema", "hello")
	if code != 0 || !strings.Contains(out, `"writeOnly": true`) || !strings.Contains(out, `"greeting"`) {
		t.Fatalf("code %d out %s", code, out)
	}
	out, _, code = run(t, t.TempDir(), "schema", "--all")
	if code != 0 || !strings.Contains(out, `"plugins"`) {
		t.Fatalf("code %d", code)
	}
	// Without a name: the plugin names, one a line, sorted.
	out, _, code = run(t, t.TempDir(), "schema")
	if code != 0 || out != "hello\nhello-user\n" {
		t.Fatalf("schema without a name: code %d out %q", code, out)
	}
	// The shell completion of its argument offers the same names.
	out, _, code = run(t, t.TempDir(), "__complete", "schema", "hel")
	if code != 0 || !strings.HasPrefix(out, "hello\nhello-user\n:4\n") {
		t.Fatalf("schema completion: code %d out %q", code, out)
	}
	_, errOut, code := run(t, t.TempDir(), "schema", "nope")
	if code != 2 || !strings.Contains(errOut, `unknown plugin "nope"`) {
		t.Fatalf("code %d %s", code, errOut)
	}
	_, _, code = run(t, t.TempDir(), "frobnicate")
	if code != 2 {
		t.Fatalf("unknown command exit %d", code)
	}
	out, _, code = run(t, t.TempDir(), "version")
	if code != 0 || !strings.HasPrefix(out, "harness ") {
		t.Fatalf("version: %d %q", code, out)
	}
}

// Every problem is reported once, as the "harness: FILE:LINE:COL: …" line
// (fx's own error records are not repeated on stderr), and a bad --log-level
// is a usage error rather than a silent fallback.
func TestBootErrorsAreReportedOnceAndLogLevelIsChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := write(t, dir, "bad.yml", "plugins:\n  - name: hello\n    config: {greeting: !env NOPE_UNSET}\n")
	_, errOut, code := run(t, "", "check", "--config", p)
	if code != 2 || strings.Count(errOut, "NOPE_UNSET is not set") != 1 || !strings.HasPrefix(errOut, "harness: "+p+":3:") {
		t.Fatalf("code %d stderr:\n%s", code, errOut)
	}
	_, errOut, code = run(t, t.TempDir(), "--log-level", "loud", "check")
	if code != 2 || !strings.Contains(errOut, `--log-level "loud"`) {
		t.Fatalf("code %d stderr %q", code, errOut)
	}
	if _, _, code = run(t, t.TempDir(), "--log-level", "ERROR", "check"); code != 0 {
		t.Fatalf("--log-level ERROR: code %d", code)
	}
}

func TestPluginsShowsFailedRowsInsteadOfFailing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := write(t, dir, "h.yml", "plugins:\n  - {id: one, name: hello}\n  - {id: two, name: hello}\n")
	rows, _ := pluginsJSON(t, p)
	if rows[0]["state"] != "active" || rows[1]["state"] != "failed" || !strings.Contains(rows[1]["error"].(string), "already provided") {
		t.Fatalf("rows %v", rows)
	}
}

// outsideRepo is an Env.Getwd for tests that use the embedded default
// manifest: a temporary directory, so that discovery does not find this
// repository's harness.yml above the package directory.
func outsideRepo(t *testing.T) func() (string, error) {
	dir := t.TempDir()
	return func() (string, error) { return dir, nil }
}
