package toolweb

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// SearXNG's JSON API: GET /search?q=…&format=json → {"results":[{title,url,content}]}.
func TestSearchSearXNGAndTheSameQueryIsAskedOnce(t *testing.T) {
	s, hits := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" || r.URL.Query().Get("q") != "go generics" {
			http.Error(w, "bad request "+r.URL.String(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"query":"go generics","number_of_results":2,"results":[
			{"url":"https://go.dev/doc/tutorial/generics","title":"Tutorial: Getting started with generics","content":"This tutorial introduces\n the basics of generics in Go.","engine":"duckduckgo","score":1.0},
			{"url":"https://go.dev/blog/intro-generics","title":"An Introduction To Generics","content":"Generics are a way of writing code.","engine":"google","score":0.5}]}`)
	})
	reg, _ := mount(t, allow("127.0.0.1"), Config{Search: SearchConfig{Provider: "searxng", BaseURL: s.URL}})
	want := `Results for "go generics":

1. Tutorial: Getting started with generics
   https://go.dev/doc/tutorial/generics
   This tutorial introduces the basics of generics in Go.

2. An Introduction To Generics
   https://go.dev/blog/intro-generics
   Generics are a way of writing code.
`
	for i := 0; i < 2; i++ {
		out, isErr := call(t, reg, SearchName, `{"query":"go generics"}`)
		if isErr || out != want {
			t.Fatalf("call %d: isErr=%v\n%s", i, isErr, out)
		}
	}
	if hits.Load() != 1 {
		t.Fatalf("%d requests for one query", hits.Load())
	}
}

// Brave Search API: GET /res/v1/web/search?q=… with X-Subscription-Token
// → {"web":{"results":[{title,url,description}]}}.
func TestSearchBraveSendsTheKeyFromTheNamedVariable(t *testing.T) {
	t.Setenv("TOOLWEB_TEST_BRAVE_KEY", "k-123")
	s, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/res/v1/web/search" || r.Header.Get("X-Subscription-Token") != "k-123" || r.URL.Query().Get("q") != "sqlite wal" {
			http.Error(w, `{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID"}}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"type":"search","query":{"original":"sqlite wal"},"web":{"type":"search","results":[
			{"title":"Write-Ahead Logging","url":"https://sqlite.org/wal.html","description":"The default method by which SQLite implements <strong>atomic</strong> commit.","type":"search_result"}]}}`)
	})
	reg, _ := mount(t, allow("127.0.0.1"), Config{Search: SearchConfig{Provider: "brave", BaseURL: s.URL, APIKeyEnv: "TOOLWEB_TEST_BRAVE_KEY"}})
	out, isErr := call(t, reg, SearchName, `{"query":"sqlite wal"}`)
	if isErr || !strings.Contains(out, "1. Write-Ahead Logging\n   https://sqlite.org/wal.html\n") {
		t.Fatalf("isErr=%v\n%s", isErr, out)
	}
	t.Setenv("TOOLWEB_TEST_BRAVE_KEY", "")
	out, isErr = call(t, reg, SearchName, `{"query":"another"}`)
	if !isErr || !strings.Contains(out, "TOOLWEB_TEST_BRAVE_KEY is not set") {
		t.Fatalf("no key: isErr=%v %s", isErr, out)
	}
}

// The provider's host passes the same gate as web_fetch's.
func TestSearchProviderHostIsHeldToTheSandboxNetwork(t *testing.T) {
	s, hits := server(t, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"results":[]}`) })
	reg, _ := mount(t, allow("search.example.com"), Config{Search: SearchConfig{Provider: "searxng", BaseURL: s.URL}})
	out, isErr := call(t, reg, SearchName, `{"query":"x y"}`)
	if !isErr || !strings.Contains(out, "sandbox.network.allowedDomains does not list it") || hits.Load() != 0 {
		t.Fatalf("isErr=%v hits=%d %s", isErr, hits.Load(), out)
	}
}

func TestSearchIsNotRegisteredWithoutAProvider(t *testing.T) {
	reg, _ := mount(t, allow("127.0.0.1"), Config{})
	out, isErr := call(t, reg, SearchName, `{"query":"x y"}`)
	if !isErr || !strings.Contains(strings.ToLower(out), "unknown") && !strings.Contains(out, "not found") {
		t.Fatalf("isErr=%v %s", isErr, out)
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	for cfg, want := range map[SearchConfig]string{
		{Provider: "bing"}:                      `search.provider: "bing": must be searxng or brave`,
		{Provider: "searxng"}:                   "search.baseURL: required for the searxng provider",
		{Provider: "brave", BaseURL: "ftp://x"}: `search.baseURL: "ftp://x": want an http or https URL`,
	} {
		if _, err := (Config{Search: cfg}).withDefaults(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", cfg, err, want)
		}
	}
}
