package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// needTools skips the test when a program it drives is missing, and fails
// it when CI is set (.ci/run installs them).
func needTools(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			missing(t, fmt.Sprintf("%s is not installed (%v)", n, err))
		}
	}
}

// missing skips (or, in CI, fails) a test whose toolchain is not here.
func missing(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s: CI must have it (.ci/run installs the e2e toolchains)", why)
	}
	t.Skip(why)
}

// project is one case's directories, all under suiteDir, outside /tmp:
// the workspace (the project, the harness's working directory), a fresh
// HOME (its user configuration, and the user's own caches that must stay
// unwritten) and the harness's state directory (session logs).
type project struct {
	t     *testing.T
	dir   string
	home  string
	state string
	// path is the harness's PATH (default: this process's).
	path string
	// patch is more of the user's patch (~/.config/harness/harness.yml)
	// after the model's row: YAML list items, as a user writes them.
	patch string
	// extraEnv is more of the harness's environment (KEY=value).
	extraEnv []string
	// args are flags of `harness run` before the prompt (--continue).
	args []string
}

// newProject writes files (relative paths) into a fresh workspace and
// makes the case's HOME: a git identity, and a user Go build cache with
// one entry, which the sandboxed commands must neither write nor use.
func newProject(t *testing.T, files map[string]string) *project {
	t.Helper()
	root, err := os.MkdirTemp(suiteDir, strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())+"-")
	if err != nil {
		t.Fatal(err)
	}
	p := &project{t: t, dir: filepath.Join(root, "project"), home: filepath.Join(root, "home"), state: filepath.Join(root, "state"), path: os.Getenv("PATH")}
	for name, content := range files {
		writeFile(t, filepath.Join(p.dir, name), content)
	}
	writeFile(t, filepath.Join(p.home, ".gitconfig"), "[user]\n\tname = E2E User\n\temail = e2e@example.com\n[init]\n\tdefaultBranch = main\n")
	writeFile(t, filepath.Join(p.home, ".cache", "go-build", "README"), "the user's own build cache\n")
	return p
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	mode := os.FileMode(0o644)
	if strings.HasPrefix(content, "#!") {
		mode = 0o755
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// cacheRoot is the sandbox's cache root the harness uses: the suite's
// XDG_CACHE_HOME (shared by every case) + harness/sandbox.
func cacheRoot() string { return filepath.Join(suiteDir, "cache", "harness", "sandbox") }

// env is the harness's environment: a user's, with HOME the case's, the
// provider key of the default manifest, and the suite's XDG_CACHE_HOME.
// Go's proxy settings are passed on as a user has them.
func (p *project) env() []string {
	env := []string{
		"PATH=" + p.path, "HOME=" + p.home, "LANG=C.UTF-8", "TERM=dumb",
		"XDG_CACHE_HOME=" + filepath.Join(suiteDir, "cache"), "XDG_STATE_HOME=" + p.state,
		"DEEPSEEK_API_KEY=sk-e2e-not-a-real-key",
	}
	for _, k := range []string{"GOPROXY", "GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GOFLAGS", "GOTOOLCHAIN", "CI"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, p.extraEnv...)
}

// outcome is one harness run.
type outcome struct {
	code           int
	stdout, stderr string
	srv            *llmtest.Server
}

// run runs `harness run PROMPT` in the workspace (the embedded default
// manifest: no harness.yml there; headless: stdin is not a terminal; no
// -y) against a scripted model: the user patch
// (~/.config/harness/harness.yml) points the default DeepSeek row at it,
// as a user with a proxy would. It checks that the run wrote nothing in
// HOME (the user's caches and configuration included) and that the model
// got every turn of its script.
func (p *project) run(prompt string, turns ...llmtest.Turn) outcome {
	t := p.t
	t.Helper()
	srv := llmtest.New(t, turns, llmtest.WithCheck(llmtest.DeepSeekReasoningCheck))
	writeFile(t, filepath.Join(p.home, ".config", "harness", "harness.yml"), "- {id: deepseek, config: {baseURL: '"+srv.URL+"', maxRetries: 0}}\n"+p.patch)
	before := snapshot(t, p.home)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, harnessBinary(t), append(append([]string{"run"}, p.args...), prompt)...)
	cmd.Dir, cmd.Env = p.dir, p.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("harness run %q: %.1fs", prompt, time.Since(start).Seconds())
	o := outcome{stdout: stdout.String(), stderr: stderr.String(), srv: srv}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		o.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("harness run: %v\nstderr: %s", err, o.stderr)
	}
	if changed := diffSnapshots(before, snapshot(t, p.home)); len(changed) > 0 {
		t.Errorf("the run wrote outside the workspace and the cache root, in HOME: %s", strings.Join(changed, ", "))
	}
	if n := srv.Remaining(); n != 0 {
		t.Errorf("the model's script has %d turns left: the run stopped early (exit %d)\nstdout: %s\nstderr: %s", n, o.code, o.stdout, o.stderr)
	}
	return o
}

// toolResult is what the model was sent as the result of call id.
func (o outcome) toolResult(t *testing.T, id string) string {
	t.Helper()
	reqs := o.srv.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		w, err := reqs[i].Wire()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range w.Messages {
			if m.Role == "tool" && m.ToolCallID == id {
				return m.Text()
			}
		}
	}
	t.Fatalf("the model never got a result for %s\nstderr: %s", id, o.stderr)
	return ""
}

// mustSucceed fails unless the run exited 0 with the model's last answer.
func (o outcome) mustSucceed(t *testing.T, answer string) {
	t.Helper()
	if o.code != 0 || strings.TrimSpace(o.stdout) != answer {
		t.Fatalf("exit %d, stdout %q, want 0 and %q\nstderr: %s", o.code, o.stdout, answer, o.stderr)
	}
}

// The scripted model's turns. Each thinks first (DeepSeek's default is
// thinking mode, and the harness must send the reasoning back).

func call(id, name string, args map[string]any) llmtest.Turn {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return llmtest.Calls(llmtest.Call{ID: id, Name: name, Args: string(b)}).WithReasoning("Next: " + name + ".")
}

func read(id, path string) llmtest.Turn {
	return call(id, "read", map[string]any{"file_path": path})
}

func edit(id, path, old, repl string) llmtest.Turn {
	return call(id, "edit", map[string]any{"file_path": path, "old_string": old, "new_string": repl})
}

func bash(id, command, description string) llmtest.Turn {
	return call(id, "bash", map[string]any{"command": command, "description": description})
}

// timedBash runs command in bash and has it print its wall time
// ("elapsed 1.234") on stderr: how the suite measures a warm run.
func timedBash(id, command, description string) llmtest.Turn {
	return bash(id, "TIMEFORMAT='elapsed %R'; time { "+command+"; }", description)
}

func answer(text string) llmtest.Turn { return llmtest.Reply(text).WithReasoning("Done.") }

var elapsedRE = regexp.MustCompile(`elapsed (\d+\.\d+)`)

// elapsed is the wall time a timedBash result printed.
func elapsed(t *testing.T, result string) float64 {
	t.Helper()
	m := elapsedRE.FindAllStringSubmatch(result, -1)
	if m == nil {
		t.Fatalf("no timing in the result:\n%s", result)
	}
	s, _ := strconv.ParseFloat(m[len(m)-1][1], 64)
	return s
}

// reportWarm prints the second run's time against the first's (a
// measurement, not an assertion: cache hits are asserted by each case).
func reportWarm(t *testing.T, what string, first, second float64) {
	t.Helper()
	ratio := second / max(first, 0.001)
	t.Logf("warm: %s: first %.3fs, second %.3fs, ratio second/first %.2f", what, first, second, ratio)
}

// snapshot records every path under dir with its type, mode, size and
// content hash.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		v := st.Mode().String()
		if st.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += fmt.Sprintf(" %d %x", len(b), sha256.Sum256(b))
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// diffSnapshots names the paths added, removed or changed.
func diffSnapshots(before, after map[string]string) []string {
	var out []string
	for p, v := range after {
		if w, ok := before[p]; !ok {
			out = append(out, "created "+p)
		} else if w != v {
			out = append(out, "changed "+p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, "removed "+p)
		}
	}
	slices.Sort(out)
	return out
}

// inDir runs a command in dir outside the harness (the test's own check
// of the project) and returns its combined output.
func inDir(t *testing.T, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}
