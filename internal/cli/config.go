package cli

import (
	"github.com/dshgo/harness/core/loader"
	"github.com/dshgo/harness/core/manifest"
	"github.com/spf13/cobra"
)

// configCommand builds `harness config`.
func configCommand(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "Print the composed manifest (after patches), with each row's source and secrets redacted",
		Long: "config prints the composed manifest (after --patch layers) as YAML, each row preceded by its source,\n" +
			"secrets redacted. It then checks every enabled row's plugin name and config without starting anything;\n" +
			"problems are listed on stderr (FILE:LINE:COL) and the exit status is 2.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, m, err := env.build(nil)
			if err != nil {
				return err
			}
			out, err := manifest.Dump(m, h.Catalog)
			if err != nil {
				return Failure(err)
			}
			if _, err := env.Stdout.Write(out); err != nil {
				return err
			}
			// Print first (the composition is what one debugs), then
			// refuse a manifest that would not boot, as check does.
			if _, err := loader.Resolve(m, h.Catalog, env.LookupEnv); err != nil {
				return UsageError(err)
			}
			return nil
		},
	}
}
