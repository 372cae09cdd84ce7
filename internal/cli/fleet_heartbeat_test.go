package cli_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A worker killed with SIGKILL (kill -9) mid-job stops sending heartbeats:
// once heartbeatTimeout (3 s here) has passed, `harness jobs` shows its job
// as running (worker gone, retrying), and the next worker hands the job
// back to the queue at once and resumes its session, although rescueAfter
// is River's default of 1 h.
func TestFleetDeadWorkerNoticedByHeartbeat(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "cli", "      heartbeatTimeout: 3s\n", nil)
	a := f.worker(t, "worker")
	mark := uniqueMark()
	prompt := "job 1 hang " + mark
	id := submit(t, f.dir, f.m, prompt)
	waitFor(t, 60*time.Second, "the hanging tool", func() bool { return len(markedProcesses(mark)) > 0 })
	_ = a.cmd.Process.Kill()
	<-a.exited
	a.exited <- nil
	killed := time.Now()
	waitFor(t, 20*time.Second, "the killed worker's tools to stop", func() bool { return len(markedProcesses(mark)) == 0 })

	ids := strconv.FormatInt(id, 10)
	line := regexp.MustCompile(`(?m)^` + ids + ` +running \(worker gone, retrying\) +1/5 `)
	var last string
	deadline := time.Now().Add(30 * time.Second)
	for !line.MatchString(last) {
		if time.Now().After(deadline) {
			t.Fatalf("jobs does not say the worker is gone:\n%s", last)
		}
		time.Sleep(200 * time.Millisecond)
		r := runAgent(t, f.dir, f.m, "", "jobs")
		last = r.stdout + r.stderr
	}
	if d := time.Since(killed); d < 2*time.Second {
		t.Errorf("the worker was taken for gone %s after its kill, before heartbeatTimeout", d)
	}
	if j := jobJSONOf(t, f.dir, f.m, id); j.State != "running" || !j.WorkerGone {
		t.Errorf("jobs show --json: state %q workerGone %v, want running and gone", j.State, j.WorkerGone)
	}
	if show := runAgent(t, f.dir, f.m, "", "jobs", "show", ids); !strings.Contains(show.stdout, "running (worker gone, retrying)") {
		t.Errorf("jobs show:\n%s", show.stdout)
	}

	b := f.worker(t, "--log-level", "info", "worker")
	started := time.Now()
	waitFor(t, 90*time.Second, "the job to complete on the second worker", func() bool {
		return jobRows(t, f.dsn, f.schema)[id].State == "completed"
	})
	t.Logf("kill to completion on the next worker: %s (that worker started %s after the kill)", time.Since(killed), started.Sub(killed))
	j := jobJSONOf(t, f.dir, f.m, id)
	if j.Attempt != 2 || len(j.AttemptedBy) != 2 || j.AttemptedBy[0] != a.id || j.AttemptedBy[1] != b.id {
		t.Errorf("job: attempt %d by %v, want 2 by %s then %s", j.Attempt, j.AttemptedBy, a.id, b.id)
	}
	if len(j.Errors) != 1 || !strings.Contains(j.Errors[0].Error, "worker gone: worker "+a.id+" sent no heartbeat for 3s") {
		t.Errorf("job errors: %+v, want one naming the gone worker", j.Errors)
	}
	if j.Output == nil || !j.Output.Resumed || j.Output.Text != "done 1" || j.WorkerGone {
		t.Errorf("job output: %+v (workerGone %v), want the resumed answer", j.Output, j.WorkerGone)
	}
	checkResumed(t, f.srv, prompt)
}
