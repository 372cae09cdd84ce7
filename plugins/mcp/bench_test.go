package mcp_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// npmBinB is npmBin for benchmarks.
func npmBinB(b *testing.B, name string) string {
	b.Helper()
	p := "testdata/npm/node_modules/.bin/" + name
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			b.Fatalf("%s is not installed: run `npm ci --prefix plugins/mcp/testdata/npm`", name)
		}
		b.Skipf("%s is not installed: run `npm ci --prefix plugins/mcp/testdata/npm`", name)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		b.Fatal(err)
	}
	return abs
}

// BenchmarkEchoRoundTrip: one tools/call of server-everything's echo,
// through the harness's whole tool pipeline (registry: validation, policy
// events, body, post-execute) vs the SDK's own client called directly, over
// stdio and over streamable HTTP, in the same run.
//
//	go test ./plugins/mcp -run '^$' -bench EchoRoundTrip -benchmem -count 5
func BenchmarkEchoRoundTrip(b *testing.B) {
	bin := npmBinB(b, "mcp-server-everything")
	b.Run("stdio/pipeline", func(b *testing.B) {
		reg := benchHarness(b, fmt.Sprintf("servers:\n  e:\n    command: %s\n    args: [stdio]\n", bin))
		benchPipeline(b, reg)
	})
	b.Run("stdio/sdk", func(b *testing.B) {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(context.Background(),
			&sdk.CommandTransport{Command: exec.Command(bin, "stdio")}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		benchSDK(b, cs)
	})
	b.Run("stdio/sdk-over-subprocess-pipes", func(b *testing.B) {
		rt, err := subprocess.New(subprocess.Options{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer rt.Close(context.Background())
		dir, _ := os.Getwd()
		h, err := rt.Spawn(subprocess.Spec{Argv: []string{bin, "stdio"}, Dir: dir, Stdin: subprocess.PipeStdin(),
			Stdout: subprocess.PipeOutput(), Stderr: subprocess.Collect(64 << 10), Grace: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(context.Background(),
			&sdk.IOTransport{Reader: h.Stdout(), Writer: h.Stdin()}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		benchSDK(b, cs)
	})
	url := startHTTPServer(b, bin)
	b.Run("http/pipeline", func(b *testing.B) {
		reg := benchHarness(b, fmt.Sprintf("servers:\n  e:\n    url: %s\n", url))
		benchPipeline(b, reg)
	})
	b.Run("http/sdk", func(b *testing.B) {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(context.Background(),
			&sdk.StreamableClientTransport{Endpoint: url}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		benchSDK(b, cs)
	})
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
	bin := npmBinB(b, "mcp-server-everything")
	b.Run("stdio", func(b *testing.B) {
		reg := benchHarness(b, fmt.Sprintf("servers:\n  e:\n    command: %s\n    args: [stdio]\n", bin))
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(context.Background(),
			&sdk.CommandTransport{Command: exec.Command(bin, "stdio")}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		benchPaired(b, reg, cs)
	})
	// The SDK's client with its server in a new session, as the subprocess
	// service starts every child: under sched_autogroup (on here) a new
	// session is a new scheduling group, and on a loaded machine each
	// request/response hop between groups waits longer for a CPU.
	b.Run("stdio-setsid", func(b *testing.B) {
		reg := benchHarness(b, fmt.Sprintf("servers:\n  e:\n    command: %s\n    args: [stdio]\n", bin))
		cmd := exec.Command(bin, "stdio")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(context.Background(),
			&sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		benchPaired(b, reg, cs)
	})
	// The SDK's client over pipes to a server spawned exactly as the
	// pipeline spawns its own (subprocess service: new session, cgroup leaf,
	// scrubbed environment): the ratio is then the pipeline's own cost.
	b.Run("stdio-subprocess", func(b *testing.B) {
		reg := benchHarness(b, fmt.Sprintf("servers:\n  e:\n    command: %s\n    args: [stdio]\n", bin))
		rt, err := subprocess.New(subprocess.Options{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer rt.Close(context.Background())
		dir, _ := os.Getwd()
		h, err := rt.Spawn(subprocess.Spec{Argv: []string{bin, "stdio"}, Dir: dir, Stdin: subprocess.PipeStdin(),
			Stdout: subprocess.PipeOutput(), Stderr: subprocess.Collect(64 << 10), Grace: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(context.Background(),
			&sdk.IOTransport{Reader: h.Stdout(), Writer: h.Stdin()}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		benchPaired(b, reg, cs)
	})
	url := startHTTPServer(b, bin)
	b.Run("http", func(b *testing.B) {
		reg := benchHarness(b, fmt.Sprintf("servers:\n  e:\n    url: %s\n", url))
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(context.Background(),
			&sdk.StreamableClientTransport{Endpoint: url}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		benchPaired(b, reg, cs)
	})
}

func benchPaired(b *testing.B, reg *tools.Registry, cs *sdk.ClientSession) {
	var pipe, direct, pipeCPU, directCPU time.Duration
	for i := 0; b.Loop(); i++ {
		// Alternate which goes first, so neither always follows the other.
		for j := range 2 {
			start, c0 := time.Now(), selfCPU()
			if (i+j)%2 == 0 {
				o := reg.Execute(context.Background(), tools.Call{ID: "b", Name: "mcp__e__echo", Arguments: `{"message":"hi"}`})
				if o.IsError {
					b.Fatal(tools.TextOf(o.Content))
				}
				pipe += time.Since(start)
				pipeCPU += selfCPU() - c0
			} else {
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
				if err != nil || res.IsError {
					b.Fatal(err)
				}
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

func benchHarness(b *testing.B, cfg string) *tools.Registry {
	h := harnesstest.Start(b, "plugins:\n  - name: subprocess-local\n  - name: tools\n  - name: mcp\n    config:\n"+indent(cfg, "      "))
	m := harnesstest.Service(b, h, mcp.Key)
	if err := m.Wait(context.Background()); err != nil {
		b.Fatal(err)
	}
	for _, s := range m.Servers() {
		if s.State != mcp.StateReady {
			b.Fatalf("%s: %s: %s", s.Name, s.State, s.Error)
		}
	}
	return harnesstest.Service(b, h, tools.Key)
}

func benchPipeline(b *testing.B, reg *tools.Registry) {
	b.ReportAllocs()
	for b.Loop() {
		o := reg.Execute(context.Background(), tools.Call{ID: "b", Name: "mcp__e__echo", Arguments: `{"message":"hi"}`})
		if o.IsError {
			b.Fatal(tools.TextOf(o.Content))
		}
	}
}

func benchSDK(b *testing.B, cs *sdk.ClientSession) {
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
		if err != nil || res.IsError {
			b.Fatal(err)
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

// BenchmarkConnect: booting an mcp row with one stdio server vs five
// started in parallel (the Go fixture server; ns/op is the time until every
// server is ready and its tools are registered; closing is not timed).
//
//	go test ./plugins/mcp -run '^$' -bench Connect -benchmem -count 5
func BenchmarkConnect(b *testing.B) {
	for _, n := range []int{1, 5} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			var cfg strings.Builder
			cfg.WriteString("grace: 500ms\nservers:\n")
			for i := range n {
				fmt.Fprintf(&cfg, "  s%d: {command: %s, args: [ok]}\n", i, fixture)
			}
			manifest := "plugins:\n  - name: subprocess-local\n  - name: tools\n  - name: mcp\n    config:\n" + indent(cfg.String(), "      ")
			for b.Loop() {
				h := start(b, manifest)
				m := harnesstest.Service(b, h, mcp.Key)
				if err := m.Wait(context.Background()); err != nil {
					b.Fatal(err)
				}
				for _, s := range m.Servers() {
					if s.State != mcp.StateReady {
						b.Fatalf("%s: %s %s", s.Name, s.State, s.Error)
					}
				}
				b.StopTimer()
				if err := h.Stop(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// start is harnesstest.Start without the cleanup (the benchmark stops each
// harness itself, untimed).
func start(b *testing.B, manifest string) *fxcore.Harness {
	h, err := harness.New(harness.WithManifest([]byte(manifest)), harness.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		b.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	return h
}

// BenchmarkConnectPaired measures, in every iteration and in rotating
// order, four connects: the mcp row booting one stdio server and five in
// parallel (as BenchmarkConnect), and the same through the SDK's own client
// with its CommandTransport (initialize and tools/list; goroutine per
// server), which is the reference for what this machine allows: five Go
// fixture processes starting at once on two cores cost CPU whoever starts
// them. It reports each mean in ms and the two five-vs-one ratios
// (pipeline-5/1, target ≤ 1.5; sdk-5/1, the reference). Closing is not timed.
// The cpu metrics are the CPU time (user+sys) of this process and of its
// reaped children, the servers included, per connect, closing included.
//
//	go test ./plugins/mcp -run '^$' -bench ConnectPaired -benchtime 10x -count 3
func BenchmarkConnectPaired(b *testing.B) {
	manifest := func(n int) string {
		var cfg strings.Builder
		cfg.WriteString("grace: 500ms\nservers:\n")
		for i := range n {
			fmt.Fprintf(&cfg, "  s%d: {command: %s, args: [ok]}\n", i, fixture)
		}
		return "plugins:\n  - name: subprocess-local\n  - name: tools\n  - name: mcp\n    config:\n" + indent(cfg.String(), "      ")
	}
	pipeline := func(n int) time.Duration {
		t0 := time.Now()
		h := start(b, manifest(n))
		m := harnesstest.Service(b, h, mcp.Key)
		if err := m.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		for _, s := range m.Servers() {
			if s.State != mcp.StateReady {
				b.Fatalf("%s: %s %s", s.Name, s.State, s.Error)
			}
		}
		if err := h.Stop(context.Background()); err != nil {
			b.Fatal(err)
		}
		return d
	}
	direct := func(n int) time.Duration {
		t0 := time.Now()
		sessions := make([]*sdk.ClientSession, n)
		errs := make([]error, n)
		done := make(chan struct{})
		for i := range n {
			go func() {
				defer func() { done <- struct{}{} }()
				cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(context.Background(),
					&sdk.CommandTransport{Command: exec.Command(fixture, "ok")}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
				if err == nil {
					_, err = cs.ListTools(context.Background(), nil)
				}
				sessions[i], errs[i] = cs, err
			}()
		}
		for range n {
			<-done
		}
		d := time.Since(t0)
		for i, cs := range sessions {
			if errs[i] != nil {
				b.Fatal(errs[i])
			}
			_ = cs.Close()
		}
		return d
	}
	cases := []struct {
		run func(int) time.Duration
		n   int
	}{{pipeline, 1}, {pipeline, 5}, {direct, 1}, {direct, 5}}
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
