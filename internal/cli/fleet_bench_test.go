//go:build unix

package cli_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/dshgo/harness/internal/pgtest"
	"github.com/dshgo/harness/plugins/worker"
)

// BenchmarkFleetJobs measures jobs per second through 1 and 3 `harness
// worker` processes sharing one PostgreSQL schema, each with --concurrency
// 1, 2 or 4, with a trivial scripted model (one answer, no tool call): b.N
// jobs are inserted at once (River InsertMany) once the workers are up; the
// clock runs until the last one is completed.
//
// Besides jobs/s it reports CPU seconds per job, from /proc: the worker
// processes with their reaped children (the `harness job-run` processes),
// every postgres process on the machine (backends are reaped by the
// postmaster; other users of the server count too), and this process (the
// llmtest server and the completion poll); and busy-cores, the machine's
// non-idle CPU time over the wall time (all users of the machine), with
// the 1-minute load average at the end; and the CPU the idle workers and
// postgres use (cores) over 3 s before the jobs are inserted; and the
// database's new connections and commits per job (pg_stat_database, every
// client of the database counts). Run (not part of the test pass):
//
//	go test -run '^$' -bench FleetJobs -benchtime 30x ./internal/cli/
//
// Each configuration runs twice, side by side in the output: river-noop
// first (the same number of River clients in this process, each with its
// own pool and the workers' fetchPollInterval of 200 ms, working a job
// that does nothing: the queue's own cost), then harness (the trivial
// agent job). Only the two ends, for the comparison in docs/fleet.md:
//
//	go test -run '^$' -bench 'FleetJobs/(workers=1,concurrency=1|workers=3,concurrency=4)/' -benchtime 40x ./internal/cli/
//
// bench/fleet.sh runs that and prints the table.
func BenchmarkFleetJobs(b *testing.B) {
	for _, workers := range []int{1, 3} {
		for _, conc := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("workers=%d,concurrency=%d", workers, conc), func(b *testing.B) {
				b.Run("river-noop", func(b *testing.B) { benchRiverNoop(b, workers, conc) })
				b.Run("harness", func(b *testing.B) { benchFleet(b, workers, conc) })
			})
		}
	}
}

// noopArgs is the River baseline's job: it does nothing.
type noopArgs struct {
	N int `json:"n"`
}

func (noopArgs) Kind() string { return "bench_noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
}

func (noopWorker) Work(context.Context, *river.Job[noopArgs]) error { return nil }

// benchRiverNoop is the baseline: workers River clients in this process,
// each with its own pool and MaxWorkers conc, work b.N no-op jobs
// inserted at once; the clock runs until the last is completed, polled
// as benchFleet polls.
func benchRiverNoop(b *testing.B, workers, conc int) {
	dsn, schema := pgtest.Schema(b, "clibenchnoop")
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		b.Fatal(err)
	}
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: schema})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		b.Fatal(err)
	}
	for range workers {
		wp, err := pgxpool.New(ctx, dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer wp.Close()
		ws := river.NewWorkers()
		river.AddWorker(ws, noopWorker{})
		c, err := river.NewClient(riverpgxv5.New(wp), &river.Config{
			Schema: schema, Workers: ws, FetchPollInterval: 200 * time.Millisecond, FetchCooldown: 100 * time.Millisecond,
			Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: conc}},
			Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Start(ctx); err != nil {
			b.Fatal(err)
		}
		defer func() { _ = c.Stop(ctx) }()
	}
	ins, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Schema: schema})
	if err != nil {
		b.Fatal(err)
	}
	params := make([]river.InsertManyParams, b.N)
	for i := range params {
		params[i] = river.InsertManyParams{Args: noopArgs{N: i}}
	}
	b.ResetTimer()
	start := time.Now()
	if _, err := ins.InsertMany(ctx, params); err != nil {
		b.Fatal(err)
	}
	waitCompleted(b, pool, schema, b.N)
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "jobs/s")
	b.ReportMetric(loadAvg1(), "load1")
}

// waitCompleted polls every 100 ms until n jobs of schema are completed.
func waitCompleted(b *testing.B, pool *pgxpool.Pool, schema string, n int) {
	for {
		var done int
		if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM `+schema+`.river_job WHERE state = 'completed'`).Scan(&done); err != nil {
			b.Fatal(err)
		}
		if done == n {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func benchFleet(b *testing.B, workers, conc int) {
	f := newFleet(b, "clibench", "", func(m string) string { return strings.Replace(m, "      keepWorkDirs: true\n", "", 1) })
	var pids []int
	for range workers {
		w := f.worker(b, "worker", "--concurrency", strconv.Itoa(conc))
		pids = append(pids, w.cmd.Process.Pid)
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, f.dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Schema: f.schema})
	if err != nil {
		b.Fatal(err)
	}
	params := make([]river.InsertManyParams, b.N)
	for i := range params {
		params[i] = river.InsertManyParams{Args: worker.RunArgs{Prompt: fmt.Sprintf("job %d quick", i+1)}}
	}
	// The idle cost first: the workers polling an empty queue.
	idle0 := sampleCPU(pids)
	time.Sleep(idleSample)
	idle1 := sampleCPU(pids)
	before := idle1
	sess0, xact0 := pgStats(b, pool)
	b.ResetTimer()
	start := time.Now()
	if _, err := client.InsertMany(ctx, params); err != nil {
		b.Fatal(err)
	}
	waitCompleted(b, pool, f.schema, b.N)
	elapsed := time.Since(start)
	b.StopTimer()
	after := sampleCPU(pids)
	time.Sleep(1500 * time.Millisecond) // backends flush their statistics at most every second
	sess1, xact1 := pgStats(b, pool)
	if got := len(f.srv.Requests()); got != b.N {
		b.Fatalf("model requests: %d, want %d", got, b.N)
	}
	n := float64(b.N)
	b.ReportMetric(n/elapsed.Seconds(), "jobs/s")
	b.ReportMetric((after.workers-before.workers)/n, "worker-cpu-s/job")
	b.ReportMetric((after.postgres-before.postgres)/n, "pg-cpu-s/job")
	b.ReportMetric((after.self-before.self)/n, "bench-cpu-s/job")
	b.ReportMetric((after.busy-before.busy)/elapsed.Seconds(), "busy-cores")
	b.ReportMetric(loadAvg1(), "load1")
	b.ReportMetric((idle1.postgres-idle0.postgres)/idleSample.Seconds(), "pg-idle-cores")
	b.ReportMetric((idle1.workers-idle0.workers)/idleSample.Seconds(), "worker-idle-cores")
	b.ReportMetric(float64(sess1-sess0)/n, "pg-connections/job")
	b.ReportMetric(float64(xact1-xact0)/n, "pg-commits/job")
}

// pgStats reads the database's connection and commit counters (every
// client of the database counts).
func pgStats(b *testing.B, pool *pgxpool.Pool) (sessions, commits int64) {
	b.Helper()
	err := pool.QueryRow(context.Background(),
		`SELECT sessions, xact_commit FROM pg_stat_database WHERE datname = current_database()`).Scan(&sessions, &commits)
	if err != nil {
		b.Fatal(err)
	}
	return sessions, commits
}

// idleSample is how long the idle workers are measured.
const idleSample = 3 * time.Second

// cpuSample is CPU time in seconds.
type cpuSample struct {
	workers  float64 // the worker processes and their reaped children
	postgres float64 // every postgres process, with reaped children
	self     float64 // this process
	busy     float64 // the machine's non-idle time, all CPUs
}

// userHZ is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const userHZ = 100

func sampleCPU(workers []int) cpuSample {
	var s cpuSample
	for _, pid := range workers {
		s.workers += procCPU(strconv.Itoa(pid))
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm")); err == nil && strings.TrimSpace(string(comm)) == "postgres" {
			s.postgres += procCPU(e.Name())
		}
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.self = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
		for i := 1; i < len(f); i++ {
			if i == 4 || i == 5 { // idle, iowait
				continue
			}
			v, _ := strconv.ParseFloat(f[i], 64)
			s.busy += v / userHZ
		}
	}
	return s
}

// procCPU is utime+stime+cutime+cstime of /proc/PID/stat in seconds.
func procCPU(pid string) float64 {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3 (state)
	var sum float64
	for _, k := range []int{11, 12, 13, 14} { // fields 14-17
		if k < len(f) {
			v, _ := strconv.ParseFloat(f[k], 64)
			sum += v
		}
	}
	return sum / userHZ
}

func loadAvg1() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
