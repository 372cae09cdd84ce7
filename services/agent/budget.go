package agent

import (
	"errors"
	"fmt"
	"math"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/llm"
)

// Budget caps what one session may spend. A zero field sets no cap.
//
// The session's spend is what its model calls used (the provider's usage,
// or the token meter's estimate for a call whose stream reported none),
// counted from its log when it is resumed, plus the usage of the subagents
// its tools ran in this process, counted when each returns. Before each
// model call the loop projects the spend after it: the spend so far plus
// the request's prompt tokens as the token meter estimates them (priced as
// cache misses, the dearer side). A projection over a cap is not sent:
// the turn ends with reason "budget" and [ErrBudget]. The reply of the
// last call sent is not projected (its size is not known before), so the
// spend may pass a cap by that one reply; the next call is then refused.
type Budget struct {
	// MaxCostUSD caps the session's cost in US dollars, priced with the
	// route's prices (llm-openai models[].prices, as totalCostUsd is); a
	// route without prices cannot have this cap (a configuration error).
	MaxCostUSD float64 `yaml:"maxCostUsd" json:"maxCostUsd,omitempty" jsonschema:"minimum=0"`
	// MaxTokens caps the session's tokens: prompt plus completion tokens
	// of every model call (cached prompt tokens count in full).
	MaxTokens int64 `yaml:"maxTokens" json:"maxTokens,omitempty" jsonschema:"minimum=0"`
}

// IsZero reports whether b sets no cap.
func (b Budget) IsZero() bool { return b.MaxCostUSD == 0 && b.MaxTokens == 0 }

// over returns b with the caps o sets replacing b's.
func (b Budget) over(o Budget) Budget {
	if o.MaxCostUSD != 0 {
		b.MaxCostUSD = o.MaxCostUSD
	}
	if o.MaxTokens != 0 {
		b.MaxTokens = o.MaxTokens
	}
	return b
}

// issues checks the caps; path prefixes the field names.
func (b Budget) issues(path string) []core.Issue {
	var out []core.Issue
	if b.MaxCostUSD < 0 || math.IsNaN(b.MaxCostUSD) || math.IsInf(b.MaxCostUSD, 0) {
		out = append(out, core.Issue{Path: path + "maxCostUsd", Message: fmt.Sprintf("must be a positive number of dollars, got %v", b.MaxCostUSD)})
	}
	if b.MaxTokens < 0 {
		out = append(out, core.Issue{Path: path + "maxTokens", Message: fmt.Sprintf("must not be negative, got %d", b.MaxTokens)})
	}
	return out
}

// Budget kinds ([BudgetInfo.Kind]).
const (
	BudgetTokens = "tokens"
	BudgetCost   = "cost"
)

// BudgetWarnFraction is the share of a cap at which the session warns
// once (an [EventBudget] with Exceeded false).
const BudgetWarnFraction = 0.8

var (
	// ErrBudget: the next model call would have taken the session over a
	// cap of its [Budget]; the call was not sent.
	ErrBudget = errors.New("budget exceeded")
	// ErrBudgetUnpriced: a cost cap was set for a route with no prices.
	ErrBudgetUnpriced = errors.New("a cost budget needs the route's prices")
)

// BudgetInfo describes a budget event ([EventBudget]).
type BudgetInfo struct {
	// Kind is BudgetTokens or BudgetCost.
	Kind string `json:"kind"`
	// Used is the session's spend so far (tokens, or US dollars).
	Used float64 `json:"used"`
	// Projected is Used plus the estimate of the model call about to be
	// made; equal to Used for a warning raised after a call.
	Projected float64 `json:"projected"`
	// Limit is the cap.
	Limit float64 `json:"limit"`
	// Exceeded: the projection passed the cap and the call was not sent;
	// false for the warning at [BudgetWarnFraction] of the cap.
	Exceeded bool `json:"exceeded,omitempty"`
	// Text is the event in words, as every front end shows it: "budget
	// 83% used: 5010 of 6000 tokens (maxTokens)", "budget 81% used:
	// $0.0810 of $0.1000 (maxCostUsd)"; a stop: "budget exceeded: the next
	// model call would bring the session to 12555 of 10000 tokens
	// (maxTokens); it was not sent".
	Text string `json:"text"`
}

// budgetState is a session's spend and the warnings it gave (guarded by
// Session.mu).
type budgetState struct {
	caps   Budget
	spent  llm.Usage // own calls (reported and estimated) and subagents'
	cost   float64   // spent, priced call by call
	warned [2]bool   // tokens, cost
}

// spentTokens is the spend in tokens.
func spentTokens(u llm.Usage) int64 { return u.PromptTokens + u.CompletionTokens }

// spendLocked adds one call's usage u, priced with p, to the spend.
func (b *budgetState) spendLocked(u llm.Usage, p llm.Prices) {
	b.spent = b.spent.Add(u)
	b.cost += p.Cost(u)
}

// spend adds usage u (a call of this session or a subagent's) to the
// session's spend.
func (ss *Session) spend(u llm.Usage) {
	ss.mu.Lock()
	ss.budget.spendLocked(u, ss.model.Prices)
	ss.mu.Unlock()
}

// checkBudget projects the spend after a request of promptTokens prompt
// tokens. It returns an error wrapping ErrBudget when the projection is
// over a cap, after observing the exceeded event; otherwise it observes
// the warning once per kind when the projection reaches
// BudgetWarnFraction of a cap. promptTokens 0 checks the spend itself
// (after a call).
func (t *turn) checkBudget(promptTokens int) error {
	ss := t.ss
	ss.mu.Lock()
	b := ss.budget
	ss.mu.Unlock()
	var infos []BudgetInfo
	if c := b.caps.MaxTokens; c > 0 {
		used := float64(spentTokens(b.spent))
		infos = append(infos, BudgetInfo{Kind: BudgetTokens, Used: used, Projected: used + float64(promptTokens), Limit: float64(c)})
	}
	if c := b.caps.MaxCostUSD; c > 0 {
		extra := float64(promptTokens) * ss.model.Prices.CacheMiss / 1e6
		infos = append(infos, BudgetInfo{Kind: BudgetCost, Used: b.cost, Projected: b.cost + extra, Limit: c})
	}
	for _, in := range infos {
		if in.Projected > in.Limit && promptTokens > 0 {
			in.Exceeded = true
			t.budgetEvent(in)
			return budgetError(in, promptTokens)
		}
	}
	for _, in := range infos {
		k := 0
		if in.Kind == BudgetCost {
			k = 1
		}
		ss.mu.Lock()
		warn := !ss.budget.warned[k] && in.Projected >= BudgetWarnFraction*in.Limit
		ss.budget.warned[k] = ss.budget.warned[k] || warn
		ss.mu.Unlock()
		if warn {
			t.budgetEvent(in)
		}
	}
	return nil
}

// budgetEvent observes an EventBudget of the turn.
func (t *turn) budgetEvent(in BudgetInfo) {
	in.Text = in.describe()
	t.ss.observe(Event{Type: EventBudget, Turn: t.n, Step: t.step, Budget: &in})
}

// budgetError says which cap the call would have passed, and by what.
func budgetError(in BudgetInfo, promptTokens int) error {
	if in.Kind == BudgetTokens {
		return fmt.Errorf("%w: maxTokens %d: the next model call would bring the session to about %d tokens (%d spent, about %d in the request); it was not sent",
			ErrBudget, int64(in.Limit), int64(in.Projected), int64(in.Used), promptTokens)
	}
	return fmt.Errorf("%w: maxCostUsd $%.4f: the next model call would bring the session to about $%.4f ($%.4f spent, about $%.4f for the request's %d prompt tokens priced as cache misses); it was not sent",
		ErrBudget, in.Limit, in.Projected, in.Used, in.Projected-in.Used, promptTokens)
}

// budgetStop records a turn the budget stopped before its model call: the
// held records of the turn are kept (the prompt can be resumed with a
// larger budget), then a short assistant note (the history never holds two
// user messages in a row) and the error as a RecordError with code
// "BUDGET". It returns err.
func (t *turn) budgetStop(err error) error {
	ss := t.ss
	if !t.gated {
		t.gated = true
		if werr := ss.release(); werr != nil {
			return errors.Join(err, werr)
		}
	}
	note := llm.Message{Role: llm.RoleAssistant, Content: "[no reply: the model call was not sent: " + err.Error() + "]"}
	if werr := ss.append(Record{Type: RecordAssistant, Turn: t.n, Step: t.step, Message: &note, Aborted: true}); werr != nil {
		return errors.Join(err, werr)
	}
	if werr := ss.write(Record{Type: RecordError, Turn: t.n, Step: t.step, Code: "BUDGET", Failure: err.Error()}); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// checkPriced refuses a cost cap on a route without prices; field names
// where the cap came from.
func checkPriced(b Budget, m llm.Model, field string) error {
	if b.MaxCostUSD > 0 && !m.Prices.Known() {
		return fmt.Errorf("%w: %s is set but route %s has no prices (set prices {cacheHit, cacheMiss, output} per 1M tokens on the model in its llm-openai row's models list)",
			ErrBudgetUnpriced, field, m.Route())
	}
	return nil
}

// describe is b's Text.
func (b BudgetInfo) describe() string {
	amount := func(v float64) string {
		if b.Kind == BudgetCost {
			return fmt.Sprintf("$%.4f", v)
		}
		return fmt.Sprintf("%d", int64(v))
	}
	unit, field := " tokens", "maxTokens"
	if b.Kind == BudgetCost {
		unit, field = "", "maxCostUsd"
	}
	if b.Exceeded {
		return fmt.Sprintf("budget exceeded: the next model call would bring the session to %s of %s%s (%s); it was not sent",
			amount(b.Projected), amount(b.Limit), unit, field)
	}
	pct := 0
	if b.Limit > 0 {
		pct = int(b.Projected / b.Limit * 100)
	}
	return fmt.Sprintf("budget %d%% used: %s of %s%s (%s)", pct, amount(b.Projected), amount(b.Limit), unit, field)
}
