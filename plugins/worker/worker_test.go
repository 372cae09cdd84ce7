package worker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
	"go.uber.org/goleak"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/internal/pgtest"
	"github.com/dshgo/harness/plugins/worker"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func start(t *testing.T) *worker.Service {
	dsn, schema := pgtest.Schema(t, "w")
	h := harnesstest.Start(t, fmt.Sprintf(`plugins:
  - name: subprocess-local
  - name: sessions-postgres
    config: {dsn: %q, schema: %s, poolSize: 2}
  - name: worker
    config: {dsn: %q, schema: %s, poolSize: 2, workRoot: %s}
`, dsn, schema, dsn, schema, t.TempDir()))
	return harnesstest.Service(t, h, worker.Key)
}

// A bad row names every bad field.
func TestConfigErrorsNameTheFields(t *testing.T) {
	t.Parallel()
	var c worker.Config
	c.SetDefaults()
	c.Schema, c.JobTimeout, c.RescueAfter, c.WorkRoot = "Bad-Name", 2*time.Hour, time.Hour, "rel/dir"
	c.HeartbeatTimeout = 500 * time.Millisecond
	err := c.Validate()
	var ce *core.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("Validate: %v", err)
	}
	var paths []string
	for _, i := range ce.Issues {
		paths = append(paths, i.Path)
	}
	if got := strings.Join(paths, ","); got != "dsn,schema,rescueAfter,heartbeatTimeout,workRoot" {
		t.Fatalf("issues at %s: %v", got, err)
	}
}

// Submit validates, enqueues with priority and tags, and with Unique
// returns the existing job for an equal key; List filters by tag; Cancel
// makes a pending job cancelled; unknown ids are ErrJobNotFound.
func TestSubmitListCancel(t *testing.T) {
	t.Parallel()
	w := start(t)
	ctx := context.Background()
	for _, bad := range []worker.RunArgs{{}, {Prompt: "x", Repo: "r", Dir: "/d"}, {Prompt: "x", Dir: "rel"}, {Prompt: "x", Ref: "main"},
		{Prompt: "x", Repo: "--upload-pack=evil"}, {Prompt: "x", Patch: "plugins: ["}} {
		if _, err := w.Submit(ctx, worker.Submission{Args: bad}); err == nil {
			t.Errorf("Submit(%+v) succeeded", bad)
		}
	}
	a, err := w.Submit(ctx, worker.Submission{Args: worker.RunArgs{Prompt: "one", Key: "issue-7"}, Unique: true, Priority: 2, Tags: []string{"ci-bot", "issue-7"}})
	if err != nil || a.Duplicate || a.Job.Priority != 2 || a.Job.State != rivertype.JobStateAvailable {
		t.Fatalf("Submit: %+v %v", a, err)
	}
	b, err := w.Submit(ctx, worker.Submission{Args: worker.RunArgs{Prompt: "one again", Key: "issue-7"}, Unique: true})
	if err != nil || !b.Duplicate || b.Job.ID != a.Job.ID {
		t.Fatalf("unique Submit: %+v %v, want job %d", b, err, a.Job.ID)
	}
	c, err := w.Submit(ctx, worker.Submission{Args: worker.RunArgs{Prompt: "two"}})
	if err != nil || c.Duplicate {
		t.Fatalf("Submit: %+v %v", c, err)
	}
	jobs, err := w.List(ctx, worker.ListQuery{Tags: []string{"ci-bot"}})
	if err != nil || len(jobs) != 1 || jobs[0].ID != a.Job.ID {
		t.Fatalf("List by tag: %v %v", jobs, err)
	}
	if all, err := w.List(ctx, worker.ListQuery{}); err != nil || len(all) != 2 || all[0].ID != c.Job.ID {
		t.Fatalf("List: %v %v", all, err)
	}
	j, err := w.Cancel(ctx, c.Job.ID)
	if err != nil || j.State != rivertype.JobStateCancelled {
		t.Fatalf("Cancel: %+v %v", j, err)
	}
	if _, err := w.Get(ctx, 999999); !errors.Is(err, worker.ErrJobNotFound) {
		t.Fatalf("Get unknown: %v", err)
	}
	if got := worker.SessionID(a.Job); !strings.HasPrefix(got, fmt.Sprintf("job-%d-", a.Job.ID)) {
		t.Fatalf("SessionID: %s", got)
	}
}
