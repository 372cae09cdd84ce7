package subagenttools

import (
	"fmt"

	"github.com/dshgo/harness/services/tools"
)

// The delegation tools' presentations (tools.WithPresent): kind think (the
// agent hands part of its work to another agent), titled with the task's
// description or the agent addressed; pending, what the child is asked;
// done, its answer as text and the agent, status and tokens as the summary.

// presentTask is task's presentation: titled with the description and
// the agent type ("Find the flaky test (explorer)").
func presentTask(in tools.PresentInput[taskArgs, Answer]) tools.Presentation {
	title := in.Args.Description
	if in.Args.SubagentType != "" {
		title += " (" + in.Args.SubagentType + ")"
	}
	return presentAnswer(in.Pending(), in.Succeeded(), title, in.Args.Prompt, in.Out)
}

// presentSend is send_message's presentation: titled "to AGENT".
func presentSend(in tools.PresentInput[sendArgs, Answer]) tools.Presentation {
	return presentAnswer(in.Pending(), in.Succeeded(), "to "+in.Args.AgentID, in.Args.Message, in.Out)
}

// presentAnswer is the presentation of a call that asks an agent: the
// request while pending, the answer once it succeeded.
func presentAnswer(pending, succeeded bool, title, request string, out Answer) tools.Presentation {
	p := tools.Presentation{Kind: tools.KindThink, Title: title}
	switch {
	case pending:
		p.Content = []tools.ToolCallContent{tools.TextContent(request)}
	case succeeded && out.Running:
		p.Content = []tools.ToolCallContent{tools.TextContent(out.Text)}
		p.Summarize("agent " + out.AgentID + " running in the background")
	case succeeded:
		p.Content = []tools.ToolCallContent{tools.TextContent(out.Text)}
		p.Summarize(fmt.Sprintf("agent %s %s, %d tokens", out.AgentID, out.Status, out.Usage.TotalTokens))
	}
	return p
}

// presentInterrupt is interrupt_agent's presentation: titled with the agent.
func presentInterrupt(in tools.PresentInput[interruptArgs, string]) tools.Presentation {
	return tools.Presentation{Kind: tools.KindThink, Title: in.Args.AgentID}
}

// presentList is list_agents' presentation: the list as text.
func presentList(in tools.PresentInput[struct{}, string]) tools.Presentation {
	p := tools.Presentation{Kind: tools.KindRead, Title: "your agents"}
	if in.Succeeded() {
		p.Content = []tools.ToolCallContent{tools.TextContent(in.Out)}
	}
	return p
}
