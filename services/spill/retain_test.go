package spill

import "testing"

func TestHeadTail(t *testing.T) {
	for _, tc := range []struct {
		name       string
		text       string
		head, tail int
		wantHead   string
		wantTail   string
		omitted    int
	}{
		{"cut middle", "abcdefghij", 3, 3, "abc", "hij", 4},
		{"fits exactly", "abcdef", 3, 3, "abcdef", "", 0},
		{"straddling rune survives when nothing is cut", "éab", 1, 3, "éab", "", 0},
		{"head cut inside rune", "a€b€", 2, 0, "a", "", 7},
		{"tail cut inside rune", "ab€", 0, 2, "", "", 5},
		{"tail starts after continuation", "xx€yz", 0, 4, "", "yz", 5},
		{"zero budgets", "abc", 0, 0, "", "", 3},
		{"negative budgets", "abc", -1, -5, "", "", 3},
		{"four byte rune head", "😀😀", 5, 0, "😀", "", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, tl, om := HeadTail(tc.text, tc.head, tc.tail)
			if h != tc.wantHead || tl != tc.wantTail || om != tc.omitted {
				t.Errorf("HeadTail(%q,%d,%d) = %q, %q, %d; want %q, %q, %d",
					tc.text, tc.head, tc.tail, h, tl, om, tc.wantHead, tc.wantTail, tc.omitted)
			}
		})
	}
}
