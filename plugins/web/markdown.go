package web

import (
	"bytes"
	"html"
	"sync"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// maxMarkdown bounds the text rendered as markdown: a longer message is
// shown as plain text by the page.
const maxMarkdown = 512 << 10

// markdown renders an assistant message for the page: CommonMark with
// GitHub's tables, strikethrough, task lists and autolinks (goldmark),
// then sanitised (bluemonday's policy for user content). HTML the model
// writes is shown as text, never as markup; dangerous link schemes
// (javascript:, data:) are dropped.
var markdown = sync.OnceValue(func() func(string) (string, bool) {
	md := goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(rawAsText{}, 100))),
	)
	policy := bluemonday.UGCPolicy()
	policy.RequireNoReferrerOnLinks(true)
	policy.AddTargetBlankToFullyQualifiedLinks(true)
	policy.AllowAttrs("class").Matching(bluemonday.SpaceSeparatedTokens).OnElements("code")
	return func(src string) (string, bool) {
		if src == "" || len(src) > maxMarkdown {
			return "", false
		}
		var b bytes.Buffer
		if err := md.Convert([]byte(src), &b); err != nil {
			return "", false
		}
		return policy.Sanitize(b.String()), true
	}
})

// rawAsText renders the raw HTML of a markdown text (inline tags and
// HTML blocks) escaped, so that it reads as the model wrote it.
type rawAsText struct{}

// RegisterFuncs implements renderer.NodeRenderer.
func (rawAsText) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			segs := n.(*ast.RawHTML).Segments
			for i := range segs.Len() {
				s := segs.At(i)
				_, _ = w.WriteString(html.EscapeString(string(s.Value(source))))
			}
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(ast.KindHTMLBlock, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		b := n.(*ast.HTMLBlock)
		_, _ = w.WriteString("<pre>")
		lines := b.Lines()
		for i := range lines.Len() {
			s := lines.At(i)
			_, _ = w.WriteString(html.EscapeString(string(s.Value(source))))
		}
		if b.HasClosure() {
			_, _ = w.WriteString(html.EscapeString(string(b.ClosureLine.Value(source))))
		}
		_, _ = w.WriteString("</pre>\n")
		return ast.WalkSkipChildren, nil
	})
}
