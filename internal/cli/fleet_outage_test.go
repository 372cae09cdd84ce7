package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/internal/pgtest"
)

// Two workers (concurrency 3) run six jobs, each in a bash call that waits
// for a gate file in its work dir, when PostgreSQL goes away for 6 s: every
// connection of the workers and of their runs (all through a proxy the test
// cuts and restores) is closed and new ones refused, as in a restart. The
// gates open just after the cut, so the runs' tool results are appended
// during the outage: they wait and are stored once the database is back;
// the heartbeats missed meanwhile (6 s, heartbeatTimeout 2 s) do not make
// either worker hand the other's jobs back. Every job completes on its
// first attempt, with one tool run and two model calls. (The gate, not a
// fixed sleep, holds the six calls open: on a loaded machine the last run
// may boot after the first one's sleep has ended.)
func TestFleetRidesOutADatabaseOutage(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "clioutage", "      heartbeatTimeout: 2s\n", nil)
	px := pgtest.NewProxy(t)
	f.m = strings.ReplaceAll(f.m, fmt.Sprintf("%q", f.dsn), fmt.Sprintf("%q", px.DSN))
	f.cfgWrite(t)
	a := f.worker(t, "--log-level", "info", "worker", "--concurrency", "3")
	b := f.worker(t, "--log-level", "info", "worker", "--concurrency", "3")
	mark := uniqueMark()
	ids := map[int64]int{}
	prompts := map[int]string{}
	for n := 1; n <= 6; n++ {
		prompts[n] = fmt.Sprintf("job %d sh export HMARK=%s-%d; while [ ! -e gate ]; do sleep 0.1; done; echo %d >> out.txt", n, mark, n, n)
		ids[submit(t, f.dir, f.m, prompts[n])] = n
	}
	waitFor(t, 180*time.Second, "the six tool calls", func() bool {
		for n := 1; n <= 6; n++ {
			if len(markedProcesses(fmt.Sprintf("%s-%d;", mark, n))) == 0 {
				return false
			}
		}
		return true
	})
	px.Cut()
	cut := time.Now()
	dirs, err := filepath.Glob(filepath.Join(f.workRoot, "*"))
	if err != nil || len(dirs) < 6 {
		t.Fatalf("work dirs %v %v, want six", dirs, err)
	}
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, "gate"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(6 * time.Second)
	px.Restore()
	t.Logf("database cut off for %s", time.Since(cut).Round(time.Millisecond))
	waitFor(t, 90*time.Second, "the six jobs to end", func() bool {
		rows := jobRows(t, f.dsn, f.schema)
		for id := range ids {
			if s := rows[id].State; s != "completed" && s != "discarded" && s != "cancelled" {
				return false
			}
		}
		return true
	})
	by := map[string]int{}
	for id, n := range ids {
		j := jobJSONOf(t, f.dir, f.m, id)
		if j.State != "completed" || j.Attempt != 1 || len(j.Errors) != 0 || j.Output == nil || j.Output.Text != fmt.Sprintf("done %d", n) || j.Output.Resumed {
			t.Errorf("job %d: %s attempt %d errors %+v output %+v; want completed on attempt 1 with done %d", id, j.State, j.Attempt, j.Errors, j.Output, n)
		}
		if len(j.AttemptedBy) > 0 {
			by[j.AttemptedBy[0]]++
		}
		if reqs := requestsFor(t, f.srv, prompts[n]); len(reqs) != 2 {
			t.Errorf("job %d: %d model requests, want 2", id, len(reqs))
		}
		out, err := os.ReadFile(filepath.Join(f.workRoot, j.SessionID, "out.txt"))
		if err != nil || string(out) != fmt.Sprintf("%d\n", n) {
			t.Errorf("job %d: out.txt %q %v, want the one line %d", id, out, err, n)
		}
		show := runAgent(t, f.dir, f.m, "", "sessions", "show", j.SessionID)
		if !strings.Contains(show.stdout, fmt.Sprintf("── tool result: bash (call-%d) ──", n)) || !strings.Contains(show.stdout, fmt.Sprintf("done %d", n)) {
			t.Errorf("job %d: session:\n%s", id, show.stdout)
		}
	}
	if by[a.id] != 3 || by[b.id] != 3 {
		t.Errorf("jobs per worker: %v, want 3 on each (%s, %s)", by, a.id, b.id)
	}
	for _, w := range []*fleetWorker{a, b} {
		if out := w.stderr.String(); strings.Contains(out, "jobs of gone workers handed back") {
			t.Errorf("worker %s handed jobs back:\n%s", w.id, out)
		}
	}
	t.Logf("worker a:\n%s", a.stderr.String())
}

// A job's run that starts while PostgreSQL is away (the worker fetched the
// job just before) waits for it, up to dbOutageGrace, and then runs,
// instead of failing its boot (which reads as a configuration error: the
// job cancelled).
func TestJobRunWaitsForTheDatabaseBeforeItBoots(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "clijobrunwait", "", nil)
	px := pgtest.NewProxy(t)
	m := strings.ReplaceAll(f.m, fmt.Sprintf("%q", f.dsn), fmt.Sprintf("%q", px.DSN))
	px.Cut()
	restored := make(chan struct{})
	go func() {
		defer close(restored)
		time.Sleep(3 * time.Second)
		px.Restore()
	}()
	spec := `{"jobId": 1, "attempt": 1, "sessionId": "job-1-20261206T000000", "prompt": "job 1 quick", "dbOutageGrace": 30000000000}`
	r := runAgent(t, f.dir, m, spec, "job-run")
	<-restored
	var v struct {
		Result string `json:"result"`
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal([]byte(r.stdout), &v)
	if r.code != 0 || v.Result != "done 1" || v.Reason != "stop" || !strings.Contains(r.stderr, "harness job-run: waiting for PostgreSQL (try 1, next in 1s): PostgreSQL is unreachable at "+px.Addr) {
		t.Fatalf("job-run started during an outage: %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}
