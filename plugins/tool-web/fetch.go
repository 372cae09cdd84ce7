package toolweb

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/dshgo/harness/services/tools"
)

// FetchName is web_fetch's tool name.
const FetchName = "web_fetch"

//go:embed fetch.md
var fetchDescription string

// FetchArgs are web_fetch's arguments.
type FetchArgs struct {
	// URL is the page to fetch.
	URL string `json:"url" jsonschema:"minLength=1,description=The http or https URL to fetch"`
	// Prompt says what to look for in the page; optional.
	Prompt string `json:"prompt,omitempty" jsonschema:"description=What you want to learn from the page (shown above the page content)"`
}

// userAgent is sent with every request.
const userAgent = "harness-web/1 (+https://github.com/dshgo/harness)"

// fetchTool defines web_fetch.
func (w *web) fetchTool() *tools.Tool {
	return tools.Define(FetchName, fetchDescription, w.fetch,
		tools.WithReadOnly(), tools.WithPresent(presentFetch))
}

// fetch is web_fetch's body: the cached page, or a new fetch.
func (w *web) fetch(ctx context.Context, e *tools.Execution, a FetchArgs) (string, error) {
	u, err := parseURL(a.URL)
	if err != nil {
		return "", err
	}
	page, ok := w.cache.get(sessionOf(e), "fetch "+u.String())
	if !ok {
		page, err = w.get(ctx, u)
		if err != nil {
			return "", err
		}
		w.cache.put(sessionOf(e), "fetch "+u.String(), page)
	}
	if a.Prompt != "" {
		return "Prompt: " + a.Prompt + "\n(The page follows; answer the prompt from it.)\n\n" + page, nil
	}
	return page, nil
}

// parseURL accepts an absolute http or https URL with a host.
func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, tools.Errorf("WEB_BAD_URL", "url %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, tools.Errorf("WEB_BAD_URL", "url %q: only http and https URLs are fetched", raw)
	}
	if u.Hostname() == "" {
		return nil, tools.Errorf("WEB_BAD_URL", "url %q: no host", raw)
	}
	u.Fragment = ""
	return u, nil
}

// get fetches u and renders it. Same-host redirects are followed (each
// one through both gates again); a redirect to another host is returned
// as the result, for the model to fetch as a new call (which the
// permission rules see).
func (w *web) get(ctx context.Context, u *url.URL) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(w.cfg.Timeout))
	defer cancel()
	for hops := 0; ; hops++ {
		resp, err := w.do(ctx, u)
		if err != nil {
			return "", err
		}
		next, redirected, err := redirectOf(u, resp)
		if !redirected {
			defer resp.Body.Close()
			return w.render(u, resp)
		}
		_ = resp.Body.Close()
		if err != nil {
			return "", err
		}
		if !sameHost(u, next) {
			return fmt.Sprintf("%s redirects to another host: %s\nFetch that URL with web_fetch if you want it.", u, next), nil
		}
		if hops >= w.cfg.MaxRedirects {
			return "", tools.Errorf("WEB_REDIRECTS", "%s: more than %d redirects (web.config.maxRedirects)", u, w.cfg.MaxRedirects)
		}
		u = next
	}
}

// do sends one GET through both gates, without following redirects.
func (w *web) do(ctx context.Context, u *url.URL) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, tools.Errorf("WEB_BAD_URL", "url %q: %v", u, err)
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "text/html, text/markdown, text/plain, application/json, */*;q=0.5")
	resp, err := w.send(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// send passes req's host through the host gate, then sends it with a
// client whose dialer checks the address. Redirects are not followed.
func (w *web) send(ctx context.Context, req *http.Request) (*http.Response, error) {
	ad, err := w.gate.admit(ctx, req.URL.Hostname(), port(req.URL))
	if err != nil {
		return nil, tools.Errorf("WEB_REFUSED", "%v", err)
	}
	tr := &http.Transport{DialContext: dialer(ad, 10*time.Second).DialContext, Proxy: nil,
		TLSHandshakeTimeout: 10 * time.Second, ResponseHeaderTimeout: time.Duration(w.cfg.Timeout), DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, errPrivate) {
			return nil, tools.Errorf("WEB_REFUSED", "%s: %v", req.URL.Host, unwrapOp(err))
		}
		return nil, tools.Errorf("WEB_FETCH_FAILED", "%s: %v", req.URL, err)
	}
	return resp, nil
}

// unwrapOp is the innermost message of a dial error.
func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// port is u's port, or the scheme's.
func port(u *url.URL) int {
	if p, err := strconv.Atoi(u.Port()); err == nil {
		return p
	}
	if u.Scheme == "http" {
		return 80
	}
	return 443
}

// redirectOf reads a 3xx response's Location.
func redirectOf(u *url.URL, resp *http.Response) (*url.URL, bool, error) {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return nil, false, nil
	}
	loc, err := u.Parse(resp.Header.Get("Location"))
	if err != nil || resp.Header.Get("Location") == "" {
		return nil, true, tools.Errorf("WEB_FETCH_FAILED", "%s: a redirect without a usable Location", u)
	}
	if loc.Scheme != "http" && loc.Scheme != "https" {
		return nil, true, tools.Errorf("WEB_REFUSED", "%s redirects to %s: only http and https are followed", u, loc)
	}
	loc.Fragment = ""
	return loc, true, nil
}

// sameHost reports the same host name and port (an http→https upgrade of
// the same host counts as the same host).
func sameHost(a, b *url.URL) bool {
	if !strings.EqualFold(a.Hostname(), b.Hostname()) {
		return false
	}
	return a.Port() == b.Port() || (a.Port() == "" && b.Port() == "")
}

// render turns a 2xx body into the result: HTML as Markdown, other text
// as is; binary bodies are refused.
func (w *web) render(u *url.URL, resp *http.Response) (string, error) {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", tools.Errorf("WEB_HTTP_STATUS", "%s: HTTP %s", u, resp.Status)
	}
	body, cut, err := readCapped(resp.Body, w.cfg.MaxBytes)
	if err != nil {
		return "", tools.Errorf("WEB_FETCH_FAILED", "%s: reading the body: %v", u, err)
	}
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ctype == "" {
		ctype = http.DetectContentType(body)
		ctype, _, _ = mime.ParseMediaType(ctype)
	}
	text, err := convert(u, ctype, body)
	if err != nil {
		return "", err
	}
	head := fmt.Sprintf("URL: %s\nContent-Type: %s\n", u, ctype)
	if cut {
		head += fmt.Sprintf("(the body was cut at %d bytes, web.config.maxBytes)\n", w.cfg.MaxBytes)
	}
	return head + "\n" + text, nil
}

// convert is the text of a body by its media type.
func convert(u *url.URL, ctype string, body []byte) (string, error) {
	switch {
	case ctype == "text/html" || ctype == "application/xhtml+xml":
		md, err := htmltomarkdown.ConvertString(string(body), converter.WithDomain(u.Scheme+"://"+u.Host))
		if err != nil {
			return "", tools.Errorf("WEB_FETCH_FAILED", "%s: converting HTML: %v", u, err)
		}
		return md, nil
	case textual(ctype) && utf8.Valid(trimPartialRune(body)):
		return string(body), nil
	}
	return "", tools.Errorf("WEB_BINARY", "%s: %s is not text; web_fetch returns text and HTML only", u, ctype)
}

// textual reports media types passed through as text.
func textual(ctype string) bool {
	return strings.HasPrefix(ctype, "text/") || strings.HasSuffix(ctype, "+json") || strings.HasSuffix(ctype, "+xml") ||
		ctype == "application/json" || ctype == "application/xml" || ctype == "application/javascript" || ctype == "application/x-yaml" || ctype == "application/yaml"
}

// trimPartialRune drops a rune cut by the byte cap.
func trimPartialRune(b []byte) []byte {
	for i := 0; i < 3 && len(b) > 0 && !utf8.Valid(b); i++ {
		b = b[:len(b)-1]
	}
	return b
}

// readCapped reads at most max bytes; cut reports a longer body.
func readCapped(r io.Reader, max int64) (body []byte, cut bool, err error) {
	body, err = io.ReadAll(io.LimitReader(r, max+1))
	if int64(len(body)) > max {
		return body[:max], true, err
	}
	return body, false, err
}

// presentFetch is web_fetch's presentation: kind fetch, titled with the
// URL; the prompt as content when given.
func presentFetch(in tools.PresentInput[FetchArgs, string]) tools.Presentation {
	p := tools.Presentation{Kind: tools.KindFetch, Title: in.Args.URL}
	if in.Args.Prompt != "" {
		p.Content = []tools.ToolCallContent{tools.TextContent(in.Args.Prompt)}
	}
	if in.Succeeded() {
		p.Summarize(fmt.Sprintf("%d bytes", len(in.Out)))
	}
	return p
}
