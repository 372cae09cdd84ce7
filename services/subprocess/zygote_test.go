//go:build unix

package subprocess

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshgo/harness/services/subprocess/sandbox"
)

// zygoteRuntime is a bwrap runtime with shared sandboxes (the default); it
// needs cgroup isolation (fails in CI, skips elsewhere without it).
func zygoteRuntime(t *testing.T, opts Options) (*Runtime, string) {
	t.Helper()
	rt := sandboxRuntime(t, sandbox.BackendBwrap, opts)
	if rt.Isolation() != IsolationCgroup {
		if os.Getenv("CI") != "" {
			t.Fatal("shared sandboxes need cgroup v2 isolation, unavailable in CI")
		}
		t.Skip("no cgroup v2 isolation here: shared sandboxes are not used")
	}
	b, _, _ := rt.sandbox.get(context.Background())
	tag := sandbox.ZygoteTag(b)
	if tag == "" {
		t.Fatal("bwrap backend has no zygote tag")
	}
	return rt, tag
}

// zygoteProc is one process of a zygote, found by the runtime's tag.
type zygoteProc struct {
	pid    int
	server bool // the server inside (else bwrap)
}

// zygoteProcs lists the live processes whose command line carries tag:
// bwrap (outside and its copies inside the namespace) and the servers.
func zygoteProcs(tag string) []zygoteProc {
	var out []zygoteProc
	for _, p := range scanProc() {
		if p.gone() {
			continue
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
		if !slices.Contains(args, tag) {
			continue
		}
		out = append(out, zygoteProc{pid: p.pid, server: len(args) >= 3 && args[1] == "harness-sandbox-zygote" && args[2] == tag})
	}
	return out
}

// zygoteCount is the number of running zygotes of tag: bwrap processes
// whose parent is this process.
func zygoteCount(tag string) int {
	n := 0
	for _, z := range zygoteProcs(tag) {
		if st, ok := readProcStat(z.pid); ok && !z.server && st.ppid == os.Getpid() {
			n++
		}
	}
	return n
}

func zygoteServers(tag string) []int {
	var out []int
	for _, z := range zygoteProcs(tag) {
		if z.server {
			out = append(out, z.pid)
		}
	}
	return out
}

func TestZygoteOnePerPolicy(t *testing.T) {
	rt, tag := zygoteRuntime(t, Options{})
	wsA, wsB := t.TempDir(), t.TempDir()
	p := &SandboxPolicy{Mode: SandboxWorkspaceWrite}
	if n := zygoteCount(tag); n != 0 {
		t.Fatalf("%d zygotes before the first command", n)
	}
	// Two commands of one policy, one of them running while the other
	// starts: one bwrap.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := marker(3600)
	h, err := rt.Spawn(Spec{Context: ctx, Argv: []string{"sleep", m}, Dir: wsA, Sandbox: p,
		Stdin: IgnoreStdin(), Stdout: Collect(64), Stderr: Collect(64), Grace: time.Second})
	must(t, err)
	code, out, _, rep := runIn(t, rt, p, wsA, "echo a > a.txt; cat a.txt")
	if code != 0 || out != "a\n" || !rep.Shared {
		t.Fatalf("second command: exit %d %q %v", code, out, rep)
	}
	if n := zygoteCount(tag); n != 1 {
		t.Fatalf("%d zygotes for two commands of one policy, want 1", n)
	}
	h.Terminate()
	<-h.Done()
	if ok, err := h.WaitForExit(ctx); !ok || err != nil {
		t.Fatalf("WaitForExit: %v %v", ok, err)
	}
	assertNoSurvivor(t, "sleep "+m, 0)
	// Another policy (network on) and another workspace: one more each.
	if code, _, _, _ := runIn(t, rt, &SandboxPolicy{Mode: SandboxWorkspaceWrite, Network: SandboxNetwork{Mode: SandboxNetworkOn}}, wsA, "true"); code != 0 {
		t.Fatalf("network policy: exit %d", code)
	}
	if n := zygoteCount(tag); n != 2 {
		t.Fatalf("%d zygotes after a second policy, want 2", n)
	}
	if code, _, _, _ := runIn(t, rt, p, wsB, "true"); code != 0 {
		t.Fatalf("workspace B: exit %d", code)
	}
	if n := zygoteCount(tag); n != 3 {
		t.Fatalf("%d zygotes after a second workspace, want 3", n)
	}
	// Idle zygotes beyond the bound are stopped.
	for range 4 {
		if code, _, _, _ := runIn(t, rt, p, t.TempDir(), "true"); code != 0 {
			t.Fatal("exit", code)
		}
	}
	if n := zygoteCount(tag); n > 4 {
		t.Fatalf("%d idle zygotes kept, want at most 4", n)
	}
}

func TestZygoteDiesWithRuntime(t *testing.T) {
	_, errs := sandbox.Probe(sandbox.BackendBwrap)
	if errs != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("bwrap unavailable in CI: %v", errs)
		}
		t.Skipf("bwrap unavailable: %v", errs)
	}
	rt, err := New(Options{SandboxBackend: sandbox.BackendBwrap}, nil)
	must(t, err)
	if rt.Isolation() != IsolationCgroup {
		_ = rt.Close(context.Background())
		t.Skip("no cgroup v2 isolation here")
	}
	b, _, _ := rt.sandbox.get(context.Background())
	tag := sandbox.ZygoteTag(b)
	m := marker(3600)
	h, err := rt.Spawn(Spec{Argv: []string{"bash", "-c", "setsid sleep " + m + " </dev/null >/dev/null 2>&1 & sleep " + m},
		Dir: t.TempDir(), Sandbox: &SandboxPolicy{Mode: SandboxReadOnly},
		Stdin: IgnoreStdin(), Stdout: Collect(64), Stderr: Collect(64), Grace: 500 * time.Millisecond})
	must(t, err)
	for deadline := time.Now().Add(10 * time.Second); len(liveWithCmdline("sleep "+m)) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("sleeps did not start")
		}
	}
	if len(zygoteServers(tag)) != 1 {
		t.Fatalf("zygote processes %v", zygoteProcs(tag))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	must(t, rt.Close(ctx))
	<-h.Done()
	if ps := zygoteProcs(tag); len(ps) != 0 {
		t.Fatalf("zygote processes survived Close: %v", ps)
	}
	assertNoSurvivor(t, "sleep "+m, 0)
}

func TestZygoteCrashIsRestarted(t *testing.T) {
	rt, tag := zygoteRuntime(t, Options{})
	ws := t.TempDir()
	p := &SandboxPolicy{Mode: SandboxWorkspaceWrite}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := marker(3600)
	h, err := rt.Spawn(Spec{Context: ctx, Argv: []string{"sleep", m}, Dir: ws, Sandbox: p,
		Stdin: IgnoreStdin(), Stdout: Collect(64), Stderr: Collect(64), Grace: time.Second})
	must(t, err)
	servers := zygoteServers(tag)
	if len(servers) != 1 {
		t.Fatalf("servers %v", servers)
	}
	must(t, syscall.Kill(servers[0], syscall.SIGKILL))
	select {
	case <-h.Done():
	case <-ctx.Done():
		t.Fatal("command outlived its zygote")
	}
	if o, _ := h.Outcome(); o.Signal != "SIGKILL" {
		t.Fatalf("outcome %v, want SIGKILL", o)
	}
	if ok, err := h.WaitForExit(ctx); !ok || err != nil {
		t.Fatalf("WaitForExit: %v %v", ok, err)
	}
	assertNoSurvivor(t, "sleep "+m, 0)
	code, out, _, rep := runIn(t, rt, p, ws, "echo again")
	if code != 0 || out != "again\n" || !rep.Shared {
		t.Fatalf("after the crash: exit %d %q %v", code, out, rep)
	}
	if now := zygoteServers(tag); len(now) != 1 || now[0] == servers[0] {
		t.Fatalf("servers after restart %v (crashed %d)", now, servers[0])
	}
}

// TestZygoteCommandsCannotReachHarness: a command in a shared sandbox sees
// neither the harness nor its environment, cannot signal it, and cannot
// read the server's environment, memory map or descriptors (it is
// non-dumpable; its fd directory can be listed, not followed).
func TestZygoteCommandsCannotReachHarness(t *testing.T) {
	secret := "zy-" + marker(1)
	t.Setenv("HARNESS_ZYGOTE_TEST_API_KEY", secret)
	rt, _ := zygoteRuntime(t, Options{})
	p := &SandboxPolicy{Mode: SandboxWorkspaceWrite}
	// (The quotes keep the words looked for out of the script's own
	// command line, which the loop prints.)
	script := "for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat $f; echo; done; " +
		"readlink /proc/$PPID/fd/3 && echo server-fd-'resolved'; " +
		"head -c1 /proc/$PPID/maps && echo server-maps-'read'; " +
		"kill -0 " + strconv.Itoa(os.Getpid()) + " && echo harness-'reached'; " +
		"kill -TERM " + strconv.Itoa(os.Getpid()) + " && echo harness-'signalled'; " +
		"ls -d /proc/[0-9]* | wc -l; echo done"
	code, out, errText, rep := runIn(t, rt, p, t.TempDir(), script)
	if !rep.Shared || !strings.HasSuffix(out, "done\n") {
		t.Fatalf("exit %d, report %v, out %q, err %q", code, rep, out, errText)
	}
	for _, bad := range []string{secret, "server-fd-resolved", "server-maps-read", "harness-reached", "harness-signalled", os.Args[0]} {
		if strings.Contains(out, bad) {
			t.Fatalf("command saw %q:\n%s\nstderr: %s", bad, out, errText)
		}
	}
	t.Logf("stdout:\n%s\nstderr:\n%s", out, errText)
}

// TestZygoteDeniedFileCreatedLater: a denied file created (or replaced)
// after the policy's zygote started is still hidden from later commands.
func TestZygoteDeniedFileCreatedLater(t *testing.T) {
	rt, tag := zygoteRuntime(t, Options{})
	ws := t.TempDir()
	p := &SandboxPolicy{Mode: SandboxWorkspaceWrite, DenyRead: []string{"**/.env"}}
	if code, _, _, _ := runIn(t, rt, p, ws, "true"); code != 0 {
		t.Fatal("exit", code)
	}
	env := filepath.Join(ws, ".env")
	must(t, os.WriteFile(env, []byte("first-secret\n"), 0o600))
	_, out, _, rep := runIn(t, rt, p, ws, "cat .env; echo end")
	if strings.Contains(out, "first-secret") || !rep.Shared {
		t.Fatalf("new denied file readable: %q %v", out, rep)
	}
	must(t, os.Remove(env))
	must(t, os.WriteFile(env, []byte("second-secret\n"), 0o600))
	_, out, _, _ = runIn(t, rt, p, ws, "cat .env; echo end")
	if strings.Contains(out, "second-secret") {
		t.Fatalf("replaced denied file readable: %q", out)
	}
	if n := zygoteCount(tag); n > 4 {
		t.Fatalf("%d zygotes", n)
	}
}

// TestZygoteNeedsCgroup: without cgroup isolation every command gets a
// bwrap of its own (the process-group range could not hold a command
// another process forked).
func TestZygoteNeedsCgroup(t *testing.T) {
	rt := sandboxRuntime(t, sandbox.BackendBwrap, Options{Isolation: IsolationProcessGroup})
	code, out, _, rep := runIn(t, rt, &SandboxPolicy{Mode: SandboxWorkspaceWrite}, t.TempDir(), "echo ok")
	if code != 0 || out != "ok\n" || rep.Shared || rep.Backend != sandbox.BackendBwrap {
		t.Fatalf("exit %d %q report %v", code, out, rep)
	}
	b, _, _ := rt.sandbox.get(context.Background())
	if n := zygoteCount(sandbox.ZygoteTag(b)); n != 0 {
		t.Fatalf("%d zygotes without cgroup isolation", n)
	}
}

// TestZygoteControlAndForeground: descriptors beyond stdio (the control
// channel, fd 3) reach a command in a shared sandbox, and a terminal
// there reports its foreground job by the pid this process sees.
func TestZygoteControlAndForeground(t *testing.T) {
	rt, _ := zygoteRuntime(t, Options{})
	p := &SandboxPolicy{Mode: SandboxWorkspaceWrite}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := rt.Spawn(Spec{Context: ctx, Argv: []string{"bash", "-c", `echo "ping $` + ControlEnv + `" >&3; read -r line <&3; echo "got $line"`},
		Dir: t.TempDir(), Sandbox: p, Control: true, Stdin: IgnoreStdin(), Stdout: Collect(1024), Stderr: Collect(1024), Grace: time.Second})
	must(t, err)
	if !h.Sandbox().Shared {
		t.Fatalf("report %v", h.Sandbox())
	}
	buf := make([]byte, 64)
	n, err := h.Control().Read(buf)
	must(t, err)
	if got := string(buf[:n]); got != "ping 3\n" {
		t.Fatalf("control read %q", got)
	}
	_, err = h.Control().Write([]byte("pong\n"))
	must(t, err)
	<-h.Done()
	if out := h.Collected().Stdout.ReadFrom(0).Text; out != "got pong\n" {
		t.Fatalf("stdout %q stderr %q", out, h.Collected().Stderr.ReadFrom(0).Text)
	}

	spec := termSpec("bash", "--norc", "--noprofile", "-i")
	spec.Dir, spec.Sandbox = t.TempDir(), p
	term, err := rt.SpawnTerminal(spec)
	must(t, err)
	if !term.Sandbox().Shared {
		t.Fatalf("terminal report %v", term.Sandbox())
	}
	m := marker(3600)
	must(t, term.Write(ctx, "sleep "+m+"\n"))
	var fg *Foreground
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if fg, err = term.InspectForeground(ctx); err == nil && strings.Contains(fg.Command, m) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("foreground %+v, %v", fg, err)
		}
	}
	if pids := liveWithCmdline("sleep " + m); len(pids) != 1 || pids[0] != fg.ProcessGroupID {
		t.Fatalf("foreground group %d, sleep pids %v", fg.ProcessGroupID, pids)
	}
	must(t, term.Terminate(ctx))
	assertNoSurvivor(t, "sleep "+m, 0)
}

// TestZygotePoolManyWorkspacesConcurrently: more concurrent sandboxed
// commands in distinct workspaces than the pool keeps zygotes (4), over
// several rounds, all succeed. The pool must not stop a zygote between
// handing it to a spawn and that spawn's request, nor one still starting
// for another caller. Once all are idle the pool is back within its
// bound, and Close leaves no zygote process behind.
func TestZygotePoolManyWorkspacesConcurrently(t *testing.T) {
	rt, tag := zygoteRuntime(t, Options{}) // the sandbox probe has run
	p := &SandboxPolicy{Mode: SandboxWorkspaceWrite}
	const n, rounds = 10, 4
	ws := make([]string, n)
	for i := range ws {
		ws[i] = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for round := range rounds {
		errs := make(chan error, n)
		for i := range n {
			go func() {
				want := "ok " + strconv.Itoa(round) + " " + strconv.Itoa(i)
				res, err := rt.Run(Spec{Context: ctx, Argv: []string{"echo", want}, Dir: ws[i], Sandbox: p,
					Stdin: IgnoreStdin(), Stdout: Collect(1024), Stderr: Collect(1024), Grace: time.Second})
				switch {
				case err != nil:
					errs <- fmt.Errorf("workspace %d: %v", i, err)
				case res.Outcome.ExitCode == nil || *res.Outcome.ExitCode != 0 || !res.Sandbox.Shared:
					errs <- fmt.Errorf("workspace %d: outcome %v report %v stderr %q", i, res.Outcome, res.Sandbox, res.Stderr.ReadFrom(0).Text)
				case res.Stdout.ReadFrom(0).Text != want+"\n":
					errs <- fmt.Errorf("workspace %d: stdout %q", i, res.Stdout.ReadFrom(0).Text)
				default:
					errs <- nil
				}
			}()
		}
		for range n {
			if err := <-errs; err != nil {
				t.Errorf("round %d: %v", round, err)
			}
		}
		if t.Failed() {
			break
		}
	}
	// Idle again: surplus zygotes are stopped, at most 4 remain.
	for deadline := time.Now().Add(10 * time.Second); zygoteCount(tag) > 4; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d zygotes once idle, want at most 4", zygoteCount(tag))
		}
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer ccancel()
	must(t, rt.Close(cctx))
	if ps := zygoteProcs(tag); len(ps) != 0 {
		t.Fatalf("zygote processes survived Close: %v", ps)
	}
}
