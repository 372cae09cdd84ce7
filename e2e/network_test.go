package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshgo/harness/services/subprocess/sandbox"
	"github.com/dshgo/harness/services/subprocess/sandbox/netproxy"
)

// sandboxPatch is a user patch row that restates the default manifest's
// sandbox block (a patch replaces the block) with allowedDomains added,
// as docs/sandbox.md ("Adding a registry") tells a user to write it.
func sandboxPatch(allowed ...string) string {
	if len(allowed) == 0 {
		return ""
	}
	return "- id: subprocess\n  config:\n    sandbox:\n      mode: workspace-write\n" +
		"      network: {packageRegistries: true, ask: true, allowedDomains: [" + quoteAll(allowed) + "]}\n"
}

func quoteAll(hosts []string) string {
	q := make([]string, len(hosts))
	for i, h := range hosts {
		q[i] = `"` + h + `"`
	}
	return strings.Join(q, ", ")
}

// unlisted returns the hosts of urls that the default allowlist
// (sandbox.PackageRegistries) does not list: the registry mirror of this
// machine, say, which the test adds the way a user would.
func unlisted(urls ...string) []string {
	var out []string
	for _, u := range urls {
		pu, err := url.Parse(u)
		if err != nil || pu.Hostname() == "" {
			continue
		}
		h := pu.Hostname()
		if netproxy.Match(sandbox.PackageRegistries, h) == "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// The default manifest's network (packageRegistries, ask) headless: a
// request to a host not listed, a loopback HTTP server here and
// example.com, is refused, and the bash result names the allowedDomains
// entry to add (ask has no one to ask); no request reaches the server.
// With that entry added in the user's patch, the same request works.
func TestNetworkRefusedNamesTheRuleAllowedWorks(t *testing.T) {
	t.Parallel()
	needTools(t, "curl", "bwrap")
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, "hello from the loopback server\n")
	}))
	defer srv.Close()
	// --noproxy '': the proxy variables' NO_PROXY lists 127.0.0.1 (the
	// sandbox's own loopback); this request is for the host's.
	fetch := "curl -fsS -m 30 --noproxy '' " + srv.URL + "/hello"
	p := newProject(t, map[string]string{"README.md": "a project\n"})
	o := p.run("Fetch the page.",
		bash("c1", fetch, "fetch the page"),
		bash("c2", "curl -fsS -m 30 https://example.com/", "fetch example.com"),
		answer("The sandbox refused both."),
	)
	o.mustSucceed(t, "The sandbox refused both.")
	if r := o.toolResult(t, "c1"); !strings.Contains(r, `network access to 127.0.0.1 is not allowed: add "127.0.0.1" to sandbox.network.allowedDomains`) || !strings.Contains(r, "[exit code: ") {
		t.Fatalf("a request to a host not listed: want a failure naming the rule to add:\n%s", r)
	}
	if r := o.toolResult(t, "c2"); !strings.Contains(r, `network access to example.com is not allowed: add "example.com" to sandbox.network.allowedDomains`) {
		t.Fatalf("curl https://example.com: want a refusal naming the rule to add:\n%s", r)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback server got %d requests through a refusal", n)
	}

	p.patch = sandboxPatch("127.0.0.1")
	o = p.run("Fetch the page.", bash("c1", fetch, "fetch the page"), answer("Fetched."))
	o.mustSucceed(t, "Fetched.")
	if r := o.toolResult(t, "c1"); !strings.Contains(r, "hello from the loopback server") || strings.Contains(r, "[exit code") {
		t.Fatalf("a request to a listed host:\n%s", r)
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("the loopback server got %d requests, want 1", n)
	}
}

// A Go module with one third-party dependency: `go mod download` fetches
// it through the proxy from the machine's module proxy (go env GOPROXY:
// the default allowlist lists the public one; another is added as a user
// would), the checksum database verifies it (its state is in the cache
// root's GOPATH), and the tests that use it pass.
func TestGoModDownloadThroughTheProxy(t *testing.T) {
	t.Parallel()
	needTools(t, "go", "bwrap")
	goproxy, _ := inDir(t, ".", nil, "go", "env", "GOPROXY")
	gosumdb, _ := inDir(t, ".", nil, "go", "env", "GOSUMDB")
	goproxy, gosumdb = strings.TrimSpace(goproxy), strings.TrimSpace(gosumdb)
	var proxies []string
	for _, e := range strings.FieldsFunc(goproxy, func(r rune) bool { return r == ',' || r == '|' }) {
		if strings.HasPrefix(e, "https://") || strings.HasPrefix(e, "http://") {
			proxies = append(proxies, e)
		}
	}
	if len(proxies) == 0 {
		missing(t, "go env GOPROXY names no module proxy ("+goproxy+")")
	}
	hosts := unlisted(proxies...)
	if f := strings.Fields(gosumdb); len(f) > 0 && gosumdb != "off" {
		// "name [key] [url]": the database is reached through the
		// proxy when it supports that, else at its URL (default: name).
		u := "https://" + f[0]
		if len(f) == 3 {
			u = f[2]
		}
		hosts = append(hosts, unlisted(u)...)
	}
	p := newProject(t, map[string]string{
		"go.mod": "module example.com/ids\n\ngo 1.22\n\nrequire github.com/google/uuid v1.6.0\n",
		"ids.go": "// Package ids makes identifiers.\npackage ids\n\nimport \"github.com/google/uuid\"\n\n// New returns a random UUID.\nfunc New() string { return uuid.NewString() }\n",
		"ids_test.go": "package ids\n\nimport \"testing\"\n\nfunc TestNew(t *testing.T) {\n\tif a, b := New(), New(); len(a) != 36 || a == b {\n" +
			"\t\tt.Fatalf(\"New() = %q, %q\", a, b)\n\t}\n}\n",
	})
	p.patch = sandboxPatch(hosts...)
	p.extraEnv = []string{"GOPROXY=" + goproxy, "GOSUMDB=" + gosumdb}
	o := p.run("Download the dependencies and run the tests.",
		bash("c1", "go mod download github.com/google/uuid && go test ./...", "download and test"),
		answer("Downloaded; the tests pass."),
	)
	o.mustSucceed(t, "Downloaded; the tests pass.")
	if r := o.toolResult(t, "c1"); !strings.Contains(r, "ok  \texample.com/ids") {
		t.Fatalf("go mod download && go test:\n%s", r)
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "go.sum")); !strings.Contains(string(b), "github.com/google/uuid v1.6.0 h1:") {
		t.Fatalf("go.sum on disk:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(cacheRoot(), "go-mod", "github.com", "google", "uuid@v1.6.0", "uuid.go")); err != nil {
		t.Fatalf("the module in the sandbox's module cache: %v", err)
	}
}

// A Node package with one real dependency in its package-lock.json:
// `npm ci` installs it from the machine's registry (npm config get
// registry) through the proxy, and `npm test` (node:test) that requires
// it passes.
func TestNpmCiThroughTheProxy(t *testing.T) {
	t.Parallel()
	needTools(t, "node", "npm", "bwrap")
	reg, err := inDir(t, ".", nil, "npm", "config", "get", "registry")
	reg = strings.TrimSpace(reg)
	if err != nil || !strings.HasPrefix(reg, "http") {
		missing(t, "npm config get registry: "+reg)
	}
	reg = strings.TrimSuffix(reg, "/") + "/"
	p := newProject(t, map[string]string{
		"package.json": `{"name": "e2e-npm", "version": "1.0.0", "private": true, "scripts": {"test": "node --test"}, "dependencies": {"is-number": "7.0.0"}}` + "\n",
		"package-lock.json": `{"name": "e2e-npm", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": {
  "": {"name": "e2e-npm", "version": "1.0.0", "dependencies": {"is-number": "7.0.0"}},
  "node_modules/is-number": {"version": "7.0.0", "resolved": "` + reg + `is-number/-/is-number-7.0.0.tgz",
    "integrity": "sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBlbGXYxxng==", "engines": {"node": ">=0.12.0"}}}}
`,
		".npmrc": "fund=false\naudit=false\nupdate-notifier=false\nregistry=" + reg + "\n",
		"test.js": "const test = require('node:test');\nconst assert = require('node:assert');\nconst isNumber = require('is-number');\n\n" +
			"test('is-number', () => {\n  assert.ok(isNumber(5));\n  assert.ok(!isNumber('five'));\n});\n",
	})
	p.patch = sandboxPatch(unlisted(reg)...)
	o := p.run("Install the dependencies and run the tests.",
		bash("c1", "npm ci && npm test", "install and test"),
		answer("Installed; the tests pass."),
	)
	o.mustSucceed(t, "Installed; the tests pass.")
	if r := o.toolResult(t, "c1"); !strings.Contains(r, "added 1 package") || !strings.Contains(r, "# pass 1") {
		t.Fatalf("npm ci && npm test:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "node_modules", "is-number", "package.json")); err != nil {
		t.Fatalf("node_modules on disk: %v", err)
	}
}
