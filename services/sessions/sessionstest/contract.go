// Package sessionstest is the contract test suite every sessions provider
// runs: torn writes, concurrent openers, ordering, large records, listing
// and lineage, over the public [sessions.Service] API.
//
//	func TestContract(t *testing.T) {
//		sessionstest.Run(t, sessionstest.Provider{New: func(t *testing.T) sessionstest.Store { ... }})
//	}
package sessionstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshgo/harness/services/sessions"
)

// Provider describes the provider under test.
type Provider struct {
	// New makes a fresh, empty store private to t and returns it. Run
	// calls it once per case; the cases run in parallel. Cleanup is the
	// test's.
	New func(t *testing.T) Store
}

// Store is one fresh store of the provider under test.
type Store struct {
	// Open opens a Service over the store; each call is a separate Service
	// (as a second process would have), all sharing the storage.
	Open func() *sessions.Service
	// Tear simulates a crash in the middle of storing the next record of
	// session id, which no writer holds: afterwards that record must be
	// absent for readers and for the next Open.
	Tear func(t *testing.T, id string, nextSeq int64)
}

// Run runs the contract suite, each case in parallel on a store of its
// own.
func Run(t *testing.T, p Provider) {
	tests := []struct {
		name string
		fn   func(*testing.T, func() *sessions.Service)
	}{
		{"CreateAppendRead", testCreateAppendRead},
		{"Errors", testErrors},
		{"Ordering", testOrdering},
		{"AppendBatch", testAppendBatch},
		{"LargeRecords", testLargeRecords},
		{"ConcurrentOpeners", testConcurrentOpeners},
		{"Reserve", testReserve},
		{"Listing", testListing},
		{"Lineage", testLineage},
		{"Delete", testDelete},
		{"Follow", testFollow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, p.New(t).Open)
		})
	}
	t.Run("TornWrites", func(t *testing.T) {
		t.Parallel()
		s := p.New(t)
		testTornWrites(t, s.Open, s.Tear)
	})
}

var bg = context.Background()

func fields(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// userEntry is a user prompt record.
func userEntry(t *testing.T, text string) sessions.Entry {
	return sessions.Entry{Type: "user", Fields: fields(t, map[string]any{"turn": 1, "message": map[string]string{"role": "user", "content": text}})}
}

func mustCreate(t *testing.T, s *sessions.Service, h sessions.Header) *sessions.Writer {
	t.Helper()
	w, err := s.Create(bg, h)
	if err != nil {
		t.Fatalf("create %s: %v", h.ID, err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

func mustAppend(t *testing.T, w *sessions.Writer, e sessions.Entry) sessions.Record {
	t.Helper()
	r, err := w.Append(bg, e)
	if err != nil {
		t.Fatalf("append to %s: %v", w.ID(), err)
	}
	return r
}

func mustRead(t *testing.T, s *sessions.Service, id string) []sessions.Record {
	t.Helper()
	recs, err := s.Read(bg, id)
	if err != nil {
		t.Fatalf("read %s: %v", id, err)
	}
	return recs
}

// checkSeqs fails unless recs are numbered 1..n in order, header first.
func checkSeqs(t *testing.T, recs []sessions.Record, n int) {
	t.Helper()
	if len(recs) != n {
		t.Fatalf("%d records, want %d", len(recs), n)
	}
	for i, r := range recs {
		if r.Seq != int64(i+1) {
			t.Fatalf("record %d has seq %d", i, r.Seq)
		}
		d, err := sessions.DecodeRecord(r.Data)
		if err != nil || d.Seq != r.Seq || d.Type != r.Type {
			t.Fatalf("record %d: data %s does not carry its type and seq (%v)", i, r.Data, err)
		}
	}
	if n > 0 && recs[0].Type != sessions.TypeHeader {
		t.Fatalf("first record is %q, want the header", recs[0].Type)
	}
}

// A created session reads back as its header and appended records, each
// with its seq, type, time and fields; Open continues the numbering.
func testCreateAppendRead(t *testing.T, open func() *sessions.Service) {
	s := open()
	at := time.Date(2026, 12, 1, 2, 3, 4, 5000, time.UTC)
	w := mustCreate(t, s, sessions.Header{ID: "s1", Cwd: "/w", Model: "p/m", Time: at})
	if w.Seq() != 1 || !w.Stored() {
		t.Fatalf("after create: seq %d stored %v", w.Seq(), w.Stored())
	}
	r := mustAppend(t, w, sessions.Entry{Type: "user", Time: at.Add(time.Second), Fields: []byte(`{"turn":1,"message":{"role":"user","content":"fix ✓"}}`)})
	if r.Seq != 2 || string(r.Data) != `{"type":"user","seq":2,"time":"2026-12-01T02:03:05.000005Z","turn":1,"message":{"role":"user","content":"fix ✓"}}` {
		t.Fatalf("appended %d %s", r.Seq, r.Data)
	}
	mustAppend(t, w, sessions.Entry{Type: "usage"})
	recs := mustRead(t, s, "s1")
	checkSeqs(t, recs, 3)
	if string(recs[1].Data) != string(r.Data) || !recs[1].Time.Equal(at.Add(time.Second)) {
		t.Fatalf("read back %s at %v", recs[1].Data, recs[1].Time)
	}
	h, err := sessions.ParseHeader(recs[0])
	if err != nil || h.ID != "s1" || h.Cwd != "/w" || h.Model != "p/m" || !h.Time.Equal(at) {
		t.Fatalf("header %+v %v", h, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w2, recs2, err := s.Open(bg, "s1")
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	checkSeqs(t, recs2, 3)
	if w2.Header().Model != "p/m" || mustAppend(t, w2, userEntry(t, "again")).Seq != 4 {
		t.Fatalf("reopened writer: header %+v seq %d", w2.Header(), w2.Seq())
	}
}

// Bad ids, unknown sessions, taken ids, bad fields and closed writers are
// errors that say so.
func testErrors(t *testing.T, open func() *sessions.Service) {
	s := open()
	for _, id := range []string{"", "../x", "a/b", ".hidden", "a b", strings.Repeat("x", 129)} {
		if _, err := s.Create(bg, sessions.Header{ID: id}); err == nil {
			t.Errorf("create %q accepted", id)
		}
		if _, err := s.Read(bg, id); !errors.Is(err, sessions.ErrNotFound) {
			t.Errorf("read %q: %v", id, err)
		}
	}
	if _, err := s.Read(bg, "nosuch"); !errors.Is(err, sessions.ErrNotFound) {
		t.Fatalf("read unknown: %v", err)
	}
	if _, _, err := s.Open(bg, "nosuch"); !errors.Is(err, sessions.ErrNotFound) {
		t.Fatalf("open unknown: %v", err)
	}
	if err := s.Delete(bg, "nosuch"); !errors.Is(err, sessions.ErrNotFound) {
		t.Fatalf("delete unknown: %v", err)
	}
	w := mustCreate(t, s, sessions.Header{ID: "taken"})
	_ = w.Close()
	if _, err := open().Create(bg, sessions.Header{ID: "taken"}); !errors.Is(err, sessions.ErrExists) {
		t.Fatalf("create taken: %v", err)
	}
	w, _, err := s.Open(bg, "taken")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(bg, sessions.Entry{Type: "user", Fields: []byte(`[1]`)}); err == nil {
		t.Fatal("non-object fields accepted")
	}
	if _, err := w.Append(bg, sessions.Entry{}); err == nil {
		t.Fatal("empty type accepted")
	}
	// A rejected entry stored nothing: the numbering goes on.
	if r := mustAppend(t, w, userEntry(t, "ok")); r.Seq != 2 {
		t.Fatalf("seq %d after rejected entries", r.Seq)
	}
	_ = w.Close()
	if _, err := w.Append(bg, userEntry(t, "late")); !errors.Is(err, sessions.ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
}

// Appends from many goroutines on one writer are numbered without gaps and
// read back in seq order.
func testOrdering(t *testing.T, open func() *sessions.Service) {
	s := open()
	w := mustCreate(t, s, sessions.Header{ID: "ordered"})
	const workers, each = 8, 25
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for i := range each {
				if _, err := w.Append(bg, sessions.Entry{Type: "note", Fields: fields(t, map[string]int{"g": g, "i": i})}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	recs := mustRead(t, s, "ordered")
	checkSeqs(t, recs, 1+workers*each)
	last := map[int]int{}
	for _, r := range recs[1:] {
		var f struct{ G, I int }
		if err := json.Unmarshal(r.Data, &f); err != nil {
			t.Fatal(err)
		}
		if prev, ok := last[f.G]; ok && f.I != prev+1 {
			t.Fatalf("goroutine %d: record %d after %d", f.G, f.I, prev)
		}
		last[f.G] = f.I
	}
}

// AppendBatch stores its entries as the next records in the order given
// (a reserved session gets its header first), counts them in the
// session's summary, and an entry that cannot be encoded fails the batch
// before anything of it is stored.
func testAppendBatch(t *testing.T, open func() *sessions.Service) {
	s := open()
	w, err := s.Reserve(sessions.Header{ID: "batched", Cwd: "/b"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	batch := []sessions.Entry{userEntry(t, "first prompt")}
	for i := range 40 {
		batch = append(batch, sessions.Entry{Type: "note", Fields: fields(t, map[string]int{"i": i})})
	}
	got, err := w.AppendBatch(bg, batch)
	if err != nil || len(got) != len(batch) || got[0].Seq != 2 || got[len(got)-1].Seq != int64(len(batch)+1) {
		t.Fatalf("AppendBatch: %d records (seq %v..), %v", len(got), got, err)
	}
	bad := []sessions.Entry{{Type: "note"}, {Type: "note", Fields: json.RawMessage(`[1]`)}}
	if _, err := w.AppendBatch(bg, bad); err == nil {
		t.Fatal("a batch with an entry that is not a JSON object was stored")
	}
	mustAppend(t, w, sessions.Entry{Type: "after"})
	recs := mustRead(t, s, "batched")
	checkSeqs(t, recs, 1+len(batch)+1)
	for i, r := range recs[2 : len(recs)-1] {
		var f struct{ I int }
		if err := json.Unmarshal(r.Data, &f); err != nil || r.Type != "note" || f.I != i {
			t.Fatalf("record %d: %s, want note %d", r.Seq, r.Data, i)
		}
	}
	if last := recs[len(recs)-1]; last.Type != "after" {
		t.Fatalf("last record %s, want the append after the refused batch", last.Data)
	}
	page, err := s.List(bg, sessions.Query{})
	if err != nil || len(page.Sessions) != 1 {
		t.Fatalf("list: %+v, %v", page, err)
	}
	if i := page.Sessions[0]; i.Turns != 1 || i.Messages != 1 || i.Title != "first prompt" {
		t.Fatalf("summary: turns %d, messages %d, title %q", i.Turns, i.Messages, i.Title)
	}
}

// A record of a few MiB with newlines, quotes and multi-byte text in its
// strings is stored and read back byte for byte, and the next record
// follows it.
func testLargeRecords(t *testing.T, open func() *sessions.Service) {
	s := open()
	w := mustCreate(t, s, sessions.Header{ID: "large"})
	big := strings.Repeat("line \"quoted\" ✓\n", 150_000) // ~2.6 MiB
	r := mustAppend(t, w, sessions.Entry{Type: "tool/result", Fields: fields(t, map[string]string{"content": big})})
	mustAppend(t, w, userEntry(t, "after"))
	recs := mustRead(t, open(), "large")
	checkSeqs(t, recs, 3)
	if string(recs[1].Data) != string(r.Data) {
		t.Fatalf("large record changed: %d bytes read, %d written", len(recs[1].Data), len(r.Data))
	}
	var f struct{ Content string }
	if err := json.Unmarshal(recs[1].Data, &f); err != nil || f.Content != big {
		t.Fatalf("content lost (%v)", err)
	}
	// Pretty-printed fields are stored compact (one record stays one line).
	mustAppend(t, w, sessions.Entry{Type: "note", Fields: []byte("{\n  \"a\": 1\n}")})
	if recs := mustRead(t, s, "large"); len(recs) != 4 || strings.Contains(string(recs[3].Data), "\n") {
		t.Fatalf("pretty fields: %d records, %q", len(recs), recs[len(recs)-1].Data)
	}
}

// A crash mid-append leaves the earlier records intact: readers do not see
// the torn record, and Open continues with its seq.
func testTornWrites(t *testing.T, open func() *sessions.Service, tear func(*testing.T, string, int64)) {
	if tear == nil {
		t.Fatal("the provider under test has no Tear")
	}
	s := open()
	w := mustCreate(t, s, sessions.Header{ID: "torn"})
	mustAppend(t, w, userEntry(t, "one"))
	_ = w.Close()
	tear(t, "torn", 3)
	checkSeqs(t, mustRead(t, open(), "torn"), 2)
	w2, recs, err := open().Open(bg, "torn")
	if err != nil {
		t.Fatal(err)
	}
	checkSeqs(t, recs, 2)
	if r := mustAppend(t, w2, userEntry(t, "two")); r.Seq != 3 {
		t.Fatalf("seq after a torn write: %d", r.Seq)
	}
	_ = w2.Close()
	recs = mustRead(t, s, "torn")
	checkSeqs(t, recs, 3)
	if !strings.Contains(string(recs[2].Data), `"two"`) {
		t.Fatalf("record 3 = %s", recs[2].Data)
	}
}

// isInUse fails unless err is an *InUseError for id that names a holder.
func isInUse(t *testing.T, err error, id string) {
	t.Helper()
	var iu *sessions.InUseError
	if !errors.Is(err, sessions.ErrInUse) || !errors.As(err, &iu) || iu.ID != id {
		t.Fatalf("err = %v, want an *InUseError for %s", err, id)
	}
	if iu.PID == 0 && iu.Holder == "" {
		t.Fatalf("in-use error names no holder: %v", err)
	}
	if !strings.Contains(err.Error(), "session "+id+" is ") {
		t.Fatalf("message %q does not name the session", err)
	}
}

// One writer per session: a second Open, through the same Service or
// another over the same storage, fails at once naming the holder and
// changes nothing; of many concurrent openers exactly one wins; after
// Close the session opens again.
func testConcurrentOpeners(t *testing.T, open func() *sessions.Service) {
	s := open()
	w := mustCreate(t, s, sessions.Header{ID: "held"})
	mustAppend(t, w, userEntry(t, "one"))
	_, _, err := s.Open(bg, "held")
	isInUse(t, err, "held")
	other := open()
	start := time.Now()
	_, _, err = other.Open(bg, "held")
	isInUse(t, err, "held")
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the refused open waited %v", d)
	}
	isInUse(t, other.Delete(bg, "held"), "held")
	checkSeqs(t, mustRead(t, other, "held"), 2) // readers need no hold
	if r := mustAppend(t, w, userEntry(t, "two")); r.Seq != 3 {
		t.Fatalf("holder's seq %d after refused openers", r.Seq)
	}
	_ = w.Close()

	const n = 6
	services := make([]*sessions.Service, n)
	for i := range services {
		services[i] = open()
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []*sessions.Writer
	)
	for i := range n {
		wg.Go(func() {
			w, _, err := services[i].Open(bg, "held")
			if err != nil {
				if !errors.Is(err, sessions.ErrInUse) {
					t.Errorf("opener %d: %v", i, err)
				}
				return
			}
			mu.Lock()
			winners = append(winners, w)
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(winners) != 1 {
		t.Fatalf("%d concurrent openers won, want 1", len(winners))
	}
	mustAppend(t, winners[0], userEntry(t, "three"))
	_ = winners[0].Close()
	w3, recs, err := other.Open(bg, "held")
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	defer w3.Close()
	checkSeqs(t, recs, 4)
}

// A reserved session stores nothing until its first append (no listing,
// no record), is held meanwhile, and reopens by id through its Service.
func testReserve(t *testing.T, open func() *sessions.Service) {
	s := open()
	w, err := s.Reserve(sessions.Header{ID: "lazy", Cwd: "/r", Model: "p/m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(bg, "lazy"); !errors.Is(err, sessions.ErrNotFound) {
		t.Fatalf("read of a reservation: %v", err)
	}
	if p, _ := s.List(bg, sessions.Query{}); len(p.Sessions) != 0 {
		t.Fatalf("a reservation is listed: %+v", p.Sessions)
	}
	_, _, err = s.Open(bg, "lazy")
	isInUse(t, err, "lazy")
	_ = w.Close()
	w, recs, err := s.Open(bg, "lazy")
	if err != nil || len(recs) != 0 || w.Header().Model != "p/m" || w.Stored() {
		t.Fatalf("reopened reservation: %d records, header %+v, stored %v, %v", len(recs), w.Header(), w.Stored(), err)
	}
	if r := mustAppend(t, w, userEntry(t, "first")); r.Seq != 2 {
		t.Fatalf("first record of a reservation has seq %d", r.Seq)
	}
	_ = w.Close()
	recs = mustRead(t, open(), "lazy")
	checkSeqs(t, recs, 2)
	if h, _ := sessions.ParseHeader(recs[0]); h.Cwd != "/r" || h.Model != "p/m" {
		t.Fatalf("header %+v", h)
	}
}

// List is newest first by last record, filters by cwd and parent, counts
// turns and messages, titles by the first prompt, and pages with cursors
// that cover every session once.
func testListing(t *testing.T, open func() *sessions.Service) {
	s := open()
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var want []string // newest first
	for i := range 7 {
		id := fmt.Sprintf("l%d", i)
		cwd := "/a"
		if i%2 == 1 {
			cwd = "/b"
		}
		w := mustCreate(t, s, sessions.Header{ID: id, Cwd: cwd, Model: "p/m", Time: base.Add(time.Duration(i) * time.Minute)})
		e := userEntry(t, fmt.Sprintf("prompt %d\nsecond line", i))
		e.Time = base.Add(time.Duration(10-i) * time.Hour) // l0 updated last
		mustAppend(t, w, e)
		mustAppend(t, w, sessions.Entry{Type: "user", Time: e.Time, Fields: []byte(`{"source":"plugin","message":{"role":"user","content":"ctx"}}`)})
		mustAppend(t, w, sessions.Entry{Type: "usage", Time: e.Time, Fields: []byte(`{"usage":{"total_tokens":3}}`)})
		_ = w.Close()
		want = append(want, id)
	}
	all, err := open().List(bg, sessions.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(all.Sessions); strings.Join(got, ",") != strings.Join(want, ",") || all.Next != "" {
		t.Fatalf("list = %v next %q, want %v", got, all.Next, want)
	}
	i0 := all.Sessions[0]
	if i0.Turns != 1 || i0.Messages != 2 || i0.Title != "prompt 0" || i0.Cwd != "/a" || i0.Model != "p/m" ||
		!i0.Created.Equal(base) || !i0.Updated.Equal(base.Add(10*time.Hour)) || i0.Path == "" {
		t.Fatalf("info = %+v", i0)
	}
	b, _ := s.List(bg, sessions.Query{Cwd: "/b"})
	if got := strings.Join(ids(b.Sessions), ","); got != "l1,l3,l5" {
		t.Fatalf("cwd /b: %s", got)
	}
	var paged []string
	q := sessions.Query{Limit: 3}
	for range 5 {
		p, err := s.List(bg, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Sessions) > 3 {
			t.Fatalf("page of %d", len(p.Sessions))
		}
		paged = append(paged, ids(p.Sessions)...)
		if p.Next == "" {
			break
		}
		q.Cursor = p.Next
	}
	if strings.Join(paged, ",") != strings.Join(want, ",") {
		t.Fatalf("paged = %v, want %v", paged, want)
	}
	if _, err := s.List(bg, sessions.Query{Cursor: "garbage"}); err == nil {
		t.Fatal("a bad cursor was accepted")
	}
	// A new record moves a session to the front.
	w, _, err := s.Open(bg, "l6")
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, w, sessions.Entry{Type: "user", Time: base.Add(20 * time.Hour), Fields: []byte(`{"message":{"role":"user","content":"late"}}`)})
	_ = w.Close()
	if p, _ := s.List(bg, sessions.Query{Limit: 1}); len(p.Sessions) != 1 || p.Sessions[0].ID != "l6" || p.Sessions[0].Turns != 2 || p.Sessions[0].Title != "prompt 6" {
		t.Fatalf("after a late record: %+v", p.Sessions)
	}
}

func ids(list []sessions.Info) []string {
	out := make([]string, 0, len(list))
	for _, i := range list {
		out = append(out, i.ID)
	}
	return out
}

// Parent and origin are stored with the header, listed, and select a
// session's children.
func testLineage(t *testing.T, open func() *sessions.Service) {
	s := open()
	root := mustCreate(t, s, sessions.Header{ID: "root", Cwd: "/p"})
	mustAppend(t, root, userEntry(t, "root prompt"))
	for i, origin := range []string{"fork", "subagent"} {
		w := mustCreate(t, s, sessions.Header{ID: fmt.Sprintf("child%d", i), Cwd: "/p", Parent: "root", Origin: origin})
		mustAppend(t, w, userEntry(t, "child"))
	}
	g := mustCreate(t, s, sessions.Header{ID: "grandchild", Cwd: "/p", Parent: "child0", Origin: "subagent"})
	mustAppend(t, g, userEntry(t, "g"))
	p, err := open().List(bg, sessions.Query{Parent: "root"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, i := range p.Sessions {
		got[i.ID] = i.Parent + "/" + i.Origin
	}
	if len(got) != 2 || got["child0"] != "root/fork" || got["child1"] != "root/subagent" {
		t.Fatalf("children of root: %v", got)
	}
	recs := mustRead(t, s, "grandchild")
	if h, _ := sessions.ParseHeader(recs[0]); h.Parent != "child0" || h.Origin != "subagent" {
		t.Fatalf("header %+v", h)
	}
	if p, _ := s.List(bg, sessions.Query{Parent: "child0", Cwd: "/p"}); len(p.Sessions) != 1 || p.Sessions[0].ID != "grandchild" {
		t.Fatalf("children of child0: %+v", p.Sessions)
	}
}

// Delete removes a session for every reader; it is refused while the
// session is held.
func testDelete(t *testing.T, open func() *sessions.Service) {
	s := open()
	w := mustCreate(t, s, sessions.Header{ID: "gone"})
	mustAppend(t, w, userEntry(t, "x"))
	isInUse(t, s.Delete(bg, "gone"), "gone")
	_ = w.Close()
	if err := open().Delete(bg, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(bg, "gone"); !errors.Is(err, sessions.ErrNotFound) {
		t.Fatalf("read after delete: %v", err)
	}
	if p, _ := s.List(bg, sessions.Query{}); len(p.Sessions) != 0 {
		t.Fatalf("listed after delete: %+v", p.Sessions)
	}
	// The id can be used again.
	mustCreate(t, s, sessions.Header{ID: "gone"})
	checkSeqs(t, mustRead(t, s, "gone"), 1)
}

// Follow delivers the records after a seq, then each new record as it is
// appended, in order, until its context ends.
func testFollow(t *testing.T, open func() *sessions.Service) {
	s := open()
	w := mustCreate(t, s, sessions.Header{ID: "live"})
	mustAppend(t, w, userEntry(t, "before"))
	ctx, cancel := context.WithTimeout(bg, 20*time.Second)
	defer cancel()
	got := make(chan sessions.Record, 16)
	done := make(chan error, 1)
	go func() {
		done <- open().Follow(ctx, "live", 1, func(r sessions.Record) error {
			got <- r
			if r.Seq == 4 {
				return errStop
			}
			return nil
		})
	}()
	next := func(want int64) {
		t.Helper()
		select {
		case r := <-got:
			if r.Seq != want {
				t.Fatalf("followed seq %d, want %d", r.Seq, want)
			}
		case <-ctx.Done():
			t.Fatalf("no record %d", want)
		}
	}
	next(2)
	mustAppend(t, w, userEntry(t, "live 1"))
	next(3)
	mustAppend(t, w, userEntry(t, "live 2"))
	next(4)
	if err := <-done; !errors.Is(err, errStop) {
		t.Fatalf("follow returned %v, want fn's error", err)
	}
}

var errStop = errors.New("stop")
