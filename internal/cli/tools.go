package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/services/tools"
	"github.com/spf13/cobra"
)

// toolsCommand builds `harness tools`.
func toolsCommand(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "Boot the configured harness and list the tools visible to the default scope",
		Long: "tools boots the configured harness and lists the tools the model would see in the default\n" +
			"(global) scope: name and the first line of the description. --json prints an array of\n" +
			"{name, description, parameters} objects, parameters being the JSON Schema sent to the model.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var schemas []tools.Schema
			var pending []string
			err := withRegistry(env, func(_ context.Context, h *fxcore.Harness, reg *tools.Registry) error {
				schemas = reg.Schemas(nil)
				pending = mcpPending(h)
				return nil
			})
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				if schemas == nil {
					schemas = []tools.Schema{}
				}
				return enc.Encode(schemas)
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tDESCRIPTION")
			for _, s := range schemas {
				first, _, _ := strings.Cut(s.Description, "\n")
				fmt.Fprintf(tw, "%s\t%s\n", s.Name, first)
			}
			for _, name := range pending {
				fmt.Fprintf(tw, "mcp__%s__*\t(pending: the MCP server is still connecting; `harness mcp tools %s` waits for it)\n", name, name)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// withRegistry boots the configured harness, runs fn with its tool registry
// and stops the harness. A manifest without the tools plugin is a
// configuration error (exit 2).
func withRegistry(env *Env, fn func(ctx context.Context, h *fxcore.Harness, reg *tools.Registry) error, opts ...BootOption) (err error) {
	h, err := env.Boot(opts...)
	if err != nil {
		return err
	}
	defer func() {
		if serr := stopHarness(h); serr != nil && err == nil {
			err = Failure(fmt.Errorf("stopping: %w", serr))
		}
	}()
	reg, ok := core.Lookup(h.Root.Context(), tools.Key)
	if !ok {
		return UsageError(fmt.Errorf("no tool registry: mount the %q plugin in harness.yml", tools.Key.Name()))
	}
	return fn(env.Ctx, h, reg)
}

func stopHarness(h *fxcore.Harness) error { return h.Stop(context.Background()) }
