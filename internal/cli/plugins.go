package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dshgo/harness/core/loader"
	"github.com/dshgo/harness/plugins/mcp"
)

// pluginsCommand builds `harness plugins`.
func pluginsCommand(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: "Boot the configured harness and list each row: id, name, state, provides, injects, pending-on",
		Long: "plugins boots the configured harness (without failing on rows that do not activate) and lists\n" +
			"every row. --json prints an array of objects with the keys id, name, state, provides,\n" +
			"injects, pendingOn and error; the mcp row also has \"problems\": the servers that failed to\n" +
			"start or exited ({server, state, error}).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := env.Boot(SkipAudit())
			if err != nil {
				return err
			}
			awaitMCP(env.Ctx, h)
			rows := h.Loader.Status()
			problems := mcpProblems(h)
			if err := h.Stop(context.Background()); err != nil {
				return Failure(err)
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				type row struct {
					loader.RowStatus
					Problems []mcpProblem `json:"problems,omitempty"`
				}
				out := make([]row, 0, len(rows))
				for _, r := range rows {
					o := row{RowStatus: r}
					if r.Name == mcp.Plugin.Name() {
						o.Problems = problems
					}
					out = append(out, o)
				}
				return enc.Encode(out)
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tSTATE\tPROVIDES\tINJECTS\tDETAIL")
			for _, r := range rows {
				detail := r.Error
				if len(r.PendingOn) > 0 {
					detail = "waiting for " + strings.Join(r.PendingOn, ", ")
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Name, r.State, dash(r.Provides), dash(r.Injects), detail)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, p := range problems {
				fmt.Fprintf(env.Stdout, "\n%s\n", p)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func dash(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}
