// Package planmode is the plan-mode plugin: in plan mode (the permission
// row's mode: plan, or `--permission-mode plan`) the model explores with
// read-only tools, then presents its plan with the exit_plan_mode tool
// (Claude Code's ExitPlanMode, dsh's plan-mode), and a person decides:
//
//   - "Yes, and auto-accept edits": the session's permission mode becomes
//     acceptEdits, and the model carries the plan out;
//   - "Yes, and approve each edit": the mode becomes default;
//   - "No, keep planning" (with what to change, optionally): the session
//     stays in plan mode and the model gets the person's words.
//
// The question goes to the approval service like a tool-call ask, with
// its own labels (tools.ApprovalLabels): the terminal UI's modal, the web
// app's card, a terminal prompt. Only the session that asked switches
// mode (and its subagents); deny rules hold in every mode.
//
// Where no one can answer (a headless `harness run`), the call ends the
// turn with reason "plan" and the plan as the result's text: `harness run`
// prints it and exits 5. The plan stays in the session, so `harness run
// --continue --permission-mode acceptEdits "Go ahead"` carries it out.
//
// The tool is registered only when the configured mode is plan, so the
// tools a session offers stay the same from its first step to its last
// (the cache-stable prefix), and a session that does not plan pays nothing.
package planmode

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
)

// ToolName is the tool's name.
const ToolName = "exit_plan_mode"

// Reason is the agent result's reason of a turn that ended on a plan no
// one could approve.
const Reason = "plan"

// MaxPlanBytes bounds a plan.
const MaxPlanBytes = 64 << 10

// Modes the answers switch to.
const (
	ModeAlways = "acceptEdits" // "Yes, and auto-accept edits"
	ModeOnce   = "default"     // "Yes, and approve each edit"
)

// Config is empty: whether the session plans is the permission row's mode.
type Config struct{}

// Args are exit_plan_mode's arguments.
type Args struct {
	Plan string `json:"plan" jsonschema:"description=The plan to carry out, in Markdown: the steps, the files to change and how to check the result"`
}

// Description teaches the model when to call the tool.
const Description = `Present your plan to the person for approval and leave plan mode.

You are in plan mode: only read-only tools run, and no file is changed. Explore the code first, then call this tool once you have a concrete plan for the task: the steps, the files you will change and how you will check the result, in Markdown. Do not call it to ask a question or to report research; answer in text for that.

If the person approves, the permission mode changes and you carry the plan out in the same session. If they do not, the result says what to change: revise the plan and call this tool again.`

// Plugin registers exit_plan_mode when the permission mode is plan.
var Plugin = core.Define("plan-mode", apply,
	core.WithInject(tools.Key.Name(), tools.ReadPolicyKey.Name()),
	core.WithDescription("plan mode: exit_plan_mode presents the model's plan to a person, whose approval switches the session's permission mode"))

func apply(c *core.Context, _ Config) error {
	rp := core.Use(c, tools.ReadPolicyKey)
	mr, ok := rp.(tools.ModeReporter)
	if !ok {
		return fmt.Errorf("plan-mode: the readPolicy service (%T) has no permission mode: mount the permission plugin", rp)
	}
	sw, ok := rp.(tools.ModeSwitcher)
	if !ok {
		return fmt.Errorf("plan-mode: the readPolicy service (%T) cannot switch a session's permission mode", rp)
	}
	if mr.PermissionMode(nil) != "plan" {
		return nil
	}
	return tools.Register(c, Tool(c, mr, sw))
}

// unanswerable and scopedUnanswerable are how the approval service says
// that no one can answer (plugins/approval implements them).
type unanswerable interface{ Unanswerable() string }

type scopedUnanswerable interface {
	UnanswerableIn(scope *core.ScopeID) string
}

// Labels are the plan question's words for its answers.
var Labels = tools.ApprovalLabels{
	Title:  "Approve this plan?",
	Once:   "Yes, and approve each edit (mode default)",
	Always: "Yes, and auto-accept edits (mode acceptEdits)",
	No:     "No, keep planning",
	NoWhy:  "No, and tell the model what to change",
}

// Tool defines exit_plan_mode over the permission service's mode.
func Tool(c *core.Context, mr tools.ModeReporter, sw tools.ModeSwitcher) *tools.Tool {
	return tools.Define(ToolName, Description, func(ctx context.Context, e *tools.Execution, a Args) (string, error) {
		scope := e.Scope()
		if m := mr.PermissionMode(scope); m != "plan" {
			return "", &tools.Error{Name: "PlanError", Code: "PLAN_NOT_IN_PLAN_MODE",
				Message: fmt.Sprintf("the session is not in plan mode (the permission mode is %s): the plan was approved already, or the session did not start in plan mode; carry on with the task", m)}
		}
		plan := strings.TrimSpace(a.Plan)
		switch {
		case plan == "":
			return "", &tools.Error{Name: "PlanError", Code: "PLAN_EMPTY", Message: "plan: empty; write the plan in Markdown"}
		case len(plan) > MaxPlanBytes || !utf8.ValidString(plan):
			return "", &tools.Error{Name: "PlanError", Code: "PLAN_INVALID",
				Message: fmt.Sprintf("plan: %d bytes; at most %d bytes of UTF-8 text", len(plan), MaxPlanBytes)}
		}
		ap, ok := core.Lookup(c, tools.ApprovalKey)
		why := ""
		switch {
		case !ok || ap == nil:
			why = "no approval service is mounted"
		default:
			if u, ok := ap.(scopedUnanswerable); ok {
				why = u.UnanswerableIn(scope)
			} else if u, ok := ap.(unanswerable); ok {
				why = u.Unanswerable()
			}
		}
		if why != "" {
			return awaiting(e, plan, why), nil
		}
		req := tools.ApprovalRequest{Scope: scope, Tool: ToolName, CallID: e.CallID(), Arguments: e.Arguments(),
			Reason: "the model presents its plan; approving it switches this session's permission mode", Labels: &Labels}
		var ans tools.ApprovalAnswer
		var err error
		if d, ok := ap.(tools.DetailedApprover); ok {
			ans, err = d.AskDetailed(ctx, req)
		} else {
			ans.Outcome, err = ap.Ask(ctx, req)
		}
		if err != nil {
			return "", err
		}
		switch ans.Outcome {
		case tools.ApprovalAllowedAlways, tools.ApprovalAllowedOnce:
			mode := ModeOnce
			if ans.Outcome == tools.ApprovalAllowedAlways {
				mode = ModeAlways
			}
			if err := sw.SetPermissionMode(scope, mode); err != nil {
				return "", err
			}
			return approved(mode, plan), nil
		case tools.ApprovalRejected:
			msg := "The person did not approve the plan. You are still in plan mode: keep exploring with read-only tools, revise the plan and call exit_plan_mode again."
			if r := strings.TrimSpace(ans.Reason); r != "" {
				msg = "The person did not approve the plan and said: " + r + "\nYou are still in plan mode: revise the plan accordingly and call exit_plan_mode again."
			}
			return "", &tools.Error{Name: "PlanError", Code: "PLAN_REJECTED", Message: msg}
		case tools.ApprovalUnavailable:
			return awaiting(e, plan, "no one answered"), nil
		}
		if err := ctx.Err(); err != nil {
			return "", err
		}
		return "", &tools.Error{Name: "PlanError", Code: "PLAN_CANCELLED", Message: "the plan question was withdrawn before anyone answered; you are still in plan mode"}
	}, tools.WithReadOnly(), tools.WithPresent(Present))
}

// awaiting ends the turn on the plan, for a person to decide later.
func awaiting(e *tools.Execution, plan, why string) string {
	e.ConcludeTurnAs(Reason, plan)
	return "The plan was recorded, but no one can approve it in this run (" + why + "): the turn ends here with the plan as its answer. " +
		"Do not start on it; the person will resume the session when they have decided."
}

// approved is the result of an approved plan: the new mode, and the plan
// again, so that it stays in the context whatever compaction keeps.
func approved(mode, plan string) string {
	how := "file edits in the workspace run without asking"
	if mode == ModeOnce {
		how = "each file edit is asked"
	}
	return fmt.Sprintf("The person approved the plan. The permission mode is now %s: %s. Carry out the plan now, step by step.\n\n## Approved plan\n\n%s", mode, how, plan)
}

// Present is exit_plan_mode's presentation: kind think, titled "Plan",
// the plan as its text, so a front end shows it from the call alone.
func Present(in tools.PresentInput[Args, string]) tools.Presentation {
	p := tools.Presentation{Kind: tools.KindThink, Title: "Plan"}
	if first, _, _ := strings.Cut(strings.TrimSpace(in.Args.Plan), "\n"); first != "" {
		p.Title = "Plan: " + strings.TrimLeft(first, "# ")
	}
	p.Content = []tools.ToolCallContent{tools.TextContent(in.Args.Plan)}
	switch {
	case in.Succeeded() && in.Outcome.ConcludesTurn:
		p.Summarize("awaiting approval")
	case in.Succeeded():
		p.Summarize("approved")
	}
	return p
}
