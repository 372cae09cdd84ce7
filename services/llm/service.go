package llm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// ErrDuplicateProvider is returned by [Service.Register] when the route name
// is already taken.
var ErrDuplicateProvider = errors.New("llm: provider route already registered")

// Service is the llm service: a registry of adapters by provider route, and
// the entry point that resolves a route and streams a request. Safe for
// concurrent use.
type Service struct {
	mu       sync.RWMutex
	adapters map[string]Adapter
	order    []string
}

// NewService returns an empty registry.
func NewService() *Service {
	return &Service{adapters: map[string]Adapter{}}
}

// Register adds a under a.Provider(). It returns the undo; plugins call it
// inside an effect so the route disappears when the plugin unloads:
//
//	c.Effect("llm route "+name, func() (func(), error) { return svc.Register(a) })
//
// A second adapter for the same route fails with ErrDuplicateProvider.
func (s *Service) Register(a Adapter) (unregister func(), err error) {
	name := a.Provider()
	if name == "" {
		return nil, errors.New("llm: adapter has an empty provider route name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.adapters[name]; ok {
		return nil, fmt.Errorf("provider %q: %w", name, ErrDuplicateProvider)
	}
	s.adapters[name] = a
	s.order = append(s.order, name)
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.adapters[name] == a {
				delete(s.adapters, name)
				s.order = slices.DeleteFunc(s.order, func(n string) bool { return n == name })
			}
		})
	}, nil
}

// Providers lists the registered route names in registration order.
func (s *Service) Providers() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.order)
}

// Models lists every model of every route, routes in registration order.
func (s *Service) Models() []Model {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []Model
	for _, name := range s.order {
		out = append(out, s.adapters[name].Models()...)
	}
	return out
}

// Resolve finds the model for a route ("provider/model", "provider/alias" or
// "provider"). An empty route selects the default model of the first
// registered provider. Failures wrap ErrNoAdapter.
func (s *Service) Resolve(route string) (Model, error) {
	m, _, err := s.resolve(route)
	return m, err
}

func (s *Service) resolve(route string) (Model, Adapter, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if route == "" {
		if len(s.order) == 0 {
			return Model{}, nil, fmt.Errorf("no model route registered: %w", ErrNoAdapter)
		}
		route = s.order[0]
	}
	provider, model, err := SplitRoute(route)
	if err != nil {
		return Model{}, nil, err
	}
	a, ok := s.adapters[provider]
	if !ok {
		return Model{}, nil, fmt.Errorf("model route %q: provider %q is not registered (registered: %v): %w", route, provider, s.order, ErrNoAdapter)
	}
	var m Model
	if r, isResolver := a.(ModelResolver); isResolver {
		m, ok = r.ResolveModel(model)
	} else {
		m, ok = ResolveModel(a.Models(), model)
	}
	if !ok {
		return Model{}, nil, fmt.Errorf("model route %q: provider %q has no model %q: %w", route, provider, model, ErrNoAdapter)
	}
	return m, a, nil
}

// Stream resolves req.Model and streams the request through its adapter.
// An alias's thinking mode applies unless req.Options.Thinking overrides it.
// An unknown route yields one finish chunk with CodeNoAdapter.
func (s *Service) Stream(ctx context.Context, req Request) Stream {
	m, a, err := s.resolve(req.Model)
	if err != nil {
		return FinishWith(&Error{Code: CodeNoAdapter, Message: err.Error(), Err: err})
	}
	if req.Options.Thinking == ThinkingDefault && m.Thinking != ThinkingDefault {
		// Carry an alias's fixed mode; the adapter compares with its own
		// model default, so an unchanged default is harmless.
		req.Options.Thinking = m.Thinking
	}
	req.Model = m.Name
	return a.Stream(ctx, req)
}
