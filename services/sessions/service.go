package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// Service is the session store the agent, `harness sessions` and other
// front ends use. It wraps a [Provider] and adds what every provider
// shares: id validation, record numbering and encoding, and in-process
// claims (a session is open at most once per Service, including a
// reserved session that has no stored record yet). Safe for concurrent
// use.
type Service struct {
	p Provider

	mu       sync.Mutex
	open     map[string]bool   // ids with a live Writer from this Service
	reserved map[string]Header // reserved ids with nothing stored yet
}

// New returns a Service over p.
func New(p Provider) *Service {
	return &Service{p: p, open: map[string]bool{}, reserved: map[string]Header{}}
}

// Provider returns the storage backend.
func (s *Service) Provider() Provider { return s.p }

// Location describes where session id is stored (a JSONL file path, a
// postgres row); "" describes the store.
func (s *Service) Location(id string) string { return s.p.Location(id) }

// claim marks id open in this Service, or returns an *InUseError naming
// this process.
func (s *Service) claim(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[id] {
		return &InUseError{ID: id, Path: s.p.Location(id), PID: os.Getpid()}
	}
	s.open[id] = true
	return nil
}

func (s *Service) unclaim(id string) {
	s.mu.Lock()
	delete(s.open, id)
	s.mu.Unlock()
}

func checkID(id string) error {
	if !ValidID(id) {
		return fmt.Errorf("session id %q: want letters, digits, '-' or '_' (at most 128): %w", id, ErrNotFound)
	}
	return nil
}

// Create stores a new session with header h (seq 1) and returns its
// writer, holding the session exclusively until [Writer.Close].
// ErrExists when the id is taken; an *InUseError when it is open.
func (s *Service) Create(ctx context.Context, h Header) (*Writer, error) {
	w, err := s.Reserve(h)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	err = w.storeLocked(ctx)
	w.mu.Unlock()
	if err != nil {
		_ = w.Close()
		s.mu.Lock()
		delete(s.reserved, h.ID)
		s.mu.Unlock()
		return nil, err
	}
	return w, nil
}

// Reserve claims a new session with header h without storing anything:
// the session is stored (its header, then the record) by the writer's
// first Append, so a session that never appends leaves no trace. Until
// then [Service.Open] of its id in this Service returns a writer for it
// with no records (a front end that restarts its agent reopens it).
func (s *Service) Reserve(h Header) (*Writer, error) {
	if err := checkID(h.ID); err != nil {
		return nil, err
	}
	if h.Time.IsZero() {
		h.Time = time.Now().UTC()
	}
	if err := s.claim(h.ID); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.reserved[h.ID] = h
	s.mu.Unlock()
	return &Writer{s: s, id: h.ID, header: h}, nil
}

// Open takes session id exclusively for appending and returns its writer
// and records (seq order; header first). A session held by another
// writer, in this process or another, fails at once with an *InUseError
// and nothing is read. A reserved session of this Service with nothing
// stored opens with no records.
func (s *Service) Open(ctx context.Context, id string) (*Writer, []Record, error) {
	if err := checkID(id); err != nil {
		return nil, nil, err
	}
	if err := s.claim(id); err != nil {
		return nil, nil, err
	}
	hd, recs, err := s.p.Open(ctx, id)
	if errors.Is(err, ErrNotFound) {
		s.mu.Lock()
		h, ok := s.reserved[id]
		s.mu.Unlock()
		if ok {
			return &Writer{s: s, id: id, header: h}, nil, nil
		}
	}
	if err != nil {
		s.unclaim(id)
		return nil, nil, err
	}
	w := &Writer{s: s, id: id, h: hd}
	if len(recs) > 0 {
		w.seq = recs[len(recs)-1].Seq
		if w.header, err = ParseHeader(recs[0]); err != nil {
			_ = w.Close()
			return nil, nil, fmt.Errorf("session %s: %s: %w", id, s.p.Location(id), err)
		}
	}
	return w, recs, nil
}

// Read returns the records of session id (seq order; header first)
// without taking it. ErrNotFound when nothing is stored.
func (s *Service) Read(ctx context.Context, id string) ([]Record, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	return s.p.Read(ctx, id)
}

// List returns a page of stored sessions, newest first.
func (s *Service) List(ctx context.Context, q Query) (Page, error) {
	if q.Limit < 0 {
		return Page{}, fmt.Errorf("sessions list: limit %d: must not be negative", q.Limit)
	}
	if q.Cursor != "" {
		if _, _, err := ParseCursor(q.Cursor); err != nil {
			return Page{}, err
		}
	}
	return s.p.List(ctx, q)
}

// Delete removes session id. An *InUseError when it is open, here or
// elsewhere; ErrNotFound when nothing is stored.
func (s *Service) Delete(ctx context.Context, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	if err := s.claim(id); err != nil {
		return err
	}
	defer s.unclaim(id)
	s.mu.Lock()
	_, reserved := s.reserved[id]
	delete(s.reserved, id)
	s.mu.Unlock()
	err := s.p.Delete(ctx, id)
	if reserved && errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// Follow calls fn with every record of session id after seq, in order,
// including those appended later, until ctx ends (returning nil) or fn
// returns an error (returned). Providers that push records
// ([Follower]) deliver them as they commit; others are polled every
// 200ms.
func (s *Service) Follow(ctx context.Context, id string, after int64, fn func(Record) error) error {
	if err := checkID(id); err != nil {
		return err
	}
	if f, ok := s.p.(Follower); ok {
		return f.Follow(ctx, id, after, fn)
	}
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		recs, err := s.p.Read(ctx, id)
		if err != nil && ctx.Err() == nil {
			return err
		}
		for _, r := range recs {
			if r.Seq > after {
				if err := fn(r); err != nil {
					return err
				}
				after = r.Seq
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Close closes the provider. Writers still open fail their next Append.
func (s *Service) Close() error { return s.p.Close() }

// Writer appends to one session it holds exclusively. Records are
// numbered 1, 2, 3, ... in Append order (the header is 1). After a failed
// Append every later one returns the same error: a session log never has
// a gap. Safe for concurrent use.
type Writer struct {
	s      *Service
	id     string
	header Header

	mu     sync.Mutex
	h      Handle // nil until stored (a reservation)
	seq    int64  // the last stored seq
	err    error
	closed bool
}

// ID returns the session id.
func (w *Writer) ID() string { return w.id }

// Header returns the session's header.
func (w *Writer) Header() Header { return w.header }

// Stored reports whether the session has been stored (see
// [Service.Reserve]).
func (w *Writer) Stored() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.h != nil
}

// Seq returns the seq of the last stored record (0 before the header).
func (w *Writer) Seq() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seq
}

// storeLocked stores the reserved session's header. w.mu is held.
func (w *Writer) storeLocked(ctx context.Context) error {
	hr, err := headerRecord(w.header)
	if err != nil {
		return err
	}
	h, err := w.s.p.Create(ctx, w.header, hr)
	if err != nil {
		return err
	}
	w.h, w.seq = h, 1
	w.s.mu.Lock()
	delete(w.s.reserved, w.id)
	w.s.mu.Unlock()
	return nil
}

// Append stores e as the session's next record and returns it. A
// reserved session is stored first (its header is seq 1).
func (w *Writer) Append(ctx context.Context, e Entry) (Record, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return Record{}, w.err
	}
	if w.closed {
		return Record{}, fmt.Errorf("session %s: %w", w.id, ErrClosed)
	}
	if w.h == nil {
		if err := w.storeLocked(ctx); err != nil {
			return Record{}, err
		}
	}
	rec, err := encodeRecord(w.seq+1, e)
	if err != nil {
		return Record{}, err // nothing was written: the writer stays usable
	}
	if err := w.h.Append(ctx, rec); err != nil {
		w.err = err
		return Record{}, err
	}
	w.seq = rec.Seq
	return rec, nil
}

// AppendBatch stores es as the session's next records, in order, and
// returns them; a reserved session is stored first. The records are
// durable when it returns. With a provider whose handle is a
// [BatchHandle] (sessions-postgres) the batch is one write: after a crash
// readers see all of it or none of it. Otherwise the records are appended
// one at a time: each is whole, and a crash may keep a prefix of the
// batch. An entry that cannot be encoded fails the call before anything
// is written (the writer stays usable); a failed write fails every later
// Append, as [Writer.Append] does. An empty batch stores nothing.
func (w *Writer) AppendBatch(ctx context.Context, es []Entry) ([]Record, error) {
	if len(es) == 0 {
		return nil, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return nil, w.err
	}
	if w.closed {
		return nil, fmt.Errorf("session %s: %w", w.id, ErrClosed)
	}
	base := w.seq
	if w.h == nil {
		base = 1 // the header's seq, once stored
	}
	recs := make([]Record, len(es))
	for i, e := range es {
		rec, err := encodeRecord(base+int64(i)+1, e)
		if err != nil {
			return nil, err // nothing was written: the writer stays usable
		}
		recs[i] = rec
	}
	if w.h == nil {
		if err := w.storeLocked(ctx); err != nil {
			return nil, err
		}
	}
	if err := w.appendAllLocked(ctx, recs); err != nil {
		w.err = err
		return nil, err
	}
	return recs, nil
}

// appendAllLocked writes recs through the handle, in one call when it is
// a BatchHandle, and advances w.seq past each stored record. w.mu is
// held.
func (w *Writer) appendAllLocked(ctx context.Context, recs []Record) error {
	if bh, ok := w.h.(BatchHandle); ok && len(recs) > 1 {
		if err := bh.AppendBatch(ctx, recs); err != nil {
			return err
		}
		w.seq = recs[len(recs)-1].Seq
		return nil
	}
	for _, rec := range recs {
		if err := w.h.Append(ctx, rec); err != nil {
			return err
		}
		w.seq = rec.Seq
	}
	return nil
}

// Close releases the session (and this Service's claim). Idempotent.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	var err error
	if w.h != nil {
		err = w.h.Close()
	}
	w.s.unclaim(w.id)
	return err
}
