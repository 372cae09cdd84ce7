package approval_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/plugins/approval"
	"github.com/dshgo/harness/services/tools"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// terminal is a real pseudo-terminal: the answerer talks to its tty end, the
// test plays the user on its master end.
type terminal struct {
	master *os.File
	name   string
	out    *bufio.Reader
}

func newTerminal(t *testing.T) *terminal {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	name := tty.Name()
	// Keep the tty open for the test's duration so the master never sees a hang-up.
	t.Cleanup(func() { tty.Close(); master.Close() })
	return &terminal{master: master, name: name, out: bufio.NewReader(master)}
}

// open opens the tty end anew, as OpenTTY opens /dev/tty.
func (p *terminal) open() (approval.TTY, error) { return os.OpenFile(p.name, os.O_RDWR, 0) }

// expect reads the terminal's output until it contains s.
func (p *terminal) expect(t *testing.T, s string) string {
	t.Helper()
	var seen strings.Builder
	_ = p.master.SetReadDeadline(time.Now().Add(10 * time.Second))
	for !strings.Contains(seen.String(), s) {
		b, err := p.out.ReadByte()
		if err != nil {
			t.Fatalf("waiting for %q, got %q: %v", s, seen.String(), err)
		}
		seen.WriteByte(b)
	}
	return seen.String()
}

func (p *terminal) say(t *testing.T, line string) {
	t.Helper()
	if _, err := p.master.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

var req = tools.ApprovalRequest{Tool: "bash", CallID: "c1", Arguments: `{"command":"make deploy"}`, Reason: "no allow rule covers this call"}

func TestTerminalAnswers(t *testing.T) {
	tests := []struct {
		lines []string
		want  tools.ApprovalOutcome
	}{
		{[]string{"y"}, tools.ApprovalAllowedOnce},
		{[]string{"YES"}, tools.ApprovalAllowedOnce},
		{[]string{"a"}, tools.ApprovalAllowedAlways},
		{[]string{"always"}, tools.ApprovalAllowedAlways},
		{[]string{"n"}, tools.ApprovalRejected},
		{[]string{""}, tools.ApprovalRejected},
		{[]string{"maybe", "y"}, tools.ApprovalAllowedOnce},
	}
	for _, tt := range tests {
		term := newTerminal(t)
		ans := approval.NewTerminal(term.open)
		got := make(chan tools.ApprovalOutcome, 1)
		go func() {
			o, err := ans.Answer(context.Background(), req)
			if err != nil {
				t.Errorf("Answer: %v", err)
			}
			got <- o
		}()
		shown := term.expect(t, "[n] no (default): ")
		for _, want := range []string{"approval needed: tool bash", `arguments: {"command":"make deploy"}`, "why: no allow rule covers this call"} {
			if !strings.Contains(shown, want) {
				t.Errorf("prompt %q lacks %q", shown, want)
			}
		}
		for i, l := range tt.lines {
			if i > 0 {
				term.expect(t, "Please answer y, a or n: ")
			}
			term.say(t, l)
		}
		if o := <-got; o != tt.want {
			t.Errorf("answers %q: got %v, want %v", tt.lines, o, tt.want)
		}
	}
}

func TestTerminalCancelledByContext(t *testing.T) {
	term := newTerminal(t)
	ans := approval.NewTerminal(term.open)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan tools.ApprovalOutcome, 1)
	go func() {
		o, _ := ans.Answer(ctx, req)
		got <- o
	}()
	term.expect(t, "(default): ")
	cancel()
	if o := <-got; o != tools.ApprovalCancelled {
		t.Fatalf("got %v, want cancelled", o)
	}
}

func TestTerminalEndOfInputIsCancelled(t *testing.T) {
	term := newTerminal(t)
	ans := approval.NewTerminal(term.open)
	got := make(chan tools.ApprovalOutcome, 1)
	go func() {
		o, _ := ans.Answer(context.Background(), req)
		got <- o
	}()
	term.expect(t, "(default): ")
	if _, err := term.master.Write([]byte{4}); err != nil { // ^D at the start of a line
		t.Fatal(err)
	}
	if o := <-got; o != tools.ApprovalCancelled {
		t.Fatalf("got %v, want cancelled", o)
	}
}

func TestTerminalEscapesControlCharacters(t *testing.T) {
	term := newTerminal(t)
	ans := approval.NewTerminal(term.open)
	r := req
	r.Arguments = "{\"command\":\"ls\x1b[2J\rok\"}"
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = ans.Answer(context.Background(), r)
	}()
	shown := term.expect(t, "(default): ")
	term.say(t, "n")
	<-done
	if strings.ContainsAny(shown[:strings.Index(shown, "why:")], "\x1b") || !strings.Contains(shown, `ls\u001b[2J\u000dok`) {
		t.Fatalf("prompt %q", shown)
	}
}

type scripted struct {
	answers []tools.ApprovalOutcome
	asked   int
}

func (s *scripted) Answer(context.Context, tools.ApprovalRequest) (tools.ApprovalOutcome, error) {
	s.asked++
	o := s.answers[0]
	s.answers = s.answers[1:]
	return o, nil
}

func TestServiceAlwaysIsRememberedPerScopeAndCall(t *testing.T) {
	a := &scripted{answers: []tools.ApprovalOutcome{tools.ApprovalAllowedAlways, tools.ApprovalRejected}}
	s := approval.New(a, false)
	var heard []string
	remove := s.OnAllowedAlways(func(r tools.ApprovalRequest) { heard = append(heard, r.CallID) })
	ctx := context.Background()
	if o, _ := s.Ask(ctx, req); o != tools.ApprovalAllowedAlways {
		t.Fatalf("first: %v", o)
	}
	again := req
	again.CallID = "c2"
	if o, _ := s.Ask(ctx, again); o != tools.ApprovalAllowedAlways || a.asked != 1 {
		t.Fatalf("repeat: %v after %d questions", o, a.asked)
	}
	other := req
	other.Arguments = `{"command":"make clean"}`
	if o, _ := s.Ask(ctx, other); o != tools.ApprovalRejected || a.asked != 2 {
		t.Fatalf("other call: %v after %d questions", o, a.asked)
	}
	remove()
	if strings.Join(heard, ",") != "c1" {
		t.Fatalf("OnAllowedAlways heard %v", heard)
	}
	if !s.Interactive() {
		t.Fatal("a service with an answerer is interactive")
	}
}

func TestServiceHeadlessAndNever(t *testing.T) {
	ctx := context.Background()
	headless := approval.New(nil, false)
	if o, err := headless.Ask(ctx, req); o != tools.ApprovalUnavailable || err != nil || headless.Interactive() {
		t.Fatalf("headless: %v %v", o, err)
	}
	never := approval.New(&scripted{}, true)
	if o, err := never.Ask(ctx, req); o != tools.ApprovalRejected || err != nil || never.Interactive() {
		t.Fatalf("never: %v %v", o, err)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		cfg  approval.Config
		want string
	}{
		{approval.Config{Answerer: "tty", Policy: "ask"}, `answerer: "tty" is not one of auto, terminal, headless`},
		{approval.Config{Answerer: "auto", Policy: "always"}, `policy: "always" is not one of ask, never`},
	}
	for _, tt := range tests {
		if err := tt.cfg.Validate(); err == nil || err.Error() != tt.want {
			t.Errorf("Validate() = %v, want %q", err, tt.want)
		}
	}
	var c approval.Config
	c.SetDefaults()
	if c.Validate() != nil || c.Answerer != "auto" || c.Policy != "ask" {
		t.Errorf("defaults %+v", c)
	}
}

// TestProvidedAnswererTakesOver: a plugin providing AnswererKey answers the
// questions of a headless approval service while it is mounted.
func TestProvidedAnswererTakesOver(t *testing.T) {
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer root.Dispose(context.Background())
	ctx := context.Background()
	cfg := approval.Config{Answerer: approval.AnswererHeadless, Policy: approval.PolicyAsk}
	if err := root.Context().Plugin(approval.Plugin, cfg).Await(ctx); err != nil {
		t.Fatal(err)
	}
	svc, _ := core.Lookup(root.Context(), tools.ApprovalKey)
	u := svc.(interface{ Unanswerable() string })
	if o, _ := svc.Ask(ctx, req); o != tools.ApprovalUnavailable || u.Unanswerable() == "" {
		t.Fatalf("headless: %v", o)
	}
	ui := core.Define("ui", func(c *core.Context, _ struct{}) error {
		return core.Provide[tools.Answerer](c, tools.AnswererKey, &scripted{answers: []tools.ApprovalOutcome{tools.ApprovalAllowedOnce}})
	}, core.WithProvides(tools.AnswererKey.Name()))
	f := root.Context().Plugin(ui, nil)
	if err := f.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if o, _ := svc.Ask(ctx, req); o != tools.ApprovalAllowedOnce || u.Unanswerable() != "" {
		t.Fatalf("with a provided answerer: %v", o)
	}
	if err := f.Dispose(ctx); err != nil {
		t.Fatal(err)
	}
	if o, _ := svc.Ask(ctx, req); o != tools.ApprovalUnavailable {
		t.Fatalf("after the answerer left: %v", o)
	}
}

func TestServiceAlwaysIsPerScope(t *testing.T) {
	a := &scripted{answers: []tools.ApprovalOutcome{tools.ApprovalAllowedAlways, tools.ApprovalRejected}}
	s := approval.New(a, false)
	one, two := core.NewScopeID("session-1", nil), core.NewScopeID("session-2", nil)
	r1, r2 := req, req
	r1.Scope, r2.Scope = one, two
	ctx := context.Background()
	if o, _ := s.Ask(ctx, r1); o != tools.ApprovalAllowedAlways {
		t.Fatalf("session 1: %v", o)
	}
	if o, _ := s.Ask(ctx, r1); o != tools.ApprovalAllowedAlways || a.asked != 1 {
		t.Fatalf("session 1 again: %v after %d questions", o, a.asked)
	}
	if o, _ := s.Ask(ctx, r2); o != tools.ApprovalRejected || a.asked != 2 {
		t.Fatalf("session 2: %v after %d questions", o, a.asked)
	}
}

// TestRouteSendsAScopesAsksToItsOwner: a session scope routed to a front
// end is answered there (and so are its child scopes), other scopes keep the
// configured answerer, a nil route makes a scope headless, and removing the
// route gives the scope back.
func TestRouteSendsAScopesAsksToItsOwner(t *testing.T) {
	ctx := context.Background()
	s := approval.New(nil, false) // configured: headless
	web := &scripted{answers: []tools.ApprovalOutcome{tools.ApprovalAllowedOnce, tools.ApprovalRejected}}
	owned, other := core.NewScopeID("web-session", nil), core.NewScopeID("other", nil)
	child := core.NewScopeID("subagent", owned)
	remove := s.Route(owned, web)
	r := req
	r.Scope = owned
	if o, _ := s.Ask(ctx, r); o != tools.ApprovalAllowedOnce || s.UnanswerableIn(owned) != "" {
		t.Fatalf("owned scope: %v", o)
	}
	r.Scope = child
	if o, _ := s.Ask(ctx, r); o != tools.ApprovalRejected || web.asked != 2 {
		t.Fatalf("child scope: %v after %d questions", o, web.asked)
	}
	r.Scope = other
	if o, _ := s.Ask(ctx, r); o != tools.ApprovalUnavailable || s.UnanswerableIn(other) == "" {
		t.Fatalf("other scope: %v", o)
	}
	remove()
	remove()
	r.Scope = owned
	if o, _ := s.Ask(ctx, r); o != tools.ApprovalUnavailable || web.asked != 2 {
		t.Fatalf("after remove: %v", o)
	}
	tty := approval.New(&scripted{answers: []tools.ApprovalOutcome{tools.ApprovalAllowedOnce}}, false)
	defer tty.Route(owned, nil)()
	if o, _ := tty.Ask(ctx, r); o != tools.ApprovalUnavailable || tty.UnanswerableIn(owned) == "" || tty.UnanswerableIn(other) != "" {
		t.Fatalf("headless route over a terminal: %v", o)
	}
}

type detailed struct{ scripted }

func (d *detailed) AnswerDetailed(ctx context.Context, r tools.ApprovalRequest) (tools.ApprovalAnswer, error) {
	o, err := d.Answer(ctx, r)
	return tools.ApprovalAnswer{Outcome: o, Reason: "because " + r.Tool}, err
}

// TestAskDetailedCarriesTheReason: a DetailedAnswerer's reason comes back
// from AskDetailed; a plain Answerer gives none; Ask drops it.
func TestAskDetailedCarriesTheReason(t *testing.T) {
	ctx := context.Background()
	d := &detailed{scripted{answers: []tools.ApprovalOutcome{tools.ApprovalRejected, tools.ApprovalRejected}}}
	s := approval.New(d, false)
	if a, err := s.AskDetailed(ctx, req); err != nil || a.Outcome != tools.ApprovalRejected || a.Reason != "because bash" {
		t.Fatalf("detailed answerer: %+v %v", a, err)
	}
	if o, _ := s.Ask(ctx, req); o != tools.ApprovalRejected {
		t.Fatalf("Ask: %v", o)
	}
	plain := approval.New(&scripted{answers: []tools.ApprovalOutcome{tools.ApprovalRejected}}, false)
	if a, _ := plain.AskDetailed(ctx, req); a.Outcome != tools.ApprovalRejected || a.Reason != "" {
		t.Fatalf("plain answerer: %+v", a)
	}
	var _ tools.DetailedApprover = s
}

// TestTerminalShowsTheAlwaysRule: the prompt names what "always" adds.
func TestTerminalShowsTheAlwaysRule(t *testing.T) {
	term := newTerminal(t)
	ans := approval.NewTerminal(term.open)
	r := req
	r.AlwaysRules = []string{"bash(make deploy *)"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = ans.Answer(context.Background(), r)
	}()
	shown := term.expect(t, "(default): ")
	term.say(t, "n")
	<-done
	if !strings.Contains(shown, "always adds: bash(make deploy *)\r\n") {
		t.Fatalf("prompt %q", shown)
	}
}
