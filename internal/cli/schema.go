package cli

import (
	"encoding/json"
	"fmt"

	"github.com/dshgo/harness/core"

	"github.com/dshgo/harness/core/manifest"
	"github.com/spf13/cobra"
)

// schemaCommand builds `harness schema`.
func schemaCommand(env *Env) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "schema [PLUGIN]",
		Short: "Print the JSON Schema of a plugin's config; without PLUGIN list the plugin names (--all: the schema of the whole harness.yml)",
		Args:  cobra.MaximumNArgs(1),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			h, err := env.Build()
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return pluginNames(h.Catalog), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := env.Build()
			if err != nil {
				return err
			}
			var v any
			if len(args) == 0 && !all {
				for _, n := range pluginNames(h.Catalog) {
					fmt.Fprintln(env.Stdout, n)
				}
				return nil
			}
			if len(args) == 0 {
				v = manifest.Schema(h.Catalog)
			} else {
				p, ok := h.Catalog.Get(args[0])
				if !ok {
					return UsageError(fmt.Errorf("unknown plugin %q (see `harness schema` for all)", args[0]))
				}
				v = manifest.ConfigSchema(p)
			}
			enc := json.NewEncoder(env.Stdout)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			return enc.Encode(v)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "print the JSON Schema of the whole harness.yml (every plugin's config)")
	return cmd
}

// pluginNames lists the catalog's plugin names, sorted.
func pluginNames(cat *core.Catalog) []string { return cat.Names() }
