//go:build unix

package subprocess

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
)

func TestSpawnValidation(t *testing.T) {
	rt := newRuntime(t, Options{})
	ok := func() Spec { return collectSpec(nil, "true", 100, time.Second) }
	cancelled, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("stop"))
	tests := []struct {
		name string
		mod  func(*Spec)
		want string
	}{
		{"zero grace", func(s *Spec) { s.Grace = 0 }, "grace: must be positive"},
		{"negative grace", func(s *Spec) { s.Grace = -time.Second }, "grace: must be positive"},
		{"grace over bound", func(s *Spec) { s.Grace = MaxGrace + 1 }, "grace: must be positive"},
		{"empty argv", func(s *Spec) { s.Argv = nil }, "invalid argv: expected a non-empty program name at argv[0]"},
		{"empty program", func(s *Spec) { s.Argv = []string{""} }, "invalid argv: expected a non-empty program name at argv[0]"},
		{"no dir", func(s *Spec) { s.Dir = "" }, "dir: working directory is required"},
		{"NUL in dir", func(s *Spec) { s.Dir = "/tmp\x00x" }, "dir: contains a NUL byte"},
		{"NUL in argument", func(s *Spec) { s.Argv = []string{"echo", "a\x00b"} }, "invalid argv[1]: contains a NUL byte"},
		{"no stdin mode", func(s *Spec) { s.Stdin = Stdin{} }, "stdin: mode is required"},
		{"no stdout mode", func(s *Spec) { s.Stdout = Output{} }, "stdout: mode is required"},
		{"zero collect cap", func(s *Spec) { s.Stderr = Collect(0) }, "stderr.maxBytes: must be positive"},
		{"zero spill cap", func(s *Spec) { s.Stdout = CollectSpill(10, 0) }, "stdout.spill.maxBytes: must be positive"},
		{"cap on pipe", func(s *Spec) { s.Stdout = Output{Mode: OutputPipe, MaxBytes: 3} }, "stdout: maxBytes and spill apply to collect mode only"},
		{"reserved env", func(s *Spec) { s.Env = map[string]string{ControlEnv: "9"} }, "reserved for the runtime"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ok()
			tt.mod(&s)
			h, err := rt.Spawn(s)
			if err == nil || !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Spawn = %v, %v; want ErrInvalidSpec containing %q", h, err, tt.want)
			}
		})
	}
	t.Run("pre-cancelled context", func(t *testing.T) {
		s := ok()
		s.Context = cancelled
		if _, err := rt.Spawn(s); err == nil || err.Error() != "aborted before spawn: stop" {
			t.Fatalf("Spawn = %v", err)
		}
	})
	t.Run("missing dir fails before any process runs", func(t *testing.T) {
		s := ok()
		s.Dir = filepath.Join(t.TempDir(), "absent")
		_, err := rt.Spawn(s)
		if err == nil || !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("Spawn = %v", err)
		}
		// fork/exec blames the program; the error must name the directory.
		if !strings.Contains(err.Error(), "working directory") || !strings.Contains(err.Error(), s.Dir) {
			t.Fatalf("error does not name the missing working directory: %v", err)
		}
	})
	t.Run("dir that is a file", func(t *testing.T) {
		s := ok()
		s.Dir = filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(s.Dir, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := rt.Spawn(s); err == nil || !strings.Contains(err.Error(), "working directory "+s.Dir+": not a directory") {
			t.Fatalf("Spawn = %v", err)
		}
	})
	t.Run("missing program", func(t *testing.T) {
		s := ok()
		s.Argv = []string{"harness-no-such-program-b9"}
		if _, err := rt.Spawn(s); !errors.Is(err, ErrExecutableNotFound) {
			t.Fatalf("Spawn = %v", err)
		}
	})
}

func TestRunOutcomes(t *testing.T) {
	rt := newRuntime(t, Options{})
	tests := []struct {
		name   string
		script string
		want   Outcome
		stdout string
		stderr string
	}{
		{"exit code", "echo out; echo err >&2; exit 3", Outcome{ExitCode: ptr(3)}, "out\n", "err\n"},
		{"success", "printf x", Outcome{ExitCode: ptr(0)}, "x", ""},
		{"self signal", "kill -TERM $$", Outcome{Signal: "SIGTERM"}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := rt.Run(collectSpec(nil, tt.script, 1024, time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome.String() != tt.want.String() || res.Stdout.Text() != tt.stdout || res.Stderr.Text() != tt.stderr {
				t.Fatalf("got %v %q %q", res.Outcome, res.Stdout.Text(), res.Stderr.Text())
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestArgvIsNeverShellInterpreted(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := collectSpec(nil, "", 1024, time.Second)
	s.Argv = []string{"printf", "%s", "$HOME; echo pwned"}
	res, err := rt.Run(s)
	if err != nil || res.Stdout.Text() != "$HOME; echo pwned" {
		t.Fatalf("got %q, %v", res.Stdout.Text(), err)
	}
}

func TestStdinModes(t *testing.T) {
	rt := newRuntime(t, Options{})
	t.Run("ignore is /dev/null", func(t *testing.T) {
		res, err := rt.Run(collectSpec(nil, `[ -c /proc/self/fd/0 ] && echo chardev; cat; echo eof`, 1024, time.Second))
		if err != nil || res.Stdout.Text() != "chardev\neof\n" {
			t.Fatalf("got %q, %v", res.Stdout.Text(), err)
		}
	})
	t.Run("data is written and closed", func(t *testing.T) {
		s := collectSpec(nil, `[ -c /proc/self/fd/0 ] || echo notchar; cat`, 1024, time.Second)
		s.Stdin = DataStdin([]byte("hello\n"))
		res, err := rt.Run(s)
		if err != nil || res.Stdout.Text() != "notchar\nhello\n" {
			t.Fatalf("got %q, %v", res.Stdout.Text(), err)
		}
	})
	t.Run("data EPIPE is swallowed", func(t *testing.T) {
		s := collectSpec(nil, `exit 0`, 1024, time.Second)
		s.Stdin = DataStdin(make([]byte, 4<<20))
		res, err := rt.Run(s)
		if err != nil || exitCode(t, res.Outcome) != 0 {
			t.Fatalf("got %v, %v", res.Outcome, err)
		}
	})
	t.Run("data larger than a pipe streams through a child that echoes it", func(t *testing.T) {
		// cat blocks on a full stdout until it is read while the runtime
		// is still writing its stdin: both must move at once.
		data := bytes.Repeat([]byte("0123456789abcdef"), 256<<10) // 4 MiB
		s := collectSpec(nil, `cat`, 64, time.Second)
		s.Stdin = DataStdin(data)
		res, err := rt.Run(s)
		if err != nil || exitCode(t, res.Outcome) != 0 || res.Stdout.Total() != int64(len(data)) || res.Stdout.Text() != string(data[len(data)-64:]) {
			t.Fatalf("got %v total %d, %v", res.Outcome, res.Stdout.Total(), err)
		}
	})
	t.Run("data and output under concurrent spawns", func(t *testing.T) {
		// Other spawns fork while this one's pipes end: their children
		// briefly hold copies of its descriptors, which must not end its
		// streams early (the child would die of SIGPIPE).
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for range 8 {
					s := collectSpec(nil, `cat >/dev/null; echo '{"decision":"allow"}'`, 1024, time.Second)
					s.Stdin = DataStdin([]byte(`{"tool":"bash"}`))
					res, err := rt.Run(s)
					if err != nil || res.Outcome.ExitCode == nil || *res.Outcome.ExitCode != 0 || res.Stdout.Text() != "{\"decision\":\"allow\"}\n" {
						t.Errorf("got %v %q, %v", res.Outcome, res.Stdout.Text(), err)
						return
					}
				}
			})
		}
		wg.Wait()
	})
	t.Run("pipe is the caller's", func(t *testing.T) {
		s := collectSpec(nil, `read -r line; echo "got $line"`, 1024, time.Second)
		s.Stdin = PipeStdin()
		h, err := rt.Spawn(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(h.Stdin(), "ping\n"); err != nil {
			t.Fatal(err)
		}
		h.Stdin().Close()
		out, _ := h.Wait(context.Background())
		if exitCode(t, out) != 0 || h.Collected().Stdout.Text() != "got ping\n" {
			t.Fatalf("got %v %q", out, h.Collected().Stdout.Text())
		}
	})
}

func TestOutputPipeAndInherit(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := collectSpec(nil, `echo raw; echo e >&2`, 1024, time.Second)
	s.Stdout = PipeOutput()
	s.Stderr = InheritOutput()
	h, err := rt.Spawn(s)
	if err != nil {
		t.Fatal(err)
	}
	if h.Collected().Stdout != nil || h.Collected().Stderr != nil || h.Stderr() != nil {
		t.Fatalf("collected %+v stderr %v: want none", h.Collected(), h.Stderr())
	}
	b, err := io.ReadAll(h.Stdout())
	h.Stdout().Close()
	if err != nil || string(b) != "raw\n" {
		t.Fatalf("pipe %q, %v", b, err)
	}
	if _, err := h.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestSpillFileIsPrivate(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := collectSpec(nil, `seq 1 2000`, 100, time.Second)
	s.Stdout = CollectSpill(100, 1<<20)
	res, err := rt.Run(s)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Stdout.SpillPath()
	if !regexp.MustCompile(`/harness-subprocess-\d+-\d+-[0-9a-f]{12}-stdout\.log$`).MatchString(p) {
		t.Fatalf("spill path %q", p)
	}
	st, err := os.Lstat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("spill file mode %v, %v", st.Mode(), err)
	}
	dst, err := os.Lstat(filepath.Dir(p))
	if err != nil || dst.Mode().Perm() != 0o700 || !strings.HasPrefix(filepath.Base(filepath.Dir(p)), "harness-subprocess-") {
		t.Fatalf("spill dir %s mode %v, %v", filepath.Dir(p), dst.Mode(), err)
	}
	b, _ := os.ReadFile(p)
	var want strings.Builder
	for i := 1; i <= 2000; i++ {
		want.WriteString(itoa(i) + "\n")
	}
	if string(b) != want.String() {
		t.Fatalf("spill file has %d bytes, want %d", len(b), want.Len())
	}
	_ = os.Remove(p)
}

// A configured spill directory that other users can read is refused when the
// runtime starts (the plugin's Apply), naming the directory and the mode
// expected, instead of silently turning spilling off at the first spawn that
// needs it (issue 20 item 15). A private one is used as is.
func TestSpillDirConfigured(t *testing.T) {
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	want := "subprocess-local: spillDir " + open + ": mode 0755 lets other users in; want 0700 (chmod 700 " + open + ")"
	if rt, err := New(Options{SpillDir: open}, nil); err == nil || err.Error() != want {
		if rt != nil {
			_ = rt.Close(context.Background())
		}
		t.Fatalf("New with a 0755 spill dir: %v, want %q", err, want)
	}
	root := core.NewRoot()
	defer root.Dispose(context.Background())
	f := root.Context().Plugin(Plugin, Options{SpillDir: open})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = f.Await(ctx)
	if f.Err() == nil || !strings.Contains(f.Err().Error(), want) {
		t.Fatalf("plugin start with a 0755 spill dir: %v", f.Err())
	}
	priv := filepath.Join(t.TempDir(), "a", "b")
	rt2 := newRuntime(t, Options{SpillDir: priv})
	s := collectSpec(nil, `seq 1 100`, 10, time.Second)
	s.Stdout = CollectSpill(10, 1<<20)
	res, err := rt2.Run(s)
	if err != nil || filepath.Dir(res.Stdout.SpillPath()) != priv {
		t.Fatalf("spill path %q, %v", res.Stdout.SpillPath(), err)
	}
}

func itoa(i int) string {
	return strings.TrimSpace(strings.Repeat(" ", 0) + func() string { return string(appendInt(nil, i)) }())
}

func appendInt(b []byte, i int) []byte {
	if i >= 10 {
		b = appendInt(b, i/10)
	}
	return append(b, byte('0'+i%10))
}

func TestControlChannel(t *testing.T) {
	rt := newRuntime(t, Options{})
	s := collectSpec(nil, `echo "env=$`+ControlEnv+`"; ls /proc/self/fd | sort -n | tr '\n' ' '; echo; echo hello >&3; read -r x <&3; echo "got $x"`, 1024, time.Second)
	s.Control = true
	h, err := rt.Spawn(s)
	if err != nil {
		t.Fatal(err)
	}
	c := h.Control()
	buf := make([]byte, 6)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "hello\n" {
		t.Fatalf("control read %q, %v", buf, err)
	}
	if _, err := io.WriteString(c, "back\n"); err != nil {
		t.Fatal(err)
	}
	out, _ := h.Wait(context.Background())
	lines := strings.Split(h.Collected().Stdout.Text(), "\n")
	// ls itself opens one directory fd (3 is taken, so 4 or above is ls's own).
	if exitCode(t, out) != 0 || lines[0] != "env=3" || !strings.HasPrefix(lines[1], "0 1 2 3 ") || len(strings.Fields(lines[1])) != 5 || lines[2] != "got back" {
		t.Fatalf("child saw %q", lines)
	}
	c.Close()

	s.Control = false
	s.Argv = []string{"bash", "-c", `echo "env=${` + ControlEnv + `-unset}"; [ -e /proc/self/fd/3 ] && echo fd3 || echo nofd3`}
	h, err = rt.Spawn(s)
	if err != nil || h.Control() != nil {
		t.Fatalf("control %v, %v", h.Control(), err)
	}
	h.Wait(context.Background())
	if got := h.Collected().Stdout.Text(); got != "env=unset\nnofd3\n" {
		t.Fatalf("without control: %q", got)
	}
}
