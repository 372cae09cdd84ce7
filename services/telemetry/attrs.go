package telemetry

import "go.opentelemetry.io/otel/attribute"

// Span names' operation prefixes (the GenAI conventions' operation names):
// "invoke_agent {agent}", "chat {model}", "execute_tool {tool}".
const (
	OpInvokeAgent = "invoke_agent"
	OpChat        = "chat"
	OpExecuteTool = "execute_tool"
)

// Attributes of the harness's own namespace, set besides the GenAI
// conventions' gen_ai.* attributes.
const (
	// AttrJobID is the fleet job's id (int) on a job's spans.
	AttrJobID = attribute.Key("harness.job.id")
	// AttrJobAttempt is the job's attempt, from 1 (int).
	AttrJobAttempt = attribute.Key("harness.job.attempt")
	// AttrJobQueue is the queue the job ran from (worker span).
	AttrJobQueue = attribute.Key("harness.job.queue")
	// AttrTurn is the turn's number in its session, from 1 (invoke_agent).
	AttrTurn = attribute.Key("harness.turn")
	// AttrTurnReason is why the turn ended: stop, max_steps, aborted,
	// error, length, concluded or budget (invoke_agent).
	AttrTurnReason = attribute.Key("harness.turn.reason")
	// AttrTurnSteps counts the turn's model calls (invoke_agent).
	AttrTurnSteps = attribute.Key("harness.turn.steps")
	// AttrSessionResumed is true on the turns of a resumed session.
	AttrSessionResumed = attribute.Key("harness.session.resumed")
	// AttrSessionParent is a subagent session's parent session id.
	AttrSessionParent = attribute.Key("harness.session.parent_id")
	// AttrSessionDepth is a subagent session's depth (1 for a child).
	AttrSessionDepth = attribute.Key("harness.session.depth")
	// AttrStep is the step (model call) number within the turn (chat).
	AttrStep = attribute.Key("harness.step")
	// AttrUsageEstimated is true when the provider reported no usage and
	// the token counts are the token meter's estimate (chat).
	AttrUsageEstimated = attribute.Key("harness.usage.estimated")
	// AttrUsageCacheMiss is the prompt tokens the provider's cache did not
	// serve (int; chat, beside gen_ai.usage.cache_read.input_tokens, when
	// the provider split the prompt into hits and misses).
	AttrUsageCacheMiss = attribute.Key("harness.usage.cache_miss.input_tokens")
	// AttrToolDuration is the tool body's wall time in milliseconds
	// (execute_tool; the span itself runs from dispatch to the recorded
	// result).
	AttrToolDuration = attribute.Key("harness.tool.duration_ms")
	// AttrToolDenied is true when a permission decision refused the call.
	AttrToolDenied = attribute.Key("harness.tool.denied")
	// AttrGenAISystem is gen_ai.system, the older name of
	// gen_ai.provider.name, set to the same value for backends that read
	// only it.
	AttrGenAISystem = attribute.Key("gen_ai.system")
)
