//go:build unix

package subprocess

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// orphanOwnerEnv makes the test binary act as a harness that owns a few
// child ranges (TestMain): see orphanOwner.
const orphanOwnerEnv = "SUBPROCESS_TEST_ORPHAN_OWNER"

// orphanOwner starts a runtime with the isolation named by mode, spawns a
// command range and a terminal whose processes ignore SIGTERM and SIGHUP
// (the sleeps carry the markers in ORPHAN_MARKS: a background grandchild,
// a setsid escapee, the command's foreground sleep, the terminal's sleep),
// prints "ready" once all of them run and then waits to be killed.
func orphanOwner(mode string) int {
	m := strings.Fields(os.Getenv("ORPHAN_MARKS"))
	rt, err := New(Options{Isolation: Isolation(mode)}, nil)
	if err != nil {
		fmt.Println("owner:", err)
		return 1
	}
	_, err = rt.Spawn(Spec{Argv: []string{"bash", "-c", fmt.Sprintf(
		"trap '' TERM HUP; sleep %s & setsid sleep %s & sleep %s", m[0], m[1], m[2])},
		Dir: "/", Stdin: IgnoreStdin(), Stdout: Collect(1 << 10), Stderr: Collect(1 << 10), Grace: time.Second})
	if err != nil {
		fmt.Println("owner:", err)
		return 1
	}
	_, err = rt.SpawnTerminal(TerminalSpec{Argv: []string{"bash", "-c", fmt.Sprintf("trap '' TERM HUP; sleep %s", m[3])},
		Dir: "/", TerminalType: "dumb", Cols: 80, Rows: 24, Grace: time.Second})
	if err != nil {
		fmt.Println("owner:", err)
		return 1
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		ready := true
		for _, mk := range m {
			ready = ready && len(liveSleeps(mk)) > 0
		}
		if ready {
			fmt.Println("ready")
			time.Sleep(time.Hour) // until the test SIGKILLs this process
		}
	}
	fmt.Println("owner: the range never came up")
	return 1
}

// A harness whose process group is killed with SIGKILL takes every range it started with it: the
// runtime's watchdog kills them as soon as the harness is gone. With
// cgroup isolation that includes a descendant that moved to a session of
// its own (setsid); with process groups such an escapee is out of reach
// (a documented limit), every other process, TERM- and HUP-ignoring
// grandchildren and the terminal's program included, dies.
func TestRangesDieWhenTheOwnerIsKilled(t *testing.T) {
	for _, mode := range []Isolation{IsolationCgroup, IsolationProcessGroup} {
		t.Run(string(mode), func(t *testing.T) {
			if mode == IsolationCgroup {
				if _, err := probeCgroupQuietly(); err != nil {
					skipOrFailInCI(t, "no cgroup isolation: %v", err)
				}
			}
			marks := []string{marker(3620), marker(3621), marker(3622), marker(3623)}
			t.Cleanup(func() { killSleeps(marks) })
			owner := startOrphanOwner(t, mode, marks)
			for _, mk := range marks {
				if len(liveSleeps(mk)) == 0 {
					t.Fatalf("sleep %s not running before the kill", mk)
				}
			}
			// The owner's whole process group, as a shell's job control or
			// a supervisor's group kill would.
			if err := syscall.Kill(-owner.Process.Pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = owner.Wait()
			killed := time.Now()
			expected := marks
			if mode == IsolationProcessGroup {
				expected = []string{marks[0], marks[2], marks[3]} // marks[1] escaped by setsid
			}
			deadline := time.Now().Add(10 * time.Second)
			for _, mk := range expected {
				for len(liveSleeps(mk)) > 0 && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				if pids := liveSleeps(mk); len(pids) > 0 {
					t.Errorf("sleep %s (pids %v) survived its owner's SIGKILL by 10 s", mk, pids)
				}
			}
			if !t.Failed() {
				t.Logf("every marked process was gone %v after the owner was reaped", time.Since(killed).Round(time.Millisecond))
			}
		})
	}
}

// startOrphanOwner runs this test binary as orphanOwner and waits for its
// "ready".
func startOrphanOwner(t *testing.T, mode Isolation, marks []string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), orphanOwnerEnv+"="+string(mode), "ORPHAN_MARKS="+strings.Join(marks, " "))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		if s != "ready\n" {
			t.Fatalf("owner said %q, want ready", s)
		}
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-line
		t.Fatal("owner not ready within 60 s")
	}
	return cmd
}

// probeCgroupQuietly reports whether this process can have cgroup
// isolation, removing the directory it made to find out.
func probeCgroupQuietly() (*cgroupParent, error) {
	cg, err := probeCgroup()
	if err == nil {
		_ = cg.remove()
	}
	return cg, err
}

// killSleeps SIGKILLs every live sleep carrying one of the markers.
func killSleeps(marks []string) {
	for _, mk := range marks {
		for _, pid := range liveSleeps(mk) {
			_ = syscallKill(pid)
		}
	}
}

// The process-group watchdog kills exactly the ranges announced and not
// retracted, and leaves alone a range whose leader's number now names a
// process with another start time (a reused pid).
func TestWatchdogKillsOnlyHeldRanges(t *testing.T) {
	marks := []string{marker(3624), marker(3625), marker(3626), marker(3627)}
	t.Cleanup(func() { killSleeps(marks) })
	leaders := make([]procStat, len(marks))
	for i, mk := range marks {
		cmd := exec.Command("sleep", mk)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		st, ok := readProcStat(cmd.Process.Pid)
		if !ok {
			t.Fatalf("no /proc entry for sleep %s", mk)
		}
		leaders[i] = st
	}
	wd, err := startWatchdog("", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	announce := func(op string, st procStat, start uint64) {
		wd.announce(fmt.Sprintf("%s %d %d", op, st.pid, start))
	}
	announce("+g", leaders[0], leaders[0].start) // held group
	announce("+g", leaders[1], leaders[1].start) // retracted:
	wd.announce(fmt.Sprintf("-g %d", leaders[1].pid))
	announce("+g", leaders[2], leaders[2].start+1) // the number names another process now
	announce("+s", leaders[3], leaders[3].start)   // held session
	wd.announce("garbage")
	wd.stop(t.Context())                         // as if the runtime's process had died: the pipe ends
	deadline := time.Now().Add(10 * time.Second) // SIGKILL was sent; the exit may lag
	for _, i := range []int{0, 3} {
		for len(liveSleeps(marks[i])) > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if len(liveSleeps(marks[i])) > 0 {
			t.Errorf("held range %d (sleep %s) not killed", i, marks[i])
		}
	}
	for _, i := range []int{1, 2} {
		if len(liveSleeps(marks[i])) == 0 {
			t.Errorf("range %d (sleep %s) killed, want it left alone", i, marks[i])
		}
	}
}

// The watchdog's one-time cost per runtime (start, then stop: the pipe
// ends and it exits) against spawning and reaping /bin/true with os/exec
// in the same run, paired as BenchmarkSpawnWaitPaired does.
func BenchmarkWatchdogStartStop(b *testing.B) {
	log := slog.New(slog.DiscardHandler)
	var wds, raw []time.Duration
	for i := 0; b.Loop(); i++ {
		watch := func() {
			t := time.Now()
			wd, err := startWatchdog("", log)
			if err != nil {
				b.Fatal(err)
			}
			wd.stop(b.Context())
			wds = append(wds, time.Since(t))
		}
		bare := func() {
			t := time.Now()
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
			raw = append(raw, time.Since(t))
		}
		if i%2 == 0 {
			watch()
			bare()
		} else {
			bare()
			watch()
		}
	}
	mw, mr := median(wds), median(raw)
	b.ReportMetric(float64(mw)/1e6, "watchdog-ms")
	b.ReportMetric(float64(mr)/1e6, "osexec-ms")
	b.ReportMetric(float64(mw)/float64(mr), "watchdog/osexec")
}
