// Package tools is the tool registry and its execution pipeline: typed tool
// definitions, argument validation at one choke point, scoped registration and
// restriction, and a pipeline that turns every call into a result — never a
// panic, never a Go error.
//
// # Defining a tool
//
// A typed tool is a Go function over an Args struct and an Out value:
//
//	type readArgs struct {
//		Path  string `json:"path" jsonschema:"description=File to read"`
//		Limit int    `json:"limit,omitempty" jsonschema:"minimum=1"`
//	}
//	var Read = tools.Define("read", "Read a file.",
//		func(ctx context.Context, e *tools.Execution, a readArgs) (string, error) { ... },
//		tools.WithConcurrencySafe(func(readArgs) bool { return true }))
//
// The model-facing parameter schema is generated from Args with
// invopop/jsonschema (inlined, closed objects; fields required unless
// omitempty). DefineRaw takes a JSON Schema document instead (MCP, hooks).
// Register with Register(c, Read) from a plugin that injects "tools": the tool
// is an effect of that plugin's fiber and disappears when it unloads.
//
// # Validation
//
// Arguments arrive as the model's raw JSON text ("" means {}). They are
// validated with santhosh-tekuri/jsonschema/v6 against the schema compiled once
// per tool, before any policy. Every violation is reported with its JSON
// Pointer path and keyword, e.g.
//
//	invalid arguments: /limit: minimum: must be >= 1, got 0; /line_limit: additionalProperties: unknown key "line_limit" (allowed keys: limit, path)
//
// as an INVALID_ARGS result; the body never runs. There are two coercions,
// both recorded in Execution.Coercions: an integer-valued string ("5") where an
// integer or number is expected becomes that number, and in valid arguments a
// number where the schema says integer that is not written as one (100.0, 1e2,
// -0) is rewritten as that integer (100, 100, 0), so a Go integer field holds
// it. A schema-valid number the typed tool's Go field still cannot hold is a
// range violation at the value's path, with list indices and map keys:
//
//	invalid arguments: /items/1/limit: range: must be between 0 and 255 for uint8, got 300
//
// The library is the only authority for rejections, their messages and
// coercion: arguments are accepted, rejected and coerced exactly as the
// library decides.
//
// # The pipeline
//
//	Execute(ctx, Call)
//	  create execution ─ validate ─ already cancelled?
//	  PreExecute waterfall (allow | deny | cancel | ask) ⊕ OnPreExecute votes
//	  ask → Approver (ApprovalKey, looked up per call; absent ⇒ deny)
//	  guards (monotonic: a reason denies, nothing overrides it)
//	  Execute waterfall ─ body (fused context; never abandoned) ─ render, meta
//	  PostExecute waterfall (accept | replace content | replace value | block)
//	  finalize ─ Result event (observers contained)
//
// All four events are dispatched to the call's scope (c.To(call.Scope)):
// listeners registered through an agent's scoped context see only that agent's
// calls; unscoped listeners see all. See Registry.Execute for the exact order
// (dsh A9) and the error codes (UNKNOWN_TOOL, INVALID_ARGS,
// INVALID_TOOL_OUTPUT, ABORTED, ABORTED_BEFORE_DISPATCH, TOOL_TIMEOUT).
//
// Precedence deny > cancel > ask > allow: OnPreExecute votes merge whatever
// their order and cannot be weakened by other listeners; guards deny after any
// waterfall outcome. Both hold for every path into the registry (the agent
// loop, Scheduler, a plugin calling Registry.Execute, nested calls).
//
// # Approval
//
// The registry does not answer asks itself. A plugin (the permission plugin)
// provides an Approver under ApprovalKey ("approval"); the registry looks it up
// when an ask happens. Without one, an ask is a denial.
//
// # Scheduling
//
// Scheduler runs one model step's calls: policy and results in model order,
// bodies of consecutive parallel-safe calls overlapped (default limit 10),
// exclusive calls alone.
//
// The contract is dsh's tool registry (packages/core/tools), paraphrased in
// reference/tools-and-prompt.md part A; deviations: invalid arguments are
// rejected for raw tools too and before pre-execute (a final result), an
// unknown tool skips policy (its result still goes through PostExecute), and
// typed tools' outputs are trusted by type (raw tools' are validated), and an
// ask on an unscoped call is still offered to the approval service (which
// sees a nil Scope) instead of being denied outright, so `harness tool` can be
// approved at a terminal.
package tools
