package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dshgo/harness/core"
)

// Key is the service key of the tool registry ("tools").
var Key = core.NewKey[*Registry]("tools")

// Guard is a monotonic final check run after a pre-execute allow: a non-empty
// return denies the call with that reason, and no waterfall listener can
// override it. It must be quick and must not block.
type Guard func(e *Execution) string

// Filter restricts which inherited tools a scope sees. Allow keeps only the
// named tools; Deny hides the named ones; both may be given.
type Filter struct {
	Allow []string
	Deny  []string
}

// Schema is the model-facing projection of a tool.
type Schema struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type restriction struct {
	allow map[string]bool // nil: no allow list
	deny  map[string]bool
}

func (r *restriction) admits(name string) bool {
	if r.allow != nil && !r.allow[name] {
		return false
	}
	return !r.deny[name]
}

type guardEntry struct{ fn Guard }

// layer holds one scope's (or the global) registrations.
type layer struct {
	tools        []*Tool // insertion order
	restrictions []*restriction
	guards       []*guardEntry
}

func (l *layer) find(name string) *Tool {
	for _, t := range l.tools {
		if t.name == name {
			return t
		}
	}
	return nil
}

func (l *layer) empty() bool {
	return len(l.tools) == 0 && len(l.restrictions) == 0 && len(l.guards) == 0
}

// Registry is the tool registry: a global layer plus one layer per scope,
// resolved along the scope's parent chain (dsh A7/A8), and the execution
// pipeline (Execute, Scheduler). It is safe for concurrent use; no user code
// runs while its lock is held.
type Registry struct {
	c           *core.Context
	maxParallel int

	mu     sync.RWMutex
	global layer
	scoped map[*core.ScopeID]*layer

	// gen counts changes to tool visibility (registrations, restrictions); it is
	// incremented under mu. An execution that saw generation g may reuse the
	// tool it resolved then for as long as gen is still g.
	gen atomic.Uint64
	// guards counts registered guards of every layer, so calls skip the guard
	// walk when there are none.
	guards atomic.Int64
}

// New returns a registry whose events are dispatched through c (normally the
// tools plugin's context). maxParallel bounds overlapped bodies in the
// Scheduler (<= 0: 10).
func New(c *core.Context, maxParallel int) *Registry {
	if maxParallel <= 0 {
		maxParallel = DefaultMaxParallel
	}
	return &Registry{c: c, maxParallel: maxParallel, scoped: map[*core.ScopeID]*layer{}}
}

// DefaultMaxParallel is the default bound on overlapped tool bodies.
const DefaultMaxParallel = 10

// layerFor returns the layer of scope (nil: global), creating it if asked.
// Callers hold r.mu.
func (r *Registry) layerFor(scope *core.ScopeID, create bool) *layer {
	if scope == nil {
		return &r.global
	}
	l := r.scoped[scope]
	if l == nil && create {
		l = &layer{}
		r.scoped[scope] = l
	}
	return l
}

func (r *Registry) dropIfEmpty(scope *core.ScopeID) {
	if scope == nil {
		return
	}
	if l := r.scoped[scope]; l != nil && l.empty() {
		delete(r.scoped, scope)
	}
}

// Register registers tools in the layer of c's scope (global for a plain
// plugin context) as effects of c's fiber: unloading the fiber unregisters
// them. A definition error, the reserved name, or a name already registered in
// that layer fails the registration and leaves nothing behind. Nearer scopes
// shadow farther ones and the global layer.
func (r *Registry) Register(c *core.Context, tools ...*Tool) error {
	for _, t := range tools {
		if err := r.register(c, t); err != nil {
			return err
		}
	}
	return nil
}

func (r *Registry) register(c *core.Context, t *Tool) error {
	if t == nil {
		return fmt.Errorf("tools: Register of a nil tool")
	}
	if t.err != nil {
		return t.err
	}
	scope := c.Scope()
	r.mu.Lock()
	l := r.layerFor(scope, true)
	if l.find(t.name) != nil {
		r.dropIfEmpty(scope)
		r.mu.Unlock()
		if scope == nil {
			return &duplicateToolError{fmt.Sprintf("tool %q is already registered (for a per-agent variant, register through that agent's scoped context instead)", t.name)}
		}
		return &duplicateToolError{fmt.Sprintf("tool %q is already registered in this scope", t.name)}
	}
	l.tools = append(l.tools, t)
	r.gen.Add(1)
	r.mu.Unlock()
	undo := func() {
		r.mu.Lock()
		if l := r.layerFor(scope, false); l != nil {
			if i := slices.Index(l.tools, t); i >= 0 {
				l.tools = slices.Delete(l.tools, i, i+1)
				r.gen.Add(1)
			}
			r.dropIfEmpty(scope)
		}
		r.mu.Unlock()
	}
	return r.commit(c, "tool "+t.name, undo)
}

// commit finishes a registration already made (undo takes it back): it
// dispatches Changed, and a failing listener undoes the registration and its
// error is returned ("tool x: change listener: ..."); otherwise the undo, with
// a second Changed, becomes an effect of c's fiber.
func (r *Registry) commit(c *core.Context, label string, undo func()) error {
	if err := r.changed(c.Context()); err != nil {
		undo()
		return fmt.Errorf("%s: change listener: %w", label, err)
	}
	var once sync.Once
	dispose := func() {
		once.Do(func() {
			undo()
			if err := r.changed(context.WithoutCancel(c.Context())); err != nil {
				r.c.Logger().Warn("tools/change listener failed on removal", "registration", label, "err", err)
			}
		})
	}
	// The registration is made before the effect so that its errors reach
	// the caller unwrapped; the effect only owns its undo.
	if err := c.Effect(label, func() (func(), error) { return dispose, nil }); err != nil {
		dispose()
		return err
	}
	return nil
}

// changed dispatches Changed; the first listener error is returned.
func (r *Registry) changed(ctx context.Context) error {
	_, _, err := Changed.Bail(ctx, r.c.Here(), r)
	return err
}

// Guard adds a guard in the layer of c's scope, as an effect of c's fiber.
// Global guards apply to every call; scoped guards to calls of that scope and
// its descendants. Guards are walked live: one added while a call's guards
// are running (even by another guard) is checked in that same call unless
// its layer has already been walked. Guards do not fire Changed.
func (r *Registry) Guard(c *core.Context, g Guard) error {
	if g == nil {
		return fmt.Errorf("tools: Guard of a nil function")
	}
	scope := c.Scope()
	entry := &guardEntry{fn: g}
	return c.Effect("tool guard", func() (func(), error) {
		r.mu.Lock()
		l := r.layerFor(scope, true)
		l.guards = append(l.guards, entry)
		r.guards.Add(1)
		r.mu.Unlock()
		return func() {
			r.mu.Lock()
			if l := r.layerFor(scope, false); l != nil {
				if i := slices.Index(l.guards, entry); i >= 0 {
					l.guards = slices.Delete(l.guards, i, i+1)
					r.guards.Add(-1)
				}
				r.dropIfEmpty(scope)
			}
			r.mu.Unlock()
		}, nil
	})
}

// Restrict limits the inherited tools visible in c's scope and its
// descendants, as an effect of c's fiber. Restrictions intersect along the
// scope chain; the scope's own registrations are exempt. Errors: c is not
// scoped; the filter is empty; it names the reserved run_code; it names a tool
// the scope does not inherit ("tools.Restrict names unknown global tool(s) ...;
// known global tools: ..."). A deny list admits later-registered tools; an
// allow list excludes them. The lists are copied.
func (r *Registry) Restrict(c *core.Context, f Filter) error {
	scope := c.Scope()
	if scope == nil {
		return fmt.Errorf("tools.Restrict requires a scoped context (an agent's scoped context); a global restriction would hide tools from every agent")
	}
	if f.Allow == nil && f.Deny == nil {
		return fmt.Errorf("tools.Restrict with neither Allow nor Deny is a no-op")
	}
	named := append(append([]string(nil), f.Allow...), f.Deny...)
	if slices.Contains(named, ReservedName) {
		return fmt.Errorf("tools.Restrict cannot name the reserved tool %q", ReservedName)
	}
	r.mu.RLock()
	known := r.inheritedNames(scope)
	r.mu.RUnlock()
	var unknown []string
	for _, n := range named {
		if !slices.Contains(known, n) && !slices.Contains(unknown, n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(known)
		list := "(none)"
		if len(known) > 0 {
			list = strings.Join(known, ", ")
		}
		return fmt.Errorf("tools.Restrict names unknown global tool(s) %s; known global tools: %s", quoteAll(unknown), list)
	}
	res := &restriction{deny: set(f.Deny)}
	if f.Allow != nil {
		res.allow = set(f.Allow)
	}
	r.mu.Lock()
	l := r.layerFor(scope, true)
	l.restrictions = append(l.restrictions, res)
	r.gen.Add(1)
	r.mu.Unlock()
	return r.commit(c, "tool restriction", func() {
		r.mu.Lock()
		if l := r.layerFor(scope, false); l != nil {
			if i := slices.Index(l.restrictions, res); i >= 0 {
				l.restrictions = slices.Delete(l.restrictions, i, i+1)
				r.gen.Add(1)
			}
			r.dropIfEmpty(scope)
		}
		r.mu.Unlock()
	})
}

func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// chain returns scope's layers from the scope itself up to its root ancestor
// (nil entries for scopes without a layer). Callers hold r.mu.
func (r *Registry) chain(scope *core.ScopeID) []*layer {
	var ls []*layer
	for s := scope; s != nil; s = s.Parent() {
		ls = append(ls, r.scoped[s])
	}
	return ls
}

// inheritedNames lists the names scope inherits (global and ancestors'),
// before restrictions. Callers hold r.mu.
func (r *Registry) inheritedNames(scope *core.ScopeID) []string {
	var names []string
	add := func(l *layer) {
		if l == nil {
			return
		}
		for _, t := range l.tools {
			if !slices.Contains(names, t.name) {
				names = append(names, t.name)
			}
		}
	}
	add(&r.global)
	ch := r.chain(scope)
	for i := len(ch) - 1; i >= 1; i-- {
		add(ch[i])
	}
	return names
}

// resolve returns the tool visible as name in scope, or nil. Callers hold r.mu.
func (r *Registry) resolve(name string, scope *core.ScopeID) *Tool {
	if scope == nil {
		return r.global.find(name)
	}
	ch := r.chain(scope)
	if ch[0] != nil {
		if t := ch[0].find(name); t != nil {
			return t
		}
	}
	// Nearest ancestor layer (or global) that has it, checked against the
	// restrictions of every layer below it on the chain.
	for i := 1; i <= len(ch); i++ {
		var t *Tool
		if i < len(ch) {
			if ch[i] != nil {
				t = ch[i].find(name)
			}
		} else {
			t = r.global.find(name)
		}
		if t == nil {
			continue
		}
		for _, l := range ch[:i] {
			if l == nil {
				continue
			}
			for _, res := range l.restrictions {
				if !res.admits(name) {
					return nil
				}
			}
		}
		return t
	}
	return nil
}

// Get returns the tool visible as name in scope (nil: global). A tool hidden
// by a restriction reads as absent.
func (r *Registry) Get(name string, scope *core.ScopeID) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t := r.resolve(name, scope)
	return t, t != nil
}

// Tools returns the tools visible in scope, in layer insertion order (global
// first, then ancestors farthest to nearest, then the scope's own); a shadowed
// name appears once, at its nearest registration.
func (r *Registry) Tools(scope *core.ScopeID) []*Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var names []string
	add := func(l *layer) {
		if l == nil {
			return
		}
		for _, t := range l.tools {
			if i := slices.Index(names, t.name); i >= 0 {
				names = slices.Delete(names, i, i+1)
			}
			names = append(names, t.name)
		}
	}
	add(&r.global)
	ch := r.chain(scope)
	for i := len(ch) - 1; i >= 0; i-- {
		add(ch[i])
	}
	out := make([]*Tool, 0, len(names))
	for _, n := range names {
		if t := r.resolve(n, scope); t != nil {
			out = append(out, t)
		}
	}
	return out
}

// Schemas returns the model-facing schemas visible in scope (see Tools for the
// order). Each parameters document is a fresh copy: mutating the result never
// affects the registry.
func (r *Registry) Schemas(scope *core.ScopeID) []Schema {
	ts := r.Tools(scope)
	out := make([]Schema, len(ts))
	for i, t := range ts {
		out[i] = Schema{Name: t.name, Description: t.description, Parameters: t.Parameters()}
	}
	return out
}

// ErrDuplicateTool is matched (errors.Is) by the error [Registry.Register]
// returns for a name already registered in the caller's scope layer.
var ErrDuplicateTool = errors.New("tool already registered")

// duplicateToolError names the tool and says how to register a per-agent
// variant; it matches ErrDuplicateTool.
type duplicateToolError struct{ msg string }

func (e *duplicateToolError) Error() string        { return e.msg }
func (e *duplicateToolError) Is(target error) bool { return target == ErrDuplicateTool }
