// Package postgres is the sessions-postgres provider of the sessions
// service: sessions in PostgreSQL, shared by every harness process (and
// machine) that connects to the same database and schema.
//
//	schema S (migrated at start; S.schema_migrations records versions)
//	  S.sessions  id, cwd, model, parent, origin, created, updated,
//	              last_seq, turns, messages, title   ← listing, by index
//	  S.records   (session_id, seq) → type, time, data (the record's JSON)
//
//	Open/Create ─ own connection ─ pg_try_advisory_lock(key(S, id))
//	Append      ─ BEGIN; INSERT record; UPDATE summary; pg_notify; COMMIT
//	Follow      ─ LISTEN harness_sessions; read seq > last on each notify
//
// A writer's lock lives on its connection: when the process dies, the
// server closes the connection and the lock is gone, so another process
// can open the session at once. A transaction that did not commit left
// nothing, so there is no torn record to repair.
package postgres
