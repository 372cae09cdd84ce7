// Package subagenttools is the subagent-tools plugin: the model's
// delegation tools over the subagents service, and the agent definitions
// they offer.
//
//	task            {description, prompt, subagent_type?, continuable?, fork?, run_in_background?}
//	                → the child's final answer; meta {agentId, sessionId, status, usage, depth}
//	send_message    {agent_id, message, wait?}  → a direct child's next answer
//	interrupt_agent {agent_id}                  → stops a direct child's running turn
//	list_agents     {}                          → the caller's direct children, live and stored
//
// Calls run inside an agent turn: the calling session is the parent (its
// id, scope and depth); the child's usage is rolled up into the parent's
// turn result. task calls are parallel-safe, so several in one model step
// run at once. Agent definitions (Markdown with YAML front matter) are read
// when the plugin starts from .harness/agents and .claude/agents under the
// working directory and from $XDG_CONFIG_HOME/harness/agents, and listed in
// the task tool's description. A background child (run_in_background)
// returns its id at once; when it settles its final content is added to the
// parent's history as one notice before the parent's next model request.
package subagenttools
