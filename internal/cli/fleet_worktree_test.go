package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Jobs submitted with --dir REPO --worktree work in git worktrees of
// REPO, not in REPO: two jobs run at once on one repository, each commits
// on its own branch harness/job-ID; the repository's working tree is
// untouched; a job that ends clean has its worktree removed (its branch
// and commit stay) and its output says so; a job that leaves an
// uncommitted file keeps its worktree, and its output says why.
func TestFleetJobsInWorktreesOfOneRepository(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "cliwt", "", func(m string) string { return strings.Replace(m, "keepWorkDirs: true", "keepWorkDirs: false", 1) })
	repo := gitRepo(t, map[string]string{"README": "hello\n"})
	f.worker(t, "worker", "--concurrency", "3")
	commit := func(n string) string {
		return "job " + n + " sh echo " + n + " > f" + n + ".txt && git add f" + n + ".txt && " +
			"git -c user.email=j@example.com -c user.name=job commit -q -m 'job " + n + "'"
	}
	if r := runAgent(t, f.dir, f.m, "", "submit", "--worktree", "auto", "job 9"); r.code != 2 || !strings.Contains(r.stderr, "worktree: needs dir") {
		t.Errorf("submit --worktree without --dir: %d %s", r.code, r.stderr)
	}
	ids := map[int64]string{}
	for _, p := range []string{commit("1"), commit("2"), "job 3 sh echo left > dirty.txt"} {
		ids[submit(t, f.dir, f.m, "--dir", repo, "--worktree", "auto", p)] = p
	}
	waitFor(t, 90*time.Second, "three completed jobs", func() bool {
		rows := jobRows(t, f.dsn, f.schema)
		for id := range ids {
			if rows[id].State != "completed" {
				return false
			}
		}
		return true
	})
	type wtOut struct {
		Name, Branch, Dir string
		Commits, Changed  []string
		Removed           bool
		Kept              string
	}
	outputs := jobOutputs(t, f.dsn, f.schema)
	for id, prompt := range ids {
		var out struct {
			Worktree *wtOut `json:"worktree"`
		}
		if err := json.Unmarshal([]byte(outputs[id]), &out); err != nil || out.Worktree == nil {
			t.Fatalf("job %d: output %s: no worktree (%v)", id, outputs[id], err)
		}
		w := out.Worktree
		if want := "harness/job-" + strconv.FormatInt(id, 10); w.Branch != want {
			t.Errorf("job %d: branch %q, want %q", id, w.Branch, want)
		}
		if !strings.HasPrefix(w.Dir, f.workRoot+string(filepath.Separator)) {
			t.Errorf("job %d: worktree %s is not under the work root %s", id, w.Dir, f.workRoot)
		}
		if strings.HasPrefix(prompt, "job 3") {
			if w.Removed || !strings.Contains(w.Kept, "uncommitted") {
				t.Errorf("job 3 left an untracked file: removed %v, kept %q", w.Removed, w.Kept)
			}
			if _, err := os.Stat(filepath.Join(w.Dir, "dirty.txt")); err != nil {
				t.Errorf("job 3's kept worktree: %v", err)
			}
			continue
		}
		if !w.Removed || len(w.Commits) != 1 {
			t.Errorf("job %d: removed %v (kept %q), commits %v; want removed with one commit", id, w.Removed, w.Kept, w.Commits)
		}
		if _, err := os.Stat(w.Dir); !os.IsNotExist(err) {
			t.Errorf("job %d: the clean worktree %s is still there (%v)", id, w.Dir, err)
		}
		n := strings.Fields(prompt)[1]
		show := exec.Command("git", "show", w.Branch+":f"+n+".txt")
		show.Dir = repo
		if got, err := show.Output(); err != nil || strings.TrimSpace(string(got)) != n {
			t.Errorf("job %d: branch %s holds f%s.txt = %q (%v)", id, w.Branch, n, got, err)
		}
	}
	st := exec.Command("git", "status", "--porcelain")
	st.Dir = repo
	if got, err := st.Output(); err != nil || len(got) != 0 {
		t.Errorf("the repository's own working tree changed: %q (%v)", got, err)
	}
}

// jobOutputs reads River's output of every job.
func jobOutputs(t testing.TB, dsn, schema string) map[int64]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, `SELECT id, coalesce((metadata->'output')::text, '') FROM `+schema+`.river_job`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var o string
		if err := rows.Scan(&id, &o); err != nil {
			t.Fatal(err)
		}
		out[id] = o
	}
	return out
}
