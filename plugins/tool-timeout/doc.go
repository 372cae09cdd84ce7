// Package tooltimeout is the tool-timeout plugin: it enforces the timeout a
// tool declares (tools.WithTimeout) as a tools.Execute listener, the dsh
// tool-call timeout policy.
//
//	Execute waterfall ─ tool-timeout: ctx' = ctx + deadline ─ … ─ body(ctx')
//	                     timer fired? ⇒ "Error: tool call timed out after <ms>ms" (TOOL_TIMEOUT)
//
// For a tool with a declared timeout it passes a context with that deadline to
// the rest of the chain. When its own deadline fired (and the caller did not
// cancel), the result is replaced by the TOOL_TIMEOUT failure, whatever the
// body returned. Tools without a declared timeout pass through untouched (bash,
// for one, enforces its own executor deadline). The body is never abandoned:
// a body that ignores its context is awaited, then reported as timed out.
//
// Where it sits in the Execute chain decides what the deadline covers: mounted
// before a retry listener it bounds the whole retry loop, after it each attempt.
package tooltimeout
