package spillpolicy

import (
	"fmt"

	"github.com/dshgo/harness/services/spill"
)

// Notice is the one line that replaces the omitted middle of a spilled
// result: "(Omitted <n> bytes. Full result saved to <locator>. <hint>)".
func Notice(omitted int, ref spill.Ref) string {
	return fmt.Sprintf("(Omitted %d bytes. Full result saved to %s. %s)", omitted, ref.Locator, ref.Hint)
}

// separator joins the head, the notice and the tail.
const separator = "\n\n"

// Preview builds the model-facing replacement for text, which was saved in
// full as ref: the head of text, a blank line, the [Notice], a blank line, and
// the tail of text. The result is at most maxBytes bytes; for ASCII text it is
// exactly maxBytes (the budget is re-spent while the notice's count shrinks),
// and with multi-byte text it may fall short by the bytes of a rune that a cut
// could not split. The budget is split head = ceil(b/2), tail = floor(b/2)
// under the UTF-8 rules of [spill.HeadTail].
//
// ok is false when no replacement fits: text is not larger than maxBytes
// (nothing to replace), or the notice alone does not fit maxBytes (a tiny cap
// or a long locator). The caller then keeps the original text.
func Preview(text string, maxBytes int, ref spill.Ref) (replacement string, ok bool) {
	if len(text) <= maxBytes {
		return "", false
	}
	// Price the notice at the worst-case count (every byte omitted): the real
	// count has no more digits, so the first layout never exceeds the cap.
	budget := maxBytes - len(Notice(len(text), ref)) - 2*len(separator)
	if budget < 0 {
		budget = 0
	}
	best := ""
	for range 8 {
		out := layout(text, budget, ref)
		if len(out) > maxBytes {
			break
		}
		best = out
		slack := maxBytes - len(out)
		if slack == 0 {
			break
		}
		budget += slack
	}
	if best == "" {
		return "", false
	}
	return best, true
}

func layout(text string, budget int, ref spill.Ref) string {
	head, tail, omitted := spill.HeadTail(text, (budget+1)/2, budget/2)
	out := Notice(omitted, ref)
	if head != "" {
		out = head + separator + out
	}
	if tail != "" {
		out += separator + tail
	}
	return out
}
