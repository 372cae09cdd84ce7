package systemprompt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dshgo/harness/core"
)

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// harness is a root with the systemprompt plugin mounted.
type harness struct {
	t    testing.TB
	root *core.Root
	svc  *Service
	logs *syncBuffer
}

func mount(t testing.TB, cfg Config) *harness {
	t.Helper()
	logs := &syncBuffer{}
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	t.Cleanup(func() { _ = root.Dispose(context.Background()) })
	f := root.Context().Plugin(Plugin, &cfg)
	if err := f.Await(context.Background()); err != nil {
		t.Fatalf("mount systemprompt: %v", err)
	}
	svc, ok := core.Lookup(root.Context(), Key)
	if !ok {
		t.Fatalf("service not provided; state %v", f.State())
	}
	return &harness{t: t, root: root, svc: svc, logs: logs}
}

// plugin mounts a plugin that injects the service and runs fn.
func (h *harness) plugin(fn func(c *core.Context, s *Service) error) (*core.Fiber, error) {
	h.t.Helper()
	p := core.Define("test-plugin", func(c *core.Context, _ struct{}) error {
		return fn(c, core.Use(c, Key))
	}, core.WithInject(Key.Name()))
	f := h.root.Context().Plugin(p, nil)
	err := f.Await(context.Background())
	return f, err
}

// scope mints a scope (with an optional parent) under a fresh plugin.
func (h *harness) scope(label string, parent *core.ScopeID) *core.Scope {
	h.t.Helper()
	var sc *core.Scope
	_, err := h.plugin(func(c *core.Context, _ *Service) error {
		var err error
		sc, err = core.NewScope(c, core.NewScopeID(label, parent))
		return err
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return sc
}

func (h *harness) global() *core.Context { return h.root.Context() }

func (h *harness) must(_ func(), err error) {
	h.t.Helper()
	if err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) assemble(scope *core.ScopeID) *Assembly {
	h.t.Helper()
	a, err := h.svc.Assemble(context.Background(), AssembleContext{Scope: scope})
	if err != nil {
		h.t.Fatalf("assemble: %v", err)
	}
	return a
}

func (h *harness) render(scope *core.ScopeID) string {
	h.t.Helper()
	out, err := Render(h.assemble(scope))
	if err != nil {
		h.t.Fatalf("render: %v", err)
	}
	return out
}

func sectionNames(a *Assembly) []string {
	out := make([]string, len(a.Sections))
	for i, s := range a.Sections {
		out[i] = s.Name
	}
	return out
}

func bare() Config {
	c := DefaultConfig()
	c.IncludeHarnessIdentity = false
	return c
}

func static(text string) TextFunc {
	return func(context.Context, AssembleContext) (string, error) { return text, nil }
}

func value(v string) VariableFunc {
	return func(context.Context, AssembleContext) (string, bool) { return v, true }
}

func TestBuiltInSectionsIdentityAndPersona(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PersonaPrefix = "You are careful."
	cfg.PersonaSuffix = "Bye."
	h := mount(t, cfg)
	a := h.assemble(nil)
	if want := []string{IdentitySection, PersonaPrefixSection, PersonaSuffixSection}; !slices.Equal(sectionNames(a), want) {
		t.Fatalf("sections = %q, want %q", sectionNames(a), want)
	}
	if got, want := h.render(nil), IdentityText+"\n\nYou are careful.\n\nBye."; got != want {
		t.Fatalf("render = %q, want %q", got, want)
	}
	_, err := h.svc.Section(h.global(), Section{Name: PersonaPrefixSection, Text: "imposter"})
	want := `prompt section "deployment:persona-prefix" is already registered (for a per-agent override, register through that agent's scoped context instead)`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}

	empty := mount(t, bare())
	if got := empty.render(nil); got != "" {
		t.Fatalf("persona-less deployment without identity renders %q", got)
	}
}

func TestSectionsSortByOrderThenCodeUnitName(t *testing.T) {
	h := mount(t, bare())
	for _, s := range []Section{
		{Name: "b", Order: 10, Text: "b"},
		{Name: "a", Order: 10, Text: "a"},
		{Name: "B", Order: 10, Text: "B"},
		{Name: "neg", Order: -5, Text: "neg"},
		{Name: "x\U0001F600", Order: 20, Text: "astral"},
		{Name: "x\uFF5E", Order: 20, Text: "bmp"},
		{Name: "half", Order: 10.5, Text: "half"},
	} {
		h.must(h.svc.Section(h.global(), s))
	}
	want := []string{"neg", PersonaPrefixSection, "B", "a", "b", "half", "x\U0001F600", "x\uFF5E", PersonaSuffixSection}
	if got := sectionNames(h.assemble(nil)); !slices.Equal(got, want) {
		t.Fatalf("order = %q, want %q", got, want)
	}
}

func TestPersonaPrefixAndSuffixFrameToolGuidance(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PersonaPrefix = "PREFIX"
	cfg.PersonaSuffix = "SUFFIX"
	h := mount(t, cfg)
	for _, s := range []Section{
		{Name: "harness:source", Order: SectionOrder(OrderHarnessSource), Text: "source"},
		{Name: "tool:read", Order: SectionOrder(OrderToolRead), Text: "read"},
		{Name: "tool:bash", Order: SectionOrder(OrderToolBash), Text: "bash"},
		{Name: "plan:policy", Order: SectionOrder(OrderPlanPolicy), Text: "plan"},
	} {
		h.must(h.svc.Section(h.global(), s))
	}
	want := strings.Join([]string{IdentityText, "PREFIX", "plan", "bash", "read", "source", "SUFFIX"}, "\n\n")
	if got := h.render(nil); got != want {
		t.Fatalf("render = %q, want %q", got, want)
	}
}

func TestScopedSectionShadowsGlobalForThatScopeOnly(t *testing.T) {
	cfg := bare()
	cfg.PersonaPrefix = "You are the deployment."
	h := mount(t, cfg)
	child := h.scope("child", nil)
	hidden := h.scope("hidden", nil)
	h.must(h.svc.Section(child.Context(), Section{Name: PersonaPrefixSection, Text: "You run tests."}))
	h.must(h.svc.Section(hidden.Context(), Section{Name: PersonaPrefixSection}))

	if got := h.render(child.ID()); got != "You run tests." {
		t.Fatalf("scoped = %q", got)
	}
	if got := h.render(hidden.ID()); got != "" {
		t.Fatalf("empty scoped persona should hide the deployment one, got %q", got)
	}
	if got := h.render(nil); got != "You are the deployment." {
		t.Fatalf("global = %q", got)
	}
	grandchild := core.NewScopeID("grandchild", child.ID())
	if got := h.render(grandchild); got != "You run tests." {
		t.Fatalf("descendant scope should inherit the shadow, got %q", got)
	}
	if err := child.Dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := h.render(child.ID()); got != "You are the deployment." {
		t.Fatalf("after scope disposal = %q", got)
	}
	h.svc.mu.Lock()
	layers := len(h.svc.ls.scoped)
	h.svc.mu.Unlock()
	if layers != 1 {
		t.Fatalf("disposed scope's layer not released: %d scoped layers", layers)
	}
}

func TestShadowedTextProviderIsNeverCalled(t *testing.T) {
	h := mount(t, bare())
	sc := h.scope("child", nil)
	var globalCalls, scopedCalls atomic.Int32
	h.must(h.svc.Section(h.global(), Section{Name: "shared", TextFunc: func(context.Context, AssembleContext) (string, error) {
		globalCalls.Add(1)
		return "global", nil
	}}))
	h.must(h.svc.Section(sc.Context(), Section{Name: "shared", TextFunc: func(context.Context, AssembleContext) (string, error) {
		scopedCalls.Add(1)
		return "scoped", nil
	}}))
	if got := h.render(sc.ID()); got != "scoped" {
		t.Fatalf("render = %q", got)
	}
	if globalCalls.Load() != 0 || scopedCalls.Load() != 1 {
		t.Fatalf("calls: global %d scoped %d", globalCalls.Load(), scopedCalls.Load())
	}
}

func TestVariablesShadowAndEvaluateEveryProvider(t *testing.T) {
	cfg := bare()
	cfg.PersonaPrefix = "Mode: {{mode}}."
	h := mount(t, cfg)
	sc := h.scope("child", nil)
	var globalCalls atomic.Int32
	h.must(h.svc.Variable(h.global(), "mode", func(context.Context, AssembleContext) (string, bool) {
		globalCalls.Add(1)
		return "normal", true
	}))
	h.must(h.svc.Variable(sc.Context(), "mode", value("strict")))
	if got := h.render(sc.ID()); got != "Mode: strict." {
		t.Fatalf("scoped = %q", got)
	}
	if got := h.render(nil); got != "Mode: normal." {
		t.Fatalf("global = %q", got)
	}
	if globalCalls.Load() != 2 {
		t.Fatalf("a shadowed global variable provider is still evaluated: calls = %d", globalCalls.Load())
	}
}

func TestVariableFailures(t *testing.T) {
	cfg := bare()
	cfg.PersonaSuffix = "in {{cwd}}"
	h := mount(t, cfg)
	sc := h.scope("child", nil)

	_, err := h.svc.Variable(h.global(), "Bad-Name", value("x"))
	if want := `invalid prompt variable name "Bad-Name" (must match /^[a-z][a-z0-9_]*$/)`; err == nil || err.Error() != want {
		t.Fatalf("invalid name: %v", err)
	}
	if _, err := Render(h.assemble(nil)); err == nil ||
		err.Error() != `unknown prompt variable "{{cwd}}" in section "deployment:persona-suffix"; registered variables: (none)` {
		t.Fatalf("unknown: %v", err)
	}
	h.must(h.svc.Variable(h.global(), "cwd", func(_ context.Context, ac AssembleContext) (string, bool) {
		dir, ok := ac.Agent.(string)
		return dir, ok
	}))
	h.must(h.svc.Variable(h.global(), "model", value("m")))
	_, err = h.svc.Variable(h.global(), "cwd", value("again"))
	if want := `prompt variable "cwd" is already registered (for a per-agent value, register through that agent's scoped context instead)`; err == nil || err.Error() != want {
		t.Fatalf("global duplicate: %v", err)
	}
	h.must(h.svc.Variable(sc.Context(), "cwd", value("/scoped")))
	_, err = h.svc.Variable(sc.Context(), "cwd", value("again"))
	if want := `prompt variable "cwd" is already registered in this scope`; err == nil || err.Error() != want {
		t.Fatalf("scoped duplicate: %v", err)
	}
	_, err = Render(h.assemble(nil))
	if want := `prompt variable "{{cwd}}" has no value for this assembly (section "deployment:persona-suffix")`; err == nil || err.Error() != want || !errors.Is(err, ErrNoValue) {
		t.Fatalf("no value: %v", err)
	}
	a, err := h.svc.Assemble(context.Background(), AssembleContext{Agent: "/work"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := Render(a); got != "in /work" {
		t.Fatalf("agent value = %q", got)
	}
	if got := h.render(sc.ID()); got != "in /scoped" {
		t.Fatalf("scoped value = %q", got)
	}
	h.must(h.svc.Variable(h.global(), "boom", func(context.Context, AssembleContext) (string, bool) { panic("provider bug") }))
	if v := h.assemble(nil).Variables["boom"]; v.Set {
		t.Fatalf("a panicking provider must yield no value, got %+v", v)
	}
	if !strings.Contains(h.logs.String(), "provider bug") {
		t.Fatalf("panic not logged: %s", h.logs.String())
	}
}

func TestRegistrationErrors(t *testing.T) {
	h := mount(t, bare())
	sc := h.scope("child", nil)
	h.must(h.svc.Section(h.global(), Section{Name: "dup", Text: "first"}))
	h.must(h.svc.Context(h.global(), PromptContext{Name: "dupc", Text: "first"}))
	h.must(h.svc.Section(sc.Context(), Section{Name: "sdup", Text: "first"}))
	cases := []struct {
		name string
		do   func() (func(), error)
		want string
	}{
		{"NaN order", func() (func(), error) { return h.svc.Section(h.global(), Section{Name: "n", Order: math.NaN()}) },
			`prompt section "n" order must be a finite number`},
		{"infinite order", func() (func(), error) { return h.svc.Section(h.global(), Section{Name: "i", Order: math.Inf(1)}) },
			`prompt section "i" order must be a finite number`},
		{"unknown order slot", func() (func(), error) {
			return h.svc.Section(h.global(), Section{Name: "u", Order: SectionOrder("tool-nope")})
		}, `prompt section "u" order must be a finite number`},
		{"context order", func() (func(), error) {
			return h.svc.Context(h.global(), PromptContext{Name: "c", Order: math.Inf(-1)})
		},
			`prompt context "c" order must be a finite number`},
		{"empty name", func() (func(), error) { return h.svc.Section(h.global(), Section{Text: "x"}) },
			`prompt section name must not be empty`},
		{"text and func", func() (func(), error) {
			return h.svc.Section(h.global(), Section{Name: "tf", Text: "x", TextFunc: static("y")})
		}, `prompt section "tf": Text and TextFunc are exclusive`},
		{"global duplicate section", func() (func(), error) { return h.svc.Section(h.global(), Section{Name: "dup", Text: "second"}) },
			`prompt section "dup" is already registered (for a per-agent override, register through that agent's scoped context instead)`},
		{"global duplicate context", func() (func(), error) { return h.svc.Context(h.global(), PromptContext{Name: "dupc"}) },
			`prompt context "dupc" is already registered (for a per-agent override, register through that agent's scoped context instead)`},
		{"scoped duplicate section", func() (func(), error) { return h.svc.Section(sc.Context(), Section{Name: "sdup"}) },
			`prompt section "sdup" is already registered in this scope`},
		{"nil tool provider", func() (func(), error) { return h.svc.Tools(h.global(), nil) },
			`prompt tool provider must not be nil`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.do(); err == nil || !strings.HasSuffix(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %s", err, tc.want)
			}
		})
	}
	// The failed registrations leaked nothing.
	if got := h.render(nil); got != "first" {
		t.Fatalf("render after failures = %q", got)
	}
}

func TestStaticSectionTemplateIsCheckedAtRegistration(t *testing.T) {
	h := mount(t, bare())
	sc := h.scope("child", nil)
	h.must(h.svc.Variable(h.global(), "date", value("2026-01-01")))
	h.must(h.svc.Variable(sc.Context(), "who", value("tester")))

	_, err := h.svc.Section(h.global(), Section{Name: "extra", Text: "Bad ref {{datee}}"})
	if want := `unknown prompt variable "{{datee}}" in section "extra"; registered variables: date`; err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
	var ref *ReferenceError
	if !errors.As(err, &ref) || ref.Owner != "extra" || ref.Variable != "datee" {
		t.Fatalf("error does not name section and variable: %#v", err)
	}
	_, err = h.svc.Section(h.global(), Section{Name: "global-uses-scoped", Text: "{{who}}"})
	if !errors.Is(err, ErrUnknownVariable) {
		t.Fatalf("a global template cannot see a scoped variable: %v", err)
	}
	_, err = h.svc.Section(h.global(), Section{Name: "malformed", Text: "{{ date }}"})
	if !errors.Is(err, ErrMalformedReference) {
		t.Fatalf("malformed: %v", err)
	}
	h.must(h.svc.Section(sc.Context(), Section{Name: "scoped-uses-both", Text: "{{who}} on {{date}}"}))
	h.must(h.svc.Section(h.global(), Section{Name: "literal", Text: "{{datee}} {{ x }}", Interpolate: InterpolateOff}))
	h.must(h.svc.Section(h.global(), Section{Name: "dynamic", TextFunc: static("{{datee}}")}))
	if got, want := h.render(sc.ID()), "{{datee}}\n\n{{datee}} {{ x }}\n\ntester on 2026-01-01"; got != want {
		t.Fatalf("render = %q, want %q", got, want)
	}
}

func TestInterpolationModes(t *testing.T) {
	h := mount(t, bare())
	h.must(h.svc.Variable(h.global(), "model", value("m1")))
	h.must(h.svc.Section(h.global(), Section{Name: "a", Order: 1, Text: "static {{model}}"}))
	h.must(h.svc.Section(h.global(), Section{Name: "b", Order: 2, Text: "off {{model}}", Interpolate: InterpolateOff}))
	h.must(h.svc.Section(h.global(), Section{Name: "c", Order: 3, TextFunc: static("func {{model}}")}))
	h.must(h.svc.Section(h.global(), Section{Name: "d", Order: 4, TextFunc: static("func on {{model}}"), Interpolate: InterpolateOn}))
	a := h.assemble(nil)
	var flags []bool
	for _, s := range a.Sections[1:5] {
		flags = append(flags, s.Interpolate)
	}
	if want := []bool{true, false, false, true}; !slices.Equal(flags, want) {
		t.Fatalf("interpolate flags = %v, want %v", flags, want)
	}
	if got, want := h.render(nil), "static m1\n\noff {{model}}\n\nfunc {{model}}\n\nfunc on m1"; got != want {
		t.Fatalf("render = %q, want %q", got, want)
	}
}

func TestCompleteSectionIsRestoredAfterWaterfallEdit(t *testing.T) {
	h := mount(t, DefaultConfig())
	h.must(h.svc.Section(h.global(), Section{Name: "guide", Order: 5, Text: "guidance"}))
	h.must(h.svc.Section(h.global(), Section{Name: "whole", Order: 50, Text: "The whole prompt.", Complete: true}))
	h.must(h.svc.Context(h.global(), PromptContext{Name: "ctx", Text: "fact"}))
	h.must(h.svc.Tools(h.global(), StaticTools(schemas("echo"))))
	_, err := h.plugin(func(c *core.Context, _ *Service) error {
		return core.On(c, AssembleEvent, func(ctx context.Context, in AssembleInput, next core.Next[AssembleInput, *Assembly]) (*Assembly, error) {
			for i := range in.Assembly.Sections {
				in.Assembly.Sections[i].Text = "EDITED"
			}
			in.Assembly.Sections = append(in.Assembly.Sections, AssembledSection{Name: "late", Text: "late"})
			in.Assembly.Contexts = append(in.Assembly.Contexts, AssembledContext{Name: "late-ctx", Text: "kept"})
			return next(ctx, in)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	a := h.assemble(nil)
	if want := []AssembledSection{{Name: "whole", Order: 50, Text: "The whole prompt.", Interpolate: true}}; !slices.Equal(a.Sections, want) {
		t.Fatalf("sections = %+v", a.Sections)
	}
	if len(a.Contexts) != 2 || a.Contexts[1].Name != "late-ctx" || len(a.Tools) != 1 {
		t.Fatalf("contexts/tools must survive: %+v %+v", a.Contexts, a.Tools)
	}
}

func TestMoreThanOneEffectiveCompleteSectionIsRejected(t *testing.T) {
	h := mount(t, bare())
	sc := h.scope("child", nil)
	h.must(h.svc.Section(h.global(), Section{Name: "b", Order: 1, Complete: true}))
	h.must(h.svc.Section(h.global(), Section{Name: "a", Order: 1, Complete: true}))
	_, err := h.svc.Assemble(context.Background(), AssembleContext{})
	if want := `multiple complete prompt sections are active: "a", "b"`; err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
	// Shadowing counts: the scope replaces "a" with a non-complete section.
	h.must(h.svc.Section(sc.Context(), Section{Name: "a", Order: 1, Text: "plain"}))
	if got := sectionNames(h.assemble(sc.ID())); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("scoped sections = %q", got)
	}
}

func TestToolsAreAdditiveOrderedAndCopied(t *testing.T) {
	cfg := bare()
	cfg.ToolOrder = []string{"read", ToolOrderRest, "bash"}
	h := mount(t, cfg)
	sc := h.scope("child", nil)
	global := StaticTools{{Name: "bash", Parameters: json.RawMessage(`{"type":"object"}`)}, {Name: "read"}, {Name: "grep"}}
	h.must(h.svc.Tools(h.global(), global))
	h.must(h.svc.Tools(sc.Context(), StaticTools(schemas("agent_tool"))))
	if got := toolNames(h.assemble(nil).Tools); !slices.Equal(got, []string{"read", "grep", "bash"}) {
		t.Fatalf("global tools = %q", got)
	}
	a := h.assemble(sc.ID())
	if got := toolNames(a.Tools); !slices.Equal(got, []string{"read", "agent_tool", "grep", "bash"}) {
		t.Fatalf("scoped tools = %q", got)
	}
	a.Tools[3].Parameters[2] = 'X'
	if string(global[0].Parameters) != `{"type":"object"}` {
		t.Fatalf("assembly aliases provider bytes: %s", global[0].Parameters)
	}
}

type hiddenTools struct{ StaticTools }

func (hiddenTools) KnownNames(context.Context, *core.ScopeID) ([]string, error) {
	return []string{"read", "bash"}, nil
}

type failingTools struct{}

func (failingTools) Schemas(context.Context, *core.ScopeID) ([]ToolSchema, error) {
	return nil, errors.New("registry closed")
}
func (failingTools) KnownNames(context.Context, *core.ScopeID) ([]string, error) { return nil, nil }

func TestToolOrderErrors(t *testing.T) {
	cfg := bare()
	cfg.ToolOrder = []string{"bash"}
	if err := cfg.Validate(); err == nil ||
		err.Error() != `toolOrder must contain the "<unlisted-tools>" rest entry (where unlisted tools are inserted)` {
		t.Fatalf("validate: %v", err)
	}
	f := core.NewRoot(core.WithLogger(slog.New(slog.DiscardHandler))).Context().Plugin(Plugin, &cfg)
	if err := f.Await(context.Background()); err == nil || !strings.Contains(err.Error(), `"<unlisted-tools>" rest entry`) {
		t.Fatalf("plugin with bad toolOrder: %v (state %v)", err, f.State())
	}
	_ = f.Dispose(context.Background())

	cfg.ToolOrder = []string{"bash", "nope", ToolOrderRest, "gone"}
	h := mount(t, cfg)
	h.must(h.svc.Tools(h.global(), hiddenTools{StaticTools(schemas("read"))}))
	_, err := h.svc.Assemble(context.Background(), AssembleContext{})
	if want := `toolOrder lists unregistered tools "nope", "gone"; known tools: bash, read`; err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}

	h2 := mount(t, bare())
	h2.must(h2.svc.Tools(h2.global(), StaticTools(schemas(ToolOrderRest))))
	if _, err := h2.svc.Assemble(context.Background(), AssembleContext{}); err == nil || !strings.Contains(err.Error(), "reserved tool name") {
		t.Fatalf("reserved: %v", err)
	}
	h3 := mount(t, bare())
	h3.must(h3.svc.Tools(h3.global(), failingTools{}))
	if _, err := h3.svc.Assemble(context.Background(), AssembleContext{}); err == nil || err.Error() != "prompt tool provider: registry closed" {
		t.Fatalf("failing provider: %v", err)
	}
}

func TestRuntimeContextSuppression(t *testing.T) {
	cfg := bare()
	cfg.IncludeRuntimeContext = false
	h := mount(t, cfg)
	var calls atomic.Int32
	h.must(h.svc.Context(h.global(), PromptContext{Name: "policy", TextFunc: func(context.Context, AssembleContext) (string, error) {
		calls.Add(1)
		return "policy", nil
	}}))
	_, err := h.plugin(func(c *core.Context, _ *Service) error {
		return core.On(c, AssembleEvent, func(ctx context.Context, in AssembleInput, next core.Next[AssembleInput, *Assembly]) (*Assembly, error) {
			in.Assembly.Contexts = append(in.Assembly.Contexts, AssembledContext{Name: "late", Text: "late"})
			return next(ctx, in)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if a := h.assemble(nil); len(a.Contexts) != 0 || calls.Load() != 0 {
		t.Fatalf("contexts = %+v, provider calls = %d", a.Contexts, calls.Load())
	}

	h2 := mount(t, bare())
	sc := h2.scope("quiet", nil)
	h2.must(h2.svc.Context(h2.global(), PromptContext{Name: "b", Order: 2, Text: "second"}))
	h2.must(h2.svc.Context(h2.global(), PromptContext{Name: "a", Order: 2, Text: "first"}))
	dispose, err := h2.svc.SuppressRuntimeContext(sc.Context())
	if err != nil {
		t.Fatal(err)
	}
	if a := h2.assemble(sc.ID()); len(a.Contexts) != 0 {
		t.Fatalf("scoped suppressor: %+v", a.Contexts)
	}
	snap, err := RenderContextSnapshot(h2.assemble(nil))
	if want := ContextSnapshotHeader + "\n\nfirst\n\nsecond"; err != nil || snap != want {
		t.Fatalf("global snapshot = %q, %v", snap, err)
	}
	dispose()
	dispose()
	if a := h2.assemble(sc.ID()); len(a.Contexts) != 2 {
		t.Fatalf("after disposing the suppressor: %+v", a.Contexts)
	}
}

func TestAssembleWaterfallIsScoped(t *testing.T) {
	h := mount(t, bare())
	sc := h.scope("agent", nil)
	other := h.scope("other", nil)
	var seen []string
	var mu sync.Mutex
	listen := func(tag string) func(context.Context, AssembleInput, core.Next[AssembleInput, *Assembly]) (*Assembly, error) {
		return func(ctx context.Context, in AssembleInput, next core.Next[AssembleInput, *Assembly]) (*Assembly, error) {
			mu.Lock()
			seen = append(seen, tag)
			mu.Unlock()
			return next(ctx, in)
		}
	}
	if err := core.On(sc.Context(), AssembleEvent, listen("scoped")); err != nil {
		t.Fatal(err)
	}
	if err := core.On(h.global(), AssembleEvent, listen("global")); err != nil {
		t.Fatal(err)
	}
	h.assemble(nil)
	h.assemble(other.ID())
	h.assemble(sc.ID())
	if want := []string{"global", "global", "scoped", "global"}; !slices.Equal(seen, want) {
		t.Fatalf("seen = %q, want %q", seen, want)
	}
}

func TestWaterfallErrorFailsAssembly(t *testing.T) {
	h := mount(t, bare())
	_, err := h.plugin(func(c *core.Context, _ *Service) error {
		return core.On(c, AssembleEvent, func(context.Context, AssembleInput, core.Next[AssembleInput, *Assembly]) (*Assembly, error) {
			panic("policy bug")
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	var pe *core.PanicError
	if _, err := h.svc.Assemble(context.Background(), AssembleContext{}); !errors.As(err, &pe) {
		t.Fatalf("err = %v", err)
	}
}

func TestInvariantsAfterWaterfall(t *testing.T) {
	h := mount(t, bare())
	_, err := h.plugin(func(c *core.Context, _ *Service) error {
		return core.On(c, AssembleEvent, func(ctx context.Context, in AssembleInput, next core.Next[AssembleInput, *Assembly]) (*Assembly, error) {
			in.Assembly.Sections = append(in.Assembly.Sections, AssembledSection{Name: PersonaPrefixSection})
			return next(ctx, in)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.svc.Assemble(context.Background(), AssembleContext{})
	if want := `system-prompt/assemble: assembled section name "deployment:persona-prefix" is duplicated`; err == nil || err.Error() != want {
		t.Fatalf("err = %v", err)
	}
}

func TestAssembleReturnsFreshValues(t *testing.T) {
	h := mount(t, bare())
	h.must(h.svc.Variable(h.global(), "v", value("1")))
	h.must(h.svc.Section(h.global(), Section{Name: "s", Text: "x"}))
	a := h.assemble(nil)
	a.Sections[0].Text = "mutated"
	a.Variables["v"] = Variable{Value: "mutated", Set: true}
	a.Sections = a.Sections[:0]
	b := h.assemble(nil)
	if b.Sections[1].Text != "x" || b.Variables["v"].Value != "1" {
		t.Fatalf("mutation leaked: %+v", b)
	}
}

func TestFailingSectionProviderFailsAssembly(t *testing.T) {
	h := mount(t, bare())
	h.must(h.svc.Section(h.global(), Section{Name: "s", TextFunc: func(context.Context, AssembleContext) (string, error) {
		return "", errors.New("disk gone")
	}}))
	if _, err := h.svc.Assemble(context.Background(), AssembleContext{}); err == nil || err.Error() != `prompt section "s": disk gone` {
		t.Fatalf("err = %v", err)
	}
}

func TestDisposingTheFiberRemovesItsContributions(t *testing.T) {
	h := mount(t, bare())
	f, err := h.plugin(func(c *core.Context, s *Service) error {
		if _, err := s.Variable(c, "v", value("1")); err != nil {
			return err
		}
		if _, err := s.Section(c, Section{Name: "s", Text: "v={{v}}"}); err != nil {
			return err
		}
		if _, err := s.Context(c, PromptContext{Name: "c", Text: "ctx"}); err != nil {
			return err
		}
		_, err := s.Tools(c, StaticTools(schemas("t")))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	a := h.assemble(nil)
	if len(a.Sections) != 3 || len(a.Contexts) != 1 || len(a.Tools) != 1 || len(a.Variables) != 1 {
		t.Fatalf("before: %+v", a)
	}
	if err := f.Dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	a = h.assemble(nil)
	if len(a.Sections) != 2 || len(a.Contexts) != 0 || len(a.Tools) != 0 || len(a.Variables) != 0 {
		t.Fatalf("after: %+v", a)
	}
}

func TestChangeEventAndRollback(t *testing.T) {
	h := mount(t, bare())
	var changes []Change
	var mu sync.Mutex
	fail := atomic.Bool{}
	if err := core.On(h.global(), ChangeEvent, func(_ context.Context, ch Change) (struct{}, bool, error) {
		mu.Lock()
		changes = append(changes, ch)
		mu.Unlock()
		if fail.Load() {
			return struct{}{}, false, errors.New("listener refuses")
		}
		return struct{}{}, false, nil
	}); err != nil {
		t.Fatal(err)
	}
	dispose, err := h.svc.Section(h.global(), Section{Name: "s", Text: "x"})
	if err != nil {
		t.Fatal(err)
	}
	dispose()
	fail.Store(true)
	_, err = h.svc.Variable(h.global(), "v", value("1"))
	if err == nil || !strings.Contains(err.Error(), "listener refuses") {
		t.Fatalf("err = %v", err)
	}
	if _, ok := h.assemble(nil).Variables["v"]; ok {
		t.Fatal("a failing change listener must roll the registration back")
	}
	want := []Change{
		{Kind: ChangeSection, Name: "s"},
		{Kind: ChangeSection, Name: "s", Removed: true},
		{Kind: ChangeVariable, Name: "v"},
	}
	if !slices.Equal(changes, want) {
		t.Fatalf("changes = %+v, want %+v", changes, want)
	}
}

func TestConfigValidatesPersonaSyntax(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PersonaSuffix = "dir {{ cwd }}"
	err := cfg.Validate()
	want := `personaSuffix: malformed prompt variable reference "{{ cwd }}" in section "deployment:persona-suffix" (variable names match /^[a-z][a-z0-9_]*$/)`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v", err)
	}
	cfg.PersonaSuffix = "dir {{cwd}} and a lone {{ brace"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestAssembleWithDoneContextFails(t *testing.T) {
	h := mount(t, bare())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.svc.Assemble(ctx, AssembleContext{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestSuppressorsComposeAndDisposeIndependently(t *testing.T) {
	h := mount(t, bare())
	h.must(h.svc.Context(h.global(), PromptContext{Name: "c", Text: "fact"}))
	d1, err := h.svc.SuppressRuntimeContext(h.global())
	if err != nil {
		t.Fatal(err)
	}
	d2, err := h.svc.SuppressRuntimeContext(h.global())
	if err != nil {
		t.Fatal(err)
	}
	d1()
	d1()
	if a := h.assemble(nil); len(a.Contexts) != 0 {
		t.Fatalf("one suppressor left, contexts = %+v", a.Contexts)
	}
	d2()
	if a := h.assemble(nil); len(a.Contexts) != 1 {
		t.Fatalf("no suppressor left, contexts = %+v", a.Contexts)
	}
}

func TestWaterfallResultIsAuthoritativeAndNotResorted(t *testing.T) {
	h := mount(t, bare())
	sc := h.scope("agent", nil)
	h.must(h.svc.Section(h.global(), Section{Name: "b", Order: 10, Text: "B"}))
	if err := core.On(h.global(), AssembleEvent, func(ctx context.Context, in AssembleInput, next core.Next[AssembleInput, *Assembly]) (*Assembly, error) {
		in.Assembly.Sections = append(in.Assembly.Sections, AssembledSection{Name: "early", Order: -50, Text: "appended"})
		return next(ctx, in)
	}); err != nil {
		t.Fatal(err)
	}
	if err := core.On(sc.Context(), AssembleEvent, func(context.Context, AssembleInput, core.Next[AssembleInput, *Assembly]) (*Assembly, error) {
		return &Assembly{Sections: []AssembledSection{{Name: "only", Text: "replaced {{x}}"}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := h.render(nil); got != "B\n\nappended" {
		t.Fatalf("global = %q", got)
	}
	if got := h.render(sc.ID()); got != "replaced {{x}}" {
		t.Fatalf("short-circuited scope = %q", got)
	}
}

func TestConcurrentRegistrationAndAssembly(t *testing.T) {
	h := mount(t, DefaultConfig())
	sc := h.scope("agent", nil)
	h.must(h.svc.Variable(h.global(), "v", value("1")))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 50 {
				c := h.global()
				if i%2 == 0 {
					c = sc.Context()
				}
				dispose, err := h.svc.Section(c, Section{Name: fmt.Sprintf("s-%d-%d", g, i), Order: float64(i), Text: "x {{v}}"})
				if err != nil {
					t.Error(err)
					return
				}
				dispose()
			}
		}()
		go func() {
			defer wg.Done()
			for range 50 {
				a, err := h.svc.Assemble(context.Background(), AssembleContext{Scope: sc.ID()})
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := Render(a); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := sectionNames(h.assemble(sc.ID())); len(got) != 3 {
		t.Fatalf("left over sections: %q", got)
	}
}

func TestSnapshotCacheFollowsEveryChange(t *testing.T) {
	h := mount(t, bare())
	parent := h.scope("parent", nil)
	child := core.NewScopeID("child", parent.ID())
	if got := sectionNames(h.assemble(child)); len(got) != 2 {
		t.Fatalf("before: %q", got)
	}
	dispose, err := h.svc.Section(parent.Context(), Section{Name: "p", Order: 5, Text: "P"})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.render(child); got != "P" {
		t.Fatalf("after registration: %q", got)
	}
	if got := h.render(nil); got != "" {
		t.Fatalf("global after scoped registration: %q", got)
	}
	dispose()
	if got := h.render(child); got != "" {
		t.Fatalf("after dispose: %q", got)
	}
}

type routedAgent string

func (r routedAgent) ModelRoute() string { return string(r) }

// The identity line names the route the assembly's agent reports, verbatim
// (a route is data, not a template), and no model without one.
func TestIdentityLineNamesTheAgentsRouteVerbatim(t *testing.T) {
	h := mount(t, DefaultConfig())
	for agent, want := range map[any]string{
		routedAgent("local/my-{{model}}"): "You are an AI agent running in harness, using the model local/my-{{model}}.",
		routedAgent(""):                   "You are an AI agent running in harness.",
		"not a router":                    "You are an AI agent running in harness.",
	} {
		a, err := h.svc.Assemble(context.Background(), AssembleContext{Agent: agent})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Render(a); err != nil || got != want {
			t.Errorf("agent %#v: render = %q, %v; want %q", agent, got, err, want)
		}
	}
}
