package cli

import (
	"context"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/services/tools"
)

// approveAllPlugin provides the approval service for `--yes`: every ask is
// allowed once. Deny decisions and guards never reach approval, so deny
// rules still win.
var approveAllPlugin = core.Define("approve-all", func(c *core.Context, _ struct{}) error {
	return core.Provide[tools.Approver](c, tools.ApprovalKey, approveAll{})
}, core.WithProvides(tools.ApprovalKey.Name()), core.WithDescription("--yes: approves every tool call a policy asks about"))

type approveAll struct{}

// Ask allows every request once.
func (approveAll) Ask(context.Context, tools.ApprovalRequest) (tools.ApprovalOutcome, error) {
	return tools.ApprovalAllowedOnce, nil
}

// withApproveAll is the boot option of `--yes`: the manifest's approval
// rows are replaced by approve-all (or one is added).
func withApproveAll() BootOption {
	return bootOptionFunc(func(o *fxcore.Options) {
		o.Plugins = append(o.Plugins, approveAllPlugin)
		m := o.Manifest.Clone()
		found := false
		for i := range m.Plugins {
			if e := &m.Plugins[i]; e.Name == "approval" {
				e.Name, e.Config, found = approveAllPlugin.Name(), nil, true
			}
		}
		if !found {
			m.Plugins = append(m.Plugins, manifest.Entry{ID: "approve-all", Name: approveAllPlugin.Name()})
		}
		o.Manifest = m
	})
}
