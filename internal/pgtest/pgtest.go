// Package pgtest connects tests to the PostgreSQL database that .ci/run
// sets up, and gives each test a private schema.
//
//	func TestStore(t *testing.T) {
//		dsn, schema := pgtest.Schema(t, "store")
//		... open the code under test on dsn, in schema ...
//	}
//
// The database is $HARNESS_TEST_POSTGRES_DSN, else [DefaultDSN] (the role and
// database .ci/run creates on the local cluster). When it is unreachable a
// test fails if the CI environment variable is set (CI must run every test)
// and is skipped, saying how to start it, otherwise.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultDSN is the database .ci/run creates: role and database
// harness_test on the local cluster.
const DefaultDSN = "postgres://harness_test:harness_test@127.0.0.1:5432/harness_test?sslmode=disable"

// connectTimeout bounds the reachability check and the cleanup connection.
const connectTimeout = 5 * time.Second

// DSN returns $HARNESS_TEST_POSTGRES_DSN, else DefaultDSN.
func DSN() string {
	if v := os.Getenv("HARNESS_TEST_POSTGRES_DSN"); v != "" {
		return v
	}
	return DefaultDSN
}

// Need returns the test database's DSN after checking that it accepts a
// connection. When it does not, t fails (CI set) or is skipped (otherwise)
// with the connection error and how to start the database.
func Need(t testing.TB) string {
	t.Helper()
	dsn := DSN()
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err == nil {
		_ = c.Close(ctx)
		return dsn
	}
	msg := fmt.Sprintf("PostgreSQL unreachable at $HARNESS_TEST_POSTGRES_DSN or %s (start it as .ci/run does: pg_ctlcluster 15 main start, then create the harness_test role and database): %v",
		"the default harness_test database", err)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	} else {
		t.Skip(msg)
	}
	return ""
}

var prefixRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,20}$`)

// Schema calls Need and returns the DSN and the name of a schema private to
// t: prefix, "_", then 12 random hex digits. The schema does not exist yet
// (the code under test creates it, as it would in production); when t ends
// it is dropped with everything in it. prefix is a lower-case SQL
// identifier of at most 21 characters; anything else fails t.
func Schema(t testing.TB, prefix string) (dsn, schema string) {
	t.Helper()
	if !prefixRE.MatchString(prefix) {
		t.Fatalf("pgtest.Schema: prefix %q is not a short lower-case identifier", prefix)
	}
	dsn = Need(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema = prefix + "_" + hex.EncodeToString(b[:])
	t.Cleanup(func() { Drop(dsn, schema) })
	return dsn, schema
}

// Drop drops schema (with everything in it) from the database at dsn, if
// it exists. Errors are ignored: it is for cleanups.
func Drop(dsn, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return
	}
	defer c.Close(ctx)
	_, _ = c.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
}
