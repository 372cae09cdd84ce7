package cli

import (
	"encoding/json"
	"fmt"

	"github.com/dshgo/harness/core/manifest"
	"github.com/spf13/cobra"
)

func init() {
	Register(func(env *Env) *cobra.Command {
		return &cobra.Command{
			Use:   "schema [PLUGIN]",
			Short: "Print the JSON Schema of a plugin's config, or of the whole harness.yml",
			Args:  cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				h, err := env.Build()
				if err != nil {
					return err
				}
				var v any
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
	})
}
