package systemprompt

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
)

// B27: literal {{…}} in runtime data must not break assembly, and a bad
// reference in a static section is caught at registration, not per turn.
func TestB27LiteralBracesInRuntimeDataNeverBreakAssembly(t *testing.T) {
	cfg := bare()
	cfg.PersonaPrefix = "You are {{model}} working in {{cwd}}."
	h := mount(t, cfg)
	h.must(h.svc.Variable(h.global(), "model", value("deepseek-chat")))
	h.must(h.svc.Variable(h.global(), "cwd", value("/srv/{{date}}")))
	h.must(h.svc.Variable(h.global(), "date", value("2026-01-01")))
	h.must(h.svc.Section(h.global(), Section{Name: "rules", Order: 100, Text: "Today is {{date}}."}))
	memory := `note: docker version --format "{{.Server.Version}}"; wiki {{hl|x}}; empty {{}}; han {{变量}}; spaced {{ model }}; tpl {{model}}`
	h.must(h.svc.Context(h.global(), PromptContext{Name: "memory", Order: 10, TextFunc: static(memory)}))
	h.must(h.svc.Context(h.global(), PromptContext{Name: "static-memory", Order: 20, Text: memory}))
	h.must(h.svc.Context(h.global(), PromptContext{Name: "flaky", Order: 5, TextFunc: func(context.Context, AssembleContext) (string, error) {
		return "", errors.New("memory store unreachable")
	}}))
	h.must(h.svc.Context(h.global(), PromptContext{Name: "crashy", Order: 6, TextFunc: func(context.Context, AssembleContext) (string, error) {
		panic("memory plugin bug")
	}}))

	// The second run registers a section with an unknown variable: it is
	// rejected right there, naming the section and the variable.
	_, err := h.plugin(func(c *core.Context, s *Service) error {
		_, err := s.Section(c, Section{Name: "extra", Order: 200, Text: "Bad ref {{datee}}"})
		return err
	})
	var ref *ReferenceError
	if !errors.As(err, &ref) || ref.Owner != "extra" || ref.Variable != "datee" ||
		!strings.Contains(err.Error(), `unknown prompt variable "{{datee}}" in section "extra"`) {
		t.Fatalf("registration of the bad section: %v", err)
	}

	for turn := 1; turn <= 2; turn++ {
		a, err := h.svc.Assemble(context.Background(), AssembleContext{})
		if err != nil {
			t.Fatalf("turn %d assemble: %v", turn, err)
		}
		prompt, err := Render(a)
		if err != nil {
			t.Fatalf("turn %d render: %v", turn, err)
		}
		if want := "You are deepseek-chat working in /srv/{{date}}.\n\nToday is 2026-01-01."; prompt != want {
			t.Fatalf("turn %d prompt = %q, want %q", turn, prompt, want)
		}
		snap, err := RenderContextSnapshot(a)
		if err != nil {
			t.Fatalf("turn %d context snapshot: %v", turn, err)
		}
		if want := ContextSnapshotHeader + "\n\n" + memory + "\n\n" + memory; snap != want {
			t.Fatalf("turn %d snapshot = %q, want %q", turn, snap, want)
		}
	}
	logs := h.logs.String()
	for _, want := range []string{"context=flaky", "memory store unreachable", "context=crashy", "memory plugin bug"} {
		if !strings.Contains(logs, want) {
			t.Errorf("warning log lacks %q:\n%s", want, logs)
		}
	}
}
