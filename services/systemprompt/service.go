package systemprompt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"

	"github.com/dshgo/harness/core"
)

// Key is the service key of the system-prompt service ("systemPrompt").
var Key = core.NewKey[*Service]("systemPrompt")

// Names of the sections the service itself registers.
const (
	// IdentitySection is the harness identity, first in every prompt unless
	// includeHarnessIdentity is false.
	IdentitySection = "harness:identity"
	// PersonaPrefixSection carries config personaPrefix at order 0, before
	// first-party guidance. Always registered (empty text renders nothing),
	// so a scoped section of this name replaces it for that scope.
	PersonaPrefixSection = "deployment:persona-prefix"
	// PersonaSuffixSection carries config personaSuffix at order 10200,
	// after guidance and environment facts. Always registered.
	PersonaSuffixSection = "deployment:persona-suffix"
)

// IdentityText is the text of IdentitySection in an assembly whose
// AssembleContext.Agent names no model (e.g. `harness prompt`). With a
// model, the line is IdentityLine of its route.
const IdentityText = "You are an AI agent running in harness."

// ModelRouter is what the identity section reads from
// AssembleContext.Agent: the route ("provider/model") of the model the
// assembly is for. The agent loop's session implements it.
type ModelRouter interface {
	ModelRoute() string
}

// IdentityLine returns the identity sentence for a model route:
// "You are an AI agent running in harness, using the model <route>.", or
// IdentityText when route is empty.
func IdentityLine(route string) string {
	if route == "" {
		return IdentityText
	}
	return "You are an AI agent running in harness, using the model " + route + "."
}

// identityText is the identity section's TextFunc: IdentityLine of the
// route that ac.Agent reports, if it is a ModelRouter. Its output is
// verbatim, so a route with braces is not a template.
func identityText(_ context.Context, ac AssembleContext) (string, error) {
	if a, ok := ac.Agent.(ModelRouter); ok {
		return IdentityLine(a.ModelRoute()), nil
	}
	return IdentityText, nil
}

// Service is the system-prompt registry (dsh ctx.systemPrompt): sections,
// runtime contexts, context suppressors, tool providers and variables, each
// registered in the layer of the calling fiber's scope and undone when that
// fiber (or scope) is disposed; Assemble merges the layers an assembly sees.
//
// All methods are safe for concurrent use. Providers (text, variable and
// tool functions) are never called while the service holds its lock.
type Service struct {
	c         *core.Context // the providing fiber: dispatches events, logs
	toolOrder []string
	log       *slog.Logger

	mu    sync.Mutex
	ls    layers
	gen   uint64 // incremented by every registration change
	cache snapshotCache
}

// New creates the service for the providing fiber c and registers its
// built-in sections (identity, persona prefix and suffix) and, when
// cfg.IncludeRuntimeContext is false, a global runtime-context suppressor,
// all as effects of c. cfg must be valid (see Config.Validate).
func New(c *core.Context, cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Service{c: c, toolOrder: cfg.ToolOrder, log: c.Logger(), ls: newLayers()}
	if cfg.IncludeHarnessIdentity {
		if _, err := s.Section(c, Section{Name: IdentitySection, Order: SectionOrder(OrderIdentity), TextFunc: identityText, Interpolate: InterpolateOff}); err != nil {
			return nil, err
		}
	}
	// Persona templates name variables that other plugins (the agent loop)
	// register later, so they are checked when rendered, not now.
	if _, err := s.section(c, Section{Name: PersonaPrefixSection, Order: SectionOrder(OrderPersonaPrefix), Text: cfg.PersonaPrefix}, false); err != nil {
		return nil, err
	}
	if _, err := s.section(c, Section{Name: PersonaSuffixSection, Order: SectionOrder(OrderPersonaSuffix), Text: cfg.PersonaSuffix}, false); err != nil {
		return nil, err
	}
	if !cfg.IncludeRuntimeContext {
		if _, err := s.SuppressRuntimeContext(c); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Section registers a prompt section in the layer of c's scope, as an
// effect of c's fiber. The returned dispose removes it early (idempotent;
// the effect is undone on unload either way).
//
// Errors: an empty name; a non-finite order (`prompt section "n" order must
// be a finite number`); Text and TextFunc both set; a duplicate name in the
// same layer (`prompt section "n" is already registered ...`); for a static
// interpolated Text, a malformed reference or an unknown variable (the
// *ReferenceError Render would return); a failing Change listener.
func (s *Service) Section(c *core.Context, sec Section) (dispose func(), err error) {
	return s.section(c, sec, true)
}

func (s *Service) section(c *core.Context, sec Section, checkVariables bool) (func(), error) {
	if err := checkEntry("section", sec.Name, sec.Order, sec.Text, sec.TextFunc); err != nil {
		return nil, err
	}
	entry := &sec
	scope := c.Scope()
	return s.register(c, "systemPrompt.section "+sec.Name, Change{Kind: ChangeSection, Name: sec.Name},
		func(l *layer) error {
			if _, dup := l.sections[sec.Name]; dup {
				return duplicateError("section", sec.Name, scope, "for a per-agent override")
			}
			if checkVariables && sec.TextFunc == nil && sec.interpolates() {
				if _, err := interpolate(sec.Text, "section", sec.Name, s.ls.visibleVariables(scope), false); err != nil {
					return err
				}
			}
			l.sections[sec.Name] = entry
			return nil
		},
		func(l *layer) {
			if l.sections[sec.Name] == entry {
				delete(l.sections, sec.Name)
			}
		})
}

// Context registers a runtime-context contribution in the layer of c's
// scope, as an effect of c's fiber. Errors as for Section (with the word
// "context"); context texts are never checked at registration.
func (s *Service) Context(c *core.Context, pc PromptContext) (dispose func(), err error) {
	if err := checkEntry("context", pc.Name, pc.Order, pc.Text, pc.TextFunc); err != nil {
		return nil, err
	}
	entry := &pc
	scope := c.Scope()
	return s.register(c, "systemPrompt.context "+pc.Name, Change{Kind: ChangeContext, Name: pc.Name},
		func(l *layer) error {
			if _, dup := l.contexts[pc.Name]; dup {
				return duplicateError("context", pc.Name, scope, "for a per-agent override")
			}
			l.contexts[pc.Name] = entry
			return nil
		},
		func(l *layer) {
			if l.contexts[pc.Name] == entry {
				delete(l.contexts, pc.Name)
			}
		})
}

// SuppressRuntimeContext suppresses every runtime-context contribution for
// assemblies that see the layer of c's scope (contexts are then neither
// evaluated nor delivered), as an effect of c's fiber. Suppressors compose;
// each dispose is independent.
func (s *Service) SuppressRuntimeContext(c *core.Context) (dispose func(), err error) {
	return s.register(c, "systemPrompt.suppressRuntimeContext", Change{Kind: ChangeSuppressor},
		func(l *layer) error { l.suppress++; return nil },
		func(l *layer) { l.suppress-- })
}

// Tools registers a tool-schema provider in the layer of c's scope, as an
// effect of c's fiber. Providers are additive: an assembly consults the
// global ones and those of its whole scope chain.
func (s *Service) Tools(c *core.Context, p ToolProvider) (dispose func(), err error) {
	if p == nil {
		return nil, errors.New("prompt tool provider must not be nil")
	}
	entry := &toolEntry{p: p}
	return s.register(c, "systemPrompt.tools", Change{Kind: ChangeTools},
		func(l *layer) error { l.tools = append(l.tools, entry); return nil },
		func(l *layer) { l.tools = removeEntry(l.tools, entry) })
}

// ToolProviders returns how many tool-schema providers an assembly for
// scope consults (the global ones and those of its scope chain). Zero means
// the model is offered no tools whatever the tool registry holds: the agent
// refuses to run then, and `harness check` reports it.
func (s *Service) ToolProviders(scope *core.ScopeID) int {
	return len(s.snapshot(scope).tools)
}

// Variable registers a prompt variable in the layer of c's scope, as an
// effect of c's fiber. A scoped variable shadows a global one of the same
// name for that scope (both providers are still evaluated).
//
// Errors: `invalid prompt variable name "n" (must match
// /^[a-z][a-z0-9_]*$/)`; a nil provider; a duplicate in the same layer
// (`prompt variable "n" is already registered ...`); a failing Change
// listener.
func (s *Service) Variable(c *core.Context, name string, fn VariableFunc) (dispose func(), err error) {
	if !validVariableName(name) {
		return nil, fmt.Errorf("invalid prompt variable name \"%s\" (must match %s)", name, variableNamePattern)
	}
	if fn == nil {
		return nil, fmt.Errorf("prompt variable \"%s\": provider must not be nil", name)
	}
	entry := &variableEntry{name: name, fn: fn}
	scope := c.Scope()
	return s.register(c, "systemPrompt.variable "+name, Change{Kind: ChangeVariable, Name: name},
		func(l *layer) error {
			if l.variable(name) != nil {
				return duplicateError("variable", name, scope, "for a per-agent value")
			}
			l.variables = append(l.variables, entry)
			return nil
		},
		func(l *layer) { l.variables = removeEntry(l.variables, entry) })
}

// register inserts one registration into the layer of c's scope as an
// effect of c, emits Change, and rolls the insertion back when a Change
// listener fails. insert and remove run under s.mu and must not call out.
func (s *Service) register(c *core.Context, label string, change Change, insert func(*layer) error, remove func(*layer)) (func(), error) {
	scope := c.Scope()
	change.Scope = scope
	undo := func() {
		s.mu.Lock()
		if l := s.ls.get(scope, false); l != nil {
			remove(l)
			s.ls.release(scope)
			s.gen++
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	err := insert(s.ls.get(scope, true))
	if err != nil {
		s.ls.release(scope)
	} else {
		s.gen++
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if err := s.notify(c.Context(), change); err != nil {
		undo()
		return nil, fmt.Errorf("%s: change listener: %w", label, err)
	}
	var once sync.Once
	dispose := func() {
		once.Do(func() {
			undo()
			removed := change
			removed.Removed = true
			if err := s.notify(context.WithoutCancel(c.Context()), removed); err != nil {
				s.log.Warn("system-prompt change listener failed on removal", "registration", label, "err", err)
			}
		})
	}
	// The registration is made above so that its errors reach the caller
	// unwrapped; the effect only owns its undo.
	if err := c.Effect(label, func() (func(), error) { return dispose, nil }); err != nil {
		dispose()
		return nil, err
	}
	return dispose, nil
}

// notify dispatches ChangeEvent for ch.
func (s *Service) notify(ctx context.Context, ch Change) error {
	_, _, err := ChangeEvent.Bail(ctx, s.c.To(ch.Scope), ch)
	return err
}

// checkEntry validates the fields shared by sections and contexts.
func checkEntry(kind, name string, order float64, text string, fn TextFunc) error {
	if name == "" {
		return fmt.Errorf("prompt %s name must not be empty", kind)
	}
	if math.IsNaN(order) || math.IsInf(order, 0) {
		return fmt.Errorf("prompt %s \"%s\" order must be a finite number", kind, name)
	}
	if text != "" && fn != nil {
		return fmt.Errorf("prompt %s \"%s\": Text and TextFunc are exclusive", kind, name)
	}
	return nil
}

// duplicateError returns dsh's duplicate-registration message for a layer.
func duplicateError(kind, name string, scope *core.ScopeID, purpose string) error {
	if scope == nil {
		return fmt.Errorf("prompt %s \"%s\" is already registered (%s, register through that agent's scoped context instead)", kind, name, purpose)
	}
	return fmt.Errorf("prompt %s \"%s\" is already registered in this scope", kind, name)
}

// removeEntry removes the element e (by identity) from list, keeping order.
func removeEntry[T comparable](list []T, e T) []T {
	for i, x := range list {
		if x == e {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
}
