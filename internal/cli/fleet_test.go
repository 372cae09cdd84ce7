package cli_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dshgo/harness/internal/pgtest"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// fleetModel is the scripted model of the fleet tests. A job's prompt is
// "job N" (one bash call appending N to out.txt, then "done N"), "job N
// hang MARK" (bash sleeps 300 s with MARK in its environment), "job N slow
// MARK" (the same for 2 s), "job N sh CMD" (bash runs CMD) or "job N quick"
// (no tool call: the answer at once). Once a tool result, even an
// interrupted one, is in the history the answer is "done N". It answers
// concurrent requests from any number of runs.
func fleetModel(t testing.TB) *llmtest.Server {
	re := regexp.MustCompile(`^job (\d+)(?: (hang|slow|sh|quick) ?(.*))?$`)
	check := func(_ llmtest.Request, w llmtest.WireRequest) *llmtest.Turn {
		prompt, tools := promptOf(w)
		g := re.FindStringSubmatch(prompt)
		if g == nil {
			tt := llmtest.Error(400, "unexpected prompt "+prompt)
			return &tt
		}
		if tools > 0 || g[2] == "quick" {
			tt := text("done " + g[1])
			return &tt
		}
		cmd := fmt.Sprintf("echo %s >> out.txt", g[1])
		switch g[2] {
		case "hang":
			cmd = fmt.Sprintf("export HMARK=%s; sleep 300; echo %s >> out.txt", g[3], g[1])
		case "slow":
			cmd = fmt.Sprintf("export HMARK=%s; sleep 2; echo %s >> out.txt", g[3], g[1])
		case "sh":
			cmd = g[3]
		}
		args, _ := json.Marshal(map[string]string{"command": cmd, "description": "job step"})
		tt := toolCall("call-"+g[1], "bash", string(args))
		return &tt
	}
	return llmtest.New(t, nil, llmtest.WithCheck(check))
}

// promptOf returns a request's first user message and its number of tool
// results.
func promptOf(w llmtest.WireRequest) (prompt string, tools int) {
	for _, m := range w.Messages {
		if m.Role == "user" && prompt == "" {
			prompt = m.Text()
		}
		if m.Role == "tool" {
			tools++
		}
	}
	return prompt, tools
}

// requestsFor returns the model requests whose prompt is prompt.
func requestsFor(t testing.TB, srv *llmtest.Server, prompt string) []llmtest.WireRequest {
	t.Helper()
	var out []llmtest.WireRequest
	for _, r := range srv.Requests() {
		w, err := r.Wire()
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := promptOf(w); p == prompt {
			out = append(out, w)
		}
	}
	return out
}

// fleetManifest is agentManifest with sessions on PostgreSQL, the
// workspace-write sandbox and a worker row.
func fleetManifest(url, dsn, schema, workRoot, workerExtra string) string {
	m := agentManifest(url, "/nonexistent", fmt.Sprintf(`  - name: worker
    config:
      dsn: %q
      schema: %s
      workRoot: %s
      keepWorkDirs: true
      fetchPollInterval: 200ms
      grace: 2s
%s`, dsn, schema, workRoot, workerExtra))
	m = strings.Replace(m, "  - name: sessions-jsonl\n    config:\n      stateDir: /nonexistent\n",
		fmt.Sprintf("  - name: sessions-postgres\n    config:\n      dsn: %q\n      schema: %s\n      poolSize: 2\n", dsn, schema), 1)
	return strings.Replace(m, "  - name: subprocess-local\n", "  - name: subprocess-local\n    config:\n      sandbox: {mode: workspace-write, network: off}\n", 1)
}

// fleet is the set-up of a fleet test: a fresh schema, the scripted
// model, the directory jobs are submitted from, the work root, and the
// manifest as text (m) and as the file workers read (cfg).
type fleet struct {
	dsn, schema   string
	srv           *llmtest.Server
	dir, workRoot string
	m, cfg        string
}

// newFleet sets up a fleet test: fleetManifest with workerExtra, changed
// by edit when it is not nil, in a schema named after schemaPrefix.
func newFleet(t testing.TB, schemaPrefix, workerExtra string, edit func(m string) string) *fleet {
	t.Helper()
	f := &fleet{srv: fleetModel(t), dir: t.TempDir(), workRoot: t.TempDir(), cfg: filepath.Join(t.TempDir(), "harness.yml")}
	f.dsn, f.schema = pgtest.Schema(t, schemaPrefix)
	f.m = fleetManifest(f.srv.URL, f.dsn, f.schema, f.workRoot, workerExtra)
	if edit != nil {
		f.m = edit(f.m)
	}
	if err := os.WriteFile(f.cfg, []byte(f.m), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// fleetWorker is one `harness worker` process.
type fleetWorker struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	id     string // River client id, from its banner
	exited chan error
}

var bannerRE = regexp.MustCompile(`harness worker (\S+): working`)

// worker starts `harness --config f.cfg ARGS...` (a worker) in f.dir and
// waits for its banner; the test's cleanup stops it with SIGTERM.
func (f *fleet) worker(t testing.TB, args ...string) *fleetWorker {
	t.Helper()
	return startWorker(t, f.dir, f.cfg, baseEnv(), args...)
}

// startWorker starts `harness --config cfg ARGS...` (a worker) in dir with
// env and waits for its banner; the test's cleanup stops it with SIGTERM.
func startWorker(t testing.TB, dir, cfg string, env []string, args ...string) *fleetWorker {
	t.Helper()
	w := &fleetWorker{stderr: &syncBuffer{}, exited: make(chan error, 1)}
	w.cmd = exec.Command(harnessBinary(t), append([]string{"--config", cfg}, args...)...)
	w.cmd.Dir, w.cmd.Env, w.cmd.Stderr = dir, env, w.stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.exited <- w.cmd.Wait() }()
	t.Cleanup(func() {
		_ = w.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-w.exited:
		case <-time.After(20 * time.Second):
			_ = w.cmd.Process.Kill()
			<-w.exited
		}
	})
	waitFor(t, 30*time.Second, "worker banner", func() bool {
		if g := bannerRE.FindStringSubmatch(w.stderr.String()); g != nil {
			w.id = g[1]
			return true
		}
		return false
	})
	return w
}

func waitFor(t testing.TB, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// jobRow is what the tests read of River's job table.
type jobRow struct {
	ID          int64
	State       string
	Attempt     int
	AttemptedBy []string
}

func jobRows(t testing.TB, dsn, schema string) map[int64]jobRow {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, `SELECT id, state::text, attempt, coalesce(attempted_by, '{}') FROM `+schema+`.river_job`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]jobRow{}
	for rows.Next() {
		var r jobRow
		if err := rows.Scan(&r.ID, &r.State, &r.Attempt, &r.AttemptedBy); err != nil {
			t.Fatal(err)
		}
		out[r.ID] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// markedProcesses lists pids whose command line or environment holds mark.
func markedProcesses(mark string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		for _, f := range []string{"cmdline", "environ"} {
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), f))
			if err == nil && strings.Contains(string(b), mark) {
				pids = append(pids, e.Name())
				break
			}
		}
	}
	return pids
}

func uniqueMark() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "fleetmark" + hex.EncodeToString(b[:])
}

func submit(t *testing.T, dir, manifest string, args ...string) int64 {
	t.Helper()
	r := runAgent(t, dir, manifest, "", append([]string{"submit"}, args...)...)
	id, err := strconv.ParseInt(strings.TrimSpace(r.stdout), 10, 64)
	if r.code != 0 || err != nil {
		t.Fatalf("submit %v: %d %q %s", args, r.code, r.stdout, r.stderr)
	}
	return id
}

// Three worker processes share one database: 30 jobs each complete
// exactly once (one tool side effect, two model calls, attempt 1), their
// sessions are complete and readable with `harness sessions show`; a
// cancelled job stops its tools; SIGTERM lets a running job finish and
// the worker exits 0.
func TestFleetEndToEnd(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "cli", "", nil)
	var workers []*fleetWorker
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := f.worker(t, "worker", "--concurrency", "2")
			mu.Lock()
			workers = append(workers, w)
			mu.Unlock()
		}()
	}
	wg.Wait()
	ids := map[int64]int{}
	for n := 1; n <= 30; n++ {
		ids[submit(t, f.dir, f.m, "--tag", "e2e", fmt.Sprintf("job %d", n))] = n
	}
	waitFor(t, 3*time.Minute, "30 completed jobs", func() bool {
		done := 0
		for _, r := range jobRows(t, f.dsn, f.schema) {
			if r.State == "completed" {
				done++
			}
		}
		return done == 30
	})
	by := map[string]int{}
	for id, r := range jobRows(t, f.dsn, f.schema) {
		n := ids[id]
		if r.Attempt != 1 || len(r.AttemptedBy) != 1 {
			t.Errorf("job %d (job %d): attempt %d by %v, want exactly one", id, n, r.Attempt, r.AttemptedBy)
		}
		by[r.AttemptedBy[0]]++
		sid := sessionOf(t, f.dir, f.m, id)
		out, err := os.ReadFile(filepath.Join(f.workRoot, sid, "out.txt"))
		if err != nil || string(out) != fmt.Sprintf("%d\n", n) {
			t.Errorf("job %d: out.txt %q %v, want the one line %d", id, out, err, n)
		}
		show := runAgent(t, f.dir, f.m, "", "sessions", "show", sid)
		for _, want := range []string{"session " + sid, fmt.Sprintf("job %d", n), "── tool result: bash (call-" + strconv.Itoa(n) + ") ──", fmt.Sprintf("done %d", n)} {
			if !strings.Contains(show.stdout, want) {
				t.Errorf("sessions show %s lacks %q:\n%s%s", sid, want, show.stdout, show.stderr)
			}
		}
	}
	if got := len(f.srv.Requests()); got != 60 {
		t.Errorf("model requests: %d, want 60 (2 per job)", got)
	}
	t.Logf("jobs per worker: %v", by)

	t.Run("cancel stops the tools", func(t *testing.T) {
		mark := uniqueMark()
		id := submit(t, f.dir, f.m, "job 31 hang "+mark)
		waitFor(t, 60*time.Second, "the hanging tool", func() bool { return len(markedProcesses(mark)) > 0 })
		if r := runAgent(t, f.dir, f.m, "", "jobs", "cancel", strconv.FormatInt(id, 10)); r.code != 0 {
			t.Fatalf("jobs cancel: %d %s %s", r.code, r.stdout, r.stderr)
		}
		waitFor(t, 30*time.Second, "no survivors and a cancelled job", func() bool {
			return len(markedProcesses(mark)) == 0 && jobRows(t, f.dsn, f.schema)[id].State == "cancelled"
		})
		show := runAgent(t, f.dir, f.m, "", "jobs", "show", strconv.FormatInt(id, 10))
		if !strings.Contains(show.stdout, "cancelled") {
			t.Errorf("jobs show: %s %s", show.stdout, show.stderr)
		}
	})

	t.Run("SIGTERM drains", func(t *testing.T) {
		mark := uniqueMark()
		id := submit(t, f.dir, f.m, "job 32 slow "+mark)
		waitFor(t, 60*time.Second, "the slow tool", func() bool { return len(markedProcesses(mark)) > 0 })
		r := jobRows(t, f.dsn, f.schema)[id]
		var w *fleetWorker
		for _, x := range workers {
			if len(r.AttemptedBy) == 1 && x.id == r.AttemptedBy[0] {
				w = x
			}
		}
		if w == nil {
			t.Fatalf("no worker runs job %d: %+v", id, r)
		}
		_ = w.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-w.exited:
			w.exited <- err
			if err != nil {
				t.Fatalf("worker after SIGTERM: %v\n%s", err, w.stderr.String())
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("worker did not drain:\n%s", w.stderr.String())
		}
		r = jobRows(t, f.dsn, f.schema)[id]
		if r.State != "completed" || r.Attempt != 1 {
			t.Fatalf("job after the drain: %+v\n%s", r, w.stderr.String())
		}
		if !strings.Contains(w.stderr.String(), "drained") {
			t.Errorf("worker stderr: %s", w.stderr.String())
		}
	})
}

// sessionOf reads a job's session id with `harness jobs show --json`.
func sessionOf(t *testing.T, dir, m string, id int64) string {
	t.Helper()
	r := runAgent(t, dir, m, "", "jobs", "show", "--json", strconv.FormatInt(id, 10))
	var v struct {
		SessionID string `json:"sessionId"`
		State     string `json:"state"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.SessionID == "" {
		t.Fatalf("jobs show --json %d: %v %q %s", id, err, r.stdout, r.stderr)
	}
	return v.SessionID
}

// A worker killed with SIGKILL mid-job: its run stops its tools (the
// control descriptor closes), River rescues the job after rescueAfter and
// another worker resumes the stored session and completes it. While that
// rescue is awaited, the surviving worker runs a job that outlives
// jobTimeout: the attempt is stopped (its tools die), the job is retried
// and the retry resumes the session and completes it.
func TestFleetWorkerKilled(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "cli", "      jobTimeout: 10s\n      rescueAfter: 12s\n", nil)
	a := f.worker(t, "worker")
	mark := uniqueMark()
	id := submit(t, f.dir, f.m, "job 1 hang "+mark)
	waitFor(t, 60*time.Second, "the hanging tool", func() bool { return len(markedProcesses(mark)) > 0 })
	b := f.worker(t, "--log-level", "info", "worker", "--concurrency", "2")
	_ = a.cmd.Process.Kill()
	<-a.exited
	a.exited <- nil
	waitFor(t, 20*time.Second, "the killed worker's tools to stop", func() bool { return len(markedProcesses(mark)) == 0 })

	// The time limit: only b works now; its run of job 2 hangs past
	// jobTimeout (10 s).
	mark2 := uniqueMark()
	prompt2 := "job 2 hang " + mark2
	id2 := submit(t, f.dir, f.m, prompt2)
	waitFor(t, 60*time.Second, "job 2's hanging tool", func() bool { return len(markedProcesses(mark2)) > 0 })
	started2 := time.Now()
	deadline := time.Now().Add(90 * time.Second)
	for jobRows(t, f.dsn, f.schema)[id].State != "completed" {
		if time.Now().After(deadline) {
			t.Fatalf("the rescued job did not complete: %+v\nworker b:\n%s", jobRows(t, f.dsn, f.schema)[id], b.stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	r := jobRows(t, f.dsn, f.schema)[id]
	if r.Attempt != 2 || len(r.AttemptedBy) != 2 || r.AttemptedBy[0] != a.id || r.AttemptedBy[1] != b.id {
		t.Fatalf("job: %+v, want attempt 2 by %s then %s", r, a.id, b.id)
	}
	sid := sessionOf(t, f.dir, f.m, id)
	show := runAgent(t, f.dir, f.m, "", "sessions", "show", sid)
	for _, want := range []string{"job 1 hang", "done 1"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("sessions show lacks %q:\n%s", want, show.stdout)
		}
	}
	if strings.Count(show.stdout, "── user") != 1 {
		t.Errorf("the resumed run added a prompt:\n%s", show.stdout)
	}
	checkResumed(t, f.srv, "job 1 hang "+mark)

	// Job 2: the attempt was stopped at jobTimeout, its tools with it, and
	// the retry (attempt 2, on b) resumed the session.
	waitFor(t, 60*time.Second, "job 2's tools to stop at its time limit", func() bool { return len(markedProcesses(mark2)) == 0 })
	if d := time.Since(started2); d < 8*time.Second {
		t.Errorf("job 2's tools stopped after %s, before its time limit", d)
	}
	waitFor(t, 90*time.Second, "job 2 to complete on its retry", func() bool { return jobRows(t, f.dsn, f.schema)[id2].State == "completed" })
	j2 := jobJSONOf(t, f.dir, f.m, id2)
	if j2.Attempt != 2 || len(j2.AttemptedBy) != 2 || j2.AttemptedBy[0] != b.id || j2.AttemptedBy[1] != b.id {
		t.Errorf("job 2: attempt %d by %v, want 2 by %s", j2.Attempt, j2.AttemptedBy, b.id)
	}
	if len(j2.Errors) != 1 || !strings.Contains(j2.Errors[0].Error, "run stopped") || !strings.Contains(j2.Errors[0].Error, "deadline") {
		t.Errorf("job 2 errors: %+v, want one saying the run was stopped at its deadline", j2.Errors)
	}
	if j2.Output == nil || !j2.Output.Resumed || j2.Output.Text != "done 2" {
		t.Errorf("job 2 output: %+v, want the resumed answer", j2.Output)
	}
	checkResumed(t, f.srv, prompt2)
}

// checkResumed checks that the run of prompt made two model requests, the
// second (after the resume) ending with the cut call's result: recorded as
// aborted by the stopping run, or read as interrupted when the run died
// first.
func checkResumed(t *testing.T, srv *llmtest.Server, prompt string) {
	t.Helper()
	reqs := requestsFor(t, srv, prompt)
	if len(reqs) != 2 {
		t.Fatalf("%q: model requests: %d, want 2 (the call, then the answer after the resume)", prompt, len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != "tool" || !strings.Contains(last.Text(), "abort") && !strings.Contains(last.Text(), "interrupted") {
		t.Errorf("%q: resumed request ends with %s %q", prompt, last.Role, last.Text())
	}
}

// jobJSONOf reads a job with `harness jobs show --json`.
func jobJSONOf(t *testing.T, dir, m string, id int64) jobShown {
	t.Helper()
	r := runAgent(t, dir, m, "", "jobs", "show", "--json", strconv.FormatInt(id, 10))
	var v jobShown
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || r.code != 0 {
		t.Fatalf("jobs show --json %d: %d %v %q %s", id, r.code, err, r.stdout, r.stderr)
	}
	return v
}

// jobShown is what the tests read of `harness jobs show --json`.
type jobShown struct {
	State       string   `json:"state"`
	Attempt     int      `json:"attempt"`
	AttemptedBy []string `json:"attemptedBy"`
	SessionID   string   `json:"sessionId"`
	WorkerGone  bool     `json:"workerGone"`
	Errors      []struct {
		Attempt int    `json:"attempt"`
		Error   string `json:"error"`
	} `json:"errors"`
	Output *struct {
		Reason  string `json:"reason"`
		Text    string `json:"text"`
		Resumed bool   `json:"resumed"`
	} `json:"output"`
}
