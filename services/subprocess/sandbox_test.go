//go:build unix

package subprocess

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshgo/harness/services/subprocess/sandbox"
)

// sandboxRuntime returns a runtime whose sandbox backend is forced to
// backend. A backend that does not work here fails the test in CI and
// skips it elsewhere.
func sandboxRuntime(t *testing.T, backend string, opts Options) *Runtime {
	t.Helper()
	backend, opts = backendOptions(backend, opts)
	if _, errs := sandbox.Probe(backend); errs != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("sandbox backend %s unavailable in CI (.ci/run installs bubblewrap): %v", backend, errs)
		}
		t.Skipf("sandbox backend %s unavailable here: %v", backend, errs)
	}
	opts.SandboxBackend = backend
	return newRuntime(t, opts)
}

// sandboxBackends are the ways a command can be sandboxed: bwrap with
// shared sandboxes (zygotes, the default with cgroups), a bwrap per
// command, and Landlock.
var sandboxBackends = []string{sandbox.BackendBwrap, bwrapPerCommand, sandbox.BackendLandlock}

// bwrapPerCommand names the bwrap backend with Options.SandboxPerCommand.
const bwrapPerCommand = "bwrap-percommand"

// backendOptions turns a sandboxBackends name into the backend and options.
func backendOptions(name string, opts Options) (string, Options) {
	if name == bwrapPerCommand {
		opts.SandboxPerCommand = true
		return sandbox.BackendBwrap, opts
	}
	return name, opts
}

// checkShared fails unless a bwrap report says shared exactly for the
// default bwrap mode (with cgroups).
func checkShared(t *testing.T, rt *Runtime, name string, rep SandboxReport) {
	t.Helper()
	want := name == sandbox.BackendBwrap && rt.Isolation() == IsolationCgroup
	if rep.Shared != want {
		t.Fatalf("%s: report %v: shared = %v, want %v", name, rep, rep.Shared, want)
	}
}

// runScript runs the bash script under policy p in dir (30 s at most)
// and returns the result.
func runScript(t *testing.T, rt *Runtime, p *SandboxPolicy, dir, script string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := rt.Run(Spec{Context: ctx, Argv: []string{"bash", "-c", script}, Dir: dir, Sandbox: p,
		Stdin: IgnoreStdin(), Stdout: Collect(1 << 16), Stderr: Collect(1 << 16), Grace: time.Second})
	if err != nil {
		t.Fatalf("Run %q: %v", script, err)
	}
	return res
}

// runIn runs script under policy p in dir and returns exit code, stdout
// and stderr.
func runIn(t *testing.T, rt *Runtime, p *SandboxPolicy, dir, script string) (int, string, string, SandboxReport) {
	t.Helper()
	res := runScript(t, rt, p, dir, script)
	return exitCode(t, res.Outcome), res.Stdout.ReadFrom(0).Text, res.Stderr.ReadFrom(0).Text, res.Sandbox
}

func TestSandboxWriteOutsideWorkspaceFails(t *testing.T) {
	for _, backend := range sandboxBackends {
		t.Run(backend, func(t *testing.T) {
			rt := sandboxRuntime(t, backend, Options{})
			// The victim directory is outside /tmp (bwrap's /tmp is private,
			// so a victim there would simply be invisible): the package
			// directory. Root inside tries to remount / writable first.
			ws := t.TempDir()
			outside, err := os.MkdirTemp(".", ".sandbox-victim-")
			must(t, err)
			t.Cleanup(func() { _ = os.RemoveAll(outside) })
			outside, _ = filepath.Abs(outside)
			p := &SandboxPolicy{Mode: SandboxWorkspaceWrite}
			code, _, stderr, rep := runIn(t, rt, p, ws, "echo in > inside.txt && { mount -o remount,bind,rw / 2>/dev/null; echo out > "+outside+"/victim.txt; }")
			if code == 0 {
				t.Fatalf("write outside the workspace succeeded (report %v)", rep)
			}
			checkShared(t, rt, backend, rep)
			if b, _ := backendOptions(backend, Options{}); rep.Backend != b || rep.Enforcement == EnforcementNone {
				t.Fatalf("report %v: want backend %s enforcing", rep, backend)
			}
			if b, err := os.ReadFile(filepath.Join(ws, "inside.txt")); err != nil || string(b) != "in\n" {
				t.Fatalf("write inside the workspace: %q, %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(outside, "victim.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("victim outside the workspace exists (err %v); stderr %s", err, stderr)
			}
			// read-only: not even the workspace is writable.
			code, _, _, _ = runIn(t, rt, &SandboxPolicy{Mode: SandboxReadOnly}, ws, "echo x > ro.txt")
			if _, err := os.Stat(filepath.Join(ws, "ro.txt")); code == 0 || !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("read-only mode wrote the workspace (exit %d, stat %v)", code, err)
			}
			if !strings.Contains(stderr, "Read-only") && !strings.Contains(stderr, "ermission denied") {
				t.Logf("stderr: %s", stderr)
			}
		})
	}
}

func TestSandboxNetworkOffBlocksLoopback(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("hello-from-host\n"))
			_ = c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	script := "exec 3<>/dev/tcp/127.0.0.1/" + port + " && head -n1 <&3"
	for _, backend := range sandboxBackends {
		t.Run(backend, func(t *testing.T) {
			rt := sandboxRuntime(t, backend, Options{})
			ws := t.TempDir()
			code, stdout, stderr, rep := runIn(t, rt, &SandboxPolicy{Mode: SandboxWorkspaceWrite}, ws, script)
			if code == 0 || strings.Contains(stdout, "hello-from-host") {
				t.Fatalf("network off: loopback connection succeeded (exit %d, %q, report %v)", code, stdout, rep)
			}
			t.Logf("network off: exit %d, stderr %s", code, strings.TrimSpace(stderr))
			// Control: the same command with network on reaches the listener.
			code, stdout, stderr, _ = runIn(t, rt, &SandboxPolicy{Mode: SandboxWorkspaceWrite, Network: SandboxNetwork{Mode: SandboxNetworkOn}}, ws, script)
			if code != 0 || !strings.Contains(stdout, "hello-from-host") {
				t.Fatalf("network on: exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
		})
	}
}

func TestSandboxDeniedPathsHidden(t *testing.T) {
	for _, backend := range sandboxBackends {
		t.Run(backend, func(t *testing.T) {
			rt := sandboxRuntime(t, backend, Options{})
			ws := t.TempDir()
			must(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("TOP_SECRET_ENV=1\n"), 0o600))
			must(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o700))
			must(t, os.WriteFile(filepath.Join(ws, "sub", ".env"), []byte("TOP_SECRET_SUB=1\n"), 0o600))
			must(t, os.MkdirAll(filepath.Join(ws, "keys"), 0o700))
			must(t, os.WriteFile(filepath.Join(ws, "keys", "id_rsa"), []byte("TOP_SECRET_KEY\n"), 0o600))
			must(t, os.WriteFile(filepath.Join(ws, "public.txt"), []byte("visible\n"), 0o600))
			p := &SandboxPolicy{Mode: SandboxReadOnly, DenyRead: []string{"**/.env", filepath.Join(ws, "keys")}}
			code, stdout, stderr, rep := runIn(t, rt, p, ws, "cat public.txt; cat .env; cat sub/.env; cat keys/id_rsa; ln keys/id_rsa hard 2>&1; cat hard; true")
			if strings.Contains(stdout+stderr, "TOP_SECRET") {
				t.Fatalf("denied content leaked (report %v):\n%s\n%s", rep, stdout, stderr)
			}
			if code != 0 || !strings.Contains(stdout, "visible") {
				t.Fatalf("allowed file unreadable: exit %d, %q, %q", code, stdout, stderr)
			}
			if strings.HasPrefix(backend, sandbox.BackendBwrap) {
				// bwrap masks: the denied files read as empty, not as errors.
				code, stdout, stderr, _ := runIn(t, rt, p, ws, "wc -c < .env; ls -A keys | wc -l")
				if f := strings.Fields(stdout); code != 0 || len(f) != 2 || f[0] != "0" || f[1] != "0" {
					t.Fatalf("bwrap: denied paths should read as empty: exit %d, %q, %q", code, stdout, stderr)
				}
				// workspace-write: the mask still wins over the writable bind.
				pw := &SandboxPolicy{Mode: SandboxWorkspaceWrite, DenyRead: []string{"**/.env"}}
				_, stdout, stderr, _ = runIn(t, rt, pw, ws, "cat .env sub/.env; echo x > .env; ln .env hard; mv .env moved; rm -f .env; cat hard moved")
				if strings.Contains(stdout+stderr, "TOP_SECRET") {
					t.Fatalf("workspace-write: denied content leaked: %s %s", stdout, stderr)
				}
				if b, _ := os.ReadFile(filepath.Join(ws, ".env")); string(b) != "TOP_SECRET_ENV=1\n" {
					t.Fatalf("a masked file was overwritten: %q", b)
				}
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestSandboxSetsidDaemonIsKilled(t *testing.T) {
	for _, backend := range sandboxBackends {
		t.Run(backend, func(t *testing.T) {
			rt := sandboxRuntime(t, backend, Options{})
			m := marker(3600)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			h, err := rt.Spawn(Spec{Context: ctx, Argv: []string{"bash", "-c", "setsid sleep " + m + " </dev/null >/dev/null 2>&1 & sleep 0.2; echo started"},
				Dir: t.TempDir(), Sandbox: &SandboxPolicy{Mode: SandboxWorkspaceWrite},
				Stdin: IgnoreStdin(), Stdout: Collect(1024), Stderr: Collect(1024), Grace: 500 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			<-h.Done()
			if got := h.Collected().Stdout.ReadFrom(0).Text; got != "started\n" {
				t.Fatalf("stdout %q, stderr %q", got, h.Collected().Stderr.ReadFrom(0).Text)
			}
			h.Terminate()
			if ok, err := h.WaitForExit(ctx); !ok || err != nil {
				t.Fatalf("WaitForExit: %v %v", ok, err)
			}
			// WaitForExit saw the whole range: nothing of it is left.
			assertNoSurvivor(t, "sleep "+m, 0)
		})
	}
}

func TestSandboxTerminalWorks(t *testing.T) {
	for _, backend := range sandboxBackends {
		t.Run(backend, func(t *testing.T) {
			rt := sandboxRuntime(t, backend, Options{})
			ws := t.TempDir()
			spec := termSpec("bash", "--norc", "--noprofile", "-i")
			spec.Dir, spec.Sandbox = ws, &SandboxPolicy{Mode: SandboxWorkspaceWrite}
			term, err := rt.SpawnTerminal(spec)
			if err != nil {
				t.Fatal(err)
			}
			if rep, b := term.Sandbox(), strings.TrimSuffix(backend, "-percommand"); rep.Backend != b {
				t.Fatalf("terminal report %v", rep)
			}
			checkShared(t, rt, backend, term.Sandbox())
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			must(t, term.Write(ctx, "[ -t 0 ] && echo tty-$((6*7)); echo x > f.txt; echo y > /etc/nope; stty size\n"))
			var acc strings.Builder
			readUntil(t, term, &acc, "tty-42")
			readUntil(t, term, &acc, "24 80")
			must(t, term.Resize(ctx, 100, 30))
			must(t, term.Write(ctx, "stty size; exit 3\n"))
			out, outcome := transcript(t, term)
			if exitCode(t, outcome) != 3 || !strings.Contains(out, "30 100") {
				t.Fatalf("outcome %v, transcript %q", outcome, acc.String()+out)
			}
			if b, err := os.ReadFile(filepath.Join(ws, "f.txt")); err != nil || string(b) != "x\n" {
				t.Fatalf("write in workspace from terminal: %q %v", b, err)
			}
			if _, err := os.Stat("/etc/nope"); err == nil {
				t.Fatal("terminal wrote /etc/nope")
			}
		})
	}
}

func TestSandboxUnavailableFailsLoudly(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no bwrap on PATH
	rt := newRuntime(t, Options{SandboxBackend: sandbox.BackendBwrap})
	_, err := rt.Run(Spec{Argv: []string{"/bin/true"}, Dir: t.TempDir(), Sandbox: &SandboxPolicy{Mode: SandboxWorkspaceWrite},
		Stdin: IgnoreStdin(), Stdout: Collect(64), Stderr: Collect(64), Grace: time.Second})
	if !errors.Is(err, ErrSandboxUnavailable) {
		t.Fatalf("err %v: want ErrSandboxUnavailable", err)
	}
	for _, want := range []string{"apt-get install bubblewrap", "sandbox: {mode: off}"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if _, rep := rt.Sandbox(); rep.Enforcement != EnforcementNone {
		t.Errorf("default report %v", rep)
	}
	// Unsandboxed spawns still work.
	if _, err := rt.Run(Spec{Argv: []string{"/bin/true"}, Dir: t.TempDir(), Stdin: IgnoreStdin(), Stdout: Collect(64), Stderr: Collect(64), Grace: time.Second}); err != nil {
		t.Fatal(err)
	}
}

func TestSandboxReports(t *testing.T) {
	rt := sandboxRuntime(t, sandbox.BackendLandlock, Options{Sandbox: SandboxPolicy{Mode: SandboxWorkspaceWrite, DenyRead: []string{"**/.env"}}})
	p, rep := rt.Sandbox()
	if p.Mode != SandboxWorkspaceWrite || rep.Backend != "landlock" || rep.Enforcement != EnforcementPartial || len(rep.Reasons) == 0 {
		t.Fatalf("landlock default: %v %v", p, rep)
	}
	if !strings.Contains(strings.Join(rep.Reasons, "\n"), "PID namespace") {
		t.Errorf("reasons %q should name the missing PID namespace", rep.Reasons)
	}
	off := newRuntime(t, Options{})
	if p, rep := off.Sandbox(); p.Mode != SandboxOff || rep.Enforcement != EnforcementNone {
		t.Fatalf("off: %v %v", p, rep)
	}
}

// fakeHarnessEnv makes the test binary act as a harness (TestMain): it
// starts a runtime and runs one command that tries to read the harness's
// environment, printing what it got.
const fakeHarnessEnv = "SUBPROCESS_TEST_FAKE_HARNESS"

func fakeHarness(mode string) int {
	opts := Options{}
	var p *SandboxPolicy
	switch mode {
	case "off":
	case "off-dumpable":
		opts.Dumpable = true
	default:
		var backend string
		backend, opts = backendOptions(mode, opts)
		opts.SandboxBackend = backend
		p = &SandboxPolicy{Mode: SandboxReadOnly}
	}
	rt, err := New(opts, nil)
	if err != nil {
		fmt.Println("fake harness:", err)
		return 1
	}
	defer rt.Close(context.Background())
	res, err := rt.Run(Spec{Argv: []string{"bash", "-c", "cat /proc/$PPID/environ; echo; cat /proc/" + strconv.Itoa(os.Getpid()) + "/environ; echo; cat /proc/" + strconv.Itoa(os.Getpid()) + "/cmdline"},
		Dir: "/", Sandbox: p, Stdin: IgnoreStdin(), Stdout: Collect(1 << 20), Stderr: Collect(1 << 16), Grace: time.Second})
	if err != nil {
		fmt.Println("fake harness:", err)
		return 1
	}
	fmt.Printf("report %v\nstdout %q\nstderr %q\n", res.Sandbox, res.Stdout.ReadFrom(0).Text, res.Stderr.ReadFrom(0).Text)
	return 0
}

// TestHarnessEnvironmentInvisible runs a fake harness (this test binary)
// whose initial environment holds a secret, and a command under it that
// reads /proc/$PPID/environ and /proc/<harness>/environ: in the sandbox
// (PID namespace, Landlock's ptrace scope) and outside it (the harness is
// non-dumpable; run as an unprivileged user, since root passes every
// ptrace check) nothing of the secret shows. A dumpable harness is the
// control: there the same command does read it.
func TestHarnessEnvironmentInvisible(t *testing.T) {
	secret := "s3cr3t-" + marker(1)
	for _, tc := range []struct {
		mode    string
		visible bool
	}{
		{sandbox.BackendBwrap, false},
		{bwrapPerCommand, false},
		{sandbox.BackendLandlock, false},
		{"off", false},
		{"off-dumpable", true},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			exe := os.Args[0]
			var cred *syscall.Credential
			if strings.HasPrefix(tc.mode, "off") {
				if os.Getuid() == 0 {
					exe, cred = exeForNobody(t), &syscall.Credential{Uid: 65534, Gid: 65534}
				}
			} else {
				sandboxRuntime(t, tc.mode, Options{}) // fail in CI / skip elsewhere without the backend
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
			cmd.Dir = "/"
			cmd.Env = []string{fakeHarnessEnv + "=" + tc.mode, "FAKE_HARNESS_API_KEY=" + secret, "PATH=" + os.Getenv("PATH")}
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "report ") {
				t.Fatalf("fake harness: %v\n%s", err, out)
			}
			if shared := strings.Contains(string(out), "report bwrap (shared): "); shared != (tc.mode == sandbox.BackendBwrap) {
				t.Fatalf("shared sandbox = %v for %s:\n%s", shared, tc.mode, out)
			}
			if got := strings.Contains(string(out), secret); got != tc.visible {
				t.Fatalf("secret visible = %v, want %v:\n%s", got, tc.visible, out)
			}
			t.Logf("%s", out)
		})
	}
}

// exeForNobody copies the test binary where uid 65534 can run it.
func exeForNobody(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "subprocess-nobody-")
	must(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	src, err := os.Open(os.Args[0])
	must(t, err)
	defer src.Close()
	dst := filepath.Join(dir, "harness.test")
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	must(t, err)
	_, err = io.Copy(f, src)
	must(t, errors.Join(err, f.Close()))
	return dst
}

// TestLandlockNeverRestrictsTheHarness: the Landlock backend restricts a
// dedicated thread that forks the child; after many concurrent spawns no
// thread of this process has no_new_privs or a reduced capability bounding
// set, and every goroutine can still write outside the sandboxes'
// workspaces.
func TestLandlockNeverRestrictsTheHarness(t *testing.T) {
	rt := sandboxRuntime(t, sandbox.BackendLandlock, Options{})
	threadStatus := func(field string) map[string]string {
		t.Helper()
		tasks, err := os.ReadDir("/proc/self/task")
		must(t, err)
		out := map[string]string{}
		for _, task := range tasks {
			b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
			if err != nil {
				continue // the thread ended
			}
			for line := range strings.SplitSeq(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, field+":"); ok {
					out[task.Name()] = strings.TrimSpace(v)
				}
			}
		}
		return out
	}
	var capBnd string
	for _, v := range threadStatus("CapBnd") {
		capBnd = v
	}
	ws := t.TempDir()
	errc := make(chan error, 16)
	for i := range cap(errc) {
		go func() {
			_, err := rt.Run(Spec{Argv: []string{"/bin/sh", "-c", "echo $0 > f$0", strconv.Itoa(i)}, Dir: ws,
				Sandbox: &SandboxPolicy{Mode: SandboxWorkspaceWrite}, Stdin: IgnoreStdin(), Stdout: Collect(64), Stderr: Collect(1 << 10), Grace: time.Second})
			errc <- err
		}()
	}
	for range cap(errc) {
		must(t, <-errc)
	}
	if ents, _ := os.ReadDir(ws); len(ents) != cap(errc) {
		t.Fatalf("%d of %d sandboxed commands wrote their file", len(ents), cap(errc))
	}
	// A restricted thread ends just after its spawn returns: allow the
	// last ones a moment to go.
	var tainted []string
	for range 50 {
		tainted = tainted[:0]
		nnp, bnd := threadStatus("NoNewPrivs"), threadStatus("CapBnd")
		for task, v := range nnp {
			if v != "0" || bnd[task] != capBnd {
				tainted = append(tainted, fmt.Sprintf("thread %s: NoNewPrivs %s, CapBnd %s (want 0, %s)", task, v, bnd[task], capBnd))
			}
		}
		if len(tainted) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(tainted) > 0 {
		t.Fatalf("threads of the harness stay restricted after Landlock spawns:\n%s", strings.Join(tainted, "\n"))
	}
	// Writes outside any workspace from many goroutines (spread over the
	// runtime's threads by blocking syscalls) still work.
	outside := t.TempDir()
	for i := range 64 {
		go func() {
			errc <- os.WriteFile(filepath.Join(outside, strconv.Itoa(i)), []byte("x"), 0o600)
		}()
	}
	for range 64 {
		if err := <-errc; err != nil {
			t.Fatalf("the harness lost write access after Landlock spawns: %v", err)
		}
	}
}

// TestProbeContextEndsWithItsContext: a bwrap probe under an ended context
// does not run bwrap to completion and reports bwrap as not working, while
// the same probe under a live context finds it.
func TestProbeContextEndsWithItsContext(t *testing.T) {
	if b, errs := sandbox.ProbeContext(context.Background(), sandbox.BackendBwrap); b == nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("bwrap unavailable in CI: %v", errs)
		}
		t.Skipf("bwrap unavailable here: %v", errs)
	} else if c, ok := b.(interface{ Close() error }); ok {
		_ = c.Close()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b, errs := sandbox.ProbeContext(ctx, sandbox.BackendBwrap)
	if b != nil || len(errs) != 1 || !strings.Contains(errs[0].Error(), "does not work here") {
		t.Fatalf("probe under an ended context: backend %v, errors %v; want none and bwrap's failure", b, errs)
	}
}

// A program that exists on the host but that the bwrap sandbox hides (under
// /tmp outside the workspace: the sandbox's /tmp is private; or under a
// denyRead mask) fails with an error saying so, not with a bare "no such
// file or directory".
func TestSandboxHiddenProgramIsExplained(t *testing.T) {
	for _, backend := range []string{sandbox.BackendBwrap, bwrapPerCommand} {
		t.Run(backend, func(t *testing.T) {
			rt := sandboxRuntime(t, backend, Options{})
			bin, err := os.MkdirTemp("/tmp", "hidden-prog-")
			must(t, err)
			t.Cleanup(func() { _ = os.RemoveAll(bin) })
			prog := filepath.Join(bin, "mcp-server-x")
			must(t, os.WriteFile(prog, []byte("#!/bin/sh\necho ran\n"), 0o755))
			ws := t.TempDir()
			run := func(p *SandboxPolicy, dir, prog string) error {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				_, err := rt.Run(Spec{Context: ctx, Argv: []string{prog}, Dir: dir, Sandbox: p,
					Stdin: IgnoreStdin(), Stdout: Collect(1 << 10), Stderr: Collect(1 << 10), Grace: time.Second})
				return err
			}
			err = run(&SandboxPolicy{Mode: SandboxReadOnly}, ws, prog)
			if err == nil || !strings.Contains(err.Error(), "program "+prog+" exists but is not visible inside the sandbox") ||
				!strings.Contains(err.Error(), "private, empty tmpfs") || !strings.Contains(err.Error(), "writableRoots") {
				t.Fatalf("program under a private /tmp: err = %v", err)
			}
			// The working directory containing it makes it visible.
			if err := run(&SandboxPolicy{Mode: SandboxReadOnly}, bin, prog); err != nil {
				t.Fatalf("program in the working directory: %v", err)
			}
			tools := filepath.Join(ws, "tools")
			must(t, os.Mkdir(tools, 0o755))
			masked := filepath.Join(tools, "prog")
			must(t, os.WriteFile(masked, []byte("#!/bin/sh\necho ran\n"), 0o755))
			err = run(&SandboxPolicy{Mode: SandboxReadOnly, DenyRead: []string{tools}}, ws, masked)
			if err == nil || !strings.Contains(err.Error(), "program "+masked+" exists but is not visible inside the sandbox") ||
				!strings.Contains(err.Error(), "masked by sandbox.denyRead") {
				t.Fatalf("program under a denyRead mask: err = %v", err)
			}
		})
	}
}
