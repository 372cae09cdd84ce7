package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dshgo/harness/services/sessions"
)

// Riding out an outage (Options.OutageGrace): an append whose connection
// is lost (the server restarted, or the network between went away) is not
// failed at once. The append call waits, trying to reconnect with a
// backoff from outageFirst doubling to outageLast, for at most the grace:
// the writer (an agent run) is paused at that append, and the appends
// after it are not made before it, so the order is kept. On a new
// connection the handle takes the session's lock again and reads the
// session's last sequence number: the batch is sent again when the
// session ends just before it, and counts as stored when the session ends
// with it (the lost connection had committed it). Anything else (the lock
// held by another process, records written by another writer) means the
// session was taken while this one was away: the append fails with
// [ErrSessionTaken] and nothing of this writer is stored after that.
const (
	outageFirst = 100 * time.Millisecond
	outageLast  = 2 * time.Second
	// reconnectTimeout bounds one reconnection try.
	reconnectTimeout = 5 * time.Second
)

// ErrSessionTaken is the append error of a writer whose connection was
// lost and whose session another process opened (or wrote to) meanwhile.
var ErrSessionTaken = errors.New("the session was taken by another process while the database was unreachable")

// lostConnection reports whether err ended the handle's connection (a
// network failure, or the server shutting the connection: classes 08 and
// 57P), as opposed to an error the server answered with.
func lostConnection(c *pgx.Conn, err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P")
	}
	return c.IsClosed()
}

// ride is AppendBatch after its connection was lost with first: it
// reconnects and stores recs within the provider's grace (see above).
func (h *handle) ride(ctx context.Context, recs []sessions.Record, first error) error {
	grace := h.p.grace
	if h.p.log != nil {
		h.p.log.Warn("sessions-postgres: the database connection was lost; the run waits at its next record until it is back", "session", h.id, "where", h.p.where, "outageGrace", grace, "err", first)
	}
	start := time.Now()
	deadline := start.Add(grace)
	last, wait := first, outageFirst
	for tries := 1; ; tries++ {
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("sessions-postgres: append to %s: the database was unreachable for longer than outageGrace (%s, %d tries): %w", h.id, grace, tries-1, last)
		}
		t := time.NewTimer(min(wait, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("sessions-postgres: append to %s: %w (while waiting for the database: %v)", h.id, ctx.Err(), last)
		case <-t.C:
		}
		wait = min(2*wait, outageLast)
		err := h.reconnect(ctx, recs)
		if err == nil {
			if h.p.log != nil {
				h.p.log.Info("sessions-postgres: the database is back; the session's records are stored", "session", h.id, "waited", time.Since(start).Round(time.Millisecond), "tries", tries)
			}
			return nil
		}
		if errors.Is(err, ErrSessionTaken) || ctx.Err() != nil {
			return fmt.Errorf("sessions-postgres: append to %s: %w", h.id, err)
		}
		last = err
	}
}

// errOwnLock: the lock is still held by this process's lost connection
// (the server has not ended that backend yet); tried again.
var errOwnLock = errors.New("the session's lock is still held by this process's lost connection")

// reconnect replaces the handle's connection by a new one holding the
// session's lock and stores recs on it, unless the lost connection had
// committed them already.
func (h *handle) reconnect(ctx context.Context, recs []sessions.Record) error {
	cctx, cancel := context.WithTimeout(ctx, reconnectTimeout)
	defer cancel()
	c, err := pgx.ConnectConfig(cctx, h.p.conn)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			_ = c.Close(context.Background())
		}
	}()
	var locked bool
	if err := c.QueryRow(cctx, `SELECT pg_try_advisory_lock($1)`, h.p.lockKey(h.id)).Scan(&locked); err != nil {
		return err
	}
	if !locked {
		key := uint64(h.p.lockKey(h.id))
		var app string
		var pid uint32
		err := c.QueryRow(cctx, `SELECT coalesce(a.application_name, ''), l.pid FROM pg_locks l
			LEFT JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1::bigint::oid AND l.objid = $2::bigint::oid AND l.objsubid = 1
			LIMIT 1`, int64(key>>32), int64(key&0xffffffff)).Scan(&app, &pid)
		if errors.Is(err, pgx.ErrNoRows) || err == nil && pid == h.c.PgConn().PID() {
			return errOwnLock // released since, or the lost connection's backend not ended yet
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("%w (%s, postgres backend pid %d, holds it)", ErrSessionTaken, app, pid)
	}
	var seq int64
	if err := c.QueryRow(cctx, h.p.q.lastSeq, h.id).Scan(&seq); err != nil {
		return err
	}
	switch first, lastRec := recs[0], recs[len(recs)-1]; {
	case seq == first.Seq-1:
		if err := c.SendBatch(cctx, h.batch(recs)).Close(); err != nil {
			return err
		}
	case seq == lastRec.Seq:
		var data string
		err := c.QueryRow(cctx, h.p.q.recordData, h.id, seq).Scan(&data)
		if err != nil {
			return err
		}
		if data != string(lastRec.Data) {
			return fmt.Errorf("%w (record %d is another writer's)", ErrSessionTaken, seq)
		}
	default:
		return fmt.Errorf("%w (it ends at record %d; this writer's next is %d)", ErrSessionTaken, seq, first.Seq)
	}
	old := h.c
	h.c, ok = c, true
	_ = old.Close(context.Background())
	return nil
}
