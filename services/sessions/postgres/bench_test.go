package postgres_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dshgo/harness/internal/pgtest"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/sessions/postgres"
)

// benchEntry is a typical record: a tool result of about 600 bytes.
var benchEntry = sessions.Entry{Type: "tool/result", Fields: []byte(`{"turn":3,"step":2,"callId":"call_01","name":"bash","message":{"role":"tool","tool_call_id":"call_01","name":"bash","content":"` +
	"total 48\\ndrwxr-xr-x  5 user user 4096 Dec  1 10:00 .\\n-rw-r--r--  1 user user 1234 Dec  1 10:00 main.go\\n" +
	"-rw-r--r--  1 user user  567 Dec  1 10:00 go.mod\\n-rw-r--r--  1 user user 8901 Dec  1 10:00 README.md\\n" +
	"some more realistic output of a command that lists files and prints a short summary at the end\\n" +
	"more lines of output, as a model would read them, to bring the record to a typical size" +
	`"},"content":[{"type":"text","text":"ok"}],"meta":{"exitCode":0}}`)}

// benchAppend times b.N appends to one session and reports the p50 and
// p99 latency of one append (ns).
func benchAppend(b *testing.B, store *sessions.Service) {
	w, err := store.Create(bg, sessions.Header{ID: fmt.Sprintf("bench-%d", b.N), Cwd: "/w", Model: "p/m"})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := w.Append(bg, benchEntry); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkAppend: one record appended to a session, sessions-jsonl (one
// write(2) on a local file, no fsync) vs sessions-postgres (a transaction:
// insert, summary update, notify, commit) on the same machine.
func BenchmarkAppend(b *testing.B) {
	b.Run("jsonl", func(b *testing.B) {
		benchAppend(b, sessions.New(sessions.NewJSONL(b.TempDir())))
	})
	b.Run("postgres", func(b *testing.B) {
		pgtest.Need(b)
		benchAppend(b, sessions.New(openProvider(b, freshSchema(b))))
	})
}

const listSchema = "bench_list100k" // dropped by TestMain

var seedOnce sync.Once

// seed100k fills listSchema with 100,000 sessions (once per process),
// spread over 100 working directories, with COPY.
func seed100k(b *testing.B) {
	seedOnce.Do(func() {
		openProvider(b, listSchema) // migrate
		c, err := pgx.Connect(bg, pgtest.DSN())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close(bg)
		var n int
		if err := c.QueryRow(bg, "SELECT count(*) FROM "+listSchema+".sessions").Scan(&n); err != nil {
			b.Fatal(err)
		}
		if n == 100_000 {
			return
		}
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		rows := make([][]any, 0, 100_000)
		for i := range 100_000 {
			t := base.Add(time.Duration(i) * time.Minute)
			rows = append(rows, []any{fmt.Sprintf("20260101T000000-%08x", i), fmt.Sprintf("/work/repo%d", i%100), "deepseek/deepseek-v4-flash", t, t.Add(time.Duration(i%7) * time.Hour), 3, 12, fmt.Sprintf("fix issue %d", i)})
		}
		if _, err := c.CopyFrom(bg, pgx.Identifier{listSchema, "sessions"}, []string{"id", "cwd", "model", "created", "updated", "turns", "messages", "title"}, pgx.CopyFromRows(rows)); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Exec(bg, "ANALYZE "+listSchema+".sessions"); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkListFirstPage100k: the first page (50, newest first) of
// `harness sessions` over 100,000 sessions on sessions-postgres, all and
// by working directory (target: ≤ 50 ms).
func BenchmarkListFirstPage100k(b *testing.B) {
	pgtest.Need(b)
	seed100k(b)
	p, err := postgres.Open(bg, postgres.Options{DSN: pgtest.DSN(), Schema: listSchema})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	store := sessions.New(p)
	for _, q := range []sessions.Query{{Limit: 50}, {Limit: 50, Cwd: "/work/repo42"}} {
		name := "all"
		if q.Cwd != "" {
			name = "cwd"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				page, err := store.List(bg, q)
				if err != nil || len(page.Sessions) != 50 || page.Next == "" {
					b.Fatalf("%d sessions, %v", len(page.Sessions), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/page")
		})
	}
}

// BenchmarkPostgresAppend: b.N records appended to one session in batches
// of 1, 4 and 16 (AppendBatch; the agent writes the records of a step
// together: usage, assistant message and tool calls, then the results
// that are ready), on sessions-jsonl and sessions-postgres in the same
// run; ms/record is the wall time per record, amortised over its batch.
//
//	go test -run '^$' -bench PostgresAppend -benchtime 2000x ./services/sessions/postgres/
func BenchmarkPostgresAppend(b *testing.B) {
	for _, size := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("jsonl/batch=%d", size), func(b *testing.B) {
			benchBatches(b, sessions.New(sessions.NewJSONL(b.TempDir())), size)
		})
		b.Run(fmt.Sprintf("postgres/batch=%d", size), func(b *testing.B) {
			pgtest.Need(b)
			benchBatches(b, sessions.New(openProvider(b, freshSchema(b))), size)
		})
	}
}

func benchBatches(b *testing.B, store *sessions.Service, size int) {
	w, err := store.Create(bg, sessions.Header{ID: fmt.Sprintf("batch-%d-%d", size, b.N), Cwd: "/w", Model: "p/m"})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	batch := make([]sessions.Entry, size)
	for i := range batch {
		batch[i] = benchEntry
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += size {
		if _, err := w.AppendBatch(bg, batch[:min(size, b.N-n)]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/record")
}
