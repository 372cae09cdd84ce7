package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// compactCommand builds `harness compact`.
func compactCommand(env *Env) *cobra.Command {
	var f agentFlags
	cmd := &cobra.Command{
		Use:   "compact [flags] [INSTRUCTIONS]",
		Short: "Compact a stored session's history (--session ID or --continue)",
		Long: "compact boots the configured harness, opens the session named by --session ID (or the latest of the\n" +
			"working directory with --continue) and replaces its older history by a summary the model writes, as\n" +
			"`/compact` in chat does; recent turns stay verbatim. INSTRUCTIONS (optional) steer the summary. The\n" +
			"session log stays append-only: a compaction record is added, the earlier records remain. Needs a\n" +
			"`name: compaction` row. Exit 0 when compacted, 1 when it failed, 2 on a usage error.",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := f.options()
			if err != nil {
				return UsageError(err)
			}
			if f.session == "" && !f.cont {
				return UsageError(fmt.Errorf("compact: name the session with --session ID or --continue"))
			}
			host, err := bootAgent(env, &f)
			if err != nil {
				return err
			}
			ss, err := host.open(env.Ctx, &f, opts)
			if err != nil {
				_ = host.stop()
				return err
			}
			info, cerr := ss.Compact(env.Ctx, strings.Join(args, " "))
			if err := ss.Close(env.Ctx); err != nil && cerr == nil {
				cerr = err
			}
			if err := host.stop(); err != nil && cerr == nil {
				cerr = err
			}
			if cerr != nil {
				return classify(fmt.Errorf("compaction: %w", cerr))
			}
			fmt.Fprintf(env.Stdout, "compacted session %s: %d messages summarized, %d kept; context %d → %d tokens\n",
				ss.ID(), info.Summarized, info.Kept, info.TokensBefore, info.TokensAfter)
			return nil
		},
	}
	f.register(cmd.Flags(), "unused")
	return cmd
}
