// Package loader reconciles a harness.yml tree ([manifest.Manifest])
// against a running [core.Root]: it mounts each enabled row as a fiber,
// reports rows that did not activate (the boot audit), and re-applies only
// what changed when the manifest is edited.
//
// Reconcile is transactional, after dsh's vendored Cordis loader: rows are
// decoded and validated before anything changes; added rows are mounted and
// changed rows updated; if any of them fails, everything done so far is
// rolled back (added rows disposed, changed rows restored to their previous
// config or plugin) and the previous tree keeps running. Removed and
// disabled rows are disposed only after the rest succeeded. Rows that did
// not change keep their fiber, identity and state.
//
//	row change                 effect
//	nothing                    none
//	config only                fiber.Update (that fiber and its dependents reload)
//	name (plugin)              replace: mount the new plugin, dispose the old
//	disabled → true / removed  dispose
//	disabled → false / added   mount
//
// Reconciles are serialized per loader.
package loader

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/manifest"
)

// Loader mounts manifest rows on a root.
type Loader struct {
	root *core.Root
	cat  *core.Catalog
	env  manifest.LookupEnv

	mu      sync.Mutex // serializes Reconcile
	rows    map[string]*row
	order   []string // mount order of live rows
	current *manifest.Manifest
}

type row struct {
	entry  manifest.Entry
	plugin core.Plugin
	cfg    any
	fiber  *core.Fiber
}

// New returns a loader for root that resolves plugin names in cat. env
// reads !env variables (nil: the process environment).
func New(root *core.Root, cat *core.Catalog, env manifest.LookupEnv) *Loader {
	return &Loader{root: root, cat: cat, env: env, rows: map[string]*row{}}
}

// EntryError is a row that could not be applied. It renders
// as `failed to <stage> harness entry <id> (<name>): <cause>`. A row that
// cannot be resolved (unknown plugin, bad config) is not an EntryError but
// a *manifest.Error naming FILE:LINE:COL (see [Resolve]); one whose
// Validate returned a *core.ConfigError unwraps to it.
type EntryError struct {
	Stage string // what failed: "apply" (the only stage a loader reports)
	ID    string
	Name  string
	Err   error
}

func (e *EntryError) Error() string {
	return fmt.Sprintf("failed to %s harness entry %s (%s): %v", e.Stage, e.ID, e.Name, e.Err)
}

// Unwrap returns the cause.
func (e *EntryError) Unwrap() error { return e.Err }

// Resolved is a row ready to mount: its plugin and decoded config.
type Resolved struct {
	Entry  manifest.Entry
	Plugin core.Plugin
	Config any
}

// Resolve checks every enabled row of m: the plugin name is in the catalog
// and the config decodes and validates. It returns all problems found,
// joined in file order (see [manifest.Manifest.SortProblems]), each a
// *manifest.Error naming FILE:LINE:COL, the row and the field; errors.As
// finds the *core.ConfigError of a failed Validate through it.
func Resolve(m *manifest.Manifest, cat *core.Catalog, env manifest.LookupEnv) ([]Resolved, error) {
	var out []Resolved
	var errs []error
	for _, e := range m.Flatten() {
		if e.Disabled {
			continue
		}
		p, ok := cat.Get(e.Name)
		if !ok {
			pos := e.NamePos
			if pos.Line == 0 {
				pos = e.Pos
			}
			errs = append(errs, &manifest.Error{Pos: pos, Msg: fmt.Sprintf("unknown plugin %q (id %s); known plugins: %s", e.Name, e.ID, strings.Join(cat.Names(), ", "))})
			continue
		}
		cfg, err := manifest.DecodeConfig(p, e, env)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, Resolved{Entry: e, Plugin: p, Config: cfg})
	}
	return out, errors.Join(m.SortProblems(errs)...)
}

// Apply mounts m on a loader that has nothing mounted yet; it is Reconcile.
func (l *Loader) Apply(ctx context.Context, m *manifest.Manifest) error { return l.Reconcile(ctx, m) }

// Mount mounts every enabled row of m on a loader that has nothing mounted
// yet, without the all-or-nothing rule: rows that fail or stay pending are
// kept, so [Loader.Status] can show them (`harness plugins`). Only rows that
// cannot be resolved (unknown plugin, bad config) make it fail, before
// anything is mounted.
func (l *Loader) Mount(ctx context.Context, m *manifest.Manifest) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	resolved, err := Resolve(m, l.cat, l.env)
	if err != nil {
		return err
	}
	rc := l.root.Context()
	for _, r := range resolved {
		nr := &row{entry: r.Entry, plugin: r.Plugin, cfg: r.Config}
		nr.fiber = rc.Plugin(r.Plugin, r.Config)
		l.rows[r.Entry.ID] = nr
		l.order = append(l.order, r.Entry.ID)
	}
	for _, r := range resolved {
		_ = l.rows[r.Entry.ID].fiber.Await(ctx)
	}
	l.current = m
	return nil
}

// Current returns the manifest last reconciled successfully.
func (l *Loader) Current() *manifest.Manifest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.current
}

// Reconcile makes the running tree match m (see the package doc). On error
// the previous tree is restored and keeps running.
func (l *Loader) Reconcile(ctx context.Context, m *manifest.Manifest) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	resolved, err := Resolve(m, l.cat, l.env)
	if err != nil {
		return err
	}
	want := map[string]Resolved{}
	for _, r := range resolved {
		want[r.Entry.ID] = r
	}

	type undo func()
	var undos []undo
	rollback := func() error {
		var errs []error
		for i := len(undos) - 1; i >= 0; i-- {
			undos[i]()
		}
		return errors.Join(errs...)
	}
	var failed []error
	rc := l.root.Context()
	// Remove what is no longer wanted first, newest first, so that a new or
	// re-enabled row may provide a service that a removed or disabled row
	// provided (swapping providers in one reload). Undone by re-mounting.
	for i := len(l.order) - 1; i >= 0; i-- {
		id := l.order[i]
		if _, ok := want[id]; ok {
			continue
		}
		old := l.rows[id]
		dispose(ctx, old.fiber)
		delete(l.rows, id)
		l.order = slices.Delete(l.order, i, i+1)
		undos = append(undos, func() {
			old.fiber = rc.Plugin(old.plugin, old.cfg)
			l.rows[id] = old
			l.order = slices.Insert(l.order, i, id)
		})
	}
	for _, r := range resolved {
		id := r.Entry.ID
		old := l.rows[id]
		switch {
		case old == nil:
			nr := &row{entry: r.Entry, plugin: r.Plugin, cfg: r.Config}
			nr.fiber = rc.Plugin(r.Plugin, r.Config)
			l.rows[id] = nr
			l.order = append(l.order, id)
			undos = append(undos, func() {
				dispose(ctx, nr.fiber)
				delete(l.rows, id)
				l.order = slices.DeleteFunc(l.order, func(s string) bool { return s == id })
			})
			if err := nr.fiber.Await(ctx); err != nil {
				failed = append(failed, &EntryError{Stage: "apply", ID: id, Name: r.Entry.Name, Err: err})
			}
		case old.plugin != r.Plugin:
			prev := *old
			dispose(ctx, old.fiber)
			old.entry, old.plugin, old.cfg = r.Entry, r.Plugin, r.Config
			old.fiber = rc.Plugin(r.Plugin, r.Config)
			undos = append(undos, func() {
				dispose(ctx, old.fiber)
				*old = prev
				old.fiber = rc.Plugin(prev.plugin, prev.cfg)
			})
			if err := old.fiber.Await(ctx); err != nil {
				failed = append(failed, &EntryError{Stage: "apply", ID: id, Name: r.Entry.Name, Err: err})
			}
		case !reflect.DeepEqual(old.cfg, r.Config):
			prevCfg, prevEntry := old.cfg, old.entry
			old.cfg, old.entry = r.Config, r.Entry
			err := update(ctx, old.fiber, r.Config)
			undos = append(undos, func() {
				old.cfg, old.entry = prevCfg, prevEntry
				_ = update(ctx, old.fiber, prevCfg)
			})
			if err != nil {
				failed = append(failed, &EntryError{Stage: "apply", ID: id, Name: r.Entry.Name, Err: err})
			}
		default:
			old.entry = r.Entry
		}
		if len(failed) > 0 {
			break
		}
	}
	if len(failed) > 0 {
		_ = rollback()
		return errors.Join(failed...)
	}
	l.current = m
	return nil
}

// dispose disposes f and waits (bounded by ctx) until it is gone, so that
// what replaces it finds its resources released. Fiber.Dispose itself
// does not wait.
func dispose(ctx context.Context, f *core.Fiber) {
	_ = f.Dispose(ctx)
	_ = f.Await(ctx)
}

// update reloads f with cfg and waits for the reload: its error is the
// config's (*core.ConfigError) or the reload's.
func update(ctx context.Context, f *core.Fiber, cfg any) error {
	if err := f.Update(ctx, cfg); err != nil {
		return err
	}
	return f.Await(ctx)
}

// RowStatus describes one manifest row for `harness plugins`.
type RowStatus struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	State     string   `json:"state"`
	Provides  []string `json:"provides"`
	Injects   []string `json:"injects"`
	PendingOn []string `json:"pendingOn"`
	Error     string   `json:"error"`
}

// Status lists every row of the current manifest in order, including
// disabled rows (state "disabled").
func (l *Loader) Status() []RowStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.current == nil {
		return nil
	}
	var out []RowStatus
	for _, e := range l.current.Flatten() {
		st := RowStatus{ID: e.ID, Name: e.Name, State: "disabled", Provides: []string{}, Injects: []string{}, PendingOn: []string{}}
		if p, ok := l.cat.Get(e.Name); ok {
			st.Injects = nonNil(p.Inject())
			st.Provides = nonNil(p.Provides())
		}
		if r := l.rows[e.ID]; r != nil && !e.Disabled {
			st.State = r.fiber.State().String()
			if pv := r.fiber.Provides(); len(pv) > 0 {
				st.Provides = pv
			}
			st.PendingOn = nonNil(r.fiber.PendingOn())
			if err := r.fiber.Err(); err != nil {
				st.Error = err.Error()
			}
		}
		out = append(out, st)
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

// Fiber returns the fiber of row id (nil if not mounted).
func (l *Loader) Fiber(id string) *core.Fiber {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.rows[id]; r != nil {
		return r.fiber
	}
	return nil
}

// AuditError lists the enabled rows that are not active after boot.
type AuditError struct {
	Rows []RowStatus
}

func (e *AuditError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s did not activate", len(e.Rows), plural(len(e.Rows), "entry", "entries"))
	for _, r := range e.Rows {
		fmt.Fprintf(&b, "\n  %s (%s): ", r.ID, r.Name)
		switch {
		case r.State == "pending" && len(r.PendingOn) == 1:
			fmt.Fprintf(&b, "pending (waiting for service: %s)", r.PendingOn[0])
		case r.State == "pending":
			fmt.Fprintf(&b, "pending (waiting for services: %s)", strings.Join(r.PendingOn, ", "))
		case r.Error != "":
			fmt.Fprintf(&b, "%s: %s", r.State, r.Error)
		default:
			b.WriteString(r.State)
		}
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Audit returns an *AuditError unless every enabled row is active (dsh's
// boot policy: a pending or failed row fails the boot).
func (l *Loader) Audit() error {
	var bad []RowStatus
	for _, s := range l.Status() {
		if s.State != "active" && s.State != "disabled" {
			bad = append(bad, s)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &AuditError{Rows: bad}
}
