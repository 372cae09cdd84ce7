package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/internal/otlptest"
	"github.com/dshgo/harness/internal/pgtest"
)

// `harness submit` run under a TRACEPARENT stores it with the job; the
// worker (another process, tracing on) starts the job's span as a child
// of it and the job's run process hangs its spans below that: the
// submitter, the worker and the run are one trace in the collector.
func TestSubmitUnderTraceparentJoinsTheSubmittersTrace(t *testing.T) {
	t.Parallel()
	dsn, schema := pgtest.Schema(t, "clitrace")
	col := otlptest.New(t)
	srv := fleetModel(t)
	dir := t.TempDir()
	m := fleetManifest(srv.URL, dsn, schema, t.TempDir(), "  - name: tracing\n")
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(cfg, []byte(m), 0o600); err != nil {
		t.Fatal(err)
	}
	startWorker(t, dir, cfg, append(baseEnv(), "OTEL_EXPORTER_OTLP_ENDPOINT="+col.URL, "OTEL_BSP_SCHEDULE_DELAY=100"), "worker")

	const traceID, parentID = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	sub := processCommand(t, dir, m, append(baseEnv(), "TRACEPARENT=00-"+traceID+"-"+parentID+"-01"), "submit", "job 1")
	var stdout, stderr bytes.Buffer
	sub.Stdout, sub.Stderr = &stdout, &stderr
	if err := sub.Run(); err != nil {
		t.Fatalf("submit: %v\n%s", err, stderr.String())
	}
	id, err := strconv.ParseInt(strings.TrimSpace(stdout.String()), 10, 64)
	if err != nil {
		t.Fatalf("submit printed %q", stdout.String())
	}
	waitFor(t, 2*time.Minute, "job completed", func() bool { return jobRows(t, dsn, schema)[id].State == "completed" })
	// jobs show names the trace, in text and JSON (the binary: the
	// manifest has a tracing row).
	show := func(args ...string) string {
		t.Helper()
		cmd := processCommand(t, dir, m, baseEnv(), append([]string{"jobs", "show"}, args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("jobs show %v: %v\n%s", args, err, stderr.String())
		}
		return stdout.String()
	}
	if out := show(strconv.FormatInt(id, 10)); !strings.Contains(out, "\ntrace "+traceID+" (submitted under span "+parentID+")\nprompt: job 1\n") {
		t.Errorf("jobs show:\n%s", out)
	}
	var shown struct {
		Trace struct{ TraceID, SpanID string }
	}
	if out := show("--json", strconv.FormatInt(id, 10)); json.Unmarshal([]byte(out), &shown) != nil ||
		shown.Trace.TraceID != traceID || shown.Trace.SpanID != parentID {
		t.Errorf("jobs show --json:\n%s", out)
	}

	byName := map[string][]otlptest.Span{}
	waitFor(t, 30*time.Second, "the job's spans", func() bool {
		clear(byName)
		for _, s := range col.Spans() {
			if s.TraceID == traceID {
				byName[s.Name] = append(byName[s.Name], s)
			}
		}
		return len(byName["job harness_run"]) == 1 && len(byName["invoke_agent harness"]) == 1 &&
			len(byName["chat m1"]) == 2 && len(byName["execute_tool bash"]) == 1
	})
	job, inv := byName["job harness_run"][0], byName["invoke_agent harness"][0]
	if job.ParentID != parentID {
		t.Errorf("job span: parent %s, want the submitter's %s", job.ParentID, parentID)
	}
	if a := job.Attrs; a["harness.job.id"] != strconv.FormatInt(id, 10) || a["harness.job.attempt"] != "1" {
		t.Errorf("job span attributes %v", a)
	}
	if inv.ParentID != job.SpanID {
		t.Errorf("invoke_agent: parent %s, want the job span %s", inv.ParentID, job.SpanID)
	}
	for _, c := range byName["chat m1"] {
		if c.ParentID != inv.SpanID {
			t.Errorf("chat: parent %s, want invoke_agent %s", c.ParentID, inv.SpanID)
		}
	}
}
