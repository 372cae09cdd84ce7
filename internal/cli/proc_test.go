package cli_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// testDir is this package's directory, taken before any test runs: a few
// serial tests change the process's working directory while they run
// (t.Chdir), so the binary is built from an absolute path.
var testDir = func() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return wd
}()

// builtDirs are the temporary directories of binaries built by this test
// binary; TestMain removes them at exit.
var builtDirs tempDirs

type tempDirs struct {
	mu   sync.Mutex
	dirs []string
}

func (d *tempDirs) add(dir string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dirs = append(d.dirs, dir)
}

func removeBuiltBinaries() {
	builtDirs.mu.Lock()
	defer builtDirs.mu.Unlock()
	for _, dir := range builtDirs.dirs {
		os.RemoveAll(dir)
	}
	builtDirs.dirs = nil
}

// harnessBinary builds the e2e harness binary once per test run.
func harnessBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "harness-e2e-bin")
		if err != nil {
			binErr = err
			return
		}
		builtDirs.add(dir)
		binPath = filepath.Join(dir, "harness")
		build := exec.Command("go", "build", "-o", binPath, "./testdata/e2ebin")
		build.Dir = testDir
		out, err := build.CombinedOutput()
		if err != nil {
			binErr = err
			binPath = string(out)
		}
	})
	if binErr != nil {
		t.Fatalf("building the harness binary: %v\n%s", binErr, binPath)
	}
	return binPath
}

// processCommand prepares `harness --config CFG args...` in dir with env.
func processCommand(t *testing.T, dir, manifest string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(cfg, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(harnessBinary(t), append([]string{"--config", cfg}, args...)...)
	cmd.Dir = dir
	cmd.Env = env
	return cmd
}

func baseEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8", "TERM=dumb"}
}

// markerSeq numbers the markers of sleepMarker.
var markerSeq atomic.Int64

// sleepMarker returns a `sleep` command of secs seconds and a fraction
// that spells this test process's pid and a sequence number: its command
// line (and the shell's running it) is unique among the processes of
// tests running in parallel here and in other test processes, and all
// markers have the same length, so none is part of another.
func sleepMarker(secs int) string {
	return fmt.Sprintf("sleep %d.%07d%04d", secs, os.Getpid(), markerSeq.Add(1))
}

// processesWith lists pids whose command line contains s.
func processesWith(s string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// sawProcess polls /proc until a process whose command line contains
// marker shows up, for at most d. It does not look twice: a process
// caught in execve (bash exec-ing the command, bwrap exec-ing bash) has an
// empty command line for a moment, so a second look can miss a process
// that is running.
func sawProcess(marker string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if len(processesWith(marker)) != 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Ctrl-C (or SIGTERM) during a long bash call: the process group is
// terminated, the aborted result is logged, and harness exits 130 with
// "harness: interrupted" after cleanup.
func TestRunInterruptDuringBashExits130(t *testing.T) {
	t.Parallel()
	eachStopSignal(t, testRunSignalDuringBash)
}

func testRunSignalDuringBash(t *testing.T, sig syscall.Signal) {
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	marker := sleepMarker(41)
	srv := llmtest.New(t, []llmtest.Turn{toolCall("c1", "bash", `{"command":"`+marker+`; echo never","description":"wait a while"}`)})
	state := t.TempDir()
	interruption{
		dir:      repo,
		manifest: agentManifest(srv.URL, state, ""),
		args:     []string{"run", "-o", "stream-json", "wait"},
		marker:   marker,
		toolCall: true,
	}.interrupt(t, sig)
	result := lastToolResult(t, state)
	if result == nil || !result.IsError || result.Error == nil || result.Error.Code != "ABORTED" {
		t.Fatalf("tool result = %+v", result)
	}
}

// B10: provider keys never reach commands the model runs, while the
// adapter still authenticates with the key it read — also when the key's
// variable has a name no pattern catches (apiKeyEnv, or !env in apiKey).
func TestB10CredentialsNotVisibleToModelCommands(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	for _, tc := range []struct{ name, keyField, keyVar string }{
		{"apiKeyEnv pattern name", "apiKeyEnv: DEEPSEEK_API_KEY", "DEEPSEEK_API_KEY"},
		{"apiKeyEnv any name", "apiKeyEnv: DS_LLM_CRED_X", "DS_LLM_CRED_X"},
		{"apiKey !env any name", "apiKey: !env DS_AUTH_B10", "DS_AUTH_B10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
			srv := llmtest.New(t, []llmtest.Turn{toolCall("c1", "bash", `{"command":"env | sort","description":"print the environment"}`), text("done")})
			m := strings.Replace(agentManifest(srv.URL, t.TempDir(), ""), "apiKey: sk-test", tc.keyField, 1)
			env := append(baseEnv(), tc.keyVar+"=sk-b10-fake-0001", "OPENAI_API_KEY=sk-b10-fake-0002", "AWS_SECRET_ACCESS_KEY=b10fake",
				"GITHUB_TOKEN=ghp_b10fake", "MY_DB_PASSWORD=b10fake", "SAFE_VALUE=keepme")
			cmd := processCommand(t, repo, m, env, "run", "show me the environment")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			if auth := reqs[0].Header.Get("Authorization"); auth != "Bearer sk-b10-fake-0001" {
				t.Fatalf("Authorization = %q", auth)
			}
			w, _ := reqs[1].Wire()
			var out string
			for _, msg := range w.Messages {
				if msg.Role == "tool" {
					out = msg.Text()
				}
			}
			for _, want := range []string{"PATH=", "HOME=", "LANG=", "TERM="} {
				if !strings.Contains(out, want) {
					t.Errorf("env output lacks %s:\n%s", want, out)
				}
			}
			for _, bad := range []string{"b10fake", "sk-b10", tc.keyVar + "="} {
				if strings.Contains(out, bad) {
					t.Errorf("env output leaks %s:\n%s", bad, out)
				}
			}
			if !strings.Contains(out, "SAFE_VALUE=keepme") {
				t.Errorf("SAFE_VALUE (no credential pattern) was dropped:\n%s", out)
			}
		})
	}
}

// harness chat: the first Ctrl-C cancels the running turn (its process is
// stopped) and the session goes on; Ctrl-C at the prompt exits 130.
func TestChatInterruptCancelsTurnThenExits(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	marker := sleepMarker(43)
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("c1", "bash", `{"command":"`+marker+`","description":"wait a while"}`),
		text("still here"),
	})
	cmd := processCommand(t, repo, agentManifest(srv.URL, t.TempDir(), ""), baseEnv(), "chat")
	stdin, _ := cmd.StdinPipe()
	stderr, _ := cmd.StderrPipe()
	stdout := &syncBuffer{}
	cmd.Stdout = stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	waitFor := func(what string) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("stderr closed before %q", what)
				}
				if strings.Contains(l, what) {
					return
				}
			case <-timeout:
				_ = cmd.Process.Kill()
				t.Fatalf("no %q on stderr", what)
			}
		}
	}
	_, _ = stdin.Write([]byte("wait for it\n"))
	waitFor("→ bash")
	if !sawProcess(marker, 30*time.Second) {
		_ = cmd.Process.Kill()
		t.Fatal("the bash command never started")
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	waitFor("(turn cancelled)")
	if left := processesWith(marker); len(left) != 0 {
		t.Fatalf("processes left after the cancelled turn: %v", left)
	}
	_, _ = stdin.Write([]byte("are you there?\n"))
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stdout.String(), "still here") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // back at the prompt
	_ = cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("chat did not exit")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(stdout.String(), "still here") {
		t.Fatalf("exit %d, stdout %q", code, stdout.String())
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// On a terminal, text output shows a live status line on stderr and still
// streams the answer; the line is cleared at the end.
func TestRunOnTerminalShowsStatusLine(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	repo := gitRepo(t, map[string]string{"a.txt": "alpha\n"})
	srv := llmtest.New(t, []llmtest.Turn{toolCall("c1", "read", `{"file_path":"a.txt"}`), text("it says alpha")})
	cmd := processCommand(t, repo, agentManifest(srv.URL, t.TempDir(), ""), baseEnv(), "run", "what does a.txt say?")
	f, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() { _, _ = io.Copy(&out, f); close(done) }()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	<-done
	s := out.String()
	for _, want := range []string{"[step 1 ·", "→ read", "it says alpha", "\x1b[2K"} {
		if !strings.Contains(s, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, s)
		}
	}
}

// lastToolResult is the last tool result recorded in the only session of
// state (the test fails when there is not exactly one session).
func lastToolResult(t *testing.T, state string) *agent.Record {
	t.Helper()
	list, _ := agent.ListSessions(state)
	if len(list) != 1 {
		t.Fatalf("sessions: %+v", list)
	}
	recs, _ := agent.ReadJournal(list[0].Path)
	var result *agent.Record
	for i := range recs {
		if recs[i].Type == agent.RecordToolResult {
			result = &recs[i]
		}
	}
	return result
}
