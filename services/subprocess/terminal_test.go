//go:build unix

package subprocess

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func termSpec(argv ...string) TerminalSpec {
	return TerminalSpec{Argv: argv, Dir: os.TempDir(), TerminalType: "dumb", Cols: 80, Rows: 24, Grace: 500 * time.Millisecond}
}

// transcript reads a terminal's output to the end and returns it with the
// outcome.
func transcript(t testing.TB, term *Terminal) (string, Outcome) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := term.Read(ctx, buf)
		b.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read: %v (so far %q)", err, b.String())
		}
	}
	out, err := term.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), out
}

// readUntil reads output until it contains want.
func readUntil(t testing.TB, term *Terminal, acc *strings.Builder, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	buf := make([]byte, 4096)
	for !strings.Contains(acc.String(), want) {
		n, err := term.Read(ctx, buf)
		acc.Write(buf[:n])
		if err != nil {
			t.Fatalf("waiting for %q: %v; got %q", want, err, acc.String())
		}
	}
}

// B07: EIO at exit is the normal end; the last bytes (even without a
// newline) arrive before Done, every run.
func TestB07TerminalFinalBytesNeverLost(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, Options{})
	runs := 200
	if testing.Short() {
		runs = 20
	}
	var wg sync.WaitGroup
	for _, tc := range []struct {
		script string
		check  func(string) bool
	}{
		{`printf 'line1\nline2\nlast-no-newline'`, func(s string) bool { return s == "line1\r\nline2\r\nlast-no-newline" }},
		{`head -c 65536 /dev/urandom | base64 -w0; echo`, func(s string) bool { return len(s) == 87384+2 && strings.HasSuffix(s, "\r\n") }},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range runs {
				term, err := rt.SpawnTerminal(termSpec("bash", "-c", tc.script))
				if err != nil {
					t.Error(err)
					return
				}
				// Wait first: Done must imply the whole transcript is queued.
				if _, err := term.Wait(context.Background()); err != nil {
					t.Error(err)
					return
				}
				got, out := transcript(t, term)
				if out.ExitCode == nil || *out.ExitCode != 0 || !tc.check(got) {
					t.Errorf("run %d of %q: outcome %v, transcript %d bytes, tail %q", i, tc.script, out, len(got), got[max(0, len(got)-20):])
					return
				}
				if err := term.Terminate(context.Background()); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
}

// B08: a background job that ignores SIGHUP keeps the PTY open, but Done
// keys on the shell's exit; Terminate then kills the job (SIGKILL after
// grace) and no zombie child of ours remains. (The shell waits for the job
// to create a file once its trap is installed, so the kernel's hangup at
// the shell's exit cannot beat the trap however loaded the machine is.)
func TestB08BackgroundJobDoesNotHoldExit(t *testing.T) {
	t.Parallel()
	forEachIsolation(t, testB08BackgroundJobDoesNotHoldExit)
}

func testB08BackgroundJobDoesNotHoldExit(t *testing.T, rt *Runtime) {
	m := marker(3605)
	ready := filepath.Join(t.TempDir(), "trapped")
	term, err := rt.SpawnTerminal(termSpec("bash", "-c", "(trap '' HUP TERM; : > "+ready+"; sleep "+m+") & "+
		"for i in $(seq 1000); do [ -e "+ready+" ] && break; sleep 0.01; done; echo started"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	got, out := transcript(t, term)
	if ctx.Err() != nil || out.ExitCode == nil || *out.ExitCode != 0 || got != "started\r\n" {
		t.Fatalf("outcome %v transcript %q (ctx %v)", out, got, ctx.Err())
	}
	waitFor(t, func() bool { return len(liveSleeps(m)) == 1 })
	if err := term.Terminate(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertNoSurvivor(t, "sleep "+m, 0)
	// Our shell was reaped: it is no longer a child of ours, zombie or not.
	// (Only its pid is checked: tests running in parallel have children of
	// their own that may be between exit and reap at this moment.)
	ps, _ := exec.Command("ps", "-o", "stat=,ppid=", "-p", strconv.Itoa(term.Pid())).Output()
	if f := strings.Fields(string(ps)); len(f) == 2 && strings.HasPrefix(f[0], "Z") && f[1] == strconv.Itoa(os.Getpid()) {
		t.Fatalf("shell %d left as a zombie child: %q", term.Pid(), ps)
	}
}

// B09: the initial size is the requested one (no EPERM from process-group
// flags), Resize reaches the program, and SIGWINCH is delivered.
func TestB09TerminalSizeAndResize(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, Options{})
	t.Run("stty size before and after resize", func(t *testing.T) {
		s := termSpec("bash", "-c", "stty size; read -r _; stty size")
		s.Cols, s.Rows = 132, 40
		term, err := rt.SpawnTerminal(s)
		if err != nil {
			t.Fatal(err)
		}
		var acc strings.Builder
		readUntil(t, term, &acc, "40 132\r\n")
		if err := term.Resize(context.Background(), 100, 30); err != nil {
			t.Fatal(err)
		}
		if err := term.Write(context.Background(), "\n"); err != nil {
			t.Fatal(err)
		}
		rest, out := transcript(t, term)
		if got := acc.String() + rest; got != "40 132\r\n\r\n30 100\r\n" || *out.ExitCode != 0 {
			t.Fatalf("transcript %q outcome %v", got, out)
		}
		if err := term.Resize(context.Background(), 90, 20); !errors.Is(err, ErrTerminalExited) {
			t.Fatalf("Resize after exit = %v", err)
		}
		if err := term.Write(context.Background(), "x"); !errors.Is(err, ErrTerminalExited) || err.Error() != "terminal process has exited" {
			t.Fatalf("Write after exit = %v", err)
		}
	})
	t.Run("SIGWINCH before end", func(t *testing.T) {
		term, err := rt.SpawnTerminal(termSpec("bash", "-c", "trap 'echo WINCH' WINCH; echo ready; sleep 1; sleep 1; echo end"))
		if err != nil {
			t.Fatal(err)
		}
		var acc strings.Builder
		readUntil(t, term, &acc, "ready\r\n")
		if err := term.Resize(context.Background(), 120, 50); err != nil {
			t.Fatal(err)
		}
		rest, _ := transcript(t, term)
		if got := acc.String() + rest; got != "ready\r\nWINCH\r\nend\r\n" {
			t.Fatalf("transcript %q", got)
		}
	})
}

// An interactive shell: foreground inspection and signalling, activity with
// shell integration, and Terminate reaching the whole session including a
// disowned job.
func TestTerminalInteractiveShell(t *testing.T) {
	forEachIsolation(t, testTerminalInteractiveShell)
}

func testTerminalInteractiveShell(t *testing.T, rt *Runtime) {
	home := t.TempDir() // no ~/.bashrc surprises
	m := marker(3611)
	s := termSpec("bash", "-i")
	s.ShellActivity = true
	s.Env = map[string]string{"HOME": home, "PS1": "$ "}
	term, err := rt.SpawnTerminal(s)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var acc strings.Builder
	waitActivity := func(want ActivityState) Activity {
		t.Helper()
		var a Activity
		waitFor(t, func() bool { a, _ = term.InspectActivity(ctx); return a.State == want })
		return a
	}
	idle := waitActivity(ActivityIdle)
	fg, err := term.InspectForeground(ctx)
	if err != nil || fg.ProcessGroupID != term.Pid() {
		t.Fatalf("foreground at prompt = %+v, %v", fg, err)
	}
	if _, err := term.SignalForeground(ctx, "SIGKILL"); err == nil || err.Error() != "refusing to SIGKILL the terminal shell; terminate the terminal session instead" {
		t.Fatalf("SIGKILL to shell = %v", err)
	}
	if err := term.Write(ctx, "sleep "+m+"\n"); err != nil {
		t.Fatal(err)
	}
	busy := waitActivity(ActivityBusy)
	if busy.Revision <= idle.Revision {
		t.Fatalf("revision did not advance: %d then %d", idle.Revision, busy.Revision)
	}
	waitFor(t, func() bool {
		fg, err = term.InspectForeground(ctx)
		return err == nil && fg.ProcessGroupID != term.Pid() && strings.HasPrefix(fg.Command, "sleep "+m)
	})
	waitFor(t, func() bool { fg, _ = term.InspectForeground(ctx); return fg != nil && !fg.InputWaiting })
	pgid, err := term.SignalForeground(ctx, "SIGINT")
	if err != nil || pgid != fg.ProcessGroupID {
		t.Fatalf("SignalForeground = %d, %v", pgid, err)
	}
	waitActivity(ActivityIdle)
	fg, _ = term.InspectForeground(ctx)
	if fg.ProcessGroupID != term.Pid() {
		t.Fatalf("after SIGINT foreground = %+v", fg)
	}
	waitFor(t, func() bool { fg, _ = term.InspectForeground(ctx); return fg.InputWaiting })
	if _, err := term.SignalForeground(ctx, "SIGSTOP"); err == nil {
		t.Fatal("SIGSTOP allowed")
	}
	if err := term.Write(ctx, "setsid sleep "+m+" & disown; sleep "+m+" & disown; echo bg-$((6*7))\n"); err != nil {
		t.Fatal(err)
	}
	readUntil(t, term, &acc, "bg-42")
	waitFor(t, func() bool { return len(liveSleeps(m)) == 2 })
	if err := term.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	if rt.Isolation() == IsolationCgroup {
		assertNoSurvivor(t, "sleep "+m, 0)
	} else {
		escapees := liveSleeps(m)
		for _, pid := range escapees {
			_ = syscallKill(pid)
		}
		if len(escapees) != 1 {
			t.Fatalf("process-group isolation: %d survivors, want only the setsid escapee", len(escapees))
		}
	}
	a, _ := term.InspectActivity(ctx)
	if a.State != ActivityIdle {
		t.Fatalf("activity after terminate %v", a)
	}
	if _, err := term.InspectForeground(ctx); !errors.Is(err, ErrTerminalExited) {
		t.Fatalf("InspectForeground after exit = %v", err)
	}
	if err := term.Terminate(ctx); err != nil {
		t.Fatalf("second Terminate = %v", err)
	}
}

func TestTerminalWithoutIntegrationIsUnknownAtPrompt(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := termSpec("bash", "--norc", "-i")
	s.ShellActivity = true // ignored: argv is not exactly [bash, -i]
	term, err := rt.SpawnTerminal(s)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		fg, err := term.InspectForeground(context.Background())
		return err == nil && fg.InputWaiting
	})
	if a, _ := term.InspectActivity(context.Background()); a.State != ActivityUnknown {
		t.Fatalf("activity %v", a)
	}
	if err := term.Terminate(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestTerminalEnvAndValidation(t *testing.T) {
	t.Setenv("DEEPSEEK_API_KEY", "sk-b10-fake-term")
	t.Setenv("HARNESS_STALE", "b10fake")
	rt := newRuntime(t, Options{})
	s := termSpec("bash", "-c", `echo "TERM=$TERM"; env | grep -c b10 || true`)
	s.TerminalType = "xterm-256color"
	s.Env = map[string]string{"TERM": "ignored"}
	term, err := rt.SpawnTerminal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := transcript(t, term); got != "TERM=xterm-256color\r\n0\r\n" {
		t.Fatalf("transcript %q", got)
	}
	bad := []struct {
		mod  func(*TerminalSpec)
		want string
	}{
		{func(s *TerminalSpec) { s.Argv = nil }, "subprocess-local: terminal argv must contain a program"},
		{func(s *TerminalSpec) { s.TerminalType = "" }, "terminalType: required"},
		{func(s *TerminalSpec) { s.Cols = 0 }, "cols, rows: must be positive"},
		{func(s *TerminalSpec) { s.Grace = 0 }, "grace: must be positive"},
		{func(s *TerminalSpec) { s.Dir = "" }, "dir: working directory is required"},
	}
	for _, b := range bad {
		s := termSpec("true")
		b.mod(&s)
		if _, err := rt.SpawnTerminal(s); err == nil || !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), b.want) {
			t.Errorf("SpawnTerminal = %v, want %q", err, b.want)
		}
	}
	env, err := rt.TerminalEnvironment(context.Background())
	if err != nil || env.Platform != "posix" || env.DefaultShell == "" {
		t.Fatalf("TerminalEnvironment = %+v, %v", env, err)
	}
}

// Close terminates live terminals and waits for them.
func TestCloseTerminatesTerminals(t *testing.T) {
	rt, err := New(Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := marker(3612)
	term, err := rt.SpawnTerminal(termSpec("bash", "-c", "trap '' TERM HUP; sleep "+m+"; sleep "+m))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(liveSleeps(m)) == 1 })
	if err := rt.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out, _ := term.Outcome(); out.Signal != "SIGKILL" {
		t.Fatalf("outcome %v", out)
	}
	assertNoSurvivor(t, "sleep "+m, 0)
}

// forEachIsolation runs body on a runtime with each available isolation.
func forEachIsolation(t *testing.T, body func(*testing.T, *Runtime)) {
	for _, iso := range []Isolation{IsolationAuto, IsolationProcessGroup} {
		t.Run(string(iso), func(t *testing.T) { body(t, newRuntime(t, Options{Isolation: iso})) })
	}
}
