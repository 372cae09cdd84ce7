package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/dshgo/harness/services/sessions"
)

// Channel is the LISTEN/NOTIFY channel a commit of records is announced
// on; the payload is "SCHEMA/ID".
const Channel = "harness_sessions"

// Provider is the sessions-postgres provider. Reads, listings and deletes
// use a pool; each open session holds a connection of its own, on which it
// holds a session-level advisory lock keyed by (schema, id): the lock is
// released by Close, or by the server when that connection dies with its
// process or machine. Appends are transactions that insert the record,
// update the session's summary row and notify [Channel]; the records of
// one [handle.AppendBatch] are one transaction, sent in one round trip.
// Safe for
// concurrent use.
type Provider struct {
	pool   *pgxpool.Pool
	conn   *pgx.ConnConfig // for the connections of open sessions
	schema string
	where  string // "postgres://host:port/db (schema S)", no credentials
	q      queries
	grace  time.Duration // Options.OutageGrace
	log    *slog.Logger  // nil: silent
}

var (
	_ sessions.Provider    = (*Provider)(nil)
	_ sessions.Follower    = (*Provider)(nil)
	_ sessions.BatchHandle = (*handle)(nil)
)

// Options configure [Open].
type Options struct {
	DSN      string // a libpq URL or key=value string
	PoolSize int32  // pool connections (0: 4)
	Schema   string // the schema of the tables (created if missing; "": "harness")
	// OutageGrace is how long an append whose connection was lost waits
	// for the database to come back (reconnecting, taking the session's
	// lock again) before it fails; 0 fails it at once. See [ErrSessionTaken].
	OutageGrace time.Duration
	// Log receives a warning when an append starts waiting for the
	// database and a line when it is stored (nil: nothing).
	Log *slog.Logger
}

// Open connects, migrates the schema to the current version and returns
// the provider. The application name of its connections names this
// process (`harness pid N on HOST`), which is how a refused opener names
// the holder.
func Open(ctx context.Context, o Options) (*Provider, error) {
	if o.Schema == "" {
		o.Schema = "harness"
	}
	if o.PoolSize <= 0 {
		o.PoolSize = 4
	}
	pcfg, err := pgxpool.ParseConfig(o.DSN)
	if err != nil {
		return nil, fmt.Errorf("sessions-postgres: dsn: %w", redact(err))
	}
	host, _ := os.Hostname()
	pcfg.ConnConfig.RuntimeParams["application_name"] = fmt.Sprintf("harness pid %d on %s", os.Getpid(), host)
	pcfg.MaxConns = o.PoolSize
	p := &Provider{
		conn:   pcfg.ConnConfig.Copy(),
		schema: o.Schema,
		where:  fmt.Sprintf("postgres://%s:%d/%s (schema %s)", pcfg.ConnConfig.Host, pcfg.ConnConfig.Port, pcfg.ConnConfig.Database, o.Schema),
		q:      newQueries(pgx.Identifier{o.Schema}.Sanitize()),
		grace:  o.OutageGrace,
		log:    o.Log,
	}
	if p.pool, err = pgxpool.NewWithConfig(ctx, pcfg); err != nil {
		return nil, fmt.Errorf("sessions-postgres: %s: %w", p.where, err)
	}
	if err := p.migrate(ctx); err != nil {
		p.pool.Close()
		return nil, fmt.Errorf("sessions-postgres: %s: %w", p.where, err)
	}
	return p, nil
}

// redact drops a parse error's detail, which may quote the DSN.
func redact(err error) error {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		return errors.New("cannot parse the connection string (check its syntax; the value is not shown)")
	}
	return err
}

// Close closes the pool. Open sessions keep their own connections until
// their handles close.
func (p *Provider) Close() error {
	p.pool.Close()
	return nil
}

// Location names session id's row and the database, without credentials.
func (p *Provider) Location(id string) string {
	if id == "" {
		return p.where
	}
	return p.where + " session " + id
}

// lockKey is the advisory lock key of session id in this schema.
func (p *Provider) lockKey(id string) int64 {
	h := fnv.New64a()
	h.Write([]byte(p.schema))
	h.Write([]byte{0})
	h.Write([]byte(id))
	return int64(h.Sum64())
}

// holder describes who holds the advisory lock of id, for an InUseError.
func (p *Provider) holder(ctx context.Context, id string) *sessions.InUseError {
	key := uint64(p.lockKey(id))
	e := &sessions.InUseError{ID: id, Path: p.Location(id), Holder: "another harness process"}
	var app string
	var pid int
	err := p.pool.QueryRow(ctx, `SELECT coalesce(a.application_name, ''), l.pid FROM pg_locks l
		LEFT JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1::bigint::oid AND l.objid = $2::bigint::oid AND l.objsubid = 1
		LIMIT 1`, int64(key>>32), int64(key&0xffffffff)).Scan(&app, &pid)
	if err == nil {
		if app == "" {
			app = "a postgres client"
		}
		e.Holder = fmt.Sprintf("%s (postgres backend pid %d)", app, pid)
	}
	return e
}

// lockedConn connects and takes id's advisory lock without waiting; an
// *InUseError when another connection holds it.
func (p *Provider) lockedConn(ctx context.Context, id string) (*pgx.Conn, error) {
	c, err := pgx.ConnectConfig(ctx, p.conn)
	if err != nil {
		return nil, fmt.Errorf("sessions-postgres: %s: %w", p.where, err)
	}
	var ok bool
	if err := c.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, p.lockKey(id)).Scan(&ok); err != nil {
		_ = c.Close(context.Background())
		return nil, fmt.Errorf("sessions-postgres: lock %s: %w", id, err)
	}
	if !ok {
		_ = c.Close(context.Background())
		return nil, p.holder(ctx, id)
	}
	return c, nil
}

// Create inserts the session row and its header record in one
// transaction on a new connection that then holds the session's lock.
func (p *Provider) Create(ctx context.Context, h sessions.Header, header sessions.Record) (sessions.Handle, error) {
	c, err := p.lockedConn(ctx, h.ID)
	if err != nil {
		return nil, err
	}
	hd := &handle{p: p, c: c, id: h.ID}
	err = pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, p.q.createSession, h.ID, h.Cwd, h.Model, h.Parent, h.Origin, header.Time)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("session %s: %w", p.Location(h.ID), sessions.ErrExists)
		}
		return hd.insert(ctx, tx, header)
	})
	if err != nil {
		_ = hd.Close()
		return nil, err
	}
	return hd, nil
}

// Open takes the session's lock on a new connection and reads its
// records. Only committed appends exist, so there is no torn tail.
func (p *Provider) Open(ctx context.Context, id string) (sessions.Handle, []sessions.Record, error) {
	c, err := p.lockedConn(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	hd := &handle{p: p, c: c, id: id}
	recs, err := p.read(ctx, c, id)
	if err != nil {
		_ = hd.Close()
		return nil, nil, err
	}
	return hd, recs, nil
}

// querier is a pool or a connection.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// read returns the records of id after checking the session exists.
func (p *Provider) read(ctx context.Context, q querier, id string) ([]sessions.Record, error) {
	var n int64
	if err := q.QueryRow(ctx, p.q.lastSeq, id).Scan(&n); errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("session %q: %w (%s)", id, sessions.ErrNotFound, p.where)
	} else if err != nil {
		return nil, fmt.Errorf("sessions-postgres: read %s: %w", id, err)
	}
	return p.readAfter(ctx, q, id, 0)
}

// readAfter returns the records of id with seq > after, in order.
func (p *Provider) readAfter(ctx context.Context, q querier, id string, after int64) ([]sessions.Record, error) {
	rows, err := q.Query(ctx, p.q.records, id, after)
	if err != nil {
		return nil, fmt.Errorf("sessions-postgres: read %s: %w", id, err)
	}
	var out []sessions.Record
	for rows.Next() {
		var data string
		if err := rows.Scan(&data); err != nil {
			rows.Close()
			return nil, err
		}
		r, err := sessions.DecodeRecord([]byte(data))
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("session %s record %d: %w", id, len(out)+1, err)
		}
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sessions-postgres: read %s: %w", id, err)
	}
	return out, nil
}

// Read returns the committed records of id.
func (p *Provider) Read(ctx context.Context, id string) ([]sessions.Record, error) {
	return p.read(ctx, p.pool, id)
}

// List reads one page of the sessions table, newest first, by the
// (updated, id) indexes.
func (p *Provider) List(ctx context.Context, q sessions.Query) (sessions.Page, error) {
	var (
		where []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if q.Cwd != "" {
		where = append(where, "cwd = "+arg(q.Cwd))
	}
	if q.Parent != "" {
		where = append(where, "parent = "+arg(q.Parent))
	}
	if q.Cursor != "" {
		t, id, err := sessions.ParseCursor(q.Cursor)
		if err != nil {
			return sessions.Page{}, err
		}
		where = append(where, fmt.Sprintf("(updated, id) < (%s, %s)", arg(t), arg(id)))
	}
	sql := p.q.list
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	sql += " ORDER BY updated DESC, id DESC"
	if q.Limit > 0 {
		sql += " LIMIT " + arg(q.Limit)
	}
	rows, err := p.pool.Query(ctx, sql, args...)
	if err != nil {
		return sessions.Page{}, fmt.Errorf("sessions-postgres: list: %w", err)
	}
	defer rows.Close()
	var out []sessions.Info
	for rows.Next() {
		var i sessions.Info
		if err := rows.Scan(&i.ID, &i.Cwd, &i.Model, &i.Parent, &i.Origin, &i.Created, &i.Updated, &i.Turns, &i.Title, &i.Messages); err != nil {
			return sessions.Page{}, fmt.Errorf("sessions-postgres: list: %w", err)
		}
		i.Created, i.Updated = i.Created.UTC(), i.Updated.UTC()
		i.Path = p.Location(i.ID)
		out = append(out, i)
	}
	if err := rows.Err(); err != nil {
		return sessions.Page{}, fmt.Errorf("sessions-postgres: list: %w", err)
	}
	return sessions.Page{Sessions: out, Next: sessions.NextCursor(out, q.Limit)}, nil
}

// Delete takes the session's lock on a pooled connection, deletes the
// session and its records, and releases the lock.
func (p *Provider) Delete(ctx context.Context, id string) error {
	c, err := p.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("sessions-postgres: %w", err)
	}
	defer c.Release()
	var ok bool
	if err := c.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, p.lockKey(id)).Scan(&ok); err != nil {
		return fmt.Errorf("sessions-postgres: lock %s: %w", id, err)
	}
	if !ok {
		return p.holder(ctx, id)
	}
	defer func() { _, _ = c.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, p.lockKey(id)) }() // a lost unlock ends with the connection
	tag, err := c.Exec(ctx, p.q.deleteSession, id)
	if err != nil {
		return fmt.Errorf("sessions-postgres: delete %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("session %q: %w (%s)", id, sessions.ErrNotFound, p.where)
	}
	return nil
}

// Follow listens on [Channel] on a connection of its own, delivers the
// records after seq, then those of every commit announced for id.
func (p *Provider) Follow(ctx context.Context, id string, after int64, fn func(sessions.Record) error) error {
	c, err := pgx.ConnectConfig(ctx, p.conn)
	if err != nil {
		return fmt.Errorf("sessions-postgres: %s: %w", p.where, err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, "LISTEN "+Channel); err != nil {
		return fmt.Errorf("sessions-postgres: listen: %w", err)
	}
	want := p.schema + "/" + id
	for {
		recs, err := p.readAfter(ctx, c, id, after)
		if err != nil {
			return ctxOr(ctx, err)
		}
		for _, r := range recs {
			if err := fn(r); err != nil {
				return err
			}
			after = r.Seq
		}
		for {
			n, err := c.WaitForNotification(ctx)
			if err != nil {
				return ctxOr(ctx, err)
			}
			if n.Payload == want {
				break
			}
		}
	}
}

// ctxOr returns nil when ctx ended (a follower stopped), else err.
func ctxOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("sessions-postgres: follow: %w", err)
}

// handle is an open session: its own connection, holding the lock.
type handle struct {
	p  *Provider
	c  *pgx.Conn
	id string
}

// insert stores rec and updates the summary row in tx, and notifies.
func (h *handle) insert(ctx context.Context, tx pgx.Tx, rec sessions.Record) error {
	b := h.batch([]sessions.Record{rec})
	return tx.SendBatch(ctx, b).Close()
}

// batch queues the statements that store recs: one multi-row insert of
// the records, one update of the summary row, one notification.
func (h *handle) batch(recs []sessions.Record) *pgx.Batch {
	var (
		seqs          = make([]int64, len(recs))
		types, datas  = make([]string, len(recs)), make([]string, len(recs))
		times         = make([]time.Time, len(recs))
		last          time.Time
		messages, tns int
		title         string
	)
	for i, r := range recs {
		seqs[i], types[i], times[i], datas[i] = r.Seq, r.Type, r.Time, string(r.Data)
		if r.Time.After(last) {
			last = r.Time
		}
		c := sessions.CountsOf(r)
		if c.Message {
			messages++
		}
		if c.Turn {
			tns++
			if title == "" {
				title = c.Title
			}
		}
	}
	b := &pgx.Batch{}
	b.Queue(h.p.q.insertRecords, h.id, seqs, types, times, datas)
	b.Queue(h.p.q.updateSession, h.id, recs[len(recs)-1].Seq, last, messages, tns, title)
	b.Queue(`SELECT pg_notify($1, $2)`, Channel, h.p.schema+"/"+h.id)
	return b
}

// Append stores rec in one transaction (see AppendBatch).
func (h *handle) Append(ctx context.Context, rec sessions.Record) error {
	return h.AppendBatch(ctx, []sessions.Record{rec})
}

// AppendBatch stores recs in one transaction sent in one round trip: the
// statements of [handle.batch] between BEGIN and COMMIT, pipelined. The
// server runs them in order and commits only when all succeeded; a
// connection lost before the COMMIT leaves nothing. With an outage grace,
// a lost connection is waited out (see [handle.ride]).
func (h *handle) AppendBatch(ctx context.Context, recs []sessions.Record) error {
	if len(recs) == 0 {
		return nil
	}
	b := h.batch(recs)
	err := h.c.SendBatch(ctx, b).Close()
	if err != nil && h.p.grace > 0 && ctx.Err() == nil && lostConnection(h.c, err) {
		return h.ride(ctx, recs, err)
	}
	if err != nil {
		return fmt.Errorf("sessions-postgres: append to %s: %w", h.id, err)
	}
	return nil
}

// Close releases the lock, then closes the session's connection. The
// unlock is explicit so that the session can be opened again as soon as
// Close returns (the server ends a closed connection's backend, and its
// locks, a moment later).
func (h *handle) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// An unlock that fails means the connection is broken: its lock goes
	// with it.
	_, _ = h.c.Exec(ctx, `SELECT pg_advisory_unlock($1)`, h.p.lockKey(h.id))
	return h.c.Close(ctx)
}
