package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/plugins/agent"
)

func init() {
	Register(func(env *Env) *cobra.Command {
		var (
			asJSON bool
			here   bool
		)
		cmd := &cobra.Command{
			Use:   "sessions",
			Short: "List stored agent sessions, newest first",
			Long: "sessions lists the session logs under the agent's state directory (the agent row's stateDir,\n" +
				"default $XDG_STATE_HOME/harness or ~/.local/state/harness): id, last update, turns, working\n" +
				"directory and the first prompt. Resume one with `harness run --session ID` or `harness chat\n" +
				"--session ID`. --here lists only sessions of the current directory; --json prints an array of\n" +
				"{id, cwd, model, created, updated, turns, title, path, messages}. It does not boot the harness.",
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				dir, err := stateDir(env)
				if err != nil {
					return err
				}
				list, err := agent.ListSessions(dir)
				if err != nil {
					return Failure(err)
				}
				if here {
					wd, _ := os.Getwd()
					kept := list[:0]
					for _, s := range list {
						if s.Cwd == wd {
							kept = append(kept, s)
						}
					}
					list = kept
				}
				if asJSON {
					if list == nil {
						list = []agent.SessionInfo{}
					}
					enc := json.NewEncoder(env.Stdout)
					enc.SetIndent("", "  ")
					enc.SetEscapeHTML(false)
					return enc.Encode(list)
				}
				if len(list) == 0 {
					fmt.Fprintf(env.Stderr, "no sessions in %s\n", agent.SessionsDir(dir))
					return nil
				}
				tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tUPDATED\tTURNS\tCWD\tPROMPT")
				for _, s := range list {
					fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.ID, s.Updated.Local().Format(time.DateTime), s.Turns, s.Cwd, s.Title)
				}
				return tw.Flush()
			},
		}
		cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		cmd.Flags().BoolVar(&here, "here", false, "only sessions of the current directory")
		return cmd
	})
}

// stateDir reads the agent row's stateDir from the manifest (without
// booting), else the default.
func stateDir(env *Env) (string, error) {
	m, err := env.LoadManifest()
	if err != nil {
		return "", err
	}
	for _, e := range m.Plugins {
		if e.Name != agent.Plugin.Name() || e.Disabled {
			continue
		}
		v, err := manifest.DecodeConfig(agent.Plugin, e, env.LookupEnv)
		if err != nil {
			return "", UsageError(err)
		}
		if cfg, ok := v.(*agent.Config); ok && cfg.StateDir != "" {
			return cfg.StateDir, nil
		}
	}
	return agent.DefaultStateDir(env.LookupEnv), nil
}
