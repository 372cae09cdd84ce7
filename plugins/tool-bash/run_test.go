package toolbash

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/services/subprocess"
)

func newExecutor(t *testing.T) *Executor {
	t.Helper()
	rt, err := subprocess.New(subprocess.Options{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return &Executor{
		Runtime: rt, Cwd: t.TempDir(),
		Timeout: DefaultTimeout, MaxTimeout: DefaultMaxTimeout,
		MaxOutputBytes: DefaultMaxOutputBytes, MaxSpillBytes: DefaultMaxSpillBytes,
		Grace: DefaultGrace,
	}
}

func ms(n float64) *float64 { return &n }

// alive lists live (non-zombie) processes whose command line contains marker,
// or, for a marker starting with "=", whose command name equals the rest.
func alive(t *testing.T, marker string) []string {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if name, exact := strings.CutPrefix(marker, "="); exact {
			comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
			if strings.TrimSpace(string(comm)) != name {
				continue
			}
		} else if !strings.Contains(strings.ReplaceAll(string(cmd), "\x00", " "), marker) {
			continue
		}
		if len(cmd) > 100 {
			cmd = cmd[:100]
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
			continue
		}
		out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return out
}

func TestBashMarkers(t *testing.T) {
	t.Parallel()
	x := newExecutor(t)
	tests := []struct {
		name string
		args Args
		want string
	}{
		{"exit 0", Args{Command: "echo hi", Description: "say hi"}, "hi\n"},
		{"no output", Args{Command: "true", Description: "do nothing"}, "(no output)"},
		{"non-zero exit is a result", Args{Command: "echo out; echo err >&2; exit 3", Description: "fail"}, "out\n[stderr]\nerr\n[exit code: 3]"},
		{"self-kill is a signal, not a timeout", Args{Command: "kill -TERM $$", Description: "kill self"}, "(no output)\n[killed by signal: SIGTERM]"},
		{"timeout", Args{Command: "echo start; sleep 3691; echo never", Description: "sleep", TimeoutMs: ms(300)}, "start\n[timed out after 300ms]\n[killed by signal: SIGTERM]"},
		{"environment for tools", Args{Command: `echo "$NO_COLOR $TERM $PAGER $GIT_PAGER"`, Description: "env"}, "1 dumb cat cat\n"},
		{"fresh shell without rc state", Args{Command: "shopt -q login_shell && echo login; [[ $- == *i* ]] && echo interactive; alias | wc -l", Description: "inspect shell"}, "0\n"},
		{"relative workdir", Args{Command: "pwd", Description: "print dir", Workdir: strp("sub")}, filepath.Join(x.Cwd, "sub") + "\n"},
	}
	if err := os.Mkdir(filepath.Join(x.Cwd, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := x.Run(context.Background(), tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := Render(v); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func strp(s string) *string { return &s }

func TestBashValueAndErrors(t *testing.T) {
	t.Parallel()
	x := newExecutor(t)
	v, err := x.Run(context.Background(), Args{Command: "kill -TERM $$", Description: "kill self"})
	if err != nil || v.Signal == nil || *v.Signal != "SIGTERM" || v.ExitCode != nil || v.TimedOut || v.Aborted {
		t.Fatalf("self-kill: %+v %v", v, err)
	}
	if _, err := x.Run(context.Background(), Args{Command: "true", Description: "x", Workdir: strp("/nonexistent/dir")}); err == nil {
		t.Fatal("spawn failure in a missing workdir must be an error")
	}
	for _, tt := range []struct {
		args Args
		want string
	}{
		{Args{Command: " ", Description: "x"}, "invalid command: expected a non-empty string"},
		{Args{Command: "true", Description: "x", TimeoutMs: ms(0)}, "invalid timeoutMs: expected a positive number, got 0"},
		{Args{Command: "true", Description: "x", TimeoutMs: ms(-5)}, "invalid timeoutMs: expected a positive number, got -5"},
	} {
		if _, err := x.Run(context.Background(), tt.args); err == nil || err.Error() != tt.want {
			t.Errorf("%+v: got %v, want %q", tt.args, err, tt.want)
		}
	}
	// A per-call timeout is clamped to the cap.
	x.MaxTimeout = 200 * time.Millisecond
	v, err = x.Run(context.Background(), Args{Command: "sleep 3692", Description: "sleep", TimeoutMs: ms(99999)})
	if err != nil || !v.TimedOut || v.TimeoutMs != 200 {
		t.Fatalf("clamp: %+v %v", v, err)
	}
	// Caller cancellation is an abort, not a timeout.
	x.MaxTimeout = DefaultMaxTimeout
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	v, err = x.Run(ctx, Args{Command: "sleep 3693", Description: "sleep"})
	if err != nil || !v.Aborted || v.TimedOut {
		t.Fatalf("abort: %+v %v", v, err)
	}
}

// B01: a grandchild holding the output pipe must not keep a timed-out call open.
func TestBashTimeoutWithGrandchildren(t *testing.T) {
	t.Parallel()
	x := newExecutor(t)
	x.Grace = 500 * time.Millisecond
	shapes := []string{
		"echo start; sleep %d; echo never",
		"echo start; sleep %d; true",
		"echo start; sleep %d & wait",
		"echo start; (sleep %d)",
		"echo start; sleep %d | cat",
	}
	for i, shape := range shapes {
		// A unique duration per run: other test binaries on the machine may run the same case.
		secs := fmt.Sprintf("%d.%d", 3601+i*10, os.Getpid())
		marker := "sleep " + secs
		cmd := strings.Replace(shape, "%d", secs, 1)
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			v, err := x.Run(context.Background(), Args{Command: cmd, Description: "sleep long", TimeoutMs: ms(1000)})
			elapsed := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if !v.TimedOut || v.Stdout.Text != "start\n" || strings.Contains(Render(v), "never") {
				t.Fatalf("%+v", v)
			}
			if elapsed > 2500*time.Millisecond {
				t.Fatalf("returned after %v, want ≤ 2.5 s", elapsed)
			}
			if left := alive(t, marker); len(left) > 0 {
				t.Fatalf("still running: %v", left)
			}
		})
	}
}

// B02: background jobs of a timed-out command are killed with it.
func TestBashTimeoutKillsBackgroundJobs(t *testing.T) {
	t.Parallel()
	x := newExecutor(t)
	x.Grace = 500 * time.Millisecond
	// Unique markers per run: other test binaries on the machine may run the same case.
	tag := strconv.Itoa(os.Getpid())
	cmd := ": B02-marker-" + tag + "; (while :; do :; done) & sleep 3602." + tag + " & yes " + tag + " > /dev/null & sleep 3602." + tag
	v, err := x.Run(context.Background(), Args{Command: cmd, Description: "spawn background jobs", TimeoutMs: ms(1000)})
	if err != nil || !v.TimedOut {
		t.Fatalf("%+v %v", v, err)
	}
	deadline := time.Now().Add(time.Second)
	for {
		left := append(append(alive(t, "B02-marker-"+tag), alive(t, "sleep 3602."+tag)...), alive(t, "yes "+tag)...)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still running 1 s after return: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// B04: head and tail both survive; the marker counts what was left out and
// names a spill file holding the complete stream.
func TestBashHeadAndTailWithSpill(t *testing.T) {
	t.Parallel()
	x := newExecutor(t)
	x.MaxOutputBytes = 16384
	cmd := "echo 'FIRST-ERROR: config missing' >&2; seq 1 200000; echo 'LAST-ERROR: 3 tests failed' >&2; exit 3"
	v, err := x.Run(context.Background(), Args{Command: cmd, Description: "produce lots of output"})
	if err != nil {
		t.Fatal(err)
	}
	text := Render(v)
	for _, want := range []string{"FIRST-ERROR: config missing", "LAST-ERROR: 3 tests failed", "\n1\n2\n", "\n199999\n200000\n", "\n[exit code: 3]"} {
		if !strings.Contains("\n"+text, want) {
			t.Errorf("rendered text lacks %q", want)
		}
	}
	if !strings.HasSuffix(text, "[exit code: 3]") {
		t.Errorf("exit marker is not last: %q", text[len(text)-80:])
	}
	if got := len(v.Stdout.Head) + len(v.Stdout.Text); got > 16384 {
		t.Errorf("stdout kept %d bytes, cap 16384", got)
	}
	var full strings.Builder
	for i := 1; i <= 200000; i++ {
		full.WriteString(strconv.Itoa(i))
		full.WriteByte('\n')
	}
	spilled, err := os.ReadFile(v.Stdout.SpillPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(spilled) != full.String() {
		t.Fatalf("spill file has %d bytes, want %d", len(spilled), full.Len())
	}
	omittedLines := strings.Count(full.String(), "\n") - strings.Count(v.Stdout.Head, "\n") - strings.Count(v.Stdout.Text, "\n")
	wantNote := fmt.Sprintf("[… %d bytes (%d lines) omitted …]", int64(full.Len())-int64(len(v.Stdout.Head)+len(v.Stdout.Text)), omittedLines)
	if !strings.Contains(text, wantNote) || !strings.Contains(text, "[output truncated; full output: "+v.Stdout.SpillPath+"]") {
		t.Fatalf("markers missing: want %q in\n%s", wantNote, text[len(v.Stdout.Head)-20:len(v.Stdout.Head)+200])
	}
}

// A 10 MB stream: bounded text, byte-exact spill file.
func TestBashTenMegabytes(t *testing.T) {
	t.Parallel()
	x := newExecutor(t)
	v, err := x.Run(context.Background(), Args{Command: "head -c 10000000 /dev/zero | tr '\\0' 'x' | fold -w 99", Description: "print 10 MB"})
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(v.Stdout.SpillPath)
	if err != nil {
		t.Fatal(err)
	}
	want := int64(10000000 + 10000000/99)
	if info.Size() != want || info.Mode().Perm() != 0o600 {
		t.Fatalf("spill file %d bytes mode %v, want %d bytes 0600", info.Size(), info.Mode().Perm(), want)
	}
	if len(v.Stdout.Head)+len(v.Stdout.Text) > DefaultMaxOutputBytes || !strings.HasPrefix(v.Stdout.Head, strings.Repeat("x", 99)+"\n") || !strings.HasSuffix(v.Stdout.Text, "\nxxxxxxxxxx") {
		t.Fatalf("head %d bytes, tail %d bytes", len(v.Stdout.Head), len(v.Stdout.Text))
	}
}

// vmHWM is this process's peak resident set size, in bytes.
func vmHWM(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Skip("no VmHWM")
	return 0
}

// B05: a runaway writer is stopped by its deadline; memory stays bounded
// and the spill file stops at its cap; a 1 GiB single line is never held.
func TestBashRunawayOutput(t *testing.T) {
	t.Parallel()
	x := newExecutor(t)
	before := vmHWM(t)
	start := time.Now()
	v, err := x.Run(context.Background(), Args{Command: "yes 0123456789abcdef0123456789abcdef", Description: "flood stdout", TimeoutMs: ms(2000)})
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); !v.TimedOut || elapsed > 2000*time.Millisecond+DefaultGrace+time.Second {
		t.Fatalf("timedOut=%v after %v", v.TimedOut, elapsed)
	}
	if len(v.Stdout.Text) > DefaultMaxOutputBytes || !v.Stdout.Truncated {
		t.Fatalf("kept %d bytes", len(v.Stdout.Text))
	}
	if v.Stdout.SpillPath != "" {
		if info, err := os.Stat(v.Stdout.SpillPath); err != nil || info.Size() > DefaultMaxSpillBytes {
			t.Fatalf("spill file over its cap: %v %v", info, err)
		}
	}
	v, err = x.Run(context.Background(), Args{Command: "head -c 1073741824 /dev/zero | tr '\\0' x", Description: "print one 1 GiB line", TimeoutMs: ms(60000)})
	if err != nil {
		t.Fatal(err)
	}
	if v.TimedOut || !v.Stdout.Truncated || !v.Stdout.SpillCapped || v.Stdout.SpillPath != "" || len(v.Stdout.Text) > DefaultMaxOutputBytes {
		t.Fatalf("1 GiB line: timedOut=%v truncated=%v capped=%v spill=%q kept=%d", v.TimedOut, v.Stdout.Truncated, v.Stdout.SpillCapped, v.Stdout.SpillPath, len(v.Stdout.Text))
	}
	if text := Render(v); !strings.Contains(text, "[… 1073677824 bytes omitted; the output exceeded the spill cap and was not saved …]") || !strings.HasSuffix(text, "[output truncated; full output: (unavailable)]") {
		t.Fatalf("markers: %q", text[:200])
	}
	if grew := vmHWM(t) - before; grew > 64<<20 {
		t.Fatalf("peak RSS grew by %d MiB", grew>>20)
	}
}

// B10: credentials never reach the command.
func TestBashScrubsCredentials(t *testing.T) {
	for k, v := range map[string]string{
		"DEEPSEEK_API_KEY": "sk-b10-fake-0001", "OPENAI_API_KEY": "sk-b10-fake-0002", "AWS_SECRET_ACCESS_KEY": "b10fake",
		"GITHUB_TOKEN": "ghp_b10fake", "MY_DB_PASSWORD": "b10fake", "SAFE_VALUE": "keepme",
	} {
		t.Setenv(k, v)
	}
	x := newExecutor(t)
	v, err := x.Run(context.Background(), Args{Command: "env | sort", Description: "list environment"})
	if err != nil {
		t.Fatal(err)
	}
	out := v.Stdout.Text
	if strings.Contains(out, "b10fake") || strings.Contains(out, "sk-b10") {
		t.Fatalf("credentials leaked:\n%s", out)
	}
	for _, want := range []string{"PATH=", "TERM=dumb", "SAFE_VALUE=keepme"} {
		if !strings.Contains(out, want) {
			t.Errorf("env lacks %s", want)
		}
	}
}

func BenchmarkBashTrue(b *testing.B) {
	rt, err := subprocess.New(subprocess.Options{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(context.Background())
	x := &Executor{Runtime: rt, Cwd: b.TempDir(), Timeout: DefaultTimeout, MaxTimeout: DefaultMaxTimeout,
		MaxOutputBytes: DefaultMaxOutputBytes, MaxSpillBytes: DefaultMaxSpillBytes, Grace: DefaultGrace}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := x.Run(context.Background(), Args{Command: "true", Description: "do nothing"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBashTenMegabytes(b *testing.B) {
	rt, err := subprocess.New(subprocess.Options{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(context.Background())
	x := &Executor{Runtime: rt, Cwd: b.TempDir(), Timeout: DefaultTimeout, MaxTimeout: DefaultMaxTimeout,
		MaxOutputBytes: DefaultMaxOutputBytes, MaxSpillBytes: DefaultMaxSpillBytes, Grace: DefaultGrace}
	b.SetBytes(10_000_000)
	b.ReportAllocs()
	for b.Loop() {
		v, err := x.Run(context.Background(), Args{Command: "head -c 10000000 /dev/zero", Description: "print 10 MB"})
		if err != nil {
			b.Fatal(err)
		}
		os.Remove(v.Stdout.SpillPath)
	}
}
