// Package subagent is the subagents service: a registry of named providers
// that start child agents for a parent session, with the lineage rules that
// say who may talk to which child.
//
//	model ── task / send_message / interrupt_agent / list_agents (plugins/subagent-tools)
//	              │
//	              ▼
//	Service (Key "subagents") ── capabilities check ── lineage check
//	              │ Start(ctx, provider, Request) ─► Run (owned by the caller)
//	              ▼
//	Provider "inprocess" (plugins/subagent-inprocess): a child agent session
//	Provider "codex" (examples/codex): an external agent through the subprocess service
//
// # Providers and capabilities
//
// A [Provider] advertises the start-time capabilities it honours
// ([Capabilities]). [Service.Start] computes what a [Request] needs
// ([Request.Needs]) and refuses a request that needs a capability the
// provider lacks with an [*Error] of code [CodeUnsupportedCapability]: a
// request is never accepted and then partly ignored.
//
// # Runs and children
//
// Start returns a [*Run]: the child's id (its session id), its final answer
// when it settles ([Run.Wait]), its usage and status. A continuable child
// (capability [CapContinuable]) keeps its session after it settles: its parent
// may send it another message ([Service.Send]), which runs a new turn, and may
// interrupt a running turn ([Service.Interrupt]). A child whose provider
// supports [CapResume] can be continued after the process that started it
// has gone: the provider reopens it from its stored session.
//
// # Lineage
//
// Authority is by lineage only: a session may send to, interrupt and list
// its direct children. Siblings, grandchildren and ancestors are refused
// with [CodeNotDirectChild]; an unknown id with [CodeUnknownAgent].
//
// # Events
//
// [Started] and [Settled] are emitted to the parent's scope when a child
// starts and each time one of its turns settles; scoped listeners of the
// parent session see them, and global listeners see all.
package subagent
