package cli

import (
	"context"
	"sync"

	"github.com/spf13/cobra"

	"github.com/dshgo/harness/internal/acp"
)

func init() {
	Register(func(env *Env) *cobra.Command {
		cmd := &cobra.Command{
			Use:   "acp",
			Short: "Serve the Agent Client Protocol on stdin and stdout (for editors)",
			Long: "acp runs the harness as an Agent Client Protocol agent: an editor (Zed, a JetBrains IDE, any ACP\n" +
				"client) starts it and talks JSON-RPC over stdin and stdout. Each session's working directory is the\n" +
				"cwd the client sends; the configuration is found there as for `harness run` (harness.yml up to the\n" +
				"repository root, else the built-in default: sandboxed commands, the permission row's mode), and\n" +
				"the client answers the approval questions. Logs go to stderr. See docs/editors.md.",
			Args: cobra.NoArgs,
			RunE: func(*cobra.Command, []string) error {
				return runACP(env)
			},
		}
		return signalStops(cmd)
	})
}

// runACP serves ACP until stdin ends or a signal; each working directory a
// client names gets its own harness, booted as `harness run --cwd DIR`
// would (one boot at a time: the Env is shared).
func runACP(env *Env) error {
	var mu sync.Mutex
	boot := func(_ context.Context, dir string) (*acp.Host, error) {
		mu.Lock()
		defer mu.Unlock()
		host, err := bootAgent(env, &agentFlags{cwd: dir})
		if err != nil {
			return nil, err
		}
		awaitMCP(env.Ctx, host.h)
		return &acp.Host{Agent: host.agent, Root: host.h.Root.Context(), Stop: func(ctx context.Context) error { return host.h.Stop(ctx) }}, nil
	}
	err := acp.Serve(env.Ctx, env.Stdin, env.Stdout, acp.Options{Boot: boot, Version: Version, Logger: env.Logger()})
	if err != nil {
		return Failure(err)
	}
	return nil
}
