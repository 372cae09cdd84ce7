package cli

import (
	"github.com/dshgo/harness/core/manifest"
	"github.com/spf13/cobra"
)

func init() {
	Register(func(env *Env) *cobra.Command {
		return &cobra.Command{
			Use:   "config",
			Short: "Print the composed manifest (after patches), with each row's source and secrets redacted",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				m, err := env.LoadManifest()
				if err != nil {
					return err
				}
				h, err := env.Build()
				if err != nil {
					return err
				}
				out, err := manifest.Dump(m, h.Catalog)
				if err != nil {
					return Failure(err)
				}
				_, err = env.Stdout.Write(out)
				return err
			},
		}
	})
}
