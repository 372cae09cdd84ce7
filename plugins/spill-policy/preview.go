package spillpolicy

import (
	"fmt"

	"github.com/dshgo/harness/services/spill"
)

// Notice is the line that follows the preview of a spilled result, exactly
// as dsh's spill policy words it: "(Omitted <n> bytes. Full formatted
// result stored at: <locator>. <hint>)".
func Notice(omitted int, ref spill.Ref) string {
	return fmt.Sprintf("(Omitted %d bytes. Full formatted result stored at: %s. %s)", omitted, ref.Locator, ref.Hint)
}

// separator stands between the preview and the notice.
const separator = "\n\n"

// Preview builds the model-facing replacement for text, which was saved in
// full as ref (reference B3, dsh spillReplacement): the preview (the head of
// text directly followed by its tail), a blank line, and the [Notice]; or
// the notice alone when the preview is empty.
//
// The notice is priced at the worst-case omission count (every byte of
// text): reserve = len(Notice(len(text))) + 2, budget = max(0, maxBytes −
// reserve), head = ceil(budget/2), tail = floor(budget/2), cut under the
// UTF-8 rules of [spill.HeadTail]; the notice then states the bytes actually
// omitted. The result is therefore at most maxBytes bytes (exactly maxBytes
// when the real count has as many digits as the total and no rune was cut).
//
// ok is false when no replacement fits: text is not larger than maxBytes
// (nothing to replace), or the notice alone is larger than maxBytes (a tiny
// cap or a long locator). The caller then keeps the original text.
func Preview(text string, maxBytes int, ref spill.Ref) (replacement string, ok bool) {
	if len(text) <= maxBytes {
		return "", false
	}
	budget := max(0, maxBytes-len(Notice(len(text), ref))-len(separator))
	head, tail, omitted := spill.HeadTail(text, (budget+1)/2, budget/2)
	out := Notice(omitted, ref)
	if preview := head + tail; preview != "" {
		out = preview + separator + out
	}
	if len(out) > maxBytes {
		return "", false
	}
	return out, true
}
