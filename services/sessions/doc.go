// Package sessions is the session store: the seam through which the agent,
// `harness sessions` and other front ends create, append to, read, list
// and delete session logs.
//
//	agent / harness sessions / web
//	        │  Create · Reserve · Open ─► *Writer (exclusive) ─ Append ─ Close
//	        │  Read · List · Follow · Delete
//	        ▼
//	   *Service  (ids, seq numbering, record encoding, in-process claims)
//	        │ Provider
//	        ├── sessions-jsonl     one flock-locked JSONL file per session (default)
//	        └── sessions-postgres  tables + advisory locks + LISTEN/NOTIFY
//
// A session is an ordered list of records. Each record is one JSON object
// whose first fields are "type", "seq" (1, 2, 3, ... without gaps) and
// "time"; the rest are the record's own fields (see [Entry]). Record 1 is
// the header: {"type":"session","seq":1,"time":…,"v":1,"id":…,"cwd":…,
// "model":…,"parent":…,"origin":…} (see [Header]). The store does not
// interpret other records except to summarise a session for listings
// ([CountsOf]): records with a "message" are messages; "user" records
// without a "source" are the user's turns.
//
// Guarantees every provider keeps (the contract suite in
// services/sessions/sessionstest checks each):
//   - one writer per session: a second Open, from this process or any other,
//     fails at once with an [*InUseError] naming the holder; a dead holder's
//     claim goes with it;
//   - an append is whole or absent after a crash, records come back in seq
//     order, and Open continues after the last complete record;
//   - List is newest first (last record time, then id), filters by working
//     directory and by parent, and pages with an opaque cursor.
package sessions
