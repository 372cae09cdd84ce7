package subagent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/dshgo/harness/core"
)

// Key is the subagents service key ("subagents").
var Key = core.NewKey[*Service]("subagents")

// DelegationTools are the tools that start or drive children. A child
// whose depth has reached the service's maxDepth never sees them.
var DelegationTools = []string{"task", "send_message", "interrupt_agent", "list_agents"}

// Service is the registry of providers and the table of live children.
// Safe for concurrent use.
type Service struct {
	c        *core.Context
	maxDepth int

	mu        sync.Mutex
	providers map[string]Provider
	live      map[string]*Run
	closed    bool
	wg        sync.WaitGroup // turns running in the background
}

// New returns a service whose events are emitted through c. maxDepth bounds
// nesting: a top-level session has depth 0, its children depth 1; a child
// of depth maxDepth cannot start children (maxDepth < 1 means 1).
func New(c *core.Context, maxDepth int) *Service {
	if maxDepth < 1 {
		maxDepth = 1
	}
	return &Service{c: c, maxDepth: maxDepth, providers: map[string]Provider{}, live: map[string]*Run{}}
}

// MaxDepth is the deepest a child may be.
func (s *Service) MaxDepth() int { return s.maxDepth }

// Register adds p under name as an effect of c's fiber: it is withdrawn
// (its live children interrupted and closed) when that fiber unloads. A
// second provider under the same name is an error.
func (s *Service) Register(c *core.Context, name string, p Provider) error {
	if name == "" || p == nil {
		return errors.New("subagents: Register needs a name and a provider")
	}
	return c.Effect("subagent provider "+name, func() (func(), error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, dup := s.providers[name]; dup {
			return nil, fmt.Errorf("subagents: provider %q is already registered", name)
		}
		s.providers[name] = p
		return func() { s.withdraw(name) }, nil
	})
}

// withdraw removes a provider and closes its live children.
func (s *Service) withdraw(name string) {
	s.mu.Lock()
	delete(s.providers, name)
	var runs []*Run
	for _, r := range s.live {
		if r.provider == name {
			runs = append(runs, r)
		}
	}
	s.mu.Unlock()
	for _, r := range runs {
		r.interrupt()
		_ = s.release(context.Background(), r)
	}
}

// Providers returns the registered provider names, sorted, with their
// capabilities.
func (s *Service) Providers() map[string][]Capability {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]Capability, len(s.providers))
	for n, p := range s.providers {
		out[n] = p.Capabilities()
	}
	return out
}

// Provider returns the provider registered under name.
func (s *Service) Provider(name string) (Provider, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.providers[name]
	return p, ok
}

// check validates req against provider name and returns the provider.
func (s *Service) check(name string, req Request) (Provider, error) {
	p, ok := s.Provider(name)
	if !ok {
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range s.Providers() {
				if !yield(n) {
					return
				}
			}
		})
		return nil, Errorf(CodeUnknownProvider, "no subagent provider %q (registered: %v)", name, names)
	}
	if req.Parent.SessionID == "" {
		return nil, Errorf(CodeInvalidRequest, "request without a parent session")
	}
	if req.Prompt == "" {
		return nil, Errorf(CodeInvalidRequest, "request without a prompt")
	}
	caps := p.Capabilities()
	for _, need := range req.Needs() {
		if !has(caps, need) {
			return nil, Errorf(CodeUnsupportedCapability, "provider %q does not support %q (it supports %v)", name, need, caps)
		}
	}
	if d := req.Parent.Depth + 1; d > s.maxDepth {
		return nil, Errorf(CodeDepthLimit, "a child of depth %d exceeds maxDepth %d", d, s.maxDepth)
	}
	return p, nil
}

// Start creates a child with provider name and runs its first turn with
// req.Prompt in the background, under ctx: cancelling ctx interrupts the
// child. The returned Run belongs to the caller: Wait for the answer. A
// child that is not continuable is closed when its turn settles; a
// continuable one stays live until [Service.Close] or the provider goes.
//
// Errors (all *Error): CodeUnknownProvider, CodeInvalidRequest,
// CodeUnsupportedCapability, CodeDepthLimit, CodeStartFailed.
func (s *Service) Start(ctx context.Context, name string, req Request) (*Run, error) {
	p, err := s.check(name, req)
	if err != nil {
		return nil, err
	}
	child, err := p.Start(ctx, req)
	if err != nil {
		if CodeOf(err) != "" {
			return nil, err
		}
		return nil, &Error{Code: CodeStartFailed, Message: fmt.Sprintf("provider %q", name), Err: err}
	}
	r := &Run{svc: s, child: child, provider: name, caps: p.Capabilities(), info: Info{
		ID: child.ID(), Parent: req.Parent.SessionID, Provider: name, Description: req.Description, Agent: req.Agent,
		Depth: req.Parent.Depth + 1, Live: true, Continuable: req.Continuable, Created: time.Now().UTC(),
	}, parentScope: req.Parent.Scope}
	if err := s.admit(r); err != nil {
		_ = child.Close(context.Background())
		return nil, err
	}
	Started.Emit(ctx, s.c.To(req.Parent.Scope), r.Info())
	s.turn(ctx, r, req.Prompt)
	return r, nil
}

// admit adds r to the live table.
func (s *Service) admit(r *Run) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Errorf(CodeStartFailed, "the subagents service is closed")
	}
	s.live[r.info.ID] = r
	return nil
}

// turn starts one turn of r in the background.
func (s *Service) turn(ctx context.Context, r *Run, message string) {
	tctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	r.mu.Lock()
	r.cancel, r.done, r.info.Running, r.last = cancel, done, true, nil
	r.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		out := r.safeTurn(tctx, message)
		r.mu.Lock()
		r.last, r.info.Running, r.info.Last = &out, false, &out
		info := r.info
		r.mu.Unlock()
		if !info.Continuable {
			_ = s.release(context.WithoutCancel(ctx), r)
			info.Live = false
		}
		Settled.Emit(context.WithoutCancel(ctx), s.c.To(r.parentScope), Settlement{Info: info, Outcome: out})
		close(done)
	}()
}

// release closes r and removes it from the live table (once).
func (s *Service) release(ctx context.Context, r *Run) error {
	s.mu.Lock()
	if s.live[r.info.ID] == r {
		delete(s.live, r.info.ID)
	}
	s.mu.Unlock()
	var err error
	r.closeOnce.Do(func() {
		r.mu.Lock()
		r.info.Live = false
		r.mu.Unlock()
		err = r.child.Close(ctx)
	})
	return err
}

// lineage returns the live run of child id when caller is its parent, or
// the stored child's provider for a resume.
func (s *Service) lineage(ctx context.Context, caller, id string) (*Run, string, Info, error) {
	s.mu.Lock()
	r := s.live[id]
	s.mu.Unlock()
	if r != nil {
		info := r.Info()
		if info.Parent != caller {
			return nil, "", info, Errorf(CodeNotDirectChild, "agent %s is not a direct child of session %s", id, caller)
		}
		return r, r.provider, info, nil
	}
	for name, p := range s.snapshot() {
		rs, ok := p.(Resumer)
		if !ok {
			continue
		}
		info, err := rs.Lookup(ctx, id)
		if err != nil {
			if CodeOf(err) == CodeUnknownAgent {
				continue
			}
			return nil, "", info, err
		}
		if info.Parent != caller {
			return nil, "", info, Errorf(CodeNotDirectChild, "agent %s is not a direct child of session %s", id, caller)
		}
		return nil, name, info, nil
	}
	return nil, "", Info{}, Errorf(CodeUnknownAgent, "no agent %s", id)
}

func (s *Service) snapshot() map[string]Provider {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]Provider, len(s.providers))
	for n, p := range s.providers {
		out[n] = p
	}
	return out
}

// Send runs a new turn of caller's direct child id with message, under ctx.
// A live idle child runs it at once; a stored one is resumed first (its
// provider needs [CapResume]). Errors: CodeUnknownAgent,
// CodeNotDirectChild, CodeBusy, CodeUnsupportedCapability (not
// continuable), CodeStartFailed.
func (s *Service) Send(ctx context.Context, caller Parent, id, message string) (*Run, error) {
	if message == "" {
		return nil, Errorf(CodeInvalidRequest, "empty message")
	}
	r, name, info, err := s.lineage(ctx, caller.SessionID, id)
	if err != nil {
		return nil, err
	}
	if r == nil {
		p, _ := s.Provider(name)
		child, err := p.(Resumer).Resume(ctx, id, caller)
		if err != nil {
			if CodeOf(err) != "" {
				return nil, err
			}
			return nil, &Error{Code: CodeStartFailed, Message: fmt.Sprintf("resuming agent %s", id), Err: err}
		}
		info.Live, info.Continuable, info.Provider = true, true, name
		r = &Run{svc: s, child: child, provider: name, caps: p.Capabilities(), info: info, parentScope: caller.Scope}
		s.mu.Lock()
		if s.live[id] != nil {
			s.mu.Unlock()
			_ = child.Close(context.Background())
			return nil, Errorf(CodeBusy, "agent %s was resumed concurrently", id)
		}
		s.live[id] = r
		s.mu.Unlock()
	} else if !r.info.Continuable {
		return nil, Errorf(CodeUnsupportedCapability, "agent %s is not continuable", id)
	}
	r.mu.Lock()
	busy := r.info.Running
	r.mu.Unlock()
	if busy {
		return nil, Errorf(CodeBusy, "agent %s is running a turn; wait for it or interrupt it", id)
	}
	s.turn(ctx, r, message)
	return r, nil
}

// Interrupt stops the running turn of caller's direct child id.
func (s *Service) Interrupt(caller, id string) error {
	r, _, _, err := s.lineage(context.Background(), caller, id)
	if err != nil {
		return err
	}
	if r == nil || !r.interrupt() {
		return Errorf(CodeNotRunning, "agent %s is not running", id)
	}
	return nil
}

// Close releases caller's live direct child id (its session stays stored).
func (s *Service) Close(ctx context.Context, caller, id string) error {
	r, _, _, err := s.lineage(ctx, caller, id)
	if err != nil {
		return err
	}
	if r == nil {
		return nil
	}
	r.interrupt()
	if _, err := r.Wait(ctx); err != nil {
		return err
	}
	return s.release(ctx, r)
}

// Children lists caller's direct children: the live ones and, from
// providers with [CapResume], the stored ones; newest first.
func (s *Service) Children(ctx context.Context, caller string) ([]Info, error) {
	seen := map[string]bool{}
	var out []Info
	s.mu.Lock()
	for _, r := range s.live {
		if info := r.Info(); info.Parent == caller {
			out = append(out, info)
			seen[info.ID] = true
		}
	}
	s.mu.Unlock()
	var errs []error
	for _, p := range s.snapshot() {
		if rs, ok := p.(Resumer); ok {
			stored, err := rs.List(ctx, caller)
			errs = append(errs, err)
			for _, info := range stored {
				if !seen[info.ID] {
					seen[info.ID] = true
					out = append(out, info)
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created.After(out[j].Created) })
	return out, errors.Join(errs...)
}

// shutdown interrupts every live child, waits for their turns and closes
// them. New starts fail afterwards.
func (s *Service) shutdown() {
	s.mu.Lock()
	s.closed = true
	runs := make([]*Run, 0, len(s.live))
	for _, r := range s.live {
		runs = append(runs, r)
	}
	s.mu.Unlock()
	for _, r := range runs {
		r.interrupt()
	}
	s.wg.Wait()
	for _, r := range runs {
		_ = s.release(context.Background(), r)
	}
}
