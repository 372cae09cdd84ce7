//go:build unix

package mcp_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/plugins/mcp"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The set-up shared by the benchmarks: an mcp row through the harness
// (pipeline) and the SDK's own client (reference) on the same server kind.

// stdioRow is the mcp row config of one stdio server named e.
func stdioRow(argv ...string) string {
	return fmt.Sprintf("servers:\n  e:\n    command: %s\n    args: [%s]\n", argv[0], strings.Join(argv[1:], ", "))
}

// httpRow is the mcp row config of one streamable HTTP server named e.
func httpRow(url string) string { return fmt.Sprintf("servers:\n  e:\n    url: %s\n", url) }

// sdkSession connects the SDK's own client over t; closed at cleanup.
func sdkSession(b *testing.B, t sdk.Transport) *sdk.ClientSession {
	b.Helper()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(context.Background(), t,
		&sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}

// sdkCommand is the SDK's client with its CommandTransport running cmd.
func sdkCommand(b *testing.B, cmd *exec.Cmd) *sdk.ClientSession {
	return sdkSession(b, &sdk.CommandTransport{Command: cmd})
}

// sdkSubprocess is the SDK's client over pipes to argv spawned exactly as
// the pipeline spawns its servers (subprocess service: new session, cgroup
// leaf, scrubbed environment).
func sdkSubprocess(b *testing.B, argv ...string) *sdk.ClientSession {
	b.Helper()
	rt, err := subprocess.New(subprocess.Options{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	dir, _ := os.Getwd()
	h, err := rt.Spawn(subprocess.Spec{Argv: argv, Dir: dir, Stdin: subprocess.PipeStdin(),
		Stdout: subprocess.PipeOutput(), Stderr: subprocess.Collect(64 << 10), Grace: time.Second})
	if err != nil {
		_ = rt.Close(context.Background())
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Close(context.Background()) }) // after the session's close (LIFO)
	return sdkSession(b, &sdk.IOTransport{Reader: h.Stdout(), Writer: h.Stdin()})
}

// pipelineEcho makes one echo call through the registry's whole pipeline.
func pipelineEcho(b *testing.B, reg *tools.Registry) {
	o := reg.Execute(context.Background(), tools.Call{ID: "b", Name: "mcp__e__echo", Arguments: `{"message":"hi"}`})
	if o.IsError {
		b.Fatal(tools.TextOf(o.Content))
	}
}

// sdkEcho makes one echo call with the SDK's client.
func sdkEcho(b *testing.B, cs *sdk.ClientSession) {
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil || res.IsError {
		b.Fatal(err, res)
	}
}

// echoCase is one transport of the echo benchmarks: the pipeline's row
// config and the SDK reference client connected to the same kind of server.
type echoCase struct {
	name string
	row  string
	sdk  func(b *testing.B) *sdk.ClientSession
}

// echoCases are the transports: stdio (the SDK's CommandTransport; the same
// in a new session, as the subprocess service starts every child: under
// sched_autogroup a new session is a new scheduling group, and on a loaded
// machine each hop between groups waits longer for a CPU; the SDK over
// pipes to a server spawned by the subprocess service, so the ratio is the
// pipeline's own cost) and streamable HTTP (one server for both clients).
func echoCases(b *testing.B) []echoCase {
	bin := npmBin(b, "mcp-server-everything")
	stdio := stdioRow(bin, "stdio")
	url := startHTTPServer(b, bin)
	return []echoCase{
		{"stdio", stdio, func(b *testing.B) *sdk.ClientSession { return sdkCommand(b, exec.Command(bin, "stdio")) }},
		{"stdio-setsid", stdio, func(b *testing.B) *sdk.ClientSession {
			cmd := exec.Command(bin, "stdio")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			return sdkCommand(b, cmd)
		}},
		{"stdio-subprocess", stdio, func(b *testing.B) *sdk.ClientSession { return sdkSubprocess(b, bin, "stdio") }},
		{"http", httpRow(url), func(b *testing.B) *sdk.ClientSession {
			return sdkSession(b, &sdk.StreamableClientTransport{Endpoint: url})
		}},
	}
}

// BenchmarkEchoRoundTrip: one tools/call of server-everything's echo,
// through the harness's whole tool pipeline (registry: validation, policy
// events, body, post-execute) vs the SDK's own client called directly, over
// stdio and over streamable HTTP, each side on its own.
//
//	go test ./plugins/mcp -run '^$' -bench EchoRoundTrip -benchmem -count 5
func BenchmarkEchoRoundTrip(b *testing.B) {
	for _, c := range echoCases(b) {
		b.Run(c.name+"/pipeline", func(b *testing.B) {
			reg := benchHarness(b, c.row)
			b.ReportAllocs()
			for b.Loop() {
				pipelineEcho(b, reg)
			}
		})
		b.Run(c.name+"/sdk", func(b *testing.B) {
			cs := c.sdk(b)
			b.ReportAllocs()
			for b.Loop() {
				sdkEcho(b, cs)
			}
		})
	}
}

// BenchmarkEchoPaired is BenchmarkEchoRoundTrip with the two clients
// interleaved: every iteration makes one call through the harness pipeline
// and one through the SDK's own client (each to its own server-everything
// over stdio; to the same one over HTTP), so both see the same machine load.
// It reports each side's mean and their ratio (pipeline/sdk; the target is
// at most 1.10), and each side's client CPU per call (this process's
// user+sys time during the call).
//
//	go test ./plugins/mcp -run '^$' -bench EchoPaired -benchtime 300x -count 3
func BenchmarkEchoPaired(b *testing.B) {
	for _, c := range echoCases(b) {
		b.Run(c.name, func(b *testing.B) {
			benchPaired(b, benchHarness(b, c.row), c.sdk(b))
		})
	}
}

func benchPaired(b *testing.B, reg *tools.Registry, cs *sdk.ClientSession) {
	var pipe, direct, pipeCPU, directCPU time.Duration
	for i := 0; b.Loop(); i++ {
		// Alternate which goes first, so neither always follows the other.
		for j := range 2 {
			start, c0 := time.Now(), selfCPU()
			if (i+j)%2 == 0 {
				pipelineEcho(b, reg)
				pipe += time.Since(start)
				pipeCPU += selfCPU() - c0
			} else {
				sdkEcho(b, cs)
				direct += time.Since(start)
				directCPU += selfCPU() - c0
			}
		}
	}
	b.ReportMetric(float64(pipe.Microseconds())/float64(b.N), "pipeline-µs/op")
	b.ReportMetric(float64(direct.Microseconds())/float64(b.N), "sdk-µs/op")
	b.ReportMetric(float64(pipe)/float64(direct), "pipeline/sdk")
	b.ReportMetric(float64(pipeCPU.Microseconds())/float64(b.N), "pipeline-cpu-µs/op")
	b.ReportMetric(float64(directCPU.Microseconds())/float64(b.N), "sdk-cpu-µs/op")
}

// selfCPU is the user+sys CPU time of this process (the client side of a
// call, GC included; not the server's).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchHarness boots an mcp row with config cfg, waits until its servers are
// ready and returns the registry; stopped at cleanup.
func benchHarness(b *testing.B, cfg string) *tools.Registry {
	h := harnesstest.Start(b, rowManifest(cfg))
	waitReady(b, harnesstest.Service(b, h, mcp.Key))
	return harnesstest.Service(b, h, tools.Key)
}

// rowManifest is a manifest with subprocess-local, tools and an mcp row
// whose config is cfg.
func rowManifest(cfg string) string {
	return "plugins:\n  - name: subprocess-local\n  - name: tools\n  - name: mcp\n    config:\n" + indent(cfg, "      ")
}

// waitReady waits for every server's first connect and fails unless all
// are ready.
func waitReady(b *testing.B, m *mcp.Manager) {
	b.Helper()
	if err := m.Wait(context.Background()); err != nil {
		b.Fatal(err)
	}
	for _, s := range m.Servers() {
		if s.State != mcp.StateReady {
			b.Fatalf("%s: %s: %s", s.Name, s.State, s.Error)
		}
	}
}

// startHTTPServer runs server-everything's streamable HTTP transport on a
// free 127.0.0.1 port until the benchmark ends and returns its URL.
func startHTTPServer(b *testing.B, bin string) string {
	port := freePortTB(b)
	srv := exec.Command(bin, "streamableHttp")
	srv.Env = append(os.Environ(), "PORT="+port)
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
		_ = srv.Wait()
	})
	waitListening(b, port)
	return "http://127.0.0.1:" + port + "/mcp"
}

// connectServer is a kind of stdio server for the connect benchmarks.
type connectServer struct {
	name string
	argv func(b *testing.B) []string
}

// connectServers: the Go fixture (a go-sdk server built once by TestMain,
// cheap to start, so the client's own parallelism shows), the same fixture
// waiting 300 ms before it serves (a start bound by waiting, not CPU, as a
// server that reaches the network first: five such starts in parallel cost
// what one does unless the client serialises them), and server-everything
// on node (what users run; its start costs far more CPU).
//
// When starts are CPU-bound, five of them cannot overlap on fewer than
// five cores: with C ms of CPU per server start (pipeline-1-cpu-ms) and W
// ms for one connect (pipeline-1-ms), five take at least 5·C/cores ms, a
// ratio of at least 5·C/(cores·W), for the SDK's own client too (sdk-5/1).
var connectServers = []connectServer{
	{"go-fixture", func(*testing.B) []string { return []string{fixture, "ok"} }},
	{"go-fixture-slowstart", func(*testing.B) []string { return []string{fixture, "slowstart", "300"} }},
	{"server-everything", func(b *testing.B) []string { return []string{npmBin(b, "mcp-server-everything"), "stdio"} }},
}

// connectManifest is the manifest of an mcp row with n stdio servers argv.
func connectManifest(argv []string, n int) string {
	var cfg strings.Builder
	cfg.WriteString("grace: 500ms\nservers:\n")
	for i := range n {
		fmt.Fprintf(&cfg, "  s%d: {command: %s, args: [%s]}\n", i, argv[0], strings.Join(argv[1:], ", "))
	}
	return rowManifest(cfg.String())
}

// BenchmarkConnect: booting an mcp row with one stdio server vs five
// started in parallel (ns/op is the time until every server is ready and
// its tools are registered; closing is not timed).
//
//	go test ./plugins/mcp -run '^$' -bench 'Connect$' -benchmem -count 5
func BenchmarkConnect(b *testing.B) {
	for _, srv := range connectServers {
		for _, n := range []int{1, 5} {
			b.Run(fmt.Sprintf("%s/servers=%d", srv.name, n), func(b *testing.B) {
				manifest := connectManifest(srv.argv(b), n)
				for b.Loop() {
					h := start(b, manifest, slog.New(slog.NewTextHandler(io.Discard, nil)))
					waitReady(b, harnesstest.Service(b, h, mcp.Key))
					b.StopTimer()
					if err := h.Stop(context.Background()); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
			})
		}
	}
}

// start is harnesstest.Start without the cleanup (the benchmark stops each
// harness itself, untimed), logging to log.
func start(b *testing.B, manifest string, log *slog.Logger) *fxcore.Harness {
	h, err := harness.New(harness.WithManifest([]byte(manifest)), harness.WithLogger(log))
	if err != nil {
		b.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	return h
}

// BenchmarkConnectPaired measures, for each server kind, in every iteration
// and in rotating order, four connects: the mcp row booting one stdio server
// and five in parallel (as BenchmarkConnect), and the same through the SDK's
// own client with its CommandTransport (initialize and tools/list;
// goroutine per server), which is the reference for what this machine
// allows: servers starting at once on few cores cost CPU whoever starts
// them. The SDK reference runs twice: its children in this process's
// session, as CommandTransport starts them, and in a new session each
// (sdk-setsid), as the subprocess service starts every child (under
// sched_autogroup a session is a scheduling group, which on a loaded
// machine changes how soon a starting server gets a CPU). It reports each
// mean in ms and the five-vs-one ratios (pipeline-5/1, target ≤ 1.5;
// sdk-5/1 and sdk-setsid-5/1, the references). Closing is not timed.
// The cpu metrics are the CPU time (user+sys) of this process and of its
// reaped children, the servers included, per connect, closing included.
//
// From the pipeline's debug log ("mcp server ready") it also reports, for
// the five-server boot, the spread of the five spawn instants (p5-spawn-
// spread-ms: large if something of ours serialised the spawns) and the
// mean time per server from the start of its connect to its spawn, spawn to
// initialized, initialized to listed and listed to mounted (p5-spawn-ms,
// p5-init-ms, p5-list-ms, p5-mount-ms; p1-* the same for one server), and
// the spread of the five "mounted" instants.
//
//	go test ./plugins/mcp -run '^$' -bench 'ConnectPaired/go-fixture$' -benchtime 10x -count 3
//	go test ./plugins/mcp -run '^$' -bench ConnectPaired/go-fixture-slowstart -benchtime 10x -count 3
//	go test ./plugins/mcp -run '^$' -bench ConnectPaired/server-everything -benchtime 3x -count 3
func BenchmarkConnectPaired(b *testing.B) {
	for _, srv := range connectServers {
		b.Run(srv.name, func(b *testing.B) { benchConnectPaired(b, srv.argv(b)) })
	}
}

func benchConnectPaired(b *testing.B, argv []string) {
	phases := &phaseLog{}
	log := slog.New(phases)
	pipeline := func(n int) time.Duration {
		manifest := connectManifest(argv, n)
		phases.reset()
		t0 := time.Now()
		h := start(b, manifest, log)
		m := harnesstest.Service(b, h, mcp.Key)
		if err := m.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		waitReady(b, m)
		phases.sum(n)
		if err := h.Stop(context.Background()); err != nil {
			b.Fatal(err)
		}
		return d
	}
	direct := func(n int, setsid bool) time.Duration {
		t0 := time.Now()
		sessions := make([]*sdk.ClientSession, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
				cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(context.Background(),
					&sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
				if err == nil {
					_, err = cs.ListTools(context.Background(), nil)
				}
				sessions[i], errs[i] = cs, err
			})
		}
		wg.Wait()
		d := time.Since(t0)
		for i, cs := range sessions {
			if errs[i] != nil {
				b.Fatal(errs[i])
			}
			_ = cs.Close()
		}
		return d
	}
	sdkSame := func(n int) time.Duration { return direct(n, false) }
	sdkSetsid := func(n int) time.Duration { return direct(n, true) }
	cases := []struct {
		run func(int) time.Duration
		n   int
	}{{pipeline, 1}, {pipeline, 5}, {sdkSame, 1}, {sdkSame, 5}, {sdkSetsid, 1}, {sdkSetsid, 5}}
	sums := make([]time.Duration, len(cases))
	cpus := make([]time.Duration, len(cases))
	for i := 0; b.Loop(); i++ {
		for j := range cases {
			k := (i + j) % len(cases)
			c0 := cpuTime()
			sums[k] += cases[k].run(cases[k].n)
			cpus[k] += cpuTime() - c0
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(b.N) / 1e6 }
	b.ReportMetric(ms(sums[0]), "pipeline-1-ms")
	b.ReportMetric(ms(sums[1]), "pipeline-5-ms")
	b.ReportMetric(ms(sums[2]), "sdk-1-ms")
	b.ReportMetric(ms(sums[3]), "sdk-5-ms")
	b.ReportMetric(float64(sums[1])/float64(sums[0]), "pipeline-5/1")
	b.ReportMetric(float64(sums[3])/float64(sums[2]), "sdk-5/1")
	b.ReportMetric(ms(cpus[0]), "pipeline-1-cpu-ms")
	b.ReportMetric(ms(cpus[1]), "pipeline-5-cpu-ms")
	b.ReportMetric(ms(cpus[2]), "sdk-1-cpu-ms")
	b.ReportMetric(ms(cpus[3]), "sdk-5-cpu-ms")
	b.ReportMetric(ms(sums[4]), "sdk-setsid-1-ms")
	b.ReportMetric(ms(sums[5]), "sdk-setsid-5-ms")
	b.ReportMetric(float64(sums[5])/float64(sums[4]), "sdk-setsid-5/1")
	phases.report(b)
	b.ReportMetric(0, "ns/op")
}

// cpuTime is the user+sys CPU time of this process and its reaped children.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

// phaseLog is a slog handler that keeps the phase instants of the mcp
// plugin's "mcp server ready" debug records and sums them per boot size.
type phaseLog struct {
	mu    sync.Mutex
	ready [][5]time.Time // start, spawned, initialized, listed, mounted
	// per boot size (1, 5): boots, and the summed spawn spread, mounted
	// spread and per-server phase durations
	boots                                map[int]int
	spawnSpread, mountSpread             map[int]time.Duration
	spawnDur, initDur, listDur, mountDur map[int]time.Duration
}

var phaseKeys = []string{"start", "spawned", "initialized", "listed", "mounted"}

func (l *phaseLog) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelDebug }
func (l *phaseLog) WithAttrs([]slog.Attr) slog.Handler            { return l }
func (l *phaseLog) WithGroup(string) slog.Handler                 { return l }
func (l *phaseLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "mcp server ready" {
		return nil
	}
	var p [5]time.Time
	r.Attrs(func(a slog.Attr) bool {
		if i := slices.Index(phaseKeys, a.Key); i >= 0 {
			p[i] = a.Value.Time()
		}
		return true
	})
	l.mu.Lock()
	l.ready = append(l.ready, p)
	l.mu.Unlock()
	return nil
}

func (l *phaseLog) reset() {
	l.mu.Lock()
	l.ready = nil
	l.mu.Unlock()
}

// sum adds the boot of n servers just recorded.
func (l *phaseLog) sum(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.boots == nil {
		l.boots, l.spawnSpread, l.mountSpread = map[int]int{}, map[int]time.Duration{}, map[int]time.Duration{}
		l.spawnDur, l.initDur, l.listDur, l.mountDur = map[int]time.Duration{}, map[int]time.Duration{}, map[int]time.Duration{}, map[int]time.Duration{}
	}
	if len(l.ready) != n {
		return
	}
	l.boots[n]++
	l.spawnSpread[n] += spread(l.ready, 1)
	l.mountSpread[n] += spread(l.ready, 4)
	for _, p := range l.ready {
		l.spawnDur[n] += p[1].Sub(p[0]) / time.Duration(n)
		l.initDur[n] += p[2].Sub(p[1]) / time.Duration(n)
		l.listDur[n] += p[3].Sub(p[2]) / time.Duration(n)
		l.mountDur[n] += p[4].Sub(p[3]) / time.Duration(n)
	}
}

// spread is the time between the earliest and the latest instant i.
func spread(ps [][5]time.Time, i int) time.Duration {
	lo, hi := ps[0][i], ps[0][i]
	for _, p := range ps {
		if p[i].Before(lo) {
			lo = p[i]
		}
		if p[i].After(hi) {
			hi = p[i]
		}
	}
	return hi.Sub(lo)
}

func (l *phaseLog) report(b *testing.B) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range []int{1, 5} {
		k := l.boots[n]
		if k == 0 {
			continue
		}
		ms := func(d time.Duration) float64 { return float64(d) / float64(k) / 1e6 }
		p := fmt.Sprintf("p%d-", n)
		if n > 1 {
			b.ReportMetric(ms(l.spawnSpread[n]), p+"spawn-spread-ms")
			b.ReportMetric(ms(l.mountSpread[n]), p+"mounted-spread-ms")
		}
		b.ReportMetric(ms(l.spawnDur[n]), p+"spawn-ms")
		b.ReportMetric(ms(l.initDur[n]), p+"init-ms")
		b.ReportMetric(ms(l.listDur[n]), p+"list-ms")
		b.ReportMetric(ms(l.mountDur[n]), p+"mount-ms")
	}
}
