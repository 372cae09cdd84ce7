package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// migrations are the schema's versions, applied in order, each once, in
// one transaction under an advisory lock (so concurrent starters do not
// race). Never edit one that has shipped: append a new one. "S." stands
// for the configured schema.
var migrations = []string{
	// 1: sessions with their listing summary, and records.
	`CREATE TABLE S.sessions (
		id       text PRIMARY KEY,
		cwd      text NOT NULL,
		model    text NOT NULL,
		parent   text NOT NULL DEFAULT '',
		origin   text NOT NULL DEFAULT '',
		created  timestamptz NOT NULL,
		updated  timestamptz NOT NULL,
		last_seq bigint NOT NULL DEFAULT 0,
		turns    integer NOT NULL DEFAULT 0,
		messages integer NOT NULL DEFAULT 0,
		title    text NOT NULL DEFAULT ''
	);
	CREATE INDEX sessions_updated ON S.sessions (updated DESC, id DESC);
	CREATE INDEX sessions_cwd ON S.sessions (cwd, updated DESC, id DESC);
	CREATE INDEX sessions_parent ON S.sessions (parent, updated DESC, id DESC) WHERE parent <> '';
	CREATE TABLE S.records (
		session_id text NOT NULL REFERENCES S.sessions (id) ON DELETE CASCADE,
		seq        bigint NOT NULL,
		type       text NOT NULL,
		time       timestamptz NOT NULL,
		data       text NOT NULL,
		PRIMARY KEY (session_id, seq)
	);`,
}

// Version is the schema version this provider migrates to.
var Version = len(migrations)

// migrate creates the schema and applies the missing migrations.
func (p *Provider) migrate(ctx context.Context) error {
	s := pgx.Identifier{p.schema}.Sanitize()
	return pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, p.lockKey("\x00migrate")); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+s+`;
			CREATE TABLE IF NOT EXISTS `+s+`.schema_migrations (version integer PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())`); err != nil {
			return fmt.Errorf("migrations table: %w", err)
		}
		var have int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM `+s+`.schema_migrations`).Scan(&have); err != nil {
			return err
		}
		if have > len(migrations) {
			return fmt.Errorf("schema %s is at version %d, newer than this harness knows (%d): upgrade the harness", p.schema, have, len(migrations))
		}
		for v := have + 1; v <= len(migrations); v++ {
			if _, err := tx.Exec(ctx, strings.ReplaceAll(migrations[v-1], "S.", s+".")); err != nil {
				return fmt.Errorf("migration %d: %w", v, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+s+`.schema_migrations (version) VALUES ($1)`, v); err != nil {
				return err
			}
		}
		return nil
	})
}

// queries are the statements, with the schema filled in.
type queries struct {
	createSession, insertRecords, updateSession, lastSeq, records, recordData, list, deleteSession string
}

func newQueries(s string) queries {
	return queries{
		createSession: `INSERT INTO ` + s + `.sessions (id, cwd, model, parent, origin, created, updated)
			VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (id) DO NOTHING`,
		insertRecords: `INSERT INTO ` + s + `.records (session_id, seq, type, time, data)
			SELECT $1, r.seq, r.type, r.time, r.data
			FROM unnest($2::bigint[], $3::text[], $4::timestamptz[], $5::text[]) AS r (seq, type, time, data)
			ORDER BY r.seq`,
		updateSession: `UPDATE ` + s + `.sessions SET last_seq = $2, updated = greatest(updated, $3),
			messages = messages + $4::integer, turns = turns + $5::integer,
			title = CASE WHEN title = '' THEN $6 ELSE title END
			WHERE id = $1`,
		lastSeq:       `SELECT last_seq FROM ` + s + `.sessions WHERE id = $1`,
		records:       `SELECT data FROM ` + s + `.records WHERE session_id = $1 AND seq > $2 ORDER BY seq`,
		recordData:    `SELECT data FROM ` + s + `.records WHERE session_id = $1 AND seq = $2`,
		list:          `SELECT id, cwd, model, parent, origin, created, updated, turns, title, messages FROM ` + s + `.sessions`,
		deleteSession: `DELETE FROM ` + s + `.sessions WHERE id = $1`,
	}
}
