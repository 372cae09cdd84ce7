package worker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// UnreachableError is a PostgreSQL server that did not accept a
// connection. Addr is host:port (or the socket directory and port); the
// DSN, and so its password, is not in the error.
type UnreachableError struct {
	Addr string
	Err  error
}

// Error reads "PostgreSQL is unreachable at ADDR: WHY".
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("PostgreSQL is unreachable at %s: %v", e.Addr, e.Err)
}

// Unwrap returns the connection error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// PingTimeout bounds one connection attempt of [Ping].
const PingTimeout = 5 * time.Second

// Ping connects once to the server of dsn (bounded by PingTimeout and
// ctx) and closes the connection. A failure is an *[UnreachableError]; a
// malformed dsn is an error that does not repeat it.
func Ping(ctx context.Context, dsn string) error {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return errors.New("not a PostgreSQL connection string")
	}
	cfg.ConnectTimeout = min(cfg.ConnectTimeout, PingTimeout)
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = PingTimeout
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		why := err
		var ce *pgconn.ConnectError
		if errors.As(err, &ce) && ce.Unwrap() != nil {
			why = ce.Unwrap()
		}
		return &UnreachableError{Addr: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), Err: why}
	}
	return c.Close(ctx)
}

// Backoff of [WaitForDatabase]: the first retry after BackoffFirst, each
// next one after twice as long, at most BackoffLast.
const (
	BackoffFirst = time.Second
	BackoffLast  = 30 * time.Second
)

// WaitForDatabase pings every dsn (see [Ping]) until all accept a
// connection, waiting between tries with a backoff from BackoffFirst
// doubling to BackoffLast. Before each wait it calls report with the try
// that failed (from 1), the wait and the failure. It returns nil once
// every server answered, ctx's error when ctx ends first, and at once a
// failure that is not an *UnreachableError (a malformed dsn).
func WaitForDatabase(ctx context.Context, dsns []string, report func(try int, next time.Duration, err error)) error {
	if ctx == nil {
		return errors.New("worker: nil context")
	}
	wait := BackoffFirst
	for try := 1; ; try++ {
		err := pingAll(ctx, dsns)
		var ue *UnreachableError
		if err == nil || !errors.As(err, &ue) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		report(try, wait, ue)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, BackoffLast)
	}
}

// pingAll pings each distinct dsn in order and returns the first failure.
func pingAll(ctx context.Context, dsns []string) error {
	seen := map[string]bool{}
	for _, d := range dsns {
		if seen[d] || strings.TrimSpace(d) == "" {
			continue
		}
		seen[d] = true
		if err := Ping(ctx, d); err != nil {
			return err
		}
	}
	return nil
}
