package subagenttools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/subagent"
	"github.com/dshgo/harness/services/tools"
)

//go:embed task.md
var taskText string

// CodeFailed is the error code of a task whose child failed; an
// interrupted child's result has code ABORTED.
const CodeFailed = "SUBAGENT_FAILED"

type taskArgs struct {
	Description  string `json:"description" jsonschema:"description=A short (3-5 word) description of the task"`
	Prompt       string `json:"prompt" jsonschema:"description=The task for the agent: everything it needs to know"`
	SubagentType string `json:"subagent_type,omitempty" jsonschema:"description=An agent definition name (see the list); omitted: a general-purpose agent with your tools"`
	Continuable  bool   `json:"continuable,omitempty" jsonschema:"description=Keep the agent so you can send_message it later"`
	Fork         bool   `json:"fork,omitempty" jsonschema:"description=Start the agent from a copy of this conversation"`
	Background   bool   `json:"run_in_background,omitempty" jsonschema:"description=Return the agent id at once; its answer arrives later as a notification"`
}

// Answer is the output of task and send_message.
type Answer struct {
	Text    string          `json:"text"`
	AgentID string          `json:"agentId"`
	Status  subagent.Status `json:"status"`
	Usage   subagent.Usage  `json:"usage"`
	Depth   int             `json:"depth"`
	Running bool            `json:"running,omitempty"`
	Error   string          `json:"error,omitempty"`
}

type answerMeta struct {
	AgentID   string          `json:"agentId"`
	SessionID string          `json:"sessionId"`
	Status    subagent.Status `json:"status,omitempty"`
	Usage     subagent.Usage  `json:"usage"`
	Depth     int             `json:"depth"`
}

// caller is the calling session as a parent.
func caller(ctx context.Context) (*agent.Session, subagent.Parent, error) {
	ss, ok := agent.FromContext(ctx)
	if !ok {
		return nil, subagent.Parent{}, tools.Errorf("NO_SESSION", "delegation tools run only inside an agent turn")
	}
	_, depth := ss.Parent()
	return ss, subagent.Parent{SessionID: ss.ID(), Scope: ss.Scope(), Depth: depth, Cwd: ss.Cwd()}, nil
}

func toolErr(err error) error {
	if c := subagent.CodeOf(err); c != "" {
		return tools.Errorf(string(c), "%s", strings.TrimPrefix(err.Error(), string(c)+": "))
	}
	return err
}

func (p *plugin) taskTool() *tools.Tool {
	desc := strings.TrimSpace(taskText) + "\n\nAgent types:\n" + p.catalog()
	return tools.Define("task", desc, p.task,
		tools.WithConcurrencySafe(func(taskArgs) bool { return true }), tools.WithInternal(),
		tools.WithRender(render[taskArgs]), tools.WithMeta(meta[taskArgs]), tools.WithPresent(presentTask))
}

// catalog lists the definitions for the task description.
func (p *plugin) catalog() string {
	var b strings.Builder
	b.WriteString("- (omitted): a general-purpose agent with your tools\n")
	for _, d := range p.defs {
		fmt.Fprintf(&b, "- %s: %s", d.Name, d.Description)
		if d.Tools != nil {
			fmt.Fprintf(&b, " (tools: %s)", strings.Join(d.Tools, ", "))
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func (p *plugin) definition(name string) (subagent.Definition, error) {
	for _, d := range p.defs {
		if d.Name == name {
			return d, nil
		}
	}
	names := make([]string, len(p.defs))
	for i, d := range p.defs {
		names[i] = d.Name
	}
	return subagent.Definition{}, tools.Errorf(string(subagent.CodeInvalidRequest), "unknown subagent_type %q (known: %s)", name, strings.Join(names, ", "))
}

// task starts a child and, unless in the background, waits for its answer.
func (p *plugin) task(ctx context.Context, _ *tools.Execution, a taskArgs) (Answer, error) {
	ss, parent, err := caller(ctx)
	if err != nil {
		return Answer{}, err
	}
	req := subagent.Request{Parent: parent, Description: a.Description, Prompt: a.Prompt, Continuable: a.Continuable, Fork: a.Fork}
	provider := p.cfg.Provider
	if a.SubagentType != "" {
		d, err := p.definition(a.SubagentType)
		if err != nil {
			return Answer{}, err
		}
		req.Agent, req.Persona, req.Model, req.Tools = d.Name, d.Persona, d.Model, d.Tools
		if d.Provider != "" {
			provider = d.Provider
		}
	}
	runCtx := ctx
	if a.Background {
		runCtx = background(ctx, ss)
	}
	run, err := p.svc.Start(runCtx, provider, req)
	if err != nil {
		return Answer{}, toolErr(err)
	}
	if a.Background {
		p.mu.Lock()
		p.background[run.ID()] = ss
		p.mu.Unlock()
		return Answer{AgentID: run.ID(), Depth: run.Info().Depth, Running: true,
			Text: "Agent " + run.ID() + " is running in the background; its answer will arrive as a notification."}, nil
	}
	return settle(ctx, run)
}

// background returns a context for a background child: the tool call's
// values without its cancellation, cancelled when the parent session closes.
func background(ctx context.Context, ss *agent.Session) context.Context {
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if err := ss.Context().Effect("background subagent", func() (func(), error) { return cancel, nil }); err != nil {
		cancel()
	}
	return bctx
}

// settle waits for run's turn, even after ctx ends (the child then stops
// promptly and records its aborted results), and rolls its usage up.
func settle(ctx context.Context, run *subagent.Run) (Answer, error) {
	out, err := run.Wait(context.WithoutCancel(ctx))
	if err != nil {
		return Answer{}, err
	}
	agent.AddChildUsage(ctx, llm.Usage{PromptTokens: out.Usage.PromptTokens, CompletionTokens: out.Usage.CompletionTokens, TotalTokens: out.Usage.TotalTokens})
	ans := Answer{Text: out.Text, AgentID: run.ID(), Status: out.Status, Usage: out.Usage, Depth: run.Info().Depth, Error: out.Error}
	switch out.Status {
	case subagent.StatusAborted:
		return ans, tools.Errorf(tools.CodeAborted, "agent %s was interrupted: %s", run.ID(), out.Error)
	case subagent.StatusFailed:
		return ans, tools.Errorf(CodeFailed, "agent %s failed: %s", run.ID(), out.Error)
	}
	return ans, nil
}

func render[A any](_ A, out Answer) []tools.Content {
	return []tools.Content{tools.Text(out.Text)}
}

func meta[A any](_ A, out Answer) any {
	return answerMeta{AgentID: out.AgentID, SessionID: out.AgentID, Status: out.Status, Usage: out.Usage, Depth: out.Depth}
}

type sendArgs struct {
	AgentID string `json:"agent_id" jsonschema:"description=The id of one of your agents (from task or list_agents)"`
	Message string `json:"message" jsonschema:"description=The next message for the agent"`
	NoWait  bool   `json:"no_wait,omitempty" jsonschema:"description=Return at once; the answer arrives later as a notification"`
}

func (p *plugin) sendTool() *tools.Tool {
	return tools.Define("send_message", "Send a message to one of your agents (started with task continuable:true, possibly in an earlier session) and wait for its answer. Only your direct agents can be messaged.",
		p.send, tools.WithConcurrencySafe(func(sendArgs) bool { return true }), tools.WithInternal(),
		tools.WithRender(render[sendArgs]), tools.WithMeta(meta[sendArgs]), tools.WithPresent(presentSend))
}

func (p *plugin) send(ctx context.Context, _ *tools.Execution, a sendArgs) (Answer, error) {
	ss, parent, err := caller(ctx)
	if err != nil {
		return Answer{}, err
	}
	runCtx := ctx
	if a.NoWait {
		runCtx = background(ctx, ss)
	}
	run, err := p.svc.Send(runCtx, parent, a.AgentID, a.Message)
	if err != nil {
		return Answer{}, toolErr(err)
	}
	if a.NoWait {
		p.mu.Lock()
		p.background[run.ID()] = ss
		p.mu.Unlock()
		return Answer{AgentID: run.ID(), Running: true, Depth: run.Info().Depth, Text: "Message sent to agent " + run.ID() + "."}, nil
	}
	return settle(ctx, run)
}

type interruptArgs struct {
	AgentID string `json:"agent_id" jsonschema:"description=The id of one of your running agents"`
}

func (p *plugin) interruptTool() *tools.Tool {
	return tools.Define("interrupt_agent", "Interrupt the running turn of one of your agents (its tools are stopped; it keeps its session if continuable).",
		func(ctx context.Context, _ *tools.Execution, a interruptArgs) (string, error) {
			_, parent, err := caller(ctx)
			if err != nil {
				return "", err
			}
			if err := p.svc.Interrupt(parent.SessionID, a.AgentID); err != nil {
				return "", toolErr(err)
			}
			return "Agent " + a.AgentID + " was interrupted.", nil
		}, tools.WithConcurrencySafe(func(interruptArgs) bool { return true }), tools.WithInternal(), tools.WithPresent(presentInterrupt))
}

func (p *plugin) listTool() *tools.Tool {
	return tools.Define("list_agents", "List your agents (direct children): id, description, status, whether they can take messages.",
		func(ctx context.Context, _ *tools.Execution, _ struct{}) (string, error) {
			_, parent, err := caller(ctx)
			if err != nil {
				return "", err
			}
			list, err := p.svc.Children(ctx, parent.SessionID)
			if err != nil && len(list) == 0 {
				return "", err
			}
			if len(list) == 0 {
				return "You have no agents.", nil
			}
			var b strings.Builder
			for _, i := range list {
				state := "idle"
				switch {
				case i.Running:
					state = "running"
				case !i.Live:
					state = "stored"
				}
				if i.Last != nil {
					state += ", last turn " + string(i.Last.Status)
				}
				fmt.Fprintf(&b, "- %s (%s) %q: %s, continuable=%v\n", i.ID, cmpOr(i.Agent, "general"), i.Description, state, i.Continuable)
			}
			return strings.TrimRight(b.String(), "\n"), nil
		}, tools.WithReadOnly(), tools.WithConcurrencySafe(func(struct{}) bool { return true }), tools.WithPresent(presentList))
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
