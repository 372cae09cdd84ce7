package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// web_fetch on the default manifest, headless, no -y: a host the sandbox's
// network policy does not list is refused before any request, and the
// result names the allowedDomains entry to add; with that entry in the
// user's patch the page comes back as Markdown (HTML converted, the
// script dropped), and the model gets it.
func TestWebFetchFollowsTheSandboxNetworkPolicy(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!doctype html><html><head><title>Release notes</title><script>alert("x")</script></head>`+
			`<body><h1>Release notes 4.2</h1><p>The <code>--fast</code> flag is <strong>removed</strong>.</p>`+
			`<ul><li>faster builds</li><li>smaller binary</li></ul></body></html>`)
	}))
	defer srv.Close()
	p := newProject(t, map[string]string{"README.md": "a project\n"})
	o := p.run("Read the release notes.",
		call("w1", "web_fetch", map[string]any{"url": srv.URL + "/notes"}),
		answer("The host is not allowed."))
	o.mustSucceed(t, "The host is not allowed.")
	if r := o.toolResult(t, "w1"); !strings.Contains(r, `add "127.0.0.1" there`) || !strings.Contains(r, "allowedDomains") {
		t.Fatalf("web_fetch of a host not listed: want a refusal naming the entry to add:\n%s", r)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server got %d requests through a refusal", n)
	}

	p.patch = sandboxPatch("127.0.0.1")
	o = p.run("Read the release notes.",
		call("w1", "web_fetch", map[string]any{"url": srv.URL + "/notes"}),
		answer("The --fast flag is removed."))
	o.mustSucceed(t, "The --fast flag is removed.")
	r := o.toolResult(t, "w1")
	for _, want := range []string{"# Release notes 4.2", "`--fast`", "**removed**", "- faster builds"} {
		if !strings.Contains(r, want) {
			t.Errorf("web_fetch result lacks %q:\n%s", want, r)
		}
	}
	if strings.Contains(r, "alert(") || strings.Contains(r, "<h1>") {
		t.Errorf("web_fetch result kept the script or the HTML:\n%s", r)
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("the server got %d requests, want 1", n)
	}
}
