package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dshgo/harness/services/subagent"
)

// agentsCommand builds `harness agents`.
func agentsCommand(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "List the agent definitions the task tool offers (.harness/agents, .claude/agents, $XDG_CONFIG_HOME/harness/agents)",
		Long: "agents lists the subagent definitions found for the current directory: Markdown files with YAML\n" +
			"front matter (name, description, tools, model, provider; the body is the persona) in\n" +
			".harness/agents/, .claude/agents/ and $XDG_CONFIG_HOME/harness/agents/, in that precedence.\n" +
			"A bad file is reported as FILE:LINE: message and the command exits 2 after listing the good ones.\n" +
			"--json prints an array of {name, description, tools, model, provider, persona, path}.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			wd, err := env.Getwd()
			if err != nil {
				return Failure(err)
			}
			defs, lerr := subagent.LoadDefinitions(subagent.DefinitionDirs(wd, env.LookupEnv))
			if asJSON {
				if defs == nil {
					defs = []subagent.Definition{}
				}
				if err := writeJSON(env.Stdout, defs); err != nil {
					return err
				}
			} else if len(defs) == 0 && lerr == nil {
				fmt.Fprintln(env.Stderr, "no agent definitions (add Markdown files to .harness/agents or .claude/agents)")
			} else if len(defs) > 0 {
				tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tMODEL\tTOOLS\tPATH\tDESCRIPTION")
				for _, d := range defs {
					tools := "(all)"
					if d.Tools != nil {
						tools = strings.Join(d.Tools, ",")
					}
					model := d.Model
					if model == "" {
						model = "(inherit)"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Name, model, tools, d.Path, d.Description)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			if lerr != nil {
				return UsageError(lerr)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
