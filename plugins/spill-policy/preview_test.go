package spillpolicy

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dshgo/harness/services/spill"
	"go.uber.org/goleak"
)

var stubRef = spill.Ref{Locator: "/spill/big.txt", Hint: "Use the stub retrieval path.", Bytes: 1600}

// The worked example of reference B3 (dsh test "spills the full text…"),
// byte for byte.
func TestPreviewMatchesTheReferenceWorkedExample(t *testing.T) {
	text := strings.Repeat("HEAD", 200) + strings.Repeat("TAIL", 200) // 1600 bytes
	got, ok := Preview(text, 200, stubRef)
	if !ok {
		t.Fatal("no preview")
	}
	// notice(1600) is 99 bytes, so the reserve is 101 and the budget 99:
	// head 50, tail 49, omitted 1501.
	want := strings.Repeat("HEAD", 12) + "HE" + "L" + strings.Repeat("TAIL", 12) +
		"\n\n(Omitted 1501 bytes. Full formatted result stored at: /spill/big.txt. Use the stub retrieval path.)"
	if got != want {
		t.Errorf("Preview =\n%q\nwant\n%q", got, want)
	}
	if len(got) != 200 {
		t.Errorf("len = %d, want exactly 200", len(got))
	}
}

func TestPreviewPricesTheNoticeAtTheWorstCase(t *testing.T) {
	// 10 000 bytes: the notice is priced with 5 digits; the real omission
	// has 4, so the replacement is one byte short of the cap (dsh does not
	// re-spend the slack).
	text := strings.Repeat("x", 10_000)
	for _, cap := range []int{120, 121, 500, 4096} {
		got, ok := Preview(text, cap, stubRef)
		if !ok || len(got) != cap-1 {
			t.Errorf("cap %d: len = %d ok=%v, want %d", cap, len(got), ok, cap-1)
		}
	}
}

func TestPreviewMultibyteStaysValidAndWithinCap(t *testing.T) {
	text := strings.Repeat("日本語のテキスト😀", 2000)
	for cap := 100; cap < 140; cap++ {
		got, ok := Preview(text, cap, stubRef)
		if !ok {
			t.Fatalf("cap %d: no preview", cap)
		}
		if len(got) > cap || len(got) < cap-6 {
			t.Errorf("cap %d: len = %d", cap, len(got))
		}
		if !utf8.ValidString(got) {
			t.Errorf("cap %d: invalid UTF-8 in preview", cap)
		}
	}
}

func TestPreviewRefusesWhenNothingFits(t *testing.T) {
	text := strings.Repeat("x", 1000)
	if _, ok := Preview(text, 50, stubRef); ok {
		t.Error("a cap smaller than the notice produced a preview")
	}
	if _, ok := Preview("small", 50, stubRef); ok {
		t.Error("text within the cap produced a preview")
	}
	// A cap that fits only the notice yields the notice alone.
	notice := Notice(1000, stubRef)
	got, ok := Preview(text, len(notice), stubRef)
	if !ok || got != notice {
		t.Errorf("notice-only cap: %q %v", got, ok)
	}
}

func TestPreviewOfTwoMegabyteResult(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 2<<20; i++ {
		b.WriteString(strings.Repeat("row ", 10))
		b.WriteString("\n")
	}
	text := b.String()
	got, ok := Preview(text, 50_000, stubRef)
	if !ok || len(got) != 50_000 {
		t.Fatalf("len = %d ok=%v", len(got), ok)
	}
	preview, notice, _ := strings.Cut(got, "\n\n(Omitted ")
	if !strings.HasPrefix(preview, text[:20_000]) || !strings.HasSuffix(preview, text[len(text)-20_000:]) || strings.Contains(notice, "\n") {
		t.Error("preview lost the head or the tail")
	}
	if !strings.Contains(got, "Full formatted result stored at: /spill/big.txt. Use the stub retrieval path.)") {
		t.Error("notice missing")
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
