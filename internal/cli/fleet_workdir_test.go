package cli_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A job's work dir is removed when the job ends completed, cancelled (by
// its outcome or by `jobs cancel` while it runs) or discarded (an error
// on its last attempt); a worker with keepFailed keeps the dirs of the
// cancelled and discarded ones and removes the completed one's.
func TestFleetWorkDirsRemovedOnEveryEnd(t *testing.T) {
	t.Parallel()
	model := newOutcomeModel(t)
	f := newOutcomeFleet(t, model, "wdir", "      maxAttempts: 1\n")
	f.m = strings.Replace(f.m, "keepWorkDirs: true", "keepWorkDirs: false", 1)
	if err := os.WriteFile(f.cfg, []byte(f.m), 0o600); err != nil {
		t.Fatal(err)
	}
	// A second worker, with keepFailed and its own work root, works queue "kept".
	keptRoot := t.TempDir()
	keptM := strings.Replace(strings.Replace(f.m, "workRoot: "+f.workRoot, "workRoot: "+keptRoot, 1),
		"keepWorkDirs: false", "keepWorkDirs: false\n      keepFailed: true", 1)
	keptCfg := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(keptCfg, []byte(keptM), 0o600); err != nil {
		t.Fatal(err)
	}
	f.worker(t, "worker", "--concurrency", "4")
	startWorker(t, f.dir, keptCfg, baseEnv(), "worker", "--queues", "kept", "--concurrency", "3")

	stalled := submit(t, f.dir, f.m, "job 4 stall")
	sid := sessionOf(t, f.dir, f.m, stalled)
	waitFor(t, 60*time.Second, "the stalled job's work dir", func() bool {
		_, err := os.Stat(filepath.Join(f.workRoot, sid))
		return err == nil && model.requests("job 4 stall") == 1
	})
	if r := runAgent(t, f.dir, f.m, "", "jobs", "cancel", strconv.FormatInt(stalled, 10)); r.code != 0 {
		t.Fatalf("jobs cancel: %d %s %s", r.code, r.stdout, r.stderr)
	}
	jobs := map[int64]string{stalled: "cancelled"}
	for prompt, state := range map[string]string{"job 1": "completed", "job 2 fail 9 500": "discarded", "job 3 fail 9 401": "cancelled"} {
		jobs[submit(t, f.dir, f.m, prompt)] = state
	}
	kept := map[int64]string{}
	for prompt, state := range map[string]string{"job 5": "completed", "job 6 fail 9 500": "discarded", "job 7 fail 9 401": "cancelled"} {
		kept[submit(t, f.dir, f.m, "--queue", "kept", prompt)] = state
	}
	waitFor(t, 90*time.Second, "every job to end", func() bool {
		rows := jobRows(t, f.dsn, f.schema)
		for _, set := range []map[int64]string{jobs, kept} {
			for id, state := range set {
				if rows[id].State != state {
					return false
				}
			}
		}
		return true
	})
	// The worker removes a dir right after the attempt; River records the
	// state a moment later, so the dirs are gone by now.
	if left, _ := os.ReadDir(f.workRoot); len(left) != 0 {
		t.Errorf("work root keeps %d entries (%v), want none", len(left), names(left))
	}
	for id, state := range kept {
		_, err := os.Stat(filepath.Join(keptRoot, sessionOf(t, f.dir, f.m, id)))
		if state == "completed" && err == nil {
			t.Errorf("keepFailed kept completed job %d's work dir", id)
		}
		if state != "completed" && err != nil {
			t.Errorf("keepFailed: %s job %d's work dir: %v", state, id, err)
		}
	}
}

func names(ents []os.DirEntry) []string {
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// A job handed back by a draining worker (SIGTERM, drainTimeout 1 s) and
// completed on another worker with its own work root leaves its work dir
// on the first worker's root, which the other worker cannot remove: the
// first worker removes it when it starts again (it sweeps its work root
// for the dirs of jobs that ended elsewhere).
func TestFleetWorkDirOfAHandedBackJobRemoved(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "cliswept", "      drainTimeout: 1s\n", func(m string) string {
		return strings.Replace(m, "keepWorkDirs: true", "keepWorkDirs: false", 1)
	})
	otherRoot := t.TempDir()
	otherCfg := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(otherCfg, []byte(strings.Replace(f.m, "workRoot: "+f.workRoot, "workRoot: "+otherRoot, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	a := f.worker(t, "worker")
	mark := uniqueMark()
	id := submit(t, f.dir, f.m, "job 1 hang "+mark)
	waitFor(t, 60*time.Second, "the hanging tool", func() bool { return len(markedProcesses(mark)) > 0 })
	sid := sessionOf(t, f.dir, f.m, id)
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	if err := <-a.exited; err != nil {
		t.Fatalf("drained worker: %v\n%s", err, a.stderr.String())
	}
	a.exited <- nil
	if _, err := os.Stat(filepath.Join(f.workRoot, sid)); err != nil {
		t.Fatalf("the handed-back job's work dir: %v, want kept for its retry", err)
	}
	startWorker(t, f.dir, otherCfg, baseEnv(), "worker")
	waitFor(t, 90*time.Second, "the job to complete on the other worker", func() bool { return jobRows(t, f.dsn, f.schema)[id].State == "completed" })
	if _, err := os.Stat(filepath.Join(f.workRoot, sid)); err != nil {
		t.Fatalf("the first worker's copy of the work dir: %v, want still there before it restarts", err)
	}
	f.worker(t, "--log-level", "info", "worker")
	waitFor(t, 20*time.Second, "the restarted worker to remove the work dir", func() bool {
		_, err := os.Stat(filepath.Join(f.workRoot, sid))
		return os.IsNotExist(err)
	})
}
