//go:build unix

package subprocess

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshgo/harness/services/subprocess/sandbox"
)

// probeRecorder wraps a runtime's real backend probe (sandbox.ProbeContext
// still runs bwrap): it counts the runs, sends on started as each begins,
// and holds each run until release is closed or the probe's ctx ends.
type probeRecorder struct {
	runs    atomic.Int32
	started chan struct{}
	release chan struct{}
}

// recordProbes installs a probeRecorder on rt, which must not be shared
// yet. With held false the probe runs at once.
func recordProbes(rt *Runtime, held bool) *probeRecorder {
	p := &probeRecorder{started: make(chan struct{}, 64), release: make(chan struct{})}
	if !held {
		close(p.release)
	}
	rt.sandbox.probe = func(ctx context.Context, prefer string) (sandbox.Backend, []error) {
		p.runs.Add(1)
		p.started <- struct{}{}
		select {
		case <-p.release:
		case <-ctx.Done():
		}
		return sandbox.ProbeContext(ctx, prefer)
	}
	return p
}

// probeStarted reports whether the runtime's backend probe has started.
func (s *sandboxState) probeStarted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done != nil
}

// receive returns the error sent on ch. It fails the test when none
// arrives within 30 s: a wait that should end at once but hangs until
// the probe's release (which comes only after it) would deadlock.
func receive(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("no result within 30s: the wait did not end with its ctx")
		return nil
	}
}

// sandboxedTrue is a spec that runs true in dir under a workspace-write
// sandbox.
func sandboxedTrue(ctx context.Context, dir string) Spec {
	return Spec{Context: ctx, Argv: []string{"true"}, Dir: dir, Sandbox: &SandboxPolicy{Mode: SandboxWorkspaceWrite},
		Stdin: IgnoreStdin(), Stdout: Collect(64), Stderr: Collect(64), Grace: time.Second}
}

// TestBootAndStopWithTheSandboxOnRunNoProbe: the plugin's boot and
// disposal with the sandbox on, and unsandboxed spawns in between, start
// no backend probe, so a command that never spawns sandboxed runs no
// bwrap.
func TestBootAndStopWithTheSandboxOnRunNoProbe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	root, rt := mountPlugin(t, ctx, Options{Sandbox: SandboxPolicy{Mode: SandboxWorkspaceWrite}, SandboxBackend: sandbox.BackendBwrap})
	if p := rt.SandboxPolicy(); p.Mode != SandboxWorkspaceWrite {
		t.Fatalf("SandboxPolicy() = %v", p)
	}
	if _, err := rt.Run(Spec{Context: ctx, Argv: []string{"true"}, Dir: t.TempDir(), Stdin: IgnoreStdin(), Stdout: Collect(64), Stderr: Collect(64), Grace: time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := root.Dispose(ctx); err != nil {
		t.Fatal(err)
	}
	if rt.sandbox.probeStarted() {
		t.Fatal("boot, an unsandboxed spawn and disposal started the sandbox probe")
	}
}

// TestConcurrentFirstSandboxedSpawnsShareOneProbe: the probe runs at the
// first sandboxed spawn, not before; spawns that arrive while it runs wait
// for it, and neither they nor later spawns and reports run it again.
func TestConcurrentFirstSandboxedSpawnsShareOneProbe(t *testing.T) {
	rt := sandboxRuntime(t, sandbox.BackendBwrap, Options{Sandbox: SandboxPolicy{Mode: SandboxWorkspaceWrite}})
	rec := recordProbes(rt, true)
	if rt.sandbox.probeStarted() {
		t.Fatal("New started the probe")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 6
	ws := t.TempDir() // one workspace: the spawns share one zygote
	var wg sync.WaitGroup
	reps := make([]SandboxReport, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := rt.Run(sandboxedTrue(ctx, ws))
			reps[i], errs[i] = res.Sandbox, err
		}()
	}
	<-rec.started
	time.Sleep(50 * time.Millisecond) // lets the other spawns reach the probe while it is held
	close(rec.release)
	wg.Wait()
	for i := range n {
		if errs[i] != nil || reps[i].Backend != sandbox.BackendBwrap {
			t.Fatalf("spawn %d: report %v, err %v", i, reps[i], errs[i])
		}
	}
	if _, err := rt.Run(sandboxedTrue(ctx, ws)); err != nil {
		t.Fatal(err)
	}
	if _, rep := rt.Sandbox(); rep.Backend != sandbox.BackendBwrap {
		t.Fatalf("Sandbox() report %v", rep)
	}
	if got := rec.runs.Load(); got != 1 {
		t.Fatalf("%d probe runs for %d sandboxed spawns and a report, want 1", got, n+1)
	}
}

// TestASpawnThatGivesUpLeavesTheProbeToTheOthers: the first sandboxed
// spawn starts the probe; when its ctx ends while the probe runs, it
// fails with ctx's cause at once, and the probe goes on for a spawn
// waiting beside it, which then runs sandboxed.
func TestASpawnThatGivesUpLeavesTheProbeToTheOthers(t *testing.T) {
	rt := sandboxRuntime(t, sandbox.BackendBwrap, Options{Sandbox: SandboxPolicy{Mode: SandboxWorkspaceWrite}})
	rec := recordProbes(rt, true)
	ws := t.TempDir()
	gone := errors.New("the caller gave up")
	first, giveUp := context.WithCancelCause(context.Background())
	firstErr := make(chan error, 1)
	go func() {
		_, err := rt.Run(sandboxedTrue(first, ws))
		firstErr <- err
	}()
	<-rec.started
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	other := make(chan error, 1)
	go func() {
		res, err := rt.Run(sandboxedTrue(ctx, ws))
		if err == nil && res.Sandbox.Backend != sandbox.BackendBwrap {
			err = errors.New("report " + res.Sandbox.String())
		}
		other <- err
	}()
	giveUp(gone)
	if err := receive(t, firstErr); !errors.Is(err, gone) {
		t.Fatalf("first spawn, given up while the probe ran: %v, want its ctx's cause", err)
	}
	close(rec.release)
	if err := <-other; err != nil {
		t.Fatalf("the spawn beside it: %v", err)
	}
	if err := rt.ProbeSandbox(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rec.runs.Load(); got != 1 {
		t.Fatalf("%d probe runs, want 1", got)
	}
}

// TestProbeSandboxRunsTheProbeWhateverTheMode: ProbeSandbox probes
// once (also with the default policy off, for `harness check`'s
// "backend available" line), and an ended ctx ends only its own wait.
func TestProbeSandboxRunsTheProbeWhateverTheMode(t *testing.T) {
	rt := sandboxRuntime(t, sandbox.BackendBwrap, Options{})
	rec := recordProbes(rt, true)
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	waited := make(chan error, 1)
	go func() { waited <- rt.ProbeSandbox(ended) }()
	if err := receive(t, waited); !errors.Is(err, context.Canceled) {
		t.Fatalf("ProbeSandbox(ended ctx) = %v, want context.Canceled", err)
	}
	<-rec.started
	close(rec.release)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for range 2 {
		if err := rt.ProbeSandbox(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if b, errs := rt.SandboxBackend(); b != sandbox.BackendBwrap {
		t.Fatalf("SandboxBackend() = %q, %v", b, errs)
	}
	if got := rec.runs.Load(); got != 1 {
		t.Fatalf("%d probe runs, want 1", got)
	}
	if err := rt.ProbeSandbox(nil); err == nil { //nolint:staticcheck // the nil ctx is the point
		t.Fatal("ProbeSandbox(nil) succeeded")
	}
}

// TestCloseEndsAProbeInFlight: Close while the first sandboxed spawn
// waits for the probe ends the probe (its ctx) and returns only once the
// probe has returned (goleak checks no goroutine is left); the spawn
// fails, and after Close nothing starts a probe.
func TestCloseEndsAProbeInFlight(t *testing.T) {
	rt, err := New(Options{Sandbox: SandboxPolicy{Mode: SandboxWorkspaceWrite}, SandboxBackend: sandbox.BackendBwrap}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := recordProbes(rt, true)
	spawnErr := make(chan error, 1)
	go func() {
		_, err := rt.Run(sandboxedTrue(context.Background(), t.TempDir()))
		spawnErr <- err
	}()
	<-rec.started
	if err := rt.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-rt.sandbox.done:
	default:
		t.Fatal("Close returned while the probe was still running")
	}
	if err := <-spawnErr; !errors.Is(err, ErrSandboxUnavailable) {
		t.Fatalf("spawn whose probe Close ended: %v, want ErrSandboxUnavailable", err)
	}

	idle, err := New(Options{Sandbox: SandboxPolicy{Mode: SandboxWorkspaceWrite}, SandboxBackend: sandbox.BackendBwrap}, nil)
	if err != nil {
		t.Fatal(err)
	}
	idleRec := recordProbes(idle, false)
	if err := idle.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := idle.ProbeSandbox(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("ProbeSandbox after Close = %v, want ErrClosed", err)
	}
	if _, rep := idle.Sandbox(); rep.Enforcement != EnforcementNone || idleRec.runs.Load() != 0 {
		t.Fatalf("after Close: report %v, %d probe runs; want none and 0", rep, idleRec.runs.Load())
	}
}
