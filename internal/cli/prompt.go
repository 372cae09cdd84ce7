package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/core/loader"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tokenmeter"
	"github.com/spf13/cobra"
)

// promptCommand builds `harness prompt`.
func promptCommand(env *Env) *cobra.Command {
	var (
		asJSON bool
		scope  string
		vars   []string
	)
	cmd := &cobra.Command{
		Use:   "prompt",
		Short: "Print the rendered system prompt of the configured harness",
		Long: "prompt boots the configured harness, assembles the system prompt exactly as the agent loop does\n" +
			"for one step, renders it and prints it. --var name=value (repeatable) registers a prompt variable\n" +
			"that shadows a global one of the same name (for example --var cwd=/srv/app). --scope ID assembles\n" +
			"for a fresh scope labelled ID that carries the --var values. --json prints\n" +
			`{"sections":[{"name","order","tokens","text"}],"tools":[{"name","tokens"}],"totalTokens":N}` + "\n" +
			"with the non-empty rendered sections; token counts appear when a token meter is mounted.\n" +
			"A row that fails to apply (e.g. a model route without its API key) is skipped and named on\n" +
			"stderr, as are rows left pending; stdout carries only the prompt.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			values, err := parseVars(vars)
			if err != nil {
				return UsageError(err)
			}
			h, err := bootForPrompt(env)
			if err != nil {
				return err
			}
			out, perr := promptReport(env.Ctx, h.Root.Context(), scope, values)
			if err := h.Stop(context.Background()); err != nil && perr == nil {
				perr = Failure(fmt.Errorf("stopping: %w", err))
			}
			if perr != nil {
				return perr
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				return enc.Encode(out)
			}
			text := out.text
			if !strings.HasSuffix(text, "\n") {
				text += "\n" // the prompt as sent, plus a final newline only where it lacks one
			}
			_, err = io.WriteString(env.Stdout, text)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print sections, tools and token counts as JSON")
	cmd.Flags().StringVar(&scope, "scope", "", "assemble for a scope with this label")
	cmd.Flags().StringArrayVar(&vars, "var", nil, "prompt variable name=value (repeatable)")
	return cmd
}

// bootForPrompt boots the configured harness for `harness prompt`. The
// prompt does not need every row: a model route without its API key must
// not hide it. A row that fails to apply is disabled and the boot retried;
// it, and every row left failed or pending, is named on stderr. A failure of
// the systemprompt row itself, or any other kind of error, is returned.
func bootForPrompt(env *Env) (*fxcore.Harness, error) {
	m, err := env.LoadManifest()
	if err != nil {
		return nil, err
	}
	m = m.Clone()
	useManifest := bootOptionFunc(func(o *fxcore.Options) { o.Manifest = m })
	for {
		h, err := env.Boot(SkipAudit(), useManifest)
		if err == nil {
			awaitMCP(env.Ctx, h) // the prompt shows the servers' instructions and tools
			for _, r := range h.Loader.Status() {
				switch r.State {
				case "failed":
					if r.Name == systemprompt.Plugin.Name() {
						_ = h.Stop(context.Background())
						return nil, UsageError(fmt.Errorf("row %q (%s) failed: %s", r.ID, r.Name, r.Error))
					}
					fmt.Fprintf(env.Stderr, "harness: warning: row %q (%s) failed, its prompt contributions are missing: %s\n", r.ID, r.Name, r.Error)
				case "pending":
					fmt.Fprintf(env.Stderr, "harness: warning: row %q (%s) is pending on %s, its prompt contributions are missing\n", r.ID, r.Name, strings.Join(r.PendingOn, ", "))
				}
			}
			return h, nil
		}
		var ee *loader.EntryError
		if !errors.As(err, &ee) || ee.Stage != "apply" || ee.Name == systemprompt.Plugin.Name() || !disableRow(m.Plugins, ee.ID) {
			return nil, err
		}
		fmt.Fprintf(env.Stderr, "harness: warning: row %q (%s) skipped, its prompt contributions are missing: %v\n", ee.ID, ee.Name, ee.Err)
	}
}

// disableRow marks the enabled row id (searched through groups) disabled
// and reports whether it found one.
func disableRow(rows []manifest.Entry, id string) bool {
	for i := range rows {
		if rows[i].ID == id && !rows[i].Disabled && !rows[i].Group {
			rows[i].Disabled = true
			return true
		}
		if disableRow(rows[i].Children, id) {
			return true
		}
	}
	return false
}

// promptRoute is the AssembleContext.Agent of `harness prompt`: the route of
// the model a new session would use, so the identity line reads as it does
// in a run.
type promptRoute string

// ModelRoute implements systemprompt.ModelRouter.
func (r promptRoute) ModelRoute() string { return string(r) }

// promptModel returns the route a session opened with no --model would
// resolve (the agent row's model, else the llm default), or nil when the
// agent is not mounted or the route does not resolve (e.g. its row was
// skipped for a missing API key): the identity line then names no model.
func promptModel(root *core.Context) any {
	svc, ok := core.Lookup(root, agent.Key)
	if !ok || svc.LLM() == nil {
		return nil
	}
	m, err := svc.LLM().Resolve(svc.Config().Model)
	if err != nil {
		return nil
	}
	return promptRoute(m.Route())
}

// promptJSON is the --json shape of `harness prompt`.
type promptJSON struct {
	Sections    []promptSection `json:"sections"`
	Tools       []promptTool    `json:"tools"`
	TotalTokens *int            `json:"totalTokens,omitempty"`
	text        string
}

type promptSection struct {
	Name   string  `json:"name"`
	Order  float64 `json:"order"`
	Tokens *int    `json:"tokens,omitempty"`
	Text   string  `json:"text"`
}

type promptTool struct {
	Name   string `json:"name"`
	Tokens *int   `json:"tokens,omitempty"`
}

// parseVars turns name=value flags into a map; names are checked by the
// service when registered.
func parseVars(flags []string) (map[string]string, error) {
	out := make(map[string]string, len(flags))
	for _, f := range flags {
		name, value, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--var %q: want name=value", f)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--var %q: variable given twice", name)
		}
		out[name] = value
	}
	return out, nil
}

// promptReport assembles and renders the prompt for the given scope label
// with the --var values registered in that scope.
func promptReport(ctx context.Context, root *core.Context, scopeLabel string, vars map[string]string) (*promptJSON, error) {
	svc, ok := core.Lookup(root, systemprompt.Key)
	if !ok {
		return nil, UsageError(errors.New("the systemprompt plugin is not mounted: add a row with `name: systemprompt` to harness.yml"))
	}
	var id *core.ScopeID
	if scopeLabel != "" || len(vars) > 0 {
		label := scopeLabel
		if label == "" {
			label = "harness-prompt"
		}
		sc, err := core.NewScope(root, core.NewScopeID(label, nil))
		if err != nil {
			return nil, Failure(err)
		}
		defer func() { _ = sc.Dispose(context.Background()) }()
		id = sc.ID()
		for name, value := range vars {
			v := value
			if _, err := svc.Variable(sc.Context(), name, func(context.Context, systemprompt.AssembleContext) (string, bool) { return v, true }); err != nil {
				return nil, UsageError(fmt.Errorf("--var: %w", err))
			}
		}
	}
	a, err := svc.Assemble(ctx, systemprompt.AssembleContext{Scope: id, Agent: promptModel(root)})
	if err != nil {
		return nil, Failure(err)
	}
	sections, err := systemprompt.RenderSections(a)
	if err != nil {
		return nil, Failure(err)
	}
	counter := lookupTokenCounter(root)
	out := &promptJSON{Sections: make([]promptSection, 0, len(sections)), Tools: make([]promptTool, 0, len(a.Tools))}
	texts := make([]string, len(sections))
	for i, s := range sections {
		texts[i] = s.Text
		out.Sections = append(out.Sections, promptSection{Name: s.Name, Order: s.Order, Text: s.Text, Tokens: counter.text(s.Text)})
	}
	out.text = strings.Join(texts, "\n\n")
	for _, t := range a.Tools {
		out.Tools = append(out.Tools, promptTool{Name: t.Name, Tokens: counter.tool(t)})
	}
	out.TotalTokens = counter.total(out, a.Tools)
	return out, nil
}

// tokenCounter counts tokens for `harness prompt --json` with the token
// meter; the zero value (no meter mounted) counts nothing and the token
// fields are omitted.
type tokenCounter struct {
	meter *tokenmeter.Meter
}

// lookupTokenCounter finds the token meter when one is mounted.
func lookupTokenCounter(root *core.Context) tokenCounter {
	m, _ := core.Lookup(root, tokenmeter.Key)
	return tokenCounter{meter: m}
}

// text counts one section's text.
func (c tokenCounter) text(s string) *int {
	if c.meter == nil {
		return nil
	}
	n := c.meter.Count(s)
	return &n
}

// tool counts one tool's JSON schema as sent (without the tool block's
// fixed overhead, which totalTokens includes once).
func (c tokenCounter) tool(t systemprompt.ToolSchema) *int {
	if c.meter == nil {
		return nil
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // priced as the meter prices tool lists
	if err := enc.Encode(meterTool(t)); err != nil {
		return nil
	}
	n := c.meter.Count(strings.TrimSuffix(b.String(), "\n"))
	return &n
}

// total prices the request envelope: the rendered system prompt and the
// tool list, each with its block overhead, as the meter does for requests.
func (c tokenCounter) total(p *promptJSON, tools []systemprompt.ToolSchema) *int {
	if c.meter == nil {
		return nil
	}
	list := make([]tokenmeter.ToolSchema, len(tools))
	for i, t := range tools {
		list[i] = meterTool(t)
	}
	n := c.meter.CountSystem(p.text) + c.meter.CountTools(list)
	return &n
}

func meterTool(t systemprompt.ToolSchema) tokenmeter.ToolSchema {
	return tokenmeter.ToolSchema{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
}
