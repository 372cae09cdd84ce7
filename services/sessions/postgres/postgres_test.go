package postgres_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/dshgo/harness/internal/pgtest"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/sessions/postgres"
	"github.com/dshgo/harness/services/sessions/sessionstest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	// The benchmark's 100,000 sessions do not outlive the run.
	if c, err := pgx.Connect(bg, pgtest.DSN()); err == nil {
		_, _ = c.Exec(bg, "DROP SCHEMA IF EXISTS "+listSchema+" CASCADE")
		_ = c.Close(bg)
	}
	if err := goleak.Find(); code == 0 && err != nil {
		fmt.Fprintln(os.Stderr, "goleak:", err)
		code = 1
	}
	os.Exit(code)
}

var bg = context.Background()

// freshSchema returns the name of a schema private to t (dropped when t ends).
func freshSchema(t testing.TB) string {
	_, s := pgtest.Schema(t, "t")
	return s
}

func openProvider(t testing.TB, schema string) *postgres.Provider {
	t.Helper()
	p, err := postgres.Open(bg, postgres.Options{DSN: pgtest.DSN(), Schema: schema, PoolSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func TestPostgresContract(t *testing.T) {
	t.Parallel()
	pgtest.Need(t)
	sessionstest.Run(t, sessionstest.Provider{New: func(t *testing.T) sessionstest.Store {
		schema := freshSchema(t)
		return sessionstest.Store{
			Open: func() *sessions.Service { return sessions.New(openProvider(t, schema)) },
			// A crash mid-append: a transaction inserted the record (and
			// bumped the summary) and its connection died before COMMIT.
			Tear: func(t *testing.T, id string, seq int64) {
				c, err := pgx.Connect(bg, pgtest.DSN())
				if err != nil {
					t.Fatal(err)
				}
				tx, err := c.Begin(bg)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Exec(bg, "INSERT INTO "+schema+".records (session_id, seq, type, time, data) VALUES ($1, $2, 'tool/call', now(), $3)",
					id, seq, fmt.Sprintf(`{"type":"tool/call","seq":%d}`, seq)); err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Exec(bg, "UPDATE "+schema+".sessions SET last_seq = $2 WHERE id = $1", id, seq); err != nil {
					t.Fatal(err)
				}
				_ = c.PgConn().Close(bg) // the connection dies mid-transaction
			},
		}
	}})
}

// Migrations run once: a second provider on the same schema finds it at
// the current version, and a schema from a newer harness is refused.
func TestPostgresMigrations(t *testing.T) {
	t.Parallel()
	pgtest.Need(t)
	s := freshSchema(t)
	openProvider(t, s)
	openProvider(t, s)
	c, err := pgx.Connect(bg, pgtest.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(bg)
	var n, v int
	if err := c.QueryRow(bg, "SELECT count(*), max(version) FROM "+s+".schema_migrations").Scan(&n, &v); err != nil || n != postgres.Version || v != postgres.Version {
		t.Fatalf("migrations: %d rows, version %d, %v", n, v, err)
	}
	if _, err := c.Exec(bg, "INSERT INTO "+s+".schema_migrations (version) VALUES (999)"); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Open(bg, postgres.Options{DSN: pgtest.DSN(), Schema: s}); err == nil || !strings.Contains(err.Error(), "version 999") {
		t.Fatalf("newer schema: %v", err)
	}
}

const holdEnv = "HARNESS_PG_TEST_HOLD" // SCHEMA: the helper holds session "h1"

// TestPostgresHoldHelper is not a test: with holdEnv set it opens session
// h1 in that schema, prints "held" and waits until killed.
func TestPostgresHoldHelper(t *testing.T) {
	t.Parallel()
	schema := os.Getenv(holdEnv)
	if schema == "" {
		t.Skip("helper process only")
	}
	p, err := postgres.Open(bg, postgres.Options{DSN: pgtest.DSN(), Schema: schema})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(3)
	}
	w, _, err := sessions.New(p).Open(bg, "h1")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(3)
	}
	fmt.Println("held")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	_ = w.Close()
	_ = p.Close()
}

// Another process holding a session: Open fails at once naming it (its
// pid, from the application name), and when it is killed with SIGKILL the
// server drops its connection and the session opens again.
func TestPostgresHolderKilled(t *testing.T) {
	t.Parallel()
	pgtest.Need(t)
	s := freshSchema(t)
	store := sessions.New(openProvider(t, s))
	w, err := store.Create(bg, sessions.Header{ID: "h1", Cwd: "/"})
	if err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPostgresHoldHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), holdEnv+"="+s)
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); strings.TrimSpace(line) != "held" {
		t.Fatalf("helper said %q", line)
	}
	_, _, err = store.Open(bg, "h1")
	var iu *sessions.InUseError
	if !errors.As(err, &iu) || !strings.Contains(err.Error(), fmt.Sprintf("harness pid %d on ", cmd.Process.Pid)) {
		t.Fatalf("open: %v, want the holder named (pid %d)", err, cmd.Process.Pid)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	// The server notices the dead connection at once (the socket closes).
	deadline := time.Now().Add(10 * time.Second)
	for {
		w, _, err := store.Open(bg, "h1")
		if err == nil {
			_ = w.Close()
			return
		}
		if !errors.Is(err, sessions.ErrInUse) || time.Now().After(deadline) {
			t.Fatalf("after the holder was killed: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The DSN never appears in locations or errors.
func TestPostgresDSNNotShown(t *testing.T) {
	t.Parallel()
	_, err := postgres.Open(bg, postgres.Options{DSN: "postgres://u:s3cr3t@127.0.0.1:1/db?sslmode=disable&connect_timeout=1"})
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("err = %v", err)
	}
	_, err = postgres.Open(bg, postgres.Options{DSN: "postgres://u:s3cr3t@[::1"})
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("err = %v", err)
	}
}

// A batch is one transaction: when one of its records cannot be stored
// (here its seq is taken by a row written behind the writer's back)
// nothing of the batch is, neither records nor the summary, and a
// follower sees the records of a stored batch once, in order.
func TestPostgresBatchIsAtomicAndOrdered(t *testing.T) {
	t.Parallel()
	pgtest.Need(t)
	schema := freshSchema(t)
	store := sessions.New(openProvider(t, schema))
	w, err := store.Create(bg, sessions.Header{ID: "atomic", Cwd: "/a"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	note := func(i int) sessions.Entry {
		return sessions.Entry{Type: "note", Fields: []byte(fmt.Sprintf(`{"i":%d}`, i))}
	}
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	followed := make(chan []int64, 1)
	go func() {
		var seqs []int64
		_ = store.Follow(ctx, "atomic", 1, func(r sessions.Record) error {
			if seqs = append(seqs, r.Seq); len(seqs) == 30 {
				followed <- seqs
			}
			return nil
		})
	}()
	var batch []sessions.Entry
	for i := range 30 {
		batch = append(batch, note(i))
	}
	if _, err := w.AppendBatch(bg, batch); err != nil {
		t.Fatal(err)
	}
	select {
	case seqs := <-followed:
		for i, s := range seqs {
			if s != int64(i+2) {
				t.Fatalf("follower saw seqs %v", seqs)
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the follower did not see the batch")
	}
	// seq 34 is taken: the batch 32..35 must leave nothing.
	c, err := pgx.Connect(bg, pgtest.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(bg)
	if _, err := c.Exec(bg, "INSERT INTO "+schema+".records (session_id, seq, type, time, data) VALUES ('atomic', 34, 'intruder', now(), '{}')"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AppendBatch(bg, []sessions.Entry{note(30), note(31), note(32), note(33)}); err == nil {
		t.Fatal("a batch whose seq 34 was taken was stored")
	}
	var n, last int64
	if err := c.QueryRow(bg, "SELECT count(*) FILTER (WHERE type = 'note'), (SELECT last_seq FROM "+schema+".sessions WHERE id = 'atomic') FROM "+schema+".records WHERE session_id = 'atomic'").Scan(&n, &last); err != nil {
		t.Fatal(err)
	}
	if n != 30 || last != 31 {
		t.Fatalf("after the failed batch: %d notes stored, last_seq %d; want 30 and 31 (nothing of the batch)", n, last)
	}
}
