package acp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
)

// Permission option ids, one per approval answer (ACP's option kinds).
const (
	optionAllowOnce   = "allow_once"
	optionAllowAlways = "allow_always"
	optionRejectOnce  = "reject_once"
)

// plugin is what the server adds to each harness it boots, for as long as
// it runs: the approval answerer (tools.AnswererKey), which puts a
// session's questions to the client as session/request_permission, and a
// listener on tools.Execute that marks a session's call in_progress when
// its body starts (after its policy and approval).
func (s *server) plugin() core.Plugin {
	return core.Define("acp", func(c *core.Context, _ struct{}) error {
		if err := core.On(c, tools.Execute, func(ctx context.Context, x *tools.Execution, next core.Next[*tools.Execution, *tools.Outcome]) (*tools.Outcome, error) {
			if ss := s.sessionOf(x.Scope()); ss != nil {
				ss.started(x.CallID())
			}
			return next(ctx, x)
		}); err != nil {
			return err
		}
		return core.Provide[tools.Answerer](c, tools.AnswererKey, answerer{s})
	}, core.WithProvides(tools.AnswererKey.Name()), core.WithDescription("harness acp: approvals through the ACP client, tool-call starts"))
}

// sessionOf returns the open session whose scope is scope or one of its
// ancestors (a subagent's call belongs to its top-level session), or nil.
func (s *server) sessionOf(scope *core.ScopeID) *session {
	if scope == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ss := range s.sessions {
		if scope.Within(ss.ss.Scope()) {
			return ss
		}
	}
	return nil
}

// askerOf returns the session a question belongs to: the session of its
// scope; for an unscoped question (the sandbox network's, asked for a
// command's connection), the one session whose prompt is running, when
// exactly one is; else nil.
func (s *server) askerOf(scope *core.ScopeID) *session {
	if scope != nil {
		return s.sessionOf(scope)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var found *session
	for _, ss := range s.sessions {
		if ss.isRunning() {
			if found != nil {
				return nil
			}
			found = ss
		}
	}
	return found
}

// answerer puts approval questions to the client of the session that
// asks.
type answerer struct{ s *server }

var _ tools.DetailedAnswerer = answerer{}

// Answer implements tools.Answerer.
func (a answerer) Answer(ctx context.Context, req tools.ApprovalRequest) (tools.ApprovalOutcome, error) {
	ans, err := a.AnswerDetailed(ctx, req)
	return ans.Outcome, err
}

// AnswerDetailed implements tools.DetailedAnswerer: a question of no open
// session is unavailable (see askerOf); otherwise the client's answer,
// ApprovalCancelled when the request was cancelled or failed.
func (a answerer) AnswerDetailed(ctx context.Context, req tools.ApprovalRequest) (tools.ApprovalAnswer, error) {
	ss := a.s.askerOf(req.Scope)
	if ss == nil {
		return tools.ApprovalAnswer{Outcome: tools.ApprovalUnavailable}, nil
	}
	resp, err := a.s.conn.RequestPermission(ctx, ss.permissionRequest(req))
	if err != nil {
		a.s.o.Logger.Debug("acp: permission request failed", "session", ss.id, "call", req.CallID, "err", err)
		return tools.ApprovalAnswer{Outcome: tools.ApprovalCancelled}, nil
	}
	return answerOf(resp.Outcome), nil
}

// answerOf maps the client's choice to an approval answer; an unknown
// option is a rejection.
func answerOf(o sdk.RequestPermissionOutcome) tools.ApprovalAnswer {
	if o.Selected == nil {
		return tools.ApprovalAnswer{Outcome: tools.ApprovalCancelled}
	}
	switch string(o.Selected.OptionId) {
	case optionAllowOnce:
		return tools.ApprovalAnswer{Outcome: tools.ApprovalAllowedOnce}
	case optionAllowAlways:
		return tools.ApprovalAnswer{Outcome: tools.ApprovalAllowedAlways}
	}
	return tools.ApprovalAnswer{Outcome: tools.ApprovalRejected}
}

// permissionRequest is the question req as ACP's: the call as the session
// last presented it (a subagent's call, which the client was not shown,
// gets the generic presentation), the policy's reason in _meta, and the
// three answers with the question's own labels when it has them.
func (ss *session) permissionRequest(req tools.ApprovalRequest) sdk.RequestPermissionRequest {
	ss.mu.Lock()
	p := ss.m.presentation(req.CallID)
	if req.CallID == "" {
		ss.questions++
		req.CallID = fmt.Sprintf("question-%d", ss.questions) // a question of no call: a call of its own for the client
	}
	ss.mu.Unlock()
	if p == nil {
		g := tools.Present(nil, tools.PresentCall{ID: req.CallID, Name: req.Tool, Arguments: req.Arguments, Cwd: ss.ss.Cwd()})
		p = &g
	}
	var call sdk.ToolCallUpdate
	if b, err := json.Marshal(p); err == nil {
		_ = json.Unmarshal(b, &call)
	}
	call.ToolCallId = sdk.ToolCallId(req.CallID)
	reason := req.DisplayReason
	if reason == "" {
		reason = req.Reason
	}
	if call.Meta == nil {
		call.Meta = map[string]any{}
	}
	if reason != "" {
		call.Meta["reason"] = reason
	}
	if len(req.AlwaysRules) > 0 {
		call.Meta["alwaysRules"] = req.AlwaysRules
	}
	labels := tools.ApprovalLabels{}
	if req.Labels != nil {
		labels = *req.Labels
	}
	always := "Always allow"
	if len(req.AlwaysRules) > 0 {
		always += " " + strings.Join(req.AlwaysRules, ", ")
	}
	return sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(ss.id),
		ToolCall:  call,
		Options: []sdk.PermissionOption{
			{OptionId: optionAllowOnce, Kind: sdk.PermissionOptionKindAllowOnce, Name: cmp.Or(labels.Once, "Allow once")},
			{OptionId: optionAllowAlways, Kind: sdk.PermissionOptionKindAllowAlways, Name: cmp.Or(labels.Always, always)},
			{OptionId: optionRejectOnce, Kind: sdk.PermissionOptionKindRejectOnce, Name: cmp.Or(labels.No, "Reject")},
		},
	}
}
