package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/dshgo/harness/internal/pgtest"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// The same commands work on sessions-postgres: run stores the session in
// the database (no JSONL file), `sessions` lists it, `show` prints it,
// --continue resumes it, --fork copies it, rm deletes it.
func TestSessionsOnPostgres(t *testing.T) {
	t.Parallel()
	dsn, schema := pgtest.Schema(t, "cli")
	repo := gitRepo(t, map[string]string{"a.txt": "alpha\n"})
	srv := llmtest.New(t, []llmtest.Turn{toolCall("c1", "read", `{"file_path":"a.txt"}`), text("It says alpha."), text("Still alpha."), text("Forked.")})
	state := t.TempDir()
	m := strings.Replace(agentManifest(srv.URL, state, ""), "  - name: sessions-jsonl\n    config:\n      stateDir: "+state+"\n",
		fmt.Sprintf("  - name: sessions-postgres\n    config:\n      dsn: %q\n      schema: %s\n      poolSize: 2\n", dsn, schema), 1)
	if r := runAgent(t, repo, m, "", "run", "what does a.txt say?"); r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	if list, _ := agent.ListSessions(state); len(list) != 0 {
		t.Fatalf("a JSONL log was written: %+v", list)
	}
	ls := runAgent(t, repo, m, "", "sessions", "--json")
	var list []agent.SessionInfo
	if err := json.Unmarshal([]byte(ls.stdout), &list); err != nil || len(list) != 1 || list[0].Cwd != repo || list[0].Turns != 1 || list[0].Messages != 4 ||
		!strings.Contains(list[0].Path, "schema "+schema) || strings.Contains(list[0].Path, "harness_test:harness_test") {
		t.Fatalf("sessions: %v %+v\n%s", err, list, ls.stderr)
	}
	id := list[0].ID
	if r := runAgent(t, repo, m, "", "run", "--continue", "still?"); r.code != 0 || r.stdout != "Still alpha.\n" {
		t.Fatalf("continue: %d %q %s", r.code, r.stdout, r.stderr)
	}
	show := runAgent(t, repo, m, "", "sessions", "show", id)
	for _, want := range []string{"session " + id, "what does a.txt say?", "── tool result: read (c1) ──", "It says alpha.", "── user (turn 2) ──\nstill?", "Still alpha."} {
		if !strings.Contains(show.stdout, want) {
			t.Fatalf("show lacks %q:\n%s%s", want, show.stdout, show.stderr)
		}
	}
	if r := runAgent(t, repo, m, "", "run", "--fork", id, "fork"); r.code != 0 || r.stdout != "Forked.\n" {
		t.Fatalf("fork: %d %q %s", r.code, r.stdout, r.stderr)
	}
	ls = runAgent(t, repo, m, "", "sessions", "--json", "--limit", "1")
	if err := json.Unmarshal([]byte(ls.stdout), &list); err != nil || len(list) != 1 || list[0].Parent != id || list[0].Turns != 3 {
		t.Fatalf("after fork: %v %+v", err, list)
	}
	if r := runAgent(t, repo, m, "", "sessions", "rm", id); r.code != 0 {
		t.Fatalf("rm: %d %s", r.code, r.stderr)
	}
	if r := runAgent(t, repo, m, "", "sessions", "show", id); r.code != 2 || !strings.Contains(r.stderr, "session not found") {
		t.Fatalf("show after rm: %d %s", r.code, r.stderr)
	}
}

// A step's records are written together: on sessions-postgres the records
// of one write share a transaction (xmin). A turn with one tool call and
// an answer commits the header, the prompt, then usage + assistant +
// tool call (before the tool runs), the tool result, then usage +
// assistant: five transactions for eight records.
func TestSessionStepRecordsShareOneTransaction(t *testing.T) {
	t.Parallel()
	dsn, schema := pgtest.Schema(t, "clibatch")
	repo := gitRepo(t, map[string]string{"a.txt": "alpha\n"})
	srv := llmtest.New(t, []llmtest.Turn{toolCall("c1", "read", `{"file_path":"a.txt"}`), text("It says alpha.")})
	state := t.TempDir()
	m := strings.Replace(agentManifest(srv.URL, state, ""), "  - name: sessions-jsonl\n    config:\n      stateDir: "+state+"\n",
		fmt.Sprintf("  - name: sessions-postgres\n    config:\n      dsn: %q\n      schema: %s\n      poolSize: 2\n", dsn, schema), 1)
	if r := runAgent(t, repo, m, "", "run", "what does a.txt say?"); r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	rows, err := c.Query(context.Background(), "SELECT type, xmin::text FROM "+schema+".records ORDER BY seq")
	if err != nil {
		t.Fatal(err)
	}
	var groups []string // the record types of each transaction, in order
	last := ""
	for rows.Next() {
		var typ, xmin string
		if err := rows.Scan(&typ, &xmin); err != nil {
			t.Fatal(err)
		}
		if xmin != last || len(groups) == 0 {
			groups = append(groups, typ)
		} else {
			groups[len(groups)-1] += " " + typ
		}
		last = xmin
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"session", "user prefix", "usage assistant tool/call", "tool/result", "usage assistant"}
	if strings.Join(groups, " | ") != strings.Join(want, " | ") {
		t.Fatalf("transactions:\n  %s\nwant\n  %s", strings.Join(groups, " | "), strings.Join(want, " | "))
	}
}
