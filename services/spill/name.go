package spill

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxNameSegment bounds the sanitised part of a spill file name in bytes, so
// the random prefix plus the name stays far below NAME_MAX (255).
const maxNameSegment = 128

// EncodeSegment reduces an untrusted string (a model-suggested file name, a
// session id) to exactly one safe path segment. It never yields "", "." or
// ".." and never contains a separator or NUL, so the result cannot traverse.
//
// Bytes in [A-Za-z0-9._-] are kept; every other UTF-16 code unit becomes
// "~XXXX" (upper-case hex), "~" itself included; "." and ".." are escaped
// whole; "" becomes "~". This is dsh's encodeSegment: injective over valid
// UTF-8 input ("../etc/passwd" → "..~002Fetc~002Fpasswd"). Invalid UTF-8
// bytes are encoded as U+FFFD.
func EncodeSegment(raw string) string {
	switch raw {
	case "":
		return "~"
	case ".":
		return "~002E"
	case "..":
		return "~002E~002E"
	}
	var b strings.Builder
	b.Grow(len(raw))
	for _, r := range raw {
		if r < utf8.RuneSelf && keepLiteral(byte(r)) {
			b.WriteByte(byte(r))
			continue
		}
		if r > 0xFFFF {
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&b, "~%04X~%04X", hi, lo)
			continue
		}
		fmt.Fprintf(&b, "~%04X", r)
	}
	return b.String()
}

func keepLiteral(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == '-'
}

// boundedSegment is EncodeSegment cut to at most maxNameSegment bytes at an
// escape boundary (never inside "~XXXX"). A cut result is still one safe
// segment; it is never "." or ".." because those encode longer.
func boundedSegment(raw string) string {
	enc := EncodeSegment(raw)
	if len(enc) <= maxNameSegment {
		return enc
	}
	cut := maxNameSegment
	// Back off if the cut lands inside an escape: an escape is "~" + 4 hex.
	for i := max(0, cut-4); i < cut; i++ {
		if enc[i] == '~' && i+5 > cut {
			cut = i
			break
		}
	}
	return enc[:cut]
}
