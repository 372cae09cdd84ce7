//go:build unix

package subprocess

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshgo/harness/services/subprocess/sandbox"
)

// Spawn + wait of /bin/true through the runtime (Run: spawn, settle, range
// check) against bare os/exec in the same run. service-default is what a
// user gets (Options{}: isolation auto); its name carries the range mode
// auto chose on this machine (cgroup or pgid). service-cgroup and
// service-pgid force each mode.
func BenchmarkSpawnWait(b *testing.B) {
	for _, iso := range []Isolation{IsolationAuto, IsolationCgroup, IsolationProcessGroup} {
		rt, err := New(Options{Isolation: iso}, nil)
		name := "service-" + string(iso)
		if iso == IsolationAuto && err == nil {
			name = "service-default=" + string(rt.Isolation())
		}
		b.Run(name, func(b *testing.B) {
			if err != nil {
				b.Skip(err)
			}
			spec := Spec{Argv: []string{"/bin/true"}, Dir: "/", Stdin: IgnoreStdin(),
				Stdout: Collect(4096), Stderr: Collect(4096), Grace: time.Second}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := rt.Run(spec); err != nil {
					b.Fatal(err)
				}
			}
		})
		if err == nil {
			_ = rt.Close(context.Background())
		}
	}
	b.Run("osexec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Bare os/exec in a new session, as the contract starts every child:
	// with sched_autogroup (on here) setsid gives the child a new
	// scheduling group, which on a loaded machine often waits a slice
	// before it first runs; on an idle one it costs nothing.
	b.Run("osexec-setsid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			cmd := exec.Command("/bin/true")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The same work the service asks of os/exec: a new session, both
	// streams through pipes into buffers, WaitDelay.
	b.Run("osexec-pipes", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var o, e bytes.Buffer
			cmd := exec.Command("/bin/true")
			cmd.Stdout, cmd.Stderr, cmd.WaitDelay = &o, &e, time.Second
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSpawnWaitPaired runs the service (default options, its range
// mode in the name) and bare os/exec alternately within every iteration,
// so that load drift on a shared machine hits both alike, and reports
// each one's median per spawn and their ratio (service/osexec; the issue's
// target is at most 1.2). ns/op covers both.
// A second run forces the process-group mode, which auto falls back to
// where cgroups are not writable (most non-root hosts).
func BenchmarkSpawnWaitPaired(b *testing.B) {
	for _, iso := range []Isolation{IsolationAuto, IsolationProcessGroup} {
		rt, err := New(Options{Isolation: iso}, nil)
		if err != nil {
			b.Fatal(err)
		}
		name := "default=" + string(rt.Isolation())
		if iso != IsolationAuto {
			name = string(iso)
		}
		benchPaired(b, name, rt)
		_ = rt.Close(context.Background())
	}
}

func benchPaired(b *testing.B, name string, rt *Runtime) {
	spec := Spec{Argv: []string{"/bin/true"}, Dir: "/", Stdin: IgnoreStdin(),
		Stdout: Collect(4096), Stderr: Collect(4096), Grace: time.Second}
	b.Run(name, func(b *testing.B) {
		var svc, raw []time.Duration
		service := func() {
			t := time.Now()
			if _, err := rt.Run(spec); err != nil {
				b.Fatal(err)
			}
			svc = append(svc, time.Since(t))
		}
		bare := func() {
			t := time.Now()
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
			raw = append(raw, time.Since(t))
		}
		for i := 0; b.Loop(); i++ {
			if i%2 == 0 {
				service()
				bare()
			} else {
				bare()
				service()
			}
		}
		ms, mr := median(svc), median(raw)
		b.ReportMetric(float64(ms)/1e6, "service-ms")
		b.ReportMetric(float64(mr)/1e6, "osexec-ms")
		b.ReportMetric(float64(ms)/float64(mr), "service/osexec")
	})
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// PTY spawn latency: open a terminal running /bin/true and wait for its
// complete (empty) transcript.
func BenchmarkTerminalSpawn(b *testing.B) {
	rt, err := New(Options{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(context.Background())
	spec := TerminalSpec{Argv: []string{"/bin/true"}, Dir: "/", TerminalType: "dumb", Cols: 80, Rows: 24, Grace: time.Second}
	b.ReportAllocs()
	for b.Loop() {
		term, err := rt.SpawnTerminal(spec)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, term.Output()); err != nil {
			b.Fatal(err)
		}
		if err := term.Terminate(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// captureSize bytes of zeros from head: the capture benchmarks' child.
const captureSize = 512 << 20

var captureArgv = []string{"head", "-c", "536870912", "/dev/zero"}

// captureDiscard runs the capture child through bare os/exec into
// io.Discard (optionally in a new session, as the service starts children).
func captureDiscard(b *testing.B, setsid bool) {
	cmd := exec.Command(captureArgv[0], captureArgv[1:]...)
	cmd.Stdout = io.Discard
	if setsid {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := cmd.Run(); err != nil {
		b.Fatal(err)
	}
}

// captureCollect runs the capture child through rt with stdout collected
// as out.
func captureCollect(b *testing.B, rt *Runtime, out Output) {
	spec := Spec{Argv: captureArgv, Dir: "/", Stdin: IgnoreStdin(), Stdout: out, Stderr: Collect(4096), Grace: time.Second}
	res, err := rt.Run(spec)
	if err != nil || res.Stdout.Total() != captureSize {
		b.Fatal(err, res.Stdout.Total())
	}
}

func captureRuntime(b *testing.B) *Runtime {
	rt, err := New(Options{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt
}

// Capture throughput of `head -c 512M /dev/zero` in collect mode (64 KiB
// tail, with and without a 64 MiB spill cap) against os/exec into
// io.Discard, with the process's peak RSS reported.
func BenchmarkCapture(b *testing.B) {
	rt := captureRuntime(b)
	for _, c := range []struct {
		name string
		out  Output
	}{{"collect", Collect(64 << 10)}, {"collect-spill", CollectSpill(64<<10, 64<<20)}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(captureSize)
			b.ReportAllocs()
			for b.Loop() {
				captureCollect(b, rt, c.out)
			}
			b.ReportMetric(float64(vmHWM(b))/(1<<20), "peakRSS-MiB")
		})
	}
	b.Run("osexec-discard", func(b *testing.B) {
		b.SetBytes(captureSize)
		b.ReportAllocs()
		for b.Loop() {
			captureDiscard(b, false)
		}
		b.ReportMetric(float64(vmHWM(b))/(1<<20), "peakRSS-MiB")
	})
	// Raw again, but in a new session as the service starts children: with
	// sched_autogroup the child then gets its own CPU share, which on a
	// loaded machine changes the producer/consumer balance.
	b.Run("osexec-discard-setsid", func(b *testing.B) {
		b.SetBytes(captureSize)
		b.ReportAllocs()
		for b.Loop() {
			captureDiscard(b, true)
		}
	})
}

// BenchmarkCapturePaired is BenchmarkCapture's collect against
// osexec-discard as interleaved pairs (the order alternating), so that on a
// shared 2-core machine both sides of each pair see the same load. It
// reports the median of each side's throughput and the median of the
// per-pair throughput ratio collect/osexec (issue target: >= 0.80). Run
// with a fixed count, e.g. -benchtime 21x.
func BenchmarkCapturePaired(b *testing.B) {
	rt := captureRuntime(b)
	var svc, raw []time.Duration
	var ratios []float64
	timed := func(into *[]time.Duration, run func()) time.Duration {
		t := time.Now()
		run()
		d := time.Since(t)
		*into = append(*into, d)
		return d
	}
	service := func() { captureCollect(b, rt, Collect(64<<10)) }
	bare := func() { captureDiscard(b, false) }
	b.SetBytes(2 * captureSize)
	for i := 0; b.Loop(); i++ {
		var ds, dr time.Duration
		if i%2 == 0 {
			ds, dr = timed(&svc, service), timed(&raw, bare)
		} else {
			dr, ds = timed(&raw, bare), timed(&svc, service)
		}
		ratios = append(ratios, float64(dr)/float64(ds))
	}
	mbps := func(d time.Duration) float64 { return float64(captureSize) / d.Seconds() / 1e6 }
	slices.Sort(ratios)
	b.ReportMetric(mbps(median(svc)), "collect-MB/s")
	b.ReportMetric(mbps(median(raw)), "osexec-MB/s")
	b.ReportMetric(ratios[len(ratios)/2], "collect/osexec")
}

var _ = os.Getpid

// BenchmarkSandboxSpawnTrue is spawn + wait of /bin/true unsandboxed and
// through each sandbox backend, in one run: the sub-benchmarks' ns/op
// difference is the sandbox's overhead (targets: bwrap ≤ 5 ms, Landlock
// ≤ 1 ms). bwrap is the default path (a shared sandbox per policy when
// cgroups are available: its start is paid by the first op);
// bwrap-percommand is a bwrap per command. cpu-ms/op counts this process,
// its reaped children and the zygotes' processes (whose commands they
// reap).
func BenchmarkSandboxSpawnTrue(b *testing.B) {
	for _, name := range []string{"none", "bwrap", "bwrap-percommand", "bwrap-denyRead", "bwrap-proxied", "bwrap-percommand-proxied", "landlock", "landlock-denyRead"} {
		b.Run(name, func(b *testing.B) {
			backend, proxied := strings.CutSuffix(name, "-proxied")
			backend, withDeny := strings.CutSuffix(backend, "-denyRead")
			opts := Options{}
			backend, opts = backendOptions(backend, opts)
			var p *SandboxPolicy
			if backend != "none" {
				if _, errs := sandbox.Probe(backend); errs != nil {
					b.Skipf("%s unavailable: %v", backend, errs)
				}
				opts.SandboxBackend = backend
				p = &SandboxPolicy{Mode: SandboxWorkspaceWrite}
				if withDeny { // the default harness.yml's policy
					p.DenyRead = []string{"~/.ssh", "~/.aws", "**/.env"}
				}
				if proxied { // the default harness.yml's network
					p.Network = SandboxNetwork{Mode: SandboxNetworkProxy, PackageRegistries: true}
				}
			}
			rt := newRuntime(b, opts)
			dir := b.TempDir()
			spec := Spec{Argv: []string{"/bin/true"}, Dir: dir, Sandbox: p, Stdin: IgnoreStdin(),
				Stdout: Collect(4096), Stderr: Collect(4096), Grace: time.Second}
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				res, err := rt.Run(spec)
				if err != nil || res.Outcome.ExitCode == nil || *res.Outcome.ExitCode != 0 {
					b.Fatalf("run: %v %v", err, res.Outcome)
				}
			}
			var zcpu time.Duration
			if be, _, _ := rt.sandbox.get(context.Background()); be != nil {
				zcpu = zygoteCPU(sandbox.ZygoteTag(be))
			}
			b.ReportMetric(float64(cpuTime()-cpu+zcpu)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

// zygoteCPU is the CPU time used so far by the live processes of the
// zygotes tagged tag and by the commands they reaped (utime, stime,
// cutime, cstime of /proc/PID/stat; none of them is reaped yet).
func zygoteCPU(tag string) time.Duration {
	if tag == "" {
		return 0
	}
	var ticks int64
	for _, z := range zygoteProcs(tag) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(z.pid) + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // field 3 (state) is f[0]
		for _, i := range []int{11, 12, 13, 14} {                // fields 14-17
			if i < len(f) {
				n, _ := strconv.ParseInt(f[i], 10, 64)
				ticks += n
			}
		}
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}

// cpuTime is the user+system CPU time of this process and its waited-for
// descendants. Per op, it is the cost of a spawn that a loaded machine's
// scheduling delays (which dominate ns/op on a shared host) do not inflate.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

// BenchmarkProtectedGuard is the cost the protected-path guard adds to
// every sandboxed workspace-write command (NewGuard before, Check after),
// on an empty workspace and on a repository with the usual protected files
// (harness.patch.yml, .claude/settings.json, .mcp.json, .git/config and
// git's 14 sample hooks): "bound" as under bwrap (existing paths bound
// read-only: stats only), "unbound" as under Landlock (their content read
// too). Compare with BenchmarkSandboxSpawnTrue in the same run.
func BenchmarkProtectedGuard(b *testing.B) {
	for _, name := range []string{"empty", "repo-bound", "repo-unbound"} {
		b.Run(name, func(b *testing.B) {
			ws := b.TempDir()
			if name != "empty" {
				files := map[string]string{"harness.patch.yml": "- id: bash\n  config: {timeout: 2m}\n",
					".claude/settings.json": "{\"permissions\": {\"allow\": [\"Bash(go test:*)\"]}}\n",
					".mcp.json":             "{\"mcpServers\": {}}\n", ".git/config": "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"}
				for i := range 14 {
					files[".git/hooks/hook-"+strconv.Itoa(i)+".sample"] = strings.Repeat("# sample hook line\n", 100)
				}
				for rel, c := range files {
					p := filepath.Join(ws, rel)
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						b.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
						b.Fatal(err)
					}
				}
			}
			req := sandbox.Request{Policy: sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite}, Dir: ws}
			var bound []string
			if name == "repo-bound" {
				for _, p := range sandbox.ProtectedPaths() {
					full := filepath.Join(ws, strings.TrimSuffix(p, "/"))
					if _, err := os.Lstat(full); err == nil {
						bound = append(bound, full)
					}
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if c := sandbox.NewGuard(req, bound).Check(); len(c) != 0 {
					b.Fatalf("changes %v", c)
				}
			}
		})
	}
}
