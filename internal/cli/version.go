package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/dshgo/harness/services/llm"
	"github.com/spf13/cobra"
)

// Version is the harness release, set at build time with
// -ldflags "-X github.com/dshgo/harness/internal/cli.Version=v1.2.3".
var Version = "v0.1.0-dev"

func init() {
	// Model requests say who sends them (issue 18): User-Agent harness/VERSION.
	llm.UserAgent = "harness/" + Version
}

// versionCommand builds `harness version`.
func versionCommand(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the harness version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rev := ""
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" {
						rev = " " + s.Value
					}
				}
			}
			fmt.Fprintf(env.Stdout, "harness %s%s %s/%s %s\n", Version, rev, runtime.GOOS, runtime.GOARCH, runtime.Version())
			return nil
		},
	}
}
