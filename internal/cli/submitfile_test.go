package cli_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// submit --file enqueues every line in order, with its own fields over
// the flags' defaults, and prints one id per line; a file with bad lines
// names each as FILE:LINE and enqueues nothing.
func TestSubmitFileEnqueuesAllOrNothing(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "clisubmitfile", "", nil)
	good := filepath.Join(t.TempDir(), "prompts.jsonl")
	if err := os.WriteFile(good, []byte(`{"prompt":"first","tag":"nightly"}

{"prompt":"second","priority":3,"tags":["ab-c","x_y"],"maxSteps":7}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runAgent(t, f.dir, f.m, "", "submit", "--file", good, "--tag", "batch", "--priority", "2")
	ids := strings.Fields(r.stdout)
	if r.code != 0 || len(ids) != 2 {
		t.Fatalf("submit --file: %d %q %s", r.code, r.stdout, r.stderr)
	}
	rows := jobRows(t, f.dsn, f.schema)
	if len(rows) != 2 {
		t.Fatalf("%d jobs, want 2", len(rows))
	}
	for i, want := range []string{"first 2 [batch nightly]", "second 3 [batch ab-c x_y]"} {
		got := jobLine(t, f, ids[i])
		if got != want {
			t.Fatalf("job %s: %q, want %q", ids[i], got, want)
		}
	}
	bad := filepath.Join(t.TempDir(), "prompts.jsonl")
	if err := os.WriteFile(bad, []byte(`{"prompt":"fine"}
{"prompt":"short tag","tag":"ab"}
{"prompt":""}
not json
{"prompt":"p","colour":"red"}
{"prompt":"p","priority":9}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runAgent(t, f.dir, f.m, "", "submit", "--file", bad)
	want := []string{
		`prompts.jsonl:2: tag "ab": too short (2 characters): a tag is 3 to 255 characters`,
		`prompts.jsonl:3: "prompt": required`,
		`prompts.jsonl:4: not a submission object: invalid character 'o' in literal null (expecting 'u')`,
		`prompts.jsonl:5: not a submission object: json: unknown field "colour"`,
		`prompts.jsonl:6: priority 9: want 1 (first) to 4`,
		"nothing was enqueued",
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Fatalf("bad file: exit %d, stderr lacks %q:\n%s", r.code, w, r.stderr)
		}
	}
	if r.code != 2 || strings.Contains(r.stderr, "prompts.jsonl:1:") || len(jobRows(t, f.dsn, f.schema)) != 2 {
		t.Fatalf("bad file: exit %d, %d jobs (want 2, 2):\n%s", r.code, len(jobRows(t, f.dsn, f.schema)), r.stderr)
	}
}

// jobLine is "PROMPT PRIORITY [TAGS] maxSteps=N" of job id, read from River's table.
func jobLine(t *testing.T, f *fleet, id string) string {
	t.Helper()
	c, err := pgx.Connect(context.Background(), f.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var (
		prompt string
		prio   int
		tags   []string
	)
	if err := c.QueryRow(context.Background(), "SELECT args->>'prompt', priority, tags FROM "+f.schema+".river_job WHERE id = $1::bigint", id).Scan(&prompt, &prio, &tags); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s %d %v", prompt, prio, tags)
}

// A tag River would refuse is refused in words before anything connects.
func TestSubmitShortTagInWords(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "clisubmittag", "", nil)
	r := runAgent(t, f.dir, f.m, "", "submit", "--tag", "ab", "a prompt")
	if r.code != 2 || !strings.Contains(r.stderr, `tag "ab": too short (2 characters): a tag is 3 to 255 characters: letters, digits, '_' and '-', not starting or ending with '-'`) ||
		strings.Contains(r.stderr, "regex") {
		t.Fatalf("submit --tag ab: %d %s", r.code, r.stderr)
	}
}

// 1,000 prompts in one file are enqueued by one command, every id printed
// (against the local PostgreSQL). The time is logged, not asserted: a
// timed assertion fails on a loaded machine (docs/fleet.md quotes the figure).
func TestSubmitFileThousandPrompts(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "clisubmit1k", "", nil)
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, `{"prompt":"job %d","tag":"bulk"}`+"\n", i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	// The harness binary, as an operator runs it: process start, manifest
	// boot, connect, one InsertMany of 1,000 rows, the ids printed.
	cmd := exec.Command(harnessBinary(t), "--config", f.cfg, "submit", "--file", path)
	cmd.Dir, cmd.Env = f.dir, baseEnv()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	took := time.Since(start)
	if err != nil || len(strings.Fields(string(out))) != 1000 {
		t.Fatalf("submit --file: %v, %d ids, %s", err, len(strings.Fields(string(out))), stderr.String())
	}
	t.Logf("harness submit --file of 1,000 prompts: %v", took)
}

// Queue names River would refuse are refused in words naming the flag,
// before anything connects: `submit --queue` with 65 characters (River's
// limit is 64) and `worker --queues` with an upper-case name.
func TestQueueNamesInWords(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "cliqueue", "", nil)
	long := strings.Repeat("q", 65)
	r := runAgent(t, f.dir, f.m, "", "submit", "--queue", long, "a prompt")
	if r.code != 2 || !strings.Contains(r.stderr, `queue "qqqqqqqqqqqqqqqqqqqq"…: too long (65 characters): a queue name is 1 to 64 lower-case letters and digits`) {
		t.Errorf("submit --queue (65 characters): %d %s", r.code, r.stderr)
	}
	r = runAgent(t, f.dir, f.m, "", "worker", "--queues", "default,Bad_Q")
	if r.code != 2 || !strings.Contains(r.stderr, `--queues: queue "Bad_Q": a queue name is 1 to 64 lower-case letters and digits, with single '-' or '_' between them`) ||
		strings.Contains(r.stderr, "expected letters and numbers") {
		t.Errorf("worker --queues Bad_Q: %d %s", r.code, r.stderr)
	}
}
