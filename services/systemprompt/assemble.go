package systemprompt

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/dshgo/harness/core"
)

// snapshot is what one assembly sees, built under the lock so that
// providers run without it. Its slices are shared with the snapshot cache
// and must be treated as read-only.
type snapshot struct {
	suppressed bool
	variables  []*variableEntry // global first, then the chain farthest→nearest
	sections   []*Section       // merged (nearer layers replace farther ones), sorted
	contexts   []*PromptContext // merged and sorted; nil when suppressed
	tools      []ToolProvider
}

// snapshotCache remembers the snapshot of the last assembled scope until
// the next registration change (the agent loop assembles one scope per
// step, and registrations change rarely).
type snapshotCache struct {
	valid bool
	scope *core.ScopeID
	gen   uint64
	snap  snapshot
}

// snapshot returns the merged, sorted registrations visible to scope.
func (s *Service) snapshot(scope *core.ScopeID) snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := &s.cache; c.valid && c.scope == scope && c.gen == s.gen {
		return c.snap
	}
	var snap snapshot
	sections := map[string]*Section{}
	contexts := map[string]*PromptContext{}
	for _, l := range s.ls.chain(scope) {
		snap.suppressed = snap.suppressed || l.suppress > 0
		snap.variables = append(snap.variables, l.variables...)
		for _, t := range l.tools {
			snap.tools = append(snap.tools, t.p)
		}
		for name, sec := range l.sections {
			sections[name] = sec
		}
		for name, pc := range l.contexts {
			contexts[name] = pc
		}
	}
	snap.sections = make([]*Section, 0, len(sections))
	for _, sec := range sections {
		snap.sections = append(snap.sections, sec)
	}
	slices.SortFunc(snap.sections, func(x, y *Section) int { return byOrderThenName(x.Order, y.Order, x.Name, y.Name) })
	if !snap.suppressed {
		snap.contexts = make([]*PromptContext, 0, len(contexts))
		for _, pc := range contexts {
			snap.contexts = append(snap.contexts, pc)
		}
		slices.SortFunc(snap.contexts, func(x, y *PromptContext) int { return byOrderThenName(x.Order, y.Order, x.Name, y.Name) })
	}
	s.cache = snapshotCache{valid: true, scope: scope, gen: s.gen, snap: snap}
	return snap
}

// Assemble builds the model input for one step (C6):
//
//  1. the layers of ac.Scope's chain; runtime context is suppressed when any
//     of them holds a suppressor;
//  2. every variable provider is evaluated, global first, then the chain
//     farthest→nearest (the nearest value wins);
//  3. sections and contexts are merged by name (nearer replaces farther),
//     before any text function runs;
//  4. tool providers are consulted (global, then the chain) and their
//     schemas copied; knownNames are collected;
//  5. sections are sorted by order, then by name in UTF-16 code-unit order;
//  6. more than one complete section fails;
//  7. section texts are resolved;
//  8. contexts, unless suppressed, are sorted the same way and resolved (a
//     failing context provider is dropped with a warning);
//  9. tools are ordered by toolOrder;
//  10. the AssembleEvent waterfall runs for ac.Scope;
//  11. a complete section's pre-waterfall copy is restored as the only
//     section, and contexts stay empty when suppressed.
//
// The result is fresh: it shares no memory with the registry or earlier
// results. A done ctx fails at once (wrapping its cause); providers receive
// ctx and should honour it. Errors (section providers, tool providers, toolOrder, complete
// sections, the waterfall, assembly invariants) fail the call; nothing is
// interpolated here (see Render).
func (s *Service) Assemble(ctx context.Context, ac AssembleContext) (*Assembly, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("assemble system prompt: %w", context.Cause(ctx))
	}
	snap := s.snapshot(ac.Scope)
	a := &Assembly{Variables: make(map[string]Variable, len(snap.variables))}
	for _, v := range snap.variables {
		value, ok := s.evalVariable(ctx, ac, v)
		a.Variables[v.name] = Variable{Value: value, Set: ok}
	}
	tools, known, err := collectTools(ctx, ac, snap.tools, s.toolOrder != nil)
	if err != nil {
		return nil, err
	}
	complete, err := completeSection(snap.sections)
	if err != nil {
		return nil, err
	}
	a.Sections = make([]AssembledSection, 0, len(snap.sections))
	var restore *AssembledSection
	for _, sec := range snap.sections {
		text, err := resolveText(ctx, ac, sec.Text, sec.TextFunc)
		if err != nil {
			return nil, fmt.Errorf("prompt section \"%s\": %w", sec.Name, err)
		}
		a.Sections = append(a.Sections, AssembledSection{Name: sec.Name, Order: sec.Order, Text: text, Interpolate: sec.interpolates()})
		if sec == complete {
			restore = &AssembledSection{}
			*restore = a.Sections[len(a.Sections)-1]
		}
	}
	a.Contexts = s.resolveContexts(ctx, ac, snap.contexts)
	if a.Tools, err = orderTools(tools, s.toolOrder, known); err != nil {
		return nil, err
	}
	out, err := AssembleEvent.Run(ctx, s.c.To(ac.Scope), AssembleInput{Assembly: a, Context: ac},
		func(_ context.Context, in AssembleInput) (*Assembly, error) { return in.Assembly, nil })
	if err != nil {
		return nil, fmt.Errorf("system-prompt/assemble: %w", err)
	}
	if out == nil {
		return nil, errors.New("system-prompt/assemble: a listener returned no assembly")
	}
	if restore != nil || snap.suppressed {
		enforced := *out
		if restore != nil {
			enforced.Sections = []AssembledSection{*restore}
		}
		if snap.suppressed {
			enforced.Contexts = []AssembledContext{}
		}
		out = &enforced
	}
	if err := checkInvariants(out); err != nil {
		return nil, err
	}
	return out, nil
}

// byOrderThenName compares by order, then by code-unit name.
func byOrderThenName(xo, yo float64, xn, yn string) int {
	if c := cmp.Compare(xo, yo); c != 0 {
		return c
	}
	return compareCodeUnits(xn, yn)
}

// completeSection returns the one complete section of sorted, or an error
// naming every complete section when there is more than one.
func completeSection(sorted []*Section) (*Section, error) {
	var found []*Section
	for _, sec := range sorted {
		if sec.Complete {
			found = append(found, sec)
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return found[0], nil
	}
	names := make([]string, len(found))
	for i, sec := range found {
		names[i] = jsonQuote(sec.Name)
	}
	return nil, fmt.Errorf("multiple complete prompt sections are active: %s", strings.Join(names, ", "))
}

// resolveContexts resolves the sorted contexts; a failing provider is
// dropped with a warning (case B27: runtime data never fails a turn).
func (s *Service) resolveContexts(ctx context.Context, ac AssembleContext, contexts []*PromptContext) []AssembledContext {
	out := make([]AssembledContext, 0, len(contexts))
	for _, pc := range contexts {
		text, err := resolveText(ctx, ac, pc.Text, pc.TextFunc)
		if err != nil {
			s.log.Warn("prompt context dropped from this assembly", "context", pc.Name, "err", err)
			continue
		}
		out = append(out, AssembledContext{Name: pc.Name, Order: pc.Order, Text: text, Interpolate: pc.Interpolate})
	}
	return out
}

// evalVariable calls one variable provider; a panic counts as no value.
func (s *Service) evalVariable(ctx context.Context, ac AssembleContext, v *variableEntry) (value string, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Warn("prompt variable provider panicked; no value for this assembly",
				"variable", v.name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			value, ok = "", false
		}
	}()
	return v.fn(ctx, ac)
}

// resolveText returns text, or calls fn with panics turned into errors.
func resolveText(ctx context.Context, ac AssembleContext, text string, fn TextFunc) (out string, err error) {
	if fn == nil {
		return text, nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = &core.PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return fn(ctx, ac)
}

// collectTools consults every provider and copies its schemas (all
// parameter bytes into one buffer, each slice capacity-limited so that
// appending to one never overwrites the next); known is the union of the
// providers' pre-restriction names, collected only when wantKnown (toolOrder
// is configured; a nil map is fine otherwise).
func collectTools(ctx context.Context, ac AssembleContext, providers []ToolProvider, wantKnown bool) (tools []ToolSchema, known map[string]struct{}, err error) {
	if wantKnown {
		known = map[string]struct{}{}
	}
	var batches [][]ToolSchema
	count, size := 0, 0
	for _, p := range providers {
		schemas, names, err := callProvider(ctx, ac.Scope, p)
		if err != nil {
			return nil, nil, fmt.Errorf("prompt tool provider: %w", err)
		}
		batches = append(batches, schemas)
		for _, t := range schemas {
			count++
			size += len(t.Parameters)
			if names == nil && wantKnown {
				known[t.Name] = struct{}{}
			}
		}
		if wantKnown {
			for _, n := range names {
				known[n] = struct{}{}
			}
		}
	}
	tools = make([]ToolSchema, 0, count)
	buf := make([]byte, 0, size)
	for _, schemas := range batches {
		for _, t := range schemas {
			if t.Parameters != nil {
				start := len(buf)
				buf = append(buf, t.Parameters...)
				t.Parameters = buf[start:len(buf):len(buf)]
			}
			tools = append(tools, t)
		}
	}
	return tools, known, nil
}

func callProvider(ctx context.Context, scope *core.ScopeID, p ToolProvider) (schemas []ToolSchema, names []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &core.PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	if schemas, err = p.Schemas(ctx, scope); err != nil {
		return nil, nil, err
	}
	names, err = p.KnownNames(ctx, scope)
	return schemas, names, err
}

// checkInvariants enforces C12 on the authoritative assembly: section and
// context names non-empty and unique, tool names non-empty, variable names
// valid.
func checkInvariants(a *Assembly) error {
	seen := make(map[string]struct{}, len(a.Sections))
	for _, sec := range a.Sections {
		if sec.Name == "" {
			return errors.New("system-prompt/assemble: assembled section names must be non-empty")
		}
		if _, dup := seen[sec.Name]; dup {
			return fmt.Errorf("system-prompt/assemble: assembled section name %s is duplicated", jsonQuote(sec.Name))
		}
		seen[sec.Name] = struct{}{}
	}
	clear(seen)
	for _, c := range a.Contexts {
		if c.Name == "" {
			return errors.New("system-prompt/assemble: assembled context names must be non-empty")
		}
		if _, dup := seen[c.Name]; dup {
			return fmt.Errorf("system-prompt/assemble: assembled context name %s is duplicated", jsonQuote(c.Name))
		}
		seen[c.Name] = struct{}{}
	}
	for _, t := range a.Tools {
		if t.Name == "" {
			return errors.New("system-prompt/assemble: assembled tool names must be non-empty")
		}
	}
	for name := range a.Variables {
		if !validVariableName(name) {
			return fmt.Errorf("system-prompt/assemble: assembled variable name %s is invalid", jsonQuote(name))
		}
	}
	return nil
}

// jsonQuote quotes s as JSON.stringify does (no HTML escaping).
func jsonQuote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
