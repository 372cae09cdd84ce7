package sessions

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dshgo/harness/core"
)

// Key is the sessions service key ("sessions"). One provider per realm:
// sessions-jsonl (the default) or sessions-postgres.
var Key = core.NewKey[*Service]("sessions")

// FormatVersion is the version of the record format, carried by the
// header record as "v".
const FormatVersion = 1

// TypeHeader is the type of a session's first record (seq 1): its
// [Header].
const TypeHeader = "session"

// Errors of the service. A provider's error matches one of these with
// errors.Is where it means the same.
var (
	// ErrNotFound: no session is stored under the id.
	ErrNotFound = errors.New("session not found")
	// ErrExists: Create found a session stored under the id.
	ErrExists = errors.New("session already exists")
	// ErrInUse is matched by an [*InUseError].
	ErrInUse = errors.New("session is in use")
	// ErrClosed: the writer (or the service) is closed.
	ErrClosed = errors.New("session writer is closed")
)

// InUseError is returned when a session is open for writing elsewhere:
// another process, another [Service] on the same storage, or another
// Open in this one. Nothing was read or written.
type InUseError struct {
	ID   string // the session id
	Path string // its location (a JSONL file; a postgres table row), if any
	PID  int    // the holder's process id when known, else 0
	// Holder describes the holder when the provider knows more than a
	// pid (sessions-postgres: the holder's application name and host).
	Holder string
}

// Error names the session, the holder and the location.
func (e *InUseError) Error() string {
	switch {
	case e.Holder != "":
		return fmt.Sprintf("session %s is in use by %s (%s)", e.ID, e.Holder, e.Path)
	case e.PID != 0 && e.PID == os.Getpid():
		return fmt.Sprintf("session %s is already open in this harness process (pid %d; log %s)", e.ID, e.PID, e.Path)
	case e.PID != 0:
		return fmt.Sprintf("session %s is in use by another harness process (pid %d; log %s)", e.ID, e.PID, e.Path)
	}
	return fmt.Sprintf("session %s is in use by another harness process (log %s)", e.ID, e.Path)
}

// Is reports whether target is [ErrInUse].
func (e *InUseError) Is(target error) bool { return target == ErrInUse }

// Compiled on first use: package init runs at every harness start.
var idRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`) })

// ValidID reports whether id can name a session: letters, digits, '-' and
// '_', starting with a letter or digit, at most 128 bytes. Only valid ids
// ever reach a provider (they become file names).
func ValidID(id string) bool { return idRE().MatchString(id) }

// NewID returns a fresh id that sorts by creation time:
// "20261130T010203-" followed by 8 random hex digits.
func NewID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// Header is what a session is created with; it is stored as the
// session's first record (type "session", seq 1).
type Header struct {
	ID    string // a [ValidID]
	Cwd   string // the working directory of the session
	Model string // the model route
	// Parent is the id of the session this one descends from (a fork, a
	// subagent), or empty.
	Parent string
	// Origin says how the session came to be: "" (a user run or chat),
	// "fork", "subagent", "job", ... Free text, stored as given.
	Origin string
	// Time is the creation time (zero: now).
	Time time.Time
}

// headerFields are the header record's own fields, in on-disk order.
type headerFields struct {
	V      int    `json:"v,omitempty"`
	ID     string `json:"id,omitempty"`
	Cwd    string `json:"cwd,omitempty"`
	Model  string `json:"model,omitempty"`
	Parent string `json:"parent,omitempty"`
	Origin string `json:"origin,omitempty"`
}

// Record is one stored record of a session. Data is the whole record as
// one JSON object: "type", "seq" and "time" first, then the fields of its
// [Entry]. Records of a session have seq 1, 2, 3, ... without gaps; seq 1
// is the header.
type Record struct {
	Seq  int64
	Type string
	Time time.Time
	Data json.RawMessage
}

// Entry is a record to append: its type, time (zero: now) and its other
// fields as one JSON object (nil: none). Fields must not repeat "type",
// "seq" or "time".
type Entry struct {
	Type   string
	Time   time.Time
	Fields json.RawMessage
}

// encodeRecord builds the stored record of e at seq. The line is compact
// JSON without a newline.
func encodeRecord(seq int64, e Entry) (Record, error) {
	if e.Type == "" {
		return Record{}, errors.New("session record: empty type")
	}
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	fields := bytes.TrimSpace(e.Fields)
	if len(fields) > 0 {
		if fields[0] != '{' || !json.Valid(fields) {
			return Record{}, fmt.Errorf("session %s record: fields are not a JSON object", e.Type)
		}
		if bytes.ContainsAny(fields, "\r\n") {
			var buf bytes.Buffer
			if err := json.Compact(&buf, fields); err != nil {
				return Record{}, err
			}
			fields = buf.Bytes()
		}
		fields = bytes.TrimSpace(fields[1 : len(fields)-1])
	}
	typ, _ := json.Marshal(e.Type)
	tm, err := e.Time.MarshalJSON()
	if err != nil {
		return Record{}, fmt.Errorf("session %s record: time: %w", e.Type, err)
	}
	b := make([]byte, 0, len(fields)+len(typ)+len(tm)+32)
	b = append(b, `{"type":`...)
	b = append(b, typ...)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"time":`...)
	b = append(b, tm...)
	if len(fields) > 0 {
		b = append(b, ',')
		b = append(b, fields...)
	}
	b = append(b, '}')
	return Record{Seq: seq, Type: e.Type, Time: e.Time, Data: b}, nil
}

// headerRecord is the stored first record of a session created with h.
func headerRecord(h Header) (Record, error) {
	f, err := json.Marshal(headerFields{V: FormatVersion, ID: h.ID, Cwd: h.Cwd, Model: h.Model, Parent: h.Parent, Origin: h.Origin})
	if err != nil {
		return Record{}, err
	}
	return encodeRecord(1, Entry{Type: TypeHeader, Time: h.Time, Fields: f})
}

// DecodeRecord decodes one stored record (a line of a JSONL log, a row's
// data) and checks that it is an object with a type and a positive seq.
func DecodeRecord(data []byte) (Record, error) {
	var env struct {
		Type string    `json:"type"`
		Seq  int64     `json:"seq"`
		Time time.Time `json:"time"`
	}
	data = bytes.TrimSpace(data)
	if err := json.Unmarshal(data, &env); err != nil {
		return Record{}, err
	}
	if env.Type == "" {
		return Record{}, errors.New(`record has no "type"`)
	}
	return Record{Seq: env.Seq, Type: env.Type, Time: env.Time, Data: data}, nil
}

// ParseHeader reads the header of a session from its first record.
func ParseHeader(r Record) (Header, error) {
	if r.Type != TypeHeader {
		return Header{}, fmt.Errorf("want a %q header, got %q", TypeHeader, r.Type)
	}
	var f headerFields
	if err := json.Unmarshal(r.Data, &f); err != nil {
		return Header{}, err
	}
	return Header{ID: f.ID, Cwd: f.Cwd, Model: f.Model, Parent: f.Parent, Origin: f.Origin, Time: r.Time}, nil
}

// Info summarises one stored session (`harness sessions`).
type Info struct {
	ID       string    `json:"id"`
	Cwd      string    `json:"cwd"`
	Model    string    `json:"model"`
	Parent   string    `json:"parent,omitempty"`
	Origin   string    `json:"origin,omitempty"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"` // the time of the last record
	Turns    int       `json:"turns"`   // user prompts (user records without a source)
	Title    string    `json:"title"`   // the first user prompt, first line, at most 80 runes
	Path     string    `json:"path"`    // the provider's location of the session
	Messages int       `json:"messages"`
}

// Counts is what one record adds to its session's [Info].
type Counts struct {
	Message bool   // the record carries a conversation message
	Turn    bool   // the record is a user prompt
	Title   string // the prompt's title, when Turn
}

// CountsOf reads what r adds to its session's Info: records with a
// "message" count as messages; "user" records with a message and no
// "source" are the user's turns, and the first one titles the session.
func CountsOf(r Record) Counts {
	if r.Type == TypeHeader || !bytes.Contains(r.Data, []byte(`"message"`)) {
		return Counts{}
	}
	var f struct {
		Source  string `json:"source"`
		Message *struct {
			Content string `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(r.Data, &f) != nil || f.Message == nil {
		return Counts{}
	}
	c := Counts{Message: true}
	if r.Type == "user" && f.Source == "" {
		c.Turn, c.Title = true, title(f.Message.Content)
	}
	return c
}

// Add folds record r into the summary: Updated, Messages, Turns, Title.
func (i *Info) Add(r Record) {
	if r.Time.After(i.Updated) {
		i.Updated = r.Time
	}
	c := CountsOf(r)
	if c.Message {
		i.Messages++
	}
	if c.Turn {
		i.Turns++
		if i.Title == "" {
			i.Title = c.Title
		}
	}
}

func title(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}

// Query selects sessions to list. Results are newest first (by Updated,
// then by id, descending).
type Query struct {
	Cwd    string // only sessions of this working directory ("": any)
	Parent string // only children of this session ("": any)
	// Limit is the page size; 0 lists everything after Cursor.
	Limit int
	// Cursor continues a listing after the last session of a page
	// ([Page].Next); "" starts at the newest.
	Cursor string
}

// Page is one page of a listing.
type Page struct {
	Sessions []Info
	// Next is the cursor of the next page, "" after the last one.
	Next string
}

// cursorOf is the cursor after info: its update time and id.
func cursorOf(i Info) string {
	return i.Updated.UTC().Format(time.RFC3339Nano) + "|" + i.ID
}

// ParseCursor splits a [Page].Next cursor into the update time and id of
// the last session listed.
func ParseCursor(c string) (time.Time, string, error) {
	ts, id, ok := strings.Cut(c, "|")
	t, err := time.Parse(time.RFC3339Nano, ts)
	if !ok || err != nil || !ValidID(id) {
		return time.Time{}, "", fmt.Errorf("cursor %q: not a sessions cursor", c)
	}
	return t, id, nil
}

// NextCursor returns the cursor continuing after the last of a full page
// of sessions (len(list) == limit), else "". Providers use it.
func NextCursor(list []Info, limit int) string {
	if limit <= 0 || len(list) < limit {
		return ""
	}
	return cursorOf(list[len(list)-1])
}

// Provider is a storage backend (sessions-jsonl, sessions-postgres). The
// [Service] validates ids, numbers and encodes records, and keeps
// in-process claims; a provider stores and enforces exclusivity across
// processes. Every method takes a valid id. Safe for concurrent use.
type Provider interface {
	// Create stores a new session whose first record is header (seq 1)
	// and returns its handle, holding the session exclusively.
	// ErrExists when the id is taken.
	Create(ctx context.Context, h Header, header Record) (Handle, error)
	// Open takes the session exclusively and returns its handle and every
	// complete record in seq order (an incomplete last append is dropped
	// for good). An *InUseError, without waiting, when it is held;
	// ErrNotFound when it is not stored.
	Open(ctx context.Context, id string) (Handle, []Record, error)
	// Read returns every complete record, in seq order, without taking
	// the session. ErrNotFound when it is not stored.
	Read(ctx context.Context, id string) ([]Record, error)
	// List returns one page of stored sessions, newest first.
	List(ctx context.Context, q Query) (Page, error)
	// Delete removes a stored session: ErrNotFound when there is none, an
	// *InUseError when it is held.
	Delete(ctx context.Context, id string) error
	// Location describes where session id is (or would be) stored; ""
	// describes the store itself. It never contains a secret.
	Location(id string) string
	// Close releases the provider's resources.
	Close() error
}

// Handle is exclusive write access to one stored session, held until
// Close (or the holder's death).
type Handle interface {
	// Append stores rec durably in order, whole or not at all as seen by
	// readers after a crash. The [Writer] calls it one at a time.
	Append(ctx context.Context, rec Record) error
	// Close releases the session.
	Close() error
}

// BatchHandle is implemented by handles that store several records in
// one write (sessions-postgres: one transaction, one round trip).
// [Writer.AppendBatch] uses it; without it the records are appended one
// at a time.
type BatchHandle interface {
	Handle
	// AppendBatch stores recs (consecutive seqs) durably in order, all or
	// none as seen by readers after a crash.
	AppendBatch(ctx context.Context, recs []Record) error
}

// Follower is implemented by providers that can push new records to a
// reader (sessions-postgres: LISTEN/NOTIFY). Without it [Service.Follow]
// polls.
type Follower interface {
	// Follow calls fn with every record of session id after seq, in
	// order, as they are appended, until ctx ends or fn returns an error.
	Follow(ctx context.Context, id string, after int64, fn func(Record) error) error
}
