package cli

import (
	"bufio"
	"strings"
	"testing"
)

// Chat input lines: CR LF and a final line without a newline are lines; a
// line over maxInputLine is skipped whole (reported, not fatal), and the
// lines after it still arrive.
func TestReadLine(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", maxInputLine+1)
	exact := strings.Repeat("b", maxInputLine)
	for _, c := range []struct {
		name, in string
		want     []inputLine
	}{
		{"plain", "one\ntwo\n", []inputLine{{text: "one"}, {text: "two"}}},
		{"crlf and no final newline", "one\r\ntwo", []inputLine{{text: "one"}, {text: "two"}}},
		{"empty lines", "\n\nx\n", []inputLine{{}, {}, {text: "x"}}},
		{"too long then more", "short\n" + long + "\nafter\n", []inputLine{{text: "short"}, {tooLong: true}, {text: "after"}}},
		{"too long at the end", long, []inputLine{{tooLong: true}}},
		{"exactly the limit", exact + "\r\n", []inputLine{{text: exact}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			br := bufio.NewReaderSize(strings.NewReader(c.in), 64<<10)
			var got []inputLine
			for {
				l, ok := readLine(br)
				if !ok {
					break
				}
				got = append(got, l)
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %d lines, want %d", len(got), len(c.want))
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("line %d: got %.20q (tooLong %v), want %.20q (tooLong %v)", i, got[i].text, got[i].tooLong, c.want[i].text, c.want[i].tooLong)
				}
			}
		})
	}
}
