// Package spillpolicy is the spill-policy plugin: it keeps oversized
// plain-text tool results out of the model's context.
//
// A prepended listener on the tools service's PostExecute waterfall calls
// next() first, so it bounds whatever the downstream listeners accepted. When
// an accepted top-level result's text exceeds MaxInlineBytes (no default:
// omitted or 0 registers nothing; the default manifest sets 50 000), the full
// text goes to the spill store ("spillStore") and the content becomes
// [Preview]: the head and tail of the text, a blank line, and the [Notice]
// "(Omitted N bytes. Full formatted result stored at: <locator>. <hint>)",
// together at most MaxInlineBytes bytes.
//
// Skipped: the read tool (no read → spill → read loop), nested calls, value
// replacements, blocks, and results with non-text content. A spill never fails
// a call: without an owner session or a store, on a save error, or when no
// preview fits the cap, the original content is kept and a warning logged.
//
// Contract: dsh spill-policy (reference part B3), including its worked
// example byte for byte.
package spillpolicy
