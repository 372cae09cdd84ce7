package approval

import (
	"context"
	"fmt"
	"os"
	"sync"
	"weak"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
)

// The answerer settings.
const (
	AnswererAuto     = "auto"
	AnswererTerminal = "terminal"
	AnswererHeadless = "headless"
)

// The session policies.
const (
	PolicyAsk   = "ask"
	PolicyNever = "never"
)

// Config configures the approval service.
type Config struct {
	// Answerer is who answers: "auto" (terminal when stdin is a TTY, else
	// headless), "terminal" (prompt on /dev/tty), or "headless" (nobody: every
	// ask is a denial).
	Answerer string `yaml:"answerer" json:"answerer,omitempty" jsonschema:"enum=auto,enum=terminal,enum=headless,default=auto"`
	// Policy is "ask" (put the question) or "never" (reject without asking).
	Policy string `yaml:"policy" json:"policy,omitempty" jsonschema:"enum=ask,enum=never,default=ask"`
}

// SetDefaults sets answerer auto and policy ask.
func (c *Config) SetDefaults() {
	c.Answerer, c.Policy = AnswererAuto, PolicyAsk
}

// Validate checks the two enumerations.
func (c Config) Validate() error {
	switch c.Answerer {
	case AnswererAuto, AnswererTerminal, AnswererHeadless:
	default:
		return fmt.Errorf("answerer: %q is not one of auto, terminal, headless", c.Answerer)
	}
	switch c.Policy {
	case PolicyAsk, PolicyNever:
	default:
		return fmt.Errorf("policy: %q is not one of ask, never", c.Policy)
	}
	return nil
}

// Plugin provides the approval service under tools.ApprovalKey.
var Plugin = core.Define("approval", apply,
	core.WithProvides(tools.ApprovalKey.Name()),
	core.WithDescription("Answers tool-call approval requests: a terminal prompt when interactive, a clear denial when headless."))

func apply(c *core.Context, cfg Config) error {
	s := New(answererFor(cfg.Answerer), cfg.Policy == PolicyNever)
	s.provided = func() (tools.Answerer, bool) { return core.Lookup(c, tools.AnswererKey) }
	return core.Provide[tools.Approver](c, tools.ApprovalKey, s)
}

// answererFor resolves the answerer setting; nil means headless.
func answererFor(setting string) tools.Answerer {
	switch setting {
	case AnswererTerminal:
		return NewTerminal(OpenTTY)
	case AnswererAuto:
		if IsTerminal(os.Stdin) {
			return NewTerminal(OpenTTY)
		}
	}
	return nil
}

// Service is the approval service. Safe for concurrent use.
type Service struct {
	answerer tools.Answerer // nil: headless
	never    bool
	provided func() (tools.Answerer, bool) // tools.AnswererKey lookup; nil outside a plugin

	mu        sync.Mutex
	routes    map[*core.ScopeID][]route // the answerers front ends registered per session scope
	nextRoute int
	always    map[grantKey]bool
	onAlways  map[int]func(tools.ApprovalRequest)
	nextID    int
}

// grantKey identifies an "always" answer. The scope is held weakly, so a
// session's answers go when its scope is collected.
type grantKey struct {
	scope           weak.Pointer[core.ScopeID] // zero for unscoped calls
	tool, arguments string
}

// New returns a service asking a (nil: headless). With never set every
// request is rejected without asking.
func New(a tools.Answerer, never bool) *Service {
	return &Service{answerer: a, never: never, always: map[grantKey]bool{}, onAlways: map[int]func(tools.ApprovalRequest){},
		routes: map[*core.ScopeID][]route{}}
}

// route is one registration of [Service.Route].
type route struct {
	id int
	a  tools.Answerer // nil: headless
}

// Route makes a the answerer of every ask made in scope or a scope below it
// (a subagent's child scope), whatever the configured answerer is: the front
// end that owns a session (the terminal of `harness chat`, a browser tab of
// `harness serve`, a headless worker) registers itself when it opens the
// session and calls remove when it lets go. A nil a marks the scope headless:
// its asks are denials even when a terminal is attached. When several
// registrations cover a scope, the latest one made for the nearest scope
// answers. remove is idempotent.
func (s *Service) Route(scope *core.ScopeID, a tools.Answerer) (remove func()) {
	s.mu.Lock()
	id := s.nextRoute
	s.nextRoute++
	s.routes[scope] = append(s.routes[scope], route{id: id, a: a})
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		rs := s.routes[scope]
		for i, r := range rs {
			if r.id == id {
				rs = append(rs[:i:i], rs[i+1:]...)
				break
			}
		}
		if len(rs) == 0 {
			delete(s.routes, scope)
		} else {
			s.routes[scope] = rs
		}
	}
}

// answererFor returns who answers an ask made in scope: the answerer routed
// to the nearest scope of its chain, else [Service.current].
func (s *Service) answererFor(scope *core.ScopeID) tools.Answerer {
	if scope != nil {
		s.mu.Lock()
		for _, id := range scope.Chain() {
			if rs := s.routes[id]; len(rs) > 0 {
				a := rs[len(rs)-1].a
				s.mu.Unlock()
				return a
			}
		}
		s.mu.Unlock()
	}
	return s.current()
}

// current returns who answers now: a provided tools.AnswererKey service, else the
// configured answerer (nil: headless).
func (s *Service) current() tools.Answerer {
	if s.provided != nil {
		if a, ok := s.provided(); ok && a != nil {
			return a
		}
	}
	return s.answerer
}

// Interactive reports whether someone can answer: false for a headless
// service or the "never" policy.
func (s *Service) Interactive() bool { return s.current() != nil && !s.never }

// Unanswerable says why no one can answer an unscoped ask, for denial
// reasons, or "" when someone can. See [Service.UnanswerableIn].
func (s *Service) Unanswerable() string { return s.UnanswerableIn(nil) }

// UnanswerableIn says why no one can answer an ask made in scope (nil: an
// unscoped call), for denial reasons, or "" when someone can: the answerer
// routed to the scope (see [Service.Route]) counts before the configured one.
func (s *Service) UnanswerableIn(scope *core.ScopeID) string {
	switch {
	case s.never:
		return "the approval policy is \"never\": every ask is rejected"
	case s.answererFor(scope) == nil:
		return "this session is headless: there is no terminal to ask on"
	}
	return ""
}

// Ask resolves one request: "never" rejects; a request identical to one
// answered "always" in the same scope is granted; otherwise it goes to the
// answerer routed to the request's scope ([Service.Route]), else the
// configured one; when that is headless the answer is ApprovalUnavailable.
// It is AskDetailed without the user's reason.
func (s *Service) Ask(ctx context.Context, req tools.ApprovalRequest) (tools.ApprovalOutcome, error) {
	a, err := s.AskDetailed(ctx, req)
	return a.Outcome, err
}

// AskDetailed is Ask returning the answer with the user's reason, when the
// answerer implements [tools.DetailedAnswerer] (a plain tools.Answerer gives none).
func (s *Service) AskDetailed(ctx context.Context, req tools.ApprovalRequest) (tools.ApprovalAnswer, error) {
	if s.never {
		return tools.ApprovalAnswer{Outcome: tools.ApprovalRejected}, nil
	}
	key := grantKey{weak.Make(req.Scope), req.Tool, req.Arguments}
	s.mu.Lock()
	granted := s.always[key]
	s.mu.Unlock()
	if granted {
		return tools.ApprovalAnswer{Outcome: tools.ApprovalAllowedAlways}, nil
	}
	answerer := s.answererFor(req.Scope)
	if answerer == nil {
		return tools.ApprovalAnswer{Outcome: tools.ApprovalUnavailable}, nil
	}
	if ctx.Err() != nil {
		return tools.ApprovalAnswer{Outcome: tools.ApprovalCancelled}, nil
	}
	var out tools.ApprovalAnswer
	var err error
	if d, ok := answerer.(tools.DetailedAnswerer); ok {
		out, err = d.AnswerDetailed(ctx, req)
	} else {
		out.Outcome, err = answerer.Answer(ctx, req)
	}
	if err != nil {
		return tools.ApprovalAnswer{Outcome: tools.ApprovalUnavailable}, err
	}
	if out.Outcome == tools.ApprovalAllowedAlways {
		s.remember(key, req)
	}
	return out, nil
}

// remember records an "always" grant and tells the listeners.
func (s *Service) remember(key grantKey, req tools.ApprovalRequest) {
	s.mu.Lock()
	for k := range s.always {
		if k.scope != (weak.Pointer[core.ScopeID]{}) && k.scope.Value() == nil {
			delete(s.always, k)
		}
	}
	s.always[key] = true
	fns := make([]func(tools.ApprovalRequest), 0, len(s.onAlways))
	for _, fn := range s.onAlways {
		fns = append(fns, fn)
	}
	s.mu.Unlock()
	for _, fn := range fns {
		fn(req)
	}
}

// OnAllowedAlways registers fn to hear every request answered "always"
// (req.AlwaysRules names the rules the answer adds)
// (called synchronously, before Ask returns). The returned function removes it.
func (s *Service) OnAllowedAlways(fn func(tools.ApprovalRequest)) (remove func()) {
	s.mu.Lock()
	id := s.nextID
	s.nextID++
	s.onAlways[id] = fn
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.onAlways, id)
		s.mu.Unlock()
	}
}
