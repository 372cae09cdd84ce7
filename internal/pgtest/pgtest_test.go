package pgtest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/dshgo/harness/internal/pgtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A schema from Schema is private to the test: usable under its name while
// the test runs, gone afterwards.
func TestSchemaIsPrivateAndDroppedAfterTheTest(t *testing.T) {
	ctx := t.Context()
	var dsn, schema string
	t.Run("user", func(t *testing.T) {
		dsn, schema = pgtest.Schema(t, "pgtest")
		if !strings.HasPrefix(schema, "pgtest_") || len(schema) != len("pgtest_")+12 {
			t.Fatalf("schema name %q", schema)
		}
		c := connect(t, dsn)
		if n := schemas(t, c, schema); n != 0 {
			t.Fatalf("the schema exists before the code under test creates it")
		}
		if _, err := c.Exec(ctx, fmt.Sprintf("CREATE SCHEMA %s; CREATE TABLE %s.t (x int)", schema, schema)); err != nil {
			t.Fatal(err)
		}
	})
	if t.Failed() || schema == "" {
		return
	}
	if _, other := pgtest.Schema(t, "pgtest"); other == schema {
		t.Fatalf("two tests got the same schema %q", schema)
	}
	if n := schemas(t, connect(t, dsn), schema); n != 0 {
		t.Fatalf("schema %s outlived its test", schema)
	}
}

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func schemas(t *testing.T, c *pgx.Conn, name string) (n int) {
	t.Helper()
	if err := c.QueryRow(t.Context(), "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// recorder is a testing.TB that records Fatal and Skip instead of stopping.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()          {}
func (r *recorder) Fatal(a ...any)   { r.fatal = fmt.Sprint(a...) }
func (r *recorder) Skip(a ...any)    { r.skip = fmt.Sprint(a...) }
func (r *recorder) Cleanup(f func()) { r.TB.Cleanup(f) }

// An unreachable database fails the test when CI is set and skips it,
// saying how to start it, otherwise.
func TestUnreachableFailsInCIAndSkipsElsewhere(t *testing.T) {
	t.Setenv("HARNESS_TEST_POSTGRES_DSN", "postgres://nobody:x@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	for _, ci := range []string{"true", ""} {
		t.Setenv("CI", ci)
		r := &recorder{TB: t}
		if dsn := pgtest.Need(r); dsn != "" {
			t.Errorf("CI=%q: Need returned %q for an unreachable database", ci, dsn)
		}
		got, other := r.fatal, r.skip
		if ci == "" {
			got, other = r.skip, r.fatal
		}
		if !strings.Contains(got, "PostgreSQL unreachable") || !strings.Contains(got, "pg_ctlcluster") || other != "" {
			t.Errorf("CI=%q: fatal %q skip %q", ci, r.fatal, r.skip)
		}
	}
}
