package subagentinprocess

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/subagent"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
)

// Origin is the header origin of a child session.
const Origin = "subagent"

// StateKey is the session state that records how a child was started.
const StateKey = "subagent"

// Provider starts children as agent sessions of the agent service.
type Provider struct {
	agent    *agent.Service
	tools    *tools.Registry
	prompt   *systemprompt.Service
	maxDepth int
	name     string
}

// state is what a child's "subagent" state record holds.
type state struct {
	Description string   `json:"description,omitempty"`
	Agent       string   `json:"agent,omitempty"`
	Persona     string   `json:"persona,omitempty"`
	Tools       []string `json:"tools,omitempty"`
	Restricted  bool     `json:"restricted,omitempty"`
	Depth       int      `json:"depth"`
	Continuable bool     `json:"continuable,omitempty"`
}

// Capabilities: all of them.
func (p *Provider) Capabilities() []subagent.Capability {
	return []subagent.Capability{subagent.CapContinuable, subagent.CapInterrupt, subagent.CapResume,
		subagent.CapFork, subagent.CapTools, subagent.CapModel, subagent.CapPersona}
}

// child is one open child session.
type child struct {
	ss     *agent.Session
	parent atomic.Pointer[agent.Session] // where events are relayed
}

func (ch *child) ID() string { return ch.ss.ID() }

// Turn runs one turn of the child session. The parent session found in ctx
// (the delegation tool's call) receives the child's events.
func (ch *child) Turn(ctx context.Context, message string) subagent.Outcome {
	if ps, ok := agent.FromContext(ctx); ok {
		ch.parent.Store(ps)
	}
	res, err := ch.ss.Run(ctx, message)
	out := subagent.Outcome{Text: res.Text, Steps: res.Steps, Status: subagent.StatusCompleted,
		Usage: subagent.Usage{PromptTokens: res.Usage.PromptTokens, CompletionTokens: res.Usage.CompletionTokens, TotalTokens: res.Usage.TotalTokens}}
	switch {
	case err == nil:
	case res.Reason == "aborted":
		out.Status, out.Error = subagent.StatusAborted, err.Error()
	default:
		out.Status, out.Error = subagent.StatusFailed, err.Error()
	}
	return out
}

func (ch *child) Close(ctx context.Context) error { return ch.ss.Close(ctx) }

func (ch *child) relay(e agent.Event) {
	if ps := ch.parent.Load(); ps != nil {
		ps.Relay(e)
	}
}

// Start opens the child session: a new session (or a fork of the parent's)
// whose scope is a child of the parent's, then restricts its tools and sets
// its persona in that scope, and records how it was started.
func (p *Provider) Start(ctx context.Context, req subagent.Request) (subagent.Child, error) {
	ch := &child{}
	ps, _ := agent.FromContext(ctx)
	if ps != nil {
		ch.parent.Store(ps)
	}
	model := req.Model
	if model == "" && ps != nil {
		model = ps.Model().Route()
	}
	o := agent.Options{Cwd: req.Parent.Cwd, Model: model, Parent: req.Parent.SessionID, Origin: Origin,
		ParentScope: req.Parent.Scope, Depth: req.Parent.Depth + 1, Observer: ch.relay}
	if req.Fork {
		o.Fork = req.Parent.SessionID
	}
	ss, err := p.agent.Open(ctx, o)
	if err != nil {
		return nil, err
	}
	ch.ss = ss
	st := state{Description: req.Description, Agent: req.Agent, Persona: req.Persona, Tools: req.Tools,
		Restricted: req.Tools != nil, Depth: o.Depth, Continuable: req.Continuable}
	if err := p.configure(ss, st); err != nil {
		_ = ss.Close(context.Background())
		return nil, err
	}
	b, _ := json.Marshal(st)
	if err := ss.SetState(StateKey, b); err != nil {
		_ = ss.Close(context.Background())
		return nil, err
	}
	return ch, nil
}

// configure restricts the child's tools and sets its persona in its scope.
func (p *Provider) configure(ss *agent.Session, st state) error {
	c := ss.Context()
	known := map[string]bool{}
	var names []string
	for _, t := range p.tools.Tools(ss.Scope()) {
		known[t.Name()] = true
		names = append(names, t.Name())
	}
	f := tools.Filter{}
	if st.Depth >= p.maxDepth {
		for _, n := range subagent.DelegationTools {
			if known[n] {
				f.Deny = append(f.Deny, n)
			}
		}
	}
	if st.Restricted {
		allow, err := expand(st.Tools, names)
		if err != nil {
			return err
		}
		f.Allow = allow
	}
	if f.Allow != nil || f.Deny != nil {
		if err := p.tools.Restrict(c, f); err != nil {
			return fmt.Errorf("subagent tools: %w", err)
		}
	}
	if st.Persona != "" {
		if _, err := p.prompt.Section(c, systemprompt.Section{Name: systemprompt.PersonaPrefixSection,
			Order: systemprompt.SectionOrder(systemprompt.OrderPersonaPrefix), Text: st.Persona, Interpolate: systemprompt.InterpolateOff}); err != nil {
			return fmt.Errorf("subagent persona: %w", err)
		}
	}
	return nil
}

// expand matches the allow-list patterns (tool names or path.Match globs,
// case-insensitive, so Claude Code's "Read, Grep" name read and grep)
// against the visible tool names. A pattern that matches nothing is an
// error naming the known tools.
func expand(patterns, names []string) ([]string, error) {
	allow := []string{}
	for _, pat := range patterns {
		pat = strings.TrimSpace(pat)
		if pat == "" {
			continue
		}
		matched := false
		for _, n := range names {
			ok, err := path.Match(strings.ToLower(pat), strings.ToLower(n))
			if err != nil {
				return nil, fmt.Errorf("subagent tools: pattern %q: %w", pat, err)
			}
			if ok {
				matched = true
				if !slices.Contains(allow, n) {
					allow = append(allow, n)
				}
			}
		}
		if !matched {
			return nil, subagent.Errorf(subagent.CodeInvalidRequest, "tool %q matches no tool of the parent (tools: %s)", pat, strings.Join(names, ", "))
		}
	}
	return allow, nil
}

// Lookup reads a stored child's header and state.
func (p *Provider) Lookup(ctx context.Context, id string) (subagent.Info, error) {
	if !sessions.ValidID(id) {
		return subagent.Info{}, subagent.Errorf(subagent.CodeUnknownAgent, "no agent %q", id)
	}
	recs, err := agent.ReadSession(ctx, p.agent.Sessions(), id)
	if errors.Is(err, sessions.ErrNotFound) || err == nil && (len(recs) == 0 || recs[0].Origin != Origin) {
		return subagent.Info{}, subagent.Errorf(subagent.CodeUnknownAgent, "no agent %s", id)
	}
	if err != nil {
		return subagent.Info{}, err
	}
	return p.info(recs), nil
}

// info describes a stored child from its records.
func (p *Provider) info(recs []agent.Record) subagent.Info {
	h := recs[0]
	st := stateOf(recs)
	return subagent.Info{ID: h.ID, Parent: h.Parent, Provider: p.name, Description: st.Description, Agent: st.Agent,
		Depth: st.Depth, Continuable: st.Continuable, Created: h.Time}
}

func stateOf(recs []agent.Record) state {
	var st state
	for _, r := range recs {
		if r.Type == agent.RecordState && r.Key == StateKey {
			_ = json.Unmarshal(r.State, &st)
		}
	}
	return st
}

// Resume reopens a stored child under its parent, restoring its tools and
// persona from its state record.
func (p *Provider) Resume(ctx context.Context, id string, parent subagent.Parent) (subagent.Child, error) {
	recs, err := agent.ReadSession(ctx, p.agent.Sessions(), id)
	if err != nil {
		return nil, err
	}
	st := stateOf(recs)
	ch := &child{}
	if ps, ok := agent.FromContext(ctx); ok {
		ch.parent.Store(ps)
	}
	ss, err := p.agent.Open(ctx, agent.Options{ID: id, Cwd: parent.Cwd, Parent: parent.SessionID, ParentScope: parent.Scope,
		Depth: parent.Depth + 1, Observer: ch.relay})
	if err != nil {
		return nil, err
	}
	ch.ss = ss
	if err := p.configure(ss, st); err != nil {
		_ = ss.Close(context.Background())
		return nil, err
	}
	return ch, nil
}

// List returns parent's stored children, newest first.
func (p *Provider) List(ctx context.Context, parent string) ([]subagent.Info, error) {
	store := p.agent.Sessions()
	page, err := store.List(ctx, sessions.Query{Parent: parent})
	if err != nil {
		return nil, err
	}
	var out []subagent.Info
	for _, s := range page.Sessions {
		if s.Origin != Origin {
			continue
		}
		recs, err := agent.ReadSession(ctx, store, s.ID)
		if err != nil || len(recs) == 0 {
			continue
		}
		out = append(out, p.info(recs))
	}
	return out, nil
}
