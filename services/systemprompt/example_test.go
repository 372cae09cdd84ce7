package systemprompt_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/systemprompt"
)

// A plugin contributes a guidance section and a variable; the agent loop
// assembles and renders the prompt for each step.
func Example() {
	root := core.NewRoot(core.WithLogger(slog.New(slog.DiscardHandler)))
	defer func() { _ = root.Dispose(context.Background()) }()

	cfg := systemprompt.DefaultConfig()
	cfg.PersonaPrefix = "You are a careful engineer."
	cfg.PersonaSuffix = "Working directory: {{cwd}}"
	_ = root.Context().Plugin(systemprompt.Plugin, &cfg).Await(context.Background())

	guidance := core.Define("tool-guidance", func(c *core.Context, _ struct{}) error {
		prompt := core.Use(c, systemprompt.Key)
		if _, err := prompt.Variable(c, "cwd", func(context.Context, systemprompt.AssembleContext) (string, bool) {
			return "/srv/app", true
		}); err != nil {
			return err
		}
		_, err := prompt.Section(c, systemprompt.Section{
			Name:  "tool:bash",
			Order: systemprompt.SectionOrder(systemprompt.OrderToolBash),
			Text:  "Run commands with bash; quote paths.",
		})
		return err
	}, core.WithInject(systemprompt.Key.Name()))
	_ = root.Context().Plugin(guidance, nil).Await(context.Background())

	prompt, _ := core.Lookup(root.Context(), systemprompt.Key)
	assembly, err := prompt.Assemble(context.Background(), systemprompt.AssembleContext{})
	if err != nil {
		fmt.Println(err)
		return
	}
	text, err := systemprompt.Render(assembly)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(text)
	// Output:
	// You are an AI agent running in harness.
	//
	// You are a careful engineer.
	//
	// Run commands with bash; quote paths.
	//
	// Working directory: /srv/app
}
