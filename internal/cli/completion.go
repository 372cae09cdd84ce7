package cli

import (
	"context"
	"slices"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/services/sessions"
)

// maxCompletedSessions bounds the session ids offered by completion.
const maxCompletedSessions = 50

// registerCompletions adds value completion for the shared agent flags of
// cmd: --model (the manifest's routes), --session and --fork (stored
// session ids, newest first).
func registerCompletions(env *Env, cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc("model", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return modelRoutes(env), cobra.ShellCompDirectiveNoFileComp
	})
	ids := func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return sessionIDs(env), cobra.ShellCompDirectiveNoFileComp
	}
	_ = cmd.RegisterFlagCompletionFunc("session", ids)
	_ = cmd.RegisterFlagCompletionFunc("fork", ids)
}

// outputCompletion completes -o/--output.
func outputCompletion(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return []cobra.Completion{
		cobra.CompletionWithDesc(OutputText, "the answer on stdout, tool lines on stderr"),
		cobra.CompletionWithDesc(OutputJSON, "one result object at the end"),
		cobra.CompletionWithDesc(OutputStreamJSON, "one JSON event per line"),
	}, cobra.ShellCompDirectiveNoFileComp
}

// modelRoute is the part of a model provider row's config that names
// routes (llm-openai's shape: provider, models with aliases).
type modelRoute struct {
	Provider string `yaml:"provider"`
	Models   []struct {
		Name    string `yaml:"name"`
		Default bool   `yaml:"default"`
		Aliases []struct {
			Name string `yaml:"name"`
		} `yaml:"aliases"`
	} `yaml:"models"`
}

// modelRoutes lists the routes the manifest's enabled provider rows
// declare: PROVIDER (its default model), PROVIDER/MODEL and PROVIDER/ALIAS,
// in manifest order. Nothing is started; a manifest that does not load
// completes nothing.
func modelRoutes(env *Env) []cobra.Completion {
	m, err := env.LoadManifest()
	if err != nil {
		return nil
	}
	var out []cobra.Completion
	var walk func([]manifest.Entry)
	walk = func(rows []manifest.Entry) {
		for _, e := range rows {
			if e.Disabled {
				continue
			}
			if e.Group {
				walk(e.Children)
				continue
			}
			var r modelRoute
			if e.Config == nil || e.Config.Kind != yaml.MappingNode || e.Config.Decode(&r) != nil || r.Provider == "" || len(r.Models) == 0 {
				continue
			}
			def := ""
			for _, md := range r.Models {
				if md.Default {
					def = md.Name
				}
			}
			if def == "" {
				def = r.Models[0].Name
			}
			out = append(out, cobra.CompletionWithDesc(r.Provider, "default model "+def))
			for _, md := range r.Models {
				out = append(out, cobra.Completion(r.Provider+"/"+md.Name))
				for _, a := range md.Aliases {
					out = append(out, cobra.CompletionWithDesc(r.Provider+"/"+a.Name, "alias of "+md.Name))
				}
			}
		}
	}
	walk(m.Plugins)
	return slices.Compact(out)
}

// sessionIDs lists stored session ids, newest first, each with its first
// prompt as the description. Only the session store is started.
func sessionIDs(env *Env) []cobra.Completion {
	var out []cobra.Completion
	_ = withStore(env, func(ctx context.Context, store *sessions.Service) error {
		page, err := store.List(ctx, sessions.Query{Limit: maxCompletedSessions})
		if err != nil {
			return err
		}
		for _, s := range page.Sessions {
			out = append(out, cobra.CompletionWithDesc(s.ID, oneLine(clip(s.Title, 60))))
		}
		return nil
	})
	return out
}
