package acp

import (
	"context"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
)

// permissionModes are the permission modes a session can switch to (the
// permission plugin's, by Claude Code's names), as ACP session modes.
var permissionModes = []sdk.SessionMode{
	{Id: "default", Name: "Default", Description: sdk.Ptr("Read-only tools run; edits and commands the rules do not allow ask")},
	{Id: "acceptEdits", Name: "Accept edits", Description: sdk.Ptr("File edits in the working directory run without asking; other calls the rules do not allow ask")},
	{Id: "plan", Name: "Plan", Description: sdk.Ptr("Read-only: the agent explores and proposes a plan, it changes nothing")},
	{Id: "dontAsk", Name: "Don't ask", Description: sdk.Ptr("Calls the rules do not allow are refused without asking")},
	{Id: "bypassPermissions", Name: "Bypass permissions", Description: sdk.Ptr("Every call runs without asking; deny rules still hold")},
}

// switcher returns the harness's permission-mode switch and reporter (the
// permission plugin's read policy), when it has them.
func switcher(root *core.Context) (tools.ModeSwitcher, tools.ModeReporter, bool) {
	rp, ok := core.Lookup(root, tools.ReadPolicyKey)
	if !ok || rp == nil {
		return nil, nil, false
	}
	sw, ok1 := rp.(tools.ModeSwitcher)
	mr, ok2 := rp.(tools.ModeReporter)
	return sw, mr, ok1 && ok2
}

// modes is the session's mode state: the permission modes and the one in
// force; nil when the harness has no permission plugin.
func modes(ss *session) *sdk.SessionModeState {
	_, mr, ok := switcher(ss.host.Root)
	if !ok {
		return nil
	}
	return &sdk.SessionModeState{AvailableModes: permissionModes, CurrentModeId: sdk.SessionModeId(mr.PermissionMode(ss.ss.Scope()))}
}

// SetSessionMode implements sdk.Agent: the session (and its subagents)
// runs under the permission mode from its next tool call on.
func (s *server) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (_ sdk.SetSessionModeResponse, err error) {
	defer contain(&err, s.o.Logger, "session/set_mode")
	ss, err := s.session(ctx, p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	sw, _, ok := switcher(ss.host.Root)
	if !ok {
		return sdk.SetSessionModeResponse{}, invalidParams("modeId %q: this harness has no permission modes (no permission row in harness.yml)", p.ModeId)
	}
	known := false
	for _, m := range permissionModes {
		known = known || m.Id == p.ModeId
	}
	if !known {
		return sdk.SetSessionModeResponse{}, invalidParams("modeId %q: not one of default, acceptEdits, plan, dontAsk, bypassPermissions", p.ModeId)
	}
	if err := sw.SetPermissionMode(ss.ss.Scope(), string(p.ModeId)); err != nil {
		return sdk.SetSessionModeResponse{}, invalidParams("modeId %q: %v", p.ModeId, err)
	}
	s.mu.Lock()
	ss.reopen.mode = string(p.ModeId)
	s.mu.Unlock()
	return sdk.SetSessionModeResponse{}, nil
}
