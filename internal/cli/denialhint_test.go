package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/plugins/std"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// The default configuration, headless, text output: a call the policy
// would ask about is denied, and the person reads the whole hint on stderr:
// the rule to add (never clipped) and the --allowed-tools flag that allows
// it for one run. Pasting that flag makes the same call run: a write
// outside the working directory, and a command that leaves the sandbox
// (its rule has the `unsandboxed` suffix, which the flag keeps).
func TestDefaultManifestDenialHintInTextMode(t *testing.T) {
	// Serial: t.Setenv and t.Chdir.
	work, state, outside := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("DEEPSEEK_API_KEY", "sk-test")
	t.Chdir(work)
	dir := filepath.Join(outside, "a-long-directory-name-so-the-rule-is-far-into-the-hint")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, tool, args string, extra ...string) string {
		t.Helper()
		srv := llmtest.New(t, []llmtest.Turn{toolCall("c1", tool, args), text("done")})
		patch := filepath.Join(t.TempDir(), "p.yml")
		if err := os.WriteFile(patch, []byte("- {id: deepseek, config: {baseURL: "+srv.URL+", maxRetries: 0}}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		env := &cli.Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), DefaultManifest: harness.DefaultManifest, Plugins: std.Plugins(),
			LookupEnv: os.LookupEnv, Ctx: context.Background()}
		if code := cli.Run(append(append([]string{"run", "--patch", patch}, extra...), "go"), env); code != 0 {
			t.Fatalf("exit %d\n%s", code, errb.String())
		}
		return errb.String()
	}
	flagRE := regexp.MustCompile(`--allowed-tools '([^']+)'`)
	for _, tc := range []struct {
		name, tool, args, made string
	}{
		{"write outside", "write", mustJSON(t, map[string]string{"file_path": filepath.Join(dir, "notes.txt"), "content": "hello\n"}), filepath.Join(dir, "notes.txt")},
		{"leave the sandbox", "bash", mustJSON(t, map[string]string{"command": "touch " + filepath.Join(dir, "marker"), "description": "mark", "sandbox": "off", "justification": "outside"}), filepath.Join(dir, "marker")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stderr := run(t, tc.tool, tc.args)
			if _, err := os.Stat(tc.made); !os.IsNotExist(err) {
				t.Fatalf("the denied call ran: %v", err)
			}
			m := flagRE.FindAllStringSubmatch(stderr, -1)
			if len(m) == 0 || !strings.Contains(stderr, "was not run.") {
				t.Fatalf("the hint is cut or names no --allowed-tools flag:\n%s", stderr)
			}
			var flags []string
			for _, f := range m {
				if !strings.Contains(stderr, `"`+f[1]+`"`) {
					t.Fatalf("the hint does not name the rule %q in full:\n%s", f[1], stderr)
				}
				flags = append(flags, "--allowed-tools", f[1])
			}
			if stderr := run(t, tc.tool, tc.args, flags...); !fileExists(tc.made) {
				t.Fatalf("with %q the call did not run:\n%s", flags, stderr)
			}
		})
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// `harness tool` gives the same hint as `harness run`, and the flag it
// names works there too: a write outside the working directory is denied
// with the --allowed-tools flag to paste, and pasting it runs the call.
func TestToolCommandDenialHintFlagWorks(t *testing.T) {
	// Serial: t.Setenv and t.Chdir.
	work, outside := t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Chdir(work)
	target := filepath.Join(outside, "notes.txt")
	args := mustJSON(t, map[string]string{"file_path": target, "content": "hello\n"})
	tool := func(extra ...string) (int, string) {
		var out, errb bytes.Buffer
		env := &cli.Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), DefaultManifest: harness.DefaultManifest, Plugins: std.Plugins(),
			LookupEnv: os.LookupEnv, Ctx: context.Background()}
		code := cli.Run(append(append([]string{"tool"}, extra...), "write", args), env)
		return code, out.String() + errb.String()
	}
	code, text := tool()
	if code != 1 || fileExists(target) {
		t.Fatalf("the write outside ran or did not fail (exit %d):\n%s", code, text)
	}
	m := regexp.MustCompile(`--allowed-tools '([^']+)'`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no --allowed-tools flag in the hint:\n%s", text)
	}
	if code, text := tool("--allowed-tools", m[1]); code != 0 || !fileExists(target) {
		t.Fatalf("with --allowed-tools %q: exit %d, ran=%v\n%s", m[1], code, fileExists(target), text)
	}
	if code, text := tool("--permission-mode", "nonsense"); code != 2 {
		t.Fatalf("a bad mode: exit %d\n%s", code, text)
	}
}
