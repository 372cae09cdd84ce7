// Package systemprompt assembles the model input of every agent step: the
// system prompt, the runtime-context snapshot, the tool schemas and the
// prompt variables. It ports dsh's system-prompt service (key
// "systemPrompt"; reference: tools-and-prompt.md part C, the newer
// behaviour with persona prefix/suffix and named orders).
//
// # The picture
//
//	plugins ──Section / Context / Variable / Tools / SuppressRuntimeContext──► layers
//	          (each an effect of the calling fiber, in the layer of its scope)
//	                                  │
//	Assemble(ctx, AssembleContext{Scope}) ── merge global + scope chain (nearer shadows)
//	   → variables → tool schemas → sort (order, then name) → resolve texts
//	   → toolOrder → AssembleEvent waterfall (scoped) → complete/suppression enforced
//	                                  │
//	Render(assembly) → system prompt;  RenderContextSnapshot(assembly) → user message
//
// # Guarantees
//
//   - Sections sort by order, ties by name in UTF-16 code-unit order (dsh
//     parity), so the prompt is identical on every machine. SectionOrder
//     names the slots: identity at -1000, the deployment persona prefix at
//     0, policies, tool guidance (bash 1000, read 1100, ... grep 1500), the
//     environment-bearing tail, the persona suffix at 10200.
//   - Rendering is strict and single-pass: a malformed {{...}} group, an
//     unknown variable or a variable without a value is an error naming the
//     section; substituted values are never scanned again.
//   - Runtime data never breaks assembly (case B27): contexts and
//     TextFunc-computed section texts are verbatim unless they opt in, a
//     failing context provider is dropped with a warning, and a static
//     section template referencing an unknown variable is rejected when it
//     is registered, not in the middle of a turn.
//   - Each Assemble returns fresh values; providers run without locks held;
//     panics in providers become errors (sections, tools) or warnings
//     (contexts, variables); nothing panics the host.
//
// # Deviations from dsh
//
// Interpolation defaults differ for runtime data (see Interpolation and
// PromptContext.Interpolate); "registered variables" and "known tools" in
// error messages are sorted; the global duplicate message points at the
// agent's scoped context instead of dsh's agent.ctx; contexts tie-break by
// name like sections.
package systemprompt
