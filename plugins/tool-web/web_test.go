package toolweb

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
)

// mount boots tools, subprocess (with network as its sandbox's network)
// and tool-web with cfg; it returns the registry and the runtime.
func mount(t *testing.T, network subprocess.SandboxNetwork, cfg Config) (*tools.Registry, *subprocess.Runtime) {
	t.Helper()
	var sp subprocess.Options
	sp.SetDefaults()
	sp.Sandbox = subprocess.SandboxPolicy{Mode: subprocess.SandboxWorkspaceWrite, Network: network}
	root := core.NewRoot()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		root.Dispose(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, r := range []struct {
		p   core.Plugin
		cfg any
	}{{tools.Plugin, nil}, {subprocess.Plugin, &sp}, {Plugin, &cfg}} {
		if err := root.Context().Plugin(r.p, r.cfg).Await(ctx); err != nil {
			t.Fatal(err)
		}
	}
	reg, _ := core.Lookup(root.Context(), tools.Key)
	rt, _ := core.Lookup(root.Context(), subprocess.Key)
	return reg, rt
}

// allow is a proxied network allowing hosts.
func allow(hosts ...string) subprocess.SandboxNetwork {
	return subprocess.SandboxNetwork{Mode: subprocess.SandboxNetworkProxy, AllowedDomains: hosts}
}

func call(t *testing.T, reg *tools.Registry, name, args string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o := reg.Execute(ctx, tools.Call{ID: "1", Name: name, Arguments: args})
	return tools.TextOf(o.Content), o.IsError
}

// server serves handler and counts its requests.
func server(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s, &n
}

func fetchArgs(u string) string { return fmt.Sprintf(`{"url":%q}`, u) }

func TestFetchTurnsHTMLIntoMarkdownWithAbsoluteLinks(t *testing.T) {
	s, _ := server(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><body><h1>Release notes</h1><p>See <a href="/docs/x">the docs</a>.</p><ul><li>one</li></ul></body></html>`)
	})
	reg, _ := mount(t, allow("127.0.0.1"), Config{})
	out, isErr := call(t, reg, FetchName, fetchArgs(s.URL+"/page"))
	if isErr {
		t.Fatal(out)
	}
	for _, want := range []string{"# Release notes", "[the docs](" + s.URL + "/docs/x)", "- one", "Content-Type: text/html"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

func TestFetchRefusesAHostTheSandboxNetworkDoesNotList(t *testing.T) {
	s, hits := server(t, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "secret") })
	reg, _ := mount(t, allow("example.com"), Config{})
	out, isErr := call(t, reg, FetchName, fetchArgs(s.URL))
	if !isErr || !strings.Contains(out, `127.0.0.1: refused: sandbox.network.allowedDomains does not list it (add "127.0.0.1" there)`) || hits.Load() != 0 {
		t.Fatalf("isErr=%v hits=%d: %s", isErr, hits.Load(), out)
	}
}

func TestFetchDeniedDomainWinsOverAllowed(t *testing.T) {
	s, hits := server(t, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "x") })
	net := allow("127.0.0.1")
	net.DeniedDomains = []string{"127.0.0.1"}
	reg, _ := mount(t, net, Config{})
	out, isErr := call(t, reg, FetchName, fetchArgs(s.URL))
	if !isErr || !strings.Contains(out, `refused by sandbox.network.deniedDomains entry "127.0.0.1"`) || hits.Load() != 0 {
		t.Fatalf("isErr=%v hits=%d: %s", isErr, hits.Load(), out)
	}
}

// With the network open (as bash's would be), a name that resolves to
// loopback is refused when the connection is made: the check is on the
// address dialled, not on the name.
func TestFetchRefusesANameThatResolvesToLoopbackAtDialTime(t *testing.T) {
	s, hits := server(t, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "metadata") })
	u, _ := url.Parse(s.URL)
	reg, _ := mount(t, subprocess.SandboxNetwork{Mode: subprocess.SandboxNetworkOn}, Config{})
	out, isErr := call(t, reg, FetchName, fetchArgs("http://localhost:"+u.Port()+"/"))
	if !isErr || !strings.Contains(out, "WEB_REFUSED") && !strings.Contains(out, "is a loopback, private, link-local or multicast address") || hits.Load() != 0 {
		t.Fatalf("isErr=%v hits=%d: %s", isErr, hits.Load(), out)
	}
	if !strings.Contains(out, "127.0.0.1 is a loopback, private") && !strings.Contains(out, "::1 is a loopback, private") {
		t.Fatalf("the refusal does not name the address: %s", out)
	}
}

// A redirect to another host is not followed: the model gets the URL,
// and a new call is decided by the rules again.
func TestFetchReturnsACrossHostRedirectInsteadOfFollowingIt(t *testing.T) {
	inner, innerHits := server(t, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "inner") })
	target := strings.Replace(inner.URL, "127.0.0.1", "localhost", 1) + "/admin"
	outer, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/same" {
			http.Redirect(w, r, "/final", http.StatusFound)
			return
		}
		if r.URL.Path == "/final" {
			fmt.Fprint(w, "final page")
			return
		}
		http.Redirect(w, r, target, http.StatusFound)
	})
	reg, _ := mount(t, allow("127.0.0.1", "localhost"), Config{})
	out, isErr := call(t, reg, FetchName, fetchArgs(outer.URL+"/start"))
	if isErr || !strings.Contains(out, "redirects to another host: "+target) || innerHits.Load() != 0 {
		t.Fatalf("isErr=%v innerHits=%d: %s", isErr, innerHits.Load(), out)
	}
	out, isErr = call(t, reg, FetchName, fetchArgs(outer.URL+"/same"))
	if isErr || !strings.Contains(out, "final page") || !strings.Contains(out, "URL: "+outer.URL+"/final") {
		t.Fatalf("same-host redirect: isErr=%v: %s", isErr, out)
	}
}

func TestFetchRefusesBinaryAndCutsLongBodies(t *testing.T) {
	s, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bin" {
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write([]byte{0, 1, 2, 3})
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("a", 5000))
	})
	reg, _ := mount(t, allow("127.0.0.1"), Config{MaxBytes: 1000})
	out, isErr := call(t, reg, FetchName, fetchArgs(s.URL+"/bin"))
	if !isErr || !strings.Contains(out, "application/octet-stream is not text; web_fetch returns text and HTML only") {
		t.Fatalf("binary: isErr=%v: %s", isErr, out)
	}
	out, isErr = call(t, reg, FetchName, fetchArgs(s.URL+"/text"))
	if isErr || strings.Count(out, "a") < 1000 || strings.Count(out, "aaaa") > 250 || !strings.Contains(out, "cut at 1000 bytes") {
		t.Fatalf("cap: isErr=%v len=%d: %.200s", isErr, len(out), out)
	}
}

// A host no rule decides is put to the runtime's network asker, as a
// sandboxed command's connection is; allow-always is kept.
func TestFetchAsksTheNetworkAskerForAnUnlistedHost(t *testing.T) {
	s, hits := server(t, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "asked page") })
	net := allow()
	net.Ask = true
	reg, rt := mount(t, net, Config{AllowPrivateAddresses: true})
	var asked atomic.Int32
	answer := subprocess.NetworkDeny
	remove := rt.SetNetworkAsker(func(_ context.Context, host string, port int) subprocess.NetworkAnswer {
		asked.Add(1)
		return answer
	})
	defer remove()
	out, isErr := call(t, reg, FetchName, fetchArgs(s.URL+"/a"))
	if !isErr || !strings.Contains(out, "denied when asked") || hits.Load() != 0 {
		t.Fatalf("deny: %v %s", isErr, out)
	}
	answer = subprocess.NetworkAllowOnce
	reg2, rt2 := mount(t, net, Config{AllowPrivateAddresses: true})
	defer rt2.SetNetworkAsker(func(context.Context, string, int) subprocess.NetworkAnswer { return subprocess.NetworkAllowAlways })()
	out, isErr = call(t, reg2, FetchName, fetchArgs(s.URL+"/b"))
	if isErr || !strings.Contains(out, "asked page") {
		t.Fatalf("allow: %v %s", isErr, out)
	}
	if asked.Load() != 1 {
		t.Fatalf("asked %d times", asked.Load())
	}
}

func TestFetchIsCachedPerSession(t *testing.T) {
	s, hits := server(t, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "page") })
	reg, _ := mount(t, allow("127.0.0.1"), Config{})
	for i := 0; i < 2; i++ {
		if out, isErr := call(t, reg, FetchName, `{"url":"`+s.URL+`/c","prompt":"what is it?"}`); isErr || !strings.Contains(out, "Prompt: what is it?") {
			t.Fatal(out)
		}
	}
	if hits.Load() != 1 {
		t.Fatalf("%d requests for one URL", hits.Load())
	}
}

func TestFetchRejectsOtherSchemes(t *testing.T) {
	reg, _ := mount(t, allow("127.0.0.1"), Config{})
	out, isErr := call(t, reg, FetchName, fetchArgs("file:///etc/passwd"))
	if !isErr || !strings.Contains(out, `only http and https URLs are fetched`) {
		t.Fatalf("%v %s", isErr, out)
	}
}
