// Package sandboxnetworkask is the sandbox-network-ask plugin: it puts the
// sandbox network proxy's questions (a proxied sandbox.network with ask:
// true, a host no allowedDomains or deniedDomains entry decides) to the
// approval service, so the person at the terminal or the TUI answers them
// like a tool-call ask: allow once, allow always (for the rest of the
// harness process) or deny. Headless, the approval service has no one to
// ask and the host is refused with the rule to add.
//
// The question is unscoped: the proxy serves every command of a network
// policy and does not know which session a connection belongs to. It goes
// to the approval service's current answerer (the TUI, a terminal); a
// session that a front end routed to itself (the web app's) does not see
// it.
package sandboxnetworkask

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
)

// Config is empty: whether to ask is the subprocess row's
// sandbox.network.ask.
type Config struct{}

// Tool is the ApprovalRequest.Tool of a network question.
const Tool = "sandbox-network"

// Plugin registers the approval service as the subprocess runtime's
// network asker while both are there.
var Plugin = core.Define("sandbox-network-ask", apply,
	core.WithInject(subprocess.Key.Name(), tools.ApprovalKey.Name()),
	core.WithDescription("asks the person (approval service) about hosts the sandbox network allowlist does not decide, when sandbox.network.ask is on"))

func apply(c *core.Context, _ Config) error {
	rt := core.Use(c, subprocess.Key)
	ap := core.Use(c, tools.ApprovalKey)
	return c.Effect("network asker", func() (func(), error) {
		return rt.SetNetworkAsker(func(ctx context.Context, host string, port int) subprocess.NetworkAnswer {
			return Ask(ctx, ap, host, port)
		}), nil
	})
}

// Ask puts one question about host:port to ap and maps its answer. The
// arguments name the host only (an answer holds for every port of it); no
// AlwaysRules: an "always" here is no tool rule, and the permission plugin
// must not turn the host name into one.
func Ask(ctx context.Context, ap tools.Approver, host string, port int) subprocess.NetworkAnswer {
	args, _ := json.Marshal(struct {
		Host string `json:"host"`
	}{host})
	reason := fmt.Sprintf("a sandboxed command wants to connect to %s (port %d), which sandbox.network.allowedDomains does not list; "+
		"always allows %s on any port for the rest of this harness process (add it to allowedDomains to keep it)", host, port, host)
	out, err := ap.Ask(ctx, tools.ApprovalRequest{Tool: Tool, Arguments: string(args), Reason: reason, DisplayReason: reason})
	if err != nil {
		return subprocess.NetworkAskUnavailable
	}
	switch out {
	case tools.ApprovalAllowedOnce:
		return subprocess.NetworkAllowOnce
	case tools.ApprovalAllowedAlways:
		return subprocess.NetworkAllowAlways
	case tools.ApprovalRejected:
		return subprocess.NetworkDeny
	}
	return subprocess.NetworkAskUnavailable
}
