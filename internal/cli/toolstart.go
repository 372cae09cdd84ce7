package cli

import (
	"context"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/services/tools"
)

// toolStartsName is the plugin of withToolStarts.
const toolStartsName = "cli-tool-starts"

// withToolStarts is the boot option of the text output's status line: a
// plugin (added with a row of its own) listens on tools.Execute, which
// runs once a call passed its policy and approval, and reports each call's
// id to started before the body runs. started must be quick.
func withToolStarts(started func(callID string)) BootOption {
	plugin := core.Define(toolStartsName, func(c *core.Context, _ struct{}) error {
		return core.On(c, tools.Execute, func(ctx context.Context, x *tools.Execution, next core.Next[*tools.Execution, *tools.Outcome]) (*tools.Outcome, error) {
			started(x.CallID())
			return next(ctx, x)
		})
	}, core.WithDescription("the harness CLI's status line: which tool call is running"))
	return bootOptionFunc(func(o *fxcore.Options) {
		o.Plugins = append(o.Plugins, plugin)
		m := o.Manifest.Clone()
		m.Plugins = append(m.Plugins, manifest.Entry{ID: toolStartsName, Name: toolStartsName})
		o.Manifest = m
	})
}
