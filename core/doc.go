// Package core is the harness runtime: a Cordis-style service container for
// Go. Everything in a harness is a plugin; this package gives plugins their
// lifecycle, their services, their events and their scopes.
//
// # The picture
//
//	Root ─ root Fiber ─┬─ Fiber (plugin "tools", active)     ── effects: provide "tools", listeners …
//	                   ├─ Fiber (plugin "tool-bash", pending: waiting for "subprocess")
//	                   └─ Fiber (plugin "agent")
//	                         └─ Fiber (scope "session-1")   ── scoped listeners, tools, prompt sections
//
// A [Plugin] is one value: a name, the services it injects, a typed config and
// an Apply function ([Define]). Mounting a plugin ([Context.Plugin]) creates a
// [Fiber], one plugin instance. Everything the plugin registers while applied
// (a service, a listener, a child plugin, a goroutine, a file, a process) is an
// effect of its fiber ([Context.Effect]) and is undone when the fiber unloads,
// one at a time, in reverse order, exactly once.
//
// # States
//
// pending (waiting for services) → loading (Apply running) → active | failed
// → unloading → pending (reload) or disposed. A fiber whose injected services
// are missing is pending, not failed: it activates when the services appear,
// and when a service it uses goes away it unloads and waits again. An error or
// panic in Apply rolls back the effects registered so far and leaves the fiber
// failed; its parent and siblings keep running. Failed fibers are retried when
// a dependency changes or on [Fiber.Update].
//
// # Concurrency
//
// Lifecycle transitions go through one queue per [Root], drained by whichever
// caller finds it idle. Apply therefore never runs nested inside another
// Apply: a service provided inside Apply activates its dependents after that
// Apply returns. No user code (Apply, disposers, listeners) is called while a
// lock is held. Each activation gets a context.Context ([Context.Context])
// cancelled when that activation starts unloading; goroutines started with
// [Go] are awaited before the fiber finishes unloading (the unload parks at a
// goroutine that has not returned, without holding up the queue).
//
// A call made from inside the lifecycle never waits on it: [Fiber.Dispose]
// and [Fiber.Update] schedule and return, and the host waits with
// [Fiber.Await] or [Fiber.Done], bounded by its own context. A wait made with
// a context core handed out (an activation's, a Go body's, a StatusChanged
// listener's) on the transition that runs its caller returns
// [ErrInTransition]. Callers are identified by those contexts, never by
// goroutine identity.
//
// # Events
//
// An event's dispatch mode is part of its type: [EmitEvent] (every listener
// runs; errors and panics are contained and logged), [BailEvent] (in order;
// the first handled result or the first error stops), [WaterfallEvent] (each
// listener receives next; not calling it short-circuits; errors and panics
// propagate to the dispatcher, so a failing policy hook fails closed). An
// event is dispatched by a method of its value, given a [Target]:
//
//	Greeted.Emit(ctx, c.Here(), name)                   // EmitEvent
//	r, handled, err := Ask.Bail(ctx, c.To(scope), q)     // BailEvent
//	d, err := PreExecute.Run(ctx, c.To(scope), e, inner) // WaterfallEvent
//
// Listeners run in registration order, [Prepend] puts one first, and the
// listener list is snapshotted when a dispatch starts.
//
// # Scopes
//
// A [ScopeID] names, for example, one agent session, with an optional parent.
// [NewScope] mints a child fiber whose [Context] carries that id. Listeners
// registered through a scoped context receive only dispatches targeted
// ([Context.To]) at that scope or one of its descendants; unscoped listeners
// receive every dispatch. Disposing the scope removes everything registered through it.
//
// The contracts follow Cordis 4 as vendored by DeepSeek Harness (dsh), with
// the deliberate Go differences documented on each type: strictly sequential
// LIFO disposal, services withdrawn and dependents drained before a
// provider's other disposers run, contained Emit, fail-closed Waterfall, and
// an explicit (R, bool) for Bail.
package core
