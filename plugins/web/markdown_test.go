package web

import (
	"strings"
	"testing"
)

// TestMarkdown: markdown becomes HTML; the model's own HTML is shown as
// text (escaped), dangerous link schemes are dropped, and nothing that
// runs script is left.
func TestMarkdown(t *testing.T) {
	got, ok := markdown()("**outside**\n\n- `file`\n- <img src=x onerror=\"alert(1)\">\n- [go](javascript:alert(2))\n\n<script>alert(3)</script>\n")
	if !ok {
		t.Fatal("not rendered")
	}
	for _, want := range []string{"<strong>outside</strong>", "<code>file</code>", "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;", "&lt;script&gt;alert(3)&lt;/script&gt;", "go"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	for _, bad := range []string{"<img", "<script", "javascript:", "onerror=\""} {
		if strings.Contains(got, bad) {
			t.Errorf("%q left in\n%s", bad, got)
		}
	}
	if _, ok := markdown()(strings.Repeat("a", maxMarkdown+1)); ok {
		t.Error("a text over maxMarkdown was rendered")
	}
}

// BenchmarkMarkdown renders a typical answer of about 2 KB (paragraphs, a
// list, a code block, a table) to sanitised HTML.
//
//	go test ./plugins/web -run '^$' -bench Markdown
func BenchmarkMarkdown(b *testing.B) {
	src := strings.Repeat("Some **bold** text with `code` and a [link](https://example.com).\n\n- one\n- two <b>raw</b>\n\n```go\nfunc main() {}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n", 8)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, ok := markdown()(src); !ok {
			b.Fatal("not rendered")
		}
	}
}
