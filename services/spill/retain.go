package spill

import "unicode/utf8"

// HeadTail keeps at most headBytes bytes from the start of text and at most
// tailBytes bytes from its end, for a preview of an oversized result.
//
// When headBytes+tailBytes covers the whole text, head is text, tail is "" and
// omitted is 0: nothing is cut, so a rune straddling the split survives.
// Otherwise the cuts respect UTF-8: an incomplete sequence at the end of head
// and continuation bytes at the start of tail are dropped, so neither side
// begins or ends inside a rune, and omitted counts the bytes actually absent
// (len(text) - len(head) - len(tail)). Negative budgets count as 0.
// These are the output-retention rules of dsh's TextRetainer headTail
// (reference B4).
func HeadTail(text string, headBytes, tailBytes int) (head, tail string, omitted int) {
	headBytes, tailBytes = max(headBytes, 0), max(tailBytes, 0)
	if headBytes+tailBytes >= len(text) {
		return text, "", 0
	}
	head = trimIncompleteEnd(text[:headBytes])
	tail = trimContinuationStart(text[len(text)-tailBytes:])
	return head, tail, len(text) - len(head) - len(tail)
}

// trimIncompleteEnd drops a trailing UTF-8 sequence that the cut left
// incomplete. Malformed bytes that are not a cut sequence are left alone.
func trimIncompleteEnd(s string) string {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				return s[:i]
			}
			return s
		}
	}
	return s
}

// trimContinuationStart drops leading continuation bytes (at most three, the
// most a cut can leave) so the tail starts at a rune boundary.
func trimContinuationStart(s string) string {
	i := 0
	for i < len(s) && i < utf8.UTFMax-1 && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
