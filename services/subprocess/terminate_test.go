//go:build unix

package subprocess

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var errTimeout = errors.New("test timeout")

// B01: a grandchild holding the output pipe never keeps a timed-out call
// open, whatever the shell shape.
func TestB01GrandchildHoldingPipeDoesNotBlockTimeout(t *testing.T) {
	rt := newRuntime(t, Options{})
	shapes := []string{
		"echo start; sleep %s; echo never",
		"echo start; sleep %s; true",
		"echo start; sleep %s & wait",
		"echo start; (sleep %s)",
		"echo start; sleep %s | cat",
	}
	for _, shape := range shapes {
		t.Run(shape, func(t *testing.T) {
			t.Parallel()
			m := marker(3601)
			ctx, cancel := context.WithTimeoutCause(context.Background(), time.Second, errTimeout)
			defer cancel()
			start := time.Now()
			res, err := rt.Run(collectSpec(ctx, fmt.Sprintf(shape, m), 4096, 500*time.Millisecond))
			elapsed := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if elapsed > 2500*time.Millisecond {
				t.Fatalf("returned after %v, want ≤ 2.5s", elapsed)
			}
			if !errors.Is(context.Cause(ctx), errTimeout) {
				t.Fatalf("cause %v: want the timeout", context.Cause(ctx))
			}
			if got := res.Stdout.Text(); got != "start\n" {
				t.Fatalf("stdout %q", got)
			}
			if res.Outcome.Signal == "" {
				t.Fatalf("outcome %v: want killed by a signal", res.Outcome)
			}
			assertNoSurvivor(t, "sleep "+m, 0)
		})
	}
}

// B02: backgrounded children (busy loop, sleeps, yes) are gone within 1 s
// of the timed-out call returning.
func TestB02BackgroundedChildrenDieWithTheTimeout(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, Options{})
	m := marker(3602)
	tag := "B02-marker-" + m
	script := fmt.Sprintf(": %s; (while :; do :; done) & sleep %s & yes %s > /dev/null & sleep %s", tag, m, tag, m)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s := collectSpec(ctx, "", 4096, 500*time.Millisecond)
	s.Argv = []string{"sh", "-c", script}
	if _, err := rt.Run(s); err != nil {
		t.Fatal(err)
	}
	assertNoSurvivor(t, tag, time.Second)
	assertNoSurvivor(t, "sleep "+m, time.Second)
}

// A SIGTERM-ignoring child is SIGKILLed after grace, and so is a
// TERM-trapping descendant that outlives its leader.
func TestTerminateEscalatesToSIGKILL(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, Options{})
	t.Run("leader ignores TERM", func(t *testing.T) {
		t.Parallel()
		m := marker(3603)
		h, err := rt.Spawn(collectSpec(nil, "trap '' TERM; echo ready; sleep "+m+"; sleep "+m, 64, 200*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		waitText(t, h.Collected().Stdout, "ready\n")
		h.Terminate()
		h.Terminate() // idempotent: does not restart the grace
		out, _ := h.Wait(context.Background())
		if out.Signal != "SIGKILL" {
			t.Fatalf("outcome %v, want SIGKILL", out)
		}
		if ok, err := h.WaitForExit(context.Background()); !ok || err != nil {
			t.Fatalf("WaitForExit = %v, %v", ok, err)
		}
		assertNoSurvivor(t, "sleep "+m, 0)
	})
	t.Run("descendant ignores TERM and outlives the leader", func(t *testing.T) {
		t.Parallel()
		m := marker(3604)
		h, err := rt.Spawn(collectSpec(nil, "(trap '' TERM; echo ready; while :; do sleep "+m+"; done) & wait", 64, 300*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		waitText(t, h.Collected().Stdout, "ready\n")
		h.Terminate()
		out, _ := h.Wait(context.Background())
		if out.Signal != "SIGTERM" {
			t.Fatalf("leader outcome %v, want SIGTERM", out)
		}
		if ok, err := h.WaitForExit(context.Background()); !ok || err != nil {
			t.Fatalf("WaitForExit = %v, %v", ok, err)
		}
		assertNoSurvivor(t, "sleep "+m, 0)
	})
}

// A9: a detached grandchild holding the pipe delays Done by about grace,
// no more; the exit code and the output written before exit are kept.
// The bulk case writes past handoffBytes first, so the held stream is one
// the pump handed off to a reader goroutine on the runtime poller.
func TestDoneSettlesWhenGrandchildHoldsPipe(t *testing.T) {
	for _, c := range []struct {
		name, prefix string
		bulk         int64
	}{
		{"quiet", "", 0},
		{"bulk", "head -c 3145728 /dev/zero; ", 3 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rt := newRuntime(t, Options{})
			m := marker(3605)
			h, err := rt.Spawn(collectSpec(nil, c.prefix+"sleep "+m+" & echo shell-done", 1024, 100*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			out, _ := h.Wait(context.Background())
			if d := time.Since(start); d > time.Second || d < 80*time.Millisecond {
				t.Fatalf("settled after %v, want about the 100ms grace", d)
			}
			stdout := h.Collected().Stdout
			if exitCode(t, out) != 0 || !strings.HasSuffix(stdout.Text(), "shell-done\n") || stdout.Total() != c.bulk+11 {
				t.Fatalf("got %v, %d bytes ending %q", out, stdout.Total(), stdout.Text()[max(0, len(stdout.Text())-16):])
			}
			if handed := h.pump.streams[0].file != nil; handed != (c.bulk > 0) {
				t.Fatalf("stdout handed off to a reader goroutine: %v", handed)
			}
			if ok, _ := h.WaitForExit(immediate); ok {
				t.Fatal("range empty while the grandchild sleeps")
			}
			h.Terminate()
			if ok, err := h.WaitForExit(context.Background()); !ok || err != nil {
				t.Fatalf("WaitForExit = %v, %v", ok, err)
			}
			assertNoSurvivor(t, "sleep "+m, 0)
		})
	}
}

// A bounded WaitForExit is how callers build teardown ladders: a disowned,
// TERM-trapping helper keeps the range alive until Terminate escalates.
func TestWaitForExitBoundedThenTerminate(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, Options{})
	m := marker(3606)
	h, err := rt.Spawn(collectSpec(nil, `bash -c "trap '' TERM; exec sleep `+m+`" >/dev/null 2>&1 & disown; echo started`, 64, 200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	h.Wait(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if ok, err := h.WaitForExit(ctx); ok || err != nil {
		t.Fatalf("bounded WaitForExit = %v, %v; want false", ok, err)
	}
	h.Terminate()
	if ok, err := h.WaitForExit(context.Background()); !ok || err != nil {
		t.Fatalf("WaitForExit = %v, %v", ok, err)
	}
	assertNoSurvivor(t, "sleep "+m, 0)
	h.Terminate() // after the range is gone: no signal, no panic
}

// setsid escapees leave the process group; only the cgroup range reaches
// them.
func TestTerminateReachesSetsidEscapee(t *testing.T) {
	rt := newRuntime(t, Options{})
	if rt.Isolation() != IsolationCgroup {
		t.Skip("cgroup v2 not writable here: process-group isolation cannot reach setsid escapees (documented limit)")
	}
	m := marker(3607)
	h, err := rt.Spawn(collectSpec(nil, "setsid sleep "+m+" </dev/null >/dev/null 2>&1 & echo started", 64, 200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	h.Wait(context.Background())
	waitFor(t, func() bool { return len(liveSleeps(m)) == 1 })
	if ok, _ := h.WaitForExit(immediate); ok {
		t.Fatal("range empty while the escapee sleeps")
	}
	h.Terminate()
	if ok, err := h.WaitForExit(context.Background()); !ok || err != nil {
		t.Fatalf("WaitForExit = %v, %v", ok, err)
	}
	assertNoSurvivor(t, "sleep "+m, 0)
}

func TestProcessGroupIsolationStillKillsTheGroup(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, Options{Isolation: IsolationProcessGroup})
	m := marker(3608)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := rt.Run(collectSpec(ctx, "sleep "+m+" & trap '' TERM; exec sleep "+m, 64, 200*time.Millisecond))
	if err != nil || res.Outcome.Signal != "SIGKILL" {
		t.Fatalf("Run = %v, %v", res.Outcome, err)
	}
	assertNoSurvivor(t, "sleep "+m, 0)
}

// A10: Close terminates every live child and waits for the ranges to
// empty, TERM-trapping survivors included.
func TestCloseTerminatesAndAwaitsChildren(t *testing.T) {
	rt, err := New(Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := marker(3609)
	plain, err := rt.Spawn(collectSpec(nil, "exec sleep "+m, 64, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	stubborn, err := rt.Spawn(collectSpec(nil, "(trap '' TERM; echo ready; sleep "+m+"; sleep "+m+") & wait", 64, 200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	waitText(t, stubborn.Collected().Stdout, "ready\n")
	settled, err := rt.Spawn(collectSpec(nil, "true", 64, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	settled.Wait(context.Background())
	if err := rt.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out, _ := plain.Outcome(); out.Signal != "SIGTERM" {
		t.Fatalf("plain outcome %v", out)
	}
	if out, _ := settled.Outcome(); exitCode(t, out) != 0 {
		t.Fatalf("settled outcome %v", out)
	}
	assertNoSurvivor(t, "sleep "+m, 0)
	if _, err := rt.Spawn(collectSpec(nil, "true", 64, time.Second)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Spawn after Close = %v", err)
	}
	if err := rt.Close(context.Background()); err != nil {
		t.Fatalf("second Close = %v", err)
	}
}

func waitText(t *testing.T, c *CollectedOutput, want string) {
	t.Helper()
	waitFor(t, func() bool { return strings.Contains(c.Text(), want) })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var _ = os.Getpid

// KillNow is the host-exit path: SIGKILL at once, even for a child with a
// long grace that ignores SIGTERM.
func TestKillNow(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, Options{})
	m := marker(3613)
	h, err := rt.Spawn(collectSpec(nil, "trap '' TERM; echo ready; sleep "+m+"; sleep "+m, 64, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	waitText(t, h.Collected().Stdout, "ready\n")
	rt.KillNow()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if out, err := h.Wait(ctx); err != nil || out.Signal != "SIGKILL" {
		t.Fatalf("outcome %v, %v", out, err)
	}
	assertNoSurvivor(t, "sleep "+m, time.Second)
}

// A runtime's cgroup directory left behind by a SIGKILLed host is killed
// and removed by the next runtime.
func TestStaleCgroupSwept(t *testing.T) {
	rt := newRuntime(t, Options{})
	if rt.Isolation() != IsolationCgroup {
		t.Skip("no cgroup v2")
	}
	// A fake dead host: pid 2^22-1 is above any pid this machine hands out.
	stale := filepath.Join(filepath.Dir(rt.cg.dir), "harness-subprocess-"+pidNamespace()+"-4194303-000000000000")
	leaf := filepath.Join(stale, "c1")
	if err := os.MkdirAll(leaf, 0o700); err != nil {
		t.Fatal(err)
	}
	m := marker(3614)
	cmd := exec.Command("sleep", m)
	fd, err := os.Open(leaf)
	if err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	startInCgroup(cmd.SysProcAttr, int(fd.Fd()))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fd.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	rt2 := newRuntime(t, Options{})
	_ = rt2
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("orphan in the stale cgroup was not killed")
	}
	waitFor(t, func() bool { _, err := os.Stat(stale); return os.IsNotExist(err) })
}

// A child spawned after an escalation to SIGKILL in the same runtime is not
// killed at birth: a cgroup leaf that was killed is never lent again (some
// kernels SIGKILL every CLONE_INTO_CGROUP child of a once-killed cgroup).
func TestSpawnAfterKillEscalationSurvives(t *testing.T) {
	rt := newRuntime(t, Options{})
	for range 2 {
		m := marker(3615)
		h, err := rt.Spawn(collectSpec(nil, "trap '' TERM; echo ready; sleep "+m, 64, 100*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		waitText(t, h.Collected().Stdout, "ready\n")
		h.Terminate()
		if out, _ := h.Wait(context.Background()); out.Signal != "SIGKILL" {
			t.Fatalf("outcome %v, want SIGKILL", out)
		}
		if ok, err := h.WaitForExit(context.Background()); !ok || err != nil {
			t.Fatalf("WaitForExit = %v, %v", ok, err)
		}
		res, err := rt.Run(collectSpec(nil, "echo alive", 64, time.Second))
		if err != nil || exitCode(t, res.Outcome) != 0 || res.Stdout.Text() != "alive\n" {
			t.Fatalf("next spawn: %v %q %v", res.Outcome, res.Stdout.Text(), err)
		}
	}
}

// The process-group range tells its leader from a later holder of the
// number: before the leader's exit is marked, a live process whose pid is
// the pgid is the leader; after, it can only be a newcomer that reused the
// number, so the range counts as gone and is not signalled.
func TestPgidRangeTreatsALiveHolderAfterTheLeaderExitedAsNewcomer(t *testing.T) {
	m := marker(3616)
	cmd := exec.Command("sleep", m)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	r := newPgidRange(cmd.Process.Pid, nil)
	if alive, err := r.alive(); !alive || err != nil {
		t.Fatalf("leader running: alive = %v, %v", alive, err)
	}
	r.leaderExited.Store(true) // as if our leader had exited and the pid were reused
	if alive, err := r.alive(); alive || err != nil {
		t.Fatalf("newcomer holding the pgid: alive = %v, %v", alive, err)
	}
	r.signal(syscall.SIGKILL) // must not reach the newcomer
	time.Sleep(50 * time.Millisecond)
	if len(liveSleeps(m)) != 1 {
		t.Fatal("the newcomer was signalled")
	}
}

// Grace bounds how long descendants holding a pipe can delay Done; it never
// drops what the direct child wrote before exiting and nobody else holds.
// With a 1 ms grace the readers often have not reached the last pipe-full
// when the grace ends; the final drain must still collect it, for a stream
// the pump reads itself and for one handed off to a reader goroutine.
// (The lag is rare on an idle host; TestFinalDrain forces it.)
func TestShortGraceKeepsTheExitedChildsOutput(t *testing.T) {
	rt := newRuntime(t, Options{})
	for _, size := range []int{512 << 10, 3 << 20} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			spec := Spec{Argv: []string{"head", "-c", strconv.Itoa(size), "/dev/zero"}, Dir: "/",
				Stdin: IgnoreStdin(), Stdout: Collect(4096), Stderr: Collect(4096), Grace: time.Millisecond}
			for i := range 30 {
				res, err := rt.Run(spec)
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Stdout.Total(); got != int64(size) || exitCode(t, res.Outcome) != 0 {
					t.Fatalf("run %d: %v, collected %d of %d bytes", i, res.Outcome, got, size)
				}
			}
		})
	}
}
