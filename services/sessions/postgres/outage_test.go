package postgres_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/internal/pgtest"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/sessions/postgres"
)

func note(i int) sessions.Entry {
	return sessions.Entry{Type: "note", Fields: []byte(fmt.Sprintf(`{"i":%d}`, i))}
}

// An append made while the database is cut off (the test's proxy closes
// every connection and refuses new ones) waits, and is stored once the
// database is back, in order, on a new connection that holds the
// session's lock again; the appends after it follow it.
func TestPostgresAppendRidesOutAnOutage(t *testing.T) {
	t.Parallel()
	px := pgtest.NewProxy(t)
	schema := freshSchema(t)
	p, err := postgres.Open(bg, postgres.Options{DSN: px.DSN, Schema: schema, OutageGrace: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	store := sessions.New(p)
	w, err := store.Create(bg, sessions.Header{ID: "ride", Cwd: "/a"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Append(bg, note(0)); err != nil {
		t.Fatal(err)
	}
	px.Cut()
	done := make(chan error, 1)
	go func() {
		if _, err := w.AppendBatch(bg, []sessions.Entry{note(1), note(2)}); err != nil {
			done <- err
			return
		}
		_, err := w.Append(bg, note(3))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the append returned while the database was cut off: %v", err)
	case <-time.After(2 * time.Second):
	}
	px.Restore()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("append after the outage: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the append did not return after the database came back")
	}
	direct := sessions.New(openProvider(t, schema))
	recs, err := direct.Read(bg, "ride")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs[1:] {
		got = append(got, fmt.Sprintf("%d:%s", r.Seq, r.Data))
	}
	if len(recs) != 5 {
		t.Fatalf("records after the outage: %v, want seqs 2 to 5 with notes 0 to 3", got)
	}
	for i, r := range recs[1:] {
		if r.Seq != int64(i+2) || !strings.Contains(string(r.Data), fmt.Sprintf(`"i":%d`, i)) {
			t.Fatalf("records after the outage: %v, want seqs 2 to 5 with notes 0 to 3", got)
		}
	}
	// The writer holds the lock again: another opener is refused.
	if _, _, err := direct.Open(bg, "ride"); !errors.Is(err, sessions.ErrInUse) {
		t.Fatalf("open while the writer holds the session again: %v, want in use", err)
	}
}

// A session another process opened and wrote to while this writer was cut
// off is not written to by this writer when the database is back: its
// append fails with ErrSessionTaken and the other writer's records stay.
// Without a grace the append fails at once, as before.
func TestPostgresAppendAfterTheSessionWasTaken(t *testing.T) {
	t.Parallel()
	px := pgtest.NewProxy(t)
	schema := freshSchema(t)
	p, err := postgres.Open(bg, postgres.Options{DSN: px.DSN, Schema: schema, OutageGrace: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	store := sessions.New(p)
	w, err := store.Create(bg, sessions.Header{ID: "taken", Cwd: "/a"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	px.Cut()
	direct := sessions.New(openProvider(t, schema))
	var other *sessions.Writer
	waitUntil(t, "the lost connection's lock to go", func() bool {
		other, _, err = direct.Open(bg, "taken")
		return err == nil
	})
	if _, err := other.Append(bg, note(100)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := w.Append(bg, note(1)); done <- err }()
	time.Sleep(500 * time.Millisecond)
	px.Restore()
	select {
	case err := <-done:
		if !errors.Is(err, postgres.ErrSessionTaken) {
			t.Fatalf("append of the writer whose session was taken: %v, want ErrSessionTaken", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the append did not return")
	}
	_ = other.Close()
	// The other writer's lock is released: now the lock is free but the
	// records are not this writer's.
	go func() { _, err := w.Append(bg, note(2)); done <- err }()
	if err := <-done; err == nil {
		t.Fatal("a failed writer appended again")
	}
	recs, err := direct.Read(bg, "taken")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || !strings.Contains(string(recs[1].Data), `"i":100`) {
		t.Fatalf("records: %d, want the header and the other writer's note", len(recs))
	}

	p0, err := postgres.Open(bg, postgres.Options{DSN: px.DSN, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer p0.Close()
	w0, err := sessions.New(p0).Create(bg, sessions.Header{ID: "nograce", Cwd: "/a"})
	if err != nil {
		t.Fatal(err)
	}
	defer w0.Close()
	px.Cut()
	defer px.Restore()
	if _, err := w0.Append(bg, note(1)); err == nil {
		t.Fatal("an append without a grace succeeded with the database cut off")
	}
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
