package toolweb

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/dshgo/harness/services/tools"
)

// SearchName is web_search's tool name.
const SearchName = "web_search"

//go:embed search.md
var searchDescription string

// SearchArgs are web_search's arguments.
type SearchArgs struct {
	// Query is what to search for.
	Query string `json:"query" jsonschema:"minLength=2,description=The search query"`
}

// Result is one search hit.
type Result struct {
	Title   string
	URL     string
	Snippet string
}

// Provider is a search service: it turns a query into the request to
// send and reads the results from the response body. The plugin sends the
// request through the same gates as web_fetch.
type Provider interface {
	// Request builds the request for query.
	Request(ctx context.Context, query string) (*http.Request, error)
	// Parse reads the results from a 2xx response body.
	Parse(body []byte) ([]Result, error)
}

// searxng is a SearXNG instance: GET /search?q=…&format=json.
type searxng struct{ base string }

// Request implements Provider.
func (s searxng) Request(ctx context.Context, query string) (*http.Request, error) {
	u := strings.TrimSuffix(s.base, "/") + "/search?" + url.Values{"q": {query}, "format": {"json"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err == nil {
		req.Header.Set("Accept", "application/json")
	}
	return req, err
}

// Parse implements Provider.
func (searxng) Parse(body []byte) ([]Result, error) {
	var doc struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("searxng: the response is not its JSON: %w", err)
	}
	out := make([]Result, 0, len(doc.Results))
	for _, r := range doc.Results {
		out = append(out, Result{Title: r.Title, URL: r.URL, Snippet: r.Content})
	}
	return out, nil
}

// brave is the Brave Search API: GET /res/v1/web/search?q=… with the
// X-Subscription-Token header.
type brave struct {
	base, keyEnv string
	count        int
}

// Request implements Provider.
func (b brave) Request(ctx context.Context, query string) (*http.Request, error) {
	key := os.Getenv(b.keyEnv)
	if key == "" {
		return nil, fmt.Errorf("brave: %s is not set (web.config.search.apiKeyEnv names the variable holding the API key)", b.keyEnv)
	}
	q := url.Values{"q": {query}, "count": {fmt.Sprint(min(b.count, 20))}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(b.base, "/")+"/res/v1/web/search?"+q.Encode(), nil)
	if err == nil {
		req.Header.Set("Accept", "application/json")
		req.Header.Set("X-Subscription-Token", key)
	}
	return req, err
}

// Parse implements Provider.
func (brave) Parse(body []byte) ([]Result, error) {
	var doc struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("brave: the response is not its JSON: %w", err)
	}
	out := make([]Result, 0, len(doc.Web.Results))
	for _, r := range doc.Web.Results {
		out = append(out, Result{Title: r.Title, URL: r.URL, Snippet: r.Description})
	}
	return out, nil
}

// newProvider is the configured provider (nil: none).
func newProvider(c SearchConfig) Provider {
	switch c.Provider {
	case "searxng":
		return searxng{base: c.BaseURL}
	case "brave":
		return brave{base: c.BaseURL, keyEnv: c.APIKeyEnv, count: c.MaxResults}
	}
	return nil
}

// searchTool defines web_search.
func (w *web) searchTool() *tools.Tool {
	return tools.Define(SearchName, searchDescription, w.search,
		tools.WithReadOnly(), tools.WithPresent(presentSearch))
}

// search is web_search's body: the cached results, or a new request.
func (w *web) search(ctx context.Context, e *tools.Execution, a SearchArgs) (string, error) {
	q := strings.TrimSpace(a.Query)
	if q == "" {
		return "", tools.Errorf("WEB_BAD_QUERY", "query is empty")
	}
	if out, ok := w.cache.get(sessionOf(e), "search "+q); ok {
		return out, nil
	}
	results, err := w.query(ctx, q)
	if err != nil {
		return "", err
	}
	out := formatResults(q, results, w.cfg.Search.MaxResults)
	w.cache.put(sessionOf(e), "search "+q, out)
	return out, nil
}

// query asks the provider.
func (w *web) query(ctx context.Context, q string) ([]Result, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(w.cfg.Timeout))
	defer cancel()
	req, err := w.provider.Request(ctx, q)
	if err != nil {
		return nil, tools.Errorf("WEB_SEARCH_FAILED", "%v", err)
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := w.send(ctx, req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _, err := readCapped(resp.Body, w.cfg.MaxBytes)
	if err != nil {
		return nil, tools.Errorf("WEB_SEARCH_FAILED", "%s: reading the response: %v", w.cfg.Search.Provider, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil, tools.Errorf("WEB_SEARCH_FAILED", "%s: HTTP %s: %s", w.cfg.Search.Provider, resp.Status, tools.HeadBytes(string(body), 300))
	}
	results, err := w.provider.Parse(body)
	if err != nil {
		return nil, tools.Errorf("WEB_SEARCH_FAILED", "%v", err)
	}
	return results, nil
}

// formatResults is the model-facing list.
func formatResults(q string, rs []Result, max int) string {
	if len(rs) == 0 {
		return fmt.Sprintf("No results for %q.", q)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Results for %q:\n", q)
	for i, r := range rs[:min(len(rs), max)] {
		fmt.Fprintf(&b, "\n%d. %s\n   %s\n", i+1, oneLine(r.Title), r.URL)
		if s := oneLine(r.Snippet); s != "" {
			fmt.Fprintf(&b, "   %s\n", s)
		}
	}
	return b.String()
}

// oneLine squeezes whitespace.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// presentSearch is web_search's presentation: kind search, titled with
// the query.
func presentSearch(in tools.PresentInput[SearchArgs, string]) tools.Presentation {
	return tools.Presentation{Kind: tools.KindSearch, Title: in.Args.Query}
}
