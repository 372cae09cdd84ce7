package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/sessions/postgres"
)

// git runs git in dir and returns its trimmed output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// The submit options and `jobs logs` on one worker process: --repo URL
// --ref clones that ref into a fresh work dir, --repo PATH clones HEAD,
// --dir works in place, --job-patch changes the run's manifest; `jobs
// logs` prints a finished job's session, and a job whose session is open
// elsewhere is snoozed (the run exits ExitSessionBusy) and runs once the
// session is free.
func TestFleetJobOptions(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "cli", "", nil)

	// Snooze set-up, before any worker runs: a job whose session another
	// process (this test) holds open. Its session has the prompt only, so
	// the worker resumes it, and the run finds it locked.
	const busyPrompt = "job 50"
	busy := submit(t, f.dir, f.m, busyPrompt)
	busySID := sessionOf(t, f.dir, f.m, busy)
	ctx := context.Background()
	prov, err := postgres.Open(ctx, postgres.Options{DSN: f.dsn, Schema: f.schema, PoolSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	store := sessions.New(prov)
	t.Cleanup(func() { _ = store.Close() })
	hold, err := store.Create(ctx, sessions.Header{ID: busySID, Cwd: f.workRoot, Model: "test/m1", Origin: "job"})
	if err != nil {
		t.Fatal(err)
	}
	e, err := agent.Record{Type: agent.RecordUser, Turn: 1, Message: &llm.Message{Role: llm.RoleUser, Content: busyPrompt}}.Entry()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hold.Append(ctx, e); err != nil {
		t.Fatal(err)
	}

	w := f.worker(t, "worker", "--concurrency", "4")

	t.Run("busy session is snoozed", func(t *testing.T) {
		t.Parallel()
		waitFor(t, 60*time.Second, "the job to be snoozed", func() bool {
			r := jobRows(t, f.dsn, f.schema)[busy]
			return r.State == "scheduled" && len(r.AttemptedBy) > 0
		})
		if n := len(requestsFor(t, f.srv, busyPrompt)); n != 0 {
			t.Fatalf("the snoozed job called the model %d times", n)
		}
		// The worker's log names the holder: this process.
		holder := fmt.Sprintf("session %s is in use by harness pid %d", busySID, os.Getpid())
		waitFor(t, 10*time.Second, "the worker's log of the snooze", func() bool {
			return strings.Contains(w.stderr.String(), "job snoozed") && strings.Contains(w.stderr.String(), holder)
		})
		if err := hold.Close(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 60*time.Second, "the job to complete once the session is free", func() bool {
			return jobRows(t, f.dsn, f.schema)[busy].State == "completed"
		})
		j := jobJSONOf(t, f.dir, f.m, busy)
		// A snooze is not an attempt (River): the job completes on attempt 1.
		if j.Attempt != 1 || j.Output == nil || !j.Output.Resumed || j.Output.Text != "done 50" || len(j.Errors) != 0 {
			t.Errorf("job: %+v output %+v, want the resumed answer on attempt 1 and no error", j, j.Output)
		}
		if n := len(requestsFor(t, f.srv, busyPrompt)); n != 2 {
			t.Errorf("model requests: %d, want 2", n)
		}
		show := runAgent(t, f.dir, f.m, "", "sessions", "show", busySID)
		if strings.Count(show.stdout, "── user") != 1 || !strings.Contains(show.stdout, "done 50") {
			t.Errorf("sessions show:\n%s%s", show.stdout, show.stderr)
		}
	})

	t.Run("repo and ref", func(t *testing.T) {
		t.Parallel()
		repo := gitRepo(t, map[string]string{"version.txt": "v1\n"})
		git(t, repo, "tag", "v1")
		tagged := git(t, repo, "rev-parse", "HEAD")
		if err := os.WriteFile(filepath.Join(repo, "version.txt"), []byte("v2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, repo, "commit", "-q", "-am", "v2")
		head := git(t, repo, "rev-parse", "HEAD")

		// A file URL at the tag, and the path at HEAD.
		atRef := submit(t, f.dir, f.m, "--repo", "file://"+repo, "--ref", "v1", "job 40 sh cat version.txt > seen.txt")
		atHead := submit(t, f.dir, f.m, "--repo", repo, "job 41 sh cat version.txt > seen.txt")
		for _, c := range []struct {
			id            int64
			want, version string
		}{{atRef, tagged, "v1\n"}, {atHead, head, "v2\n"}} {
			waitFor(t, 90*time.Second, "the job to complete", func() bool { return jobRows(t, f.dsn, f.schema)[c.id].State == "completed" })
			work := filepath.Join(f.workRoot, sessionOf(t, f.dir, f.m, c.id))
			if b, err := os.ReadFile(filepath.Join(work, "seen.txt")); err != nil || string(b) != c.version {
				t.Errorf("job %d saw version.txt %q (%v), want %q", c.id, b, err, c.version)
			}
			if got := git(t, work, "rev-parse", "HEAD"); got != c.want {
				t.Errorf("job %d work dir at %s, want %s", c.id, got, c.want)
			}
		}

		// jobs logs of the finished job prints its whole session.
		logs := runAgent(t, f.dir, f.m, "", "jobs", "logs", strconv.FormatInt(atRef, 10))
		if logs.code != 0 {
			t.Fatalf("jobs logs: %d %s %s", logs.code, logs.stdout, logs.stderr)
		}
		sid := sessionOf(t, f.dir, f.m, atRef)
		for _, want := range []string{"session " + sid, "job 40 sh cat version.txt", "── tool result: bash (call-40) ──", "done 40"} {
			if !strings.Contains(logs.stdout, want) {
				t.Errorf("jobs logs lacks %q:\n%s", want, logs.stdout)
			}
		}
		if want := fmt.Sprintf("job %d completed\n", atRef); logs.stderr != want {
			t.Errorf("jobs logs stderr %q, want %q", logs.stderr, want)
		}
		show := runAgent(t, f.dir, f.m, "", "sessions", "show", sid)
		if show.stdout != logs.stdout {
			t.Errorf("jobs logs differs from sessions show:\n%s\n---\n%s", logs.stdout, show.stdout)
		}
		// --json: one stored record per line, all of them.
		lines := runAgent(t, f.dir, f.m, "", "jobs", "logs", "--json", strconv.FormatInt(atRef, 10))
		recs, err := store.Read(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Split(strings.TrimSuffix(lines.stdout, "\n"), "\n")
		if len(got) != len(recs) {
			t.Fatalf("jobs logs --json: %d lines, want %d records:\n%s", len(got), len(recs), lines.stdout)
		}
		for i, l := range got {
			var v struct {
				Seq int64 `json:"seq"`
			}
			if err := json.Unmarshal([]byte(l), &v); err != nil || v.Seq != recs[i].Seq {
				t.Errorf("line %d: %v seq %d, want %d: %s", i, err, v.Seq, recs[i].Seq, l)
			}
		}
	})

	t.Run("dir", func(t *testing.T) {
		t.Parallel()
		place := t.TempDir()
		if err := os.WriteFile(filepath.Join(place, "in.txt"), []byte("in place\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		id := submit(t, f.dir, f.m, "--dir", place, "job 42 sh cat in.txt > copy.txt")
		waitFor(t, 90*time.Second, "the job to complete", func() bool { return jobRows(t, f.dsn, f.schema)[id].State == "completed" })
		if b, err := os.ReadFile(filepath.Join(place, "copy.txt")); err != nil || string(b) != "in place\n" {
			t.Errorf("copy.txt in the --dir: %q %v", b, err)
		}
		if _, err := os.Stat(filepath.Join(f.workRoot, sessionOf(t, f.dir, f.m, id))); !os.IsNotExist(err) {
			t.Errorf("a --dir job made a work dir under the work root: %v", err)
		}
	})

	t.Run("job patch", func(t *testing.T) {
		t.Parallel()
		mark := uniqueMark()
		patch := filepath.Join(t.TempDir(), "patch.yml")
		if err := os.WriteFile(patch, []byte(fmt.Sprintf("- {id: systemprompt, config: {personaSuffix: %q}}\n", "Patched "+mark)), 0o600); err != nil {
			t.Fatal(err)
		}
		const prompt = "job 43 quick"
		id := submit(t, f.dir, f.m, "--job-patch", patch, prompt)
		waitFor(t, 90*time.Second, "the job to complete", func() bool { return jobRows(t, f.dsn, f.schema)[id].State == "completed" })
		reqs := requestsFor(t, f.srv, prompt)
		if len(reqs) != 1 || reqs[0].Messages[0].Role != "system" || !strings.Contains(reqs[0].Messages[0].Text(), "Patched "+mark) {
			t.Fatalf("the patched run's system prompt lacks the patch's suffix: %+v", reqs)
		}
		for _, r := range f.srv.Requests() {
			if w, err := r.Wire(); err == nil {
				if p, _ := promptOf(w); p != prompt && strings.Contains(string(r.Body), mark) {
					t.Errorf("the request of %q (another job) has the patch's suffix", p)
				}
			}
		}
		// The patch file the worker wrote for the run is gone.
		if left, _ := filepath.Glob(filepath.Join(f.workRoot, ".patch-*")); len(left) != 0 {
			t.Errorf("patch files left: %v", left)
		}
	})
}
