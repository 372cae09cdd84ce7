package sandbox

import (
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// seatbeltTree is the temporary tree of a profile test: root (resolved),
// a home directory, a cache root, a private TMPDIR and a project that is
// a git repository with a .env file.
type seatbeltTree struct {
	root, home, tmp, project string
}

func newSeatbeltTree(t *testing.T, project string) seatbeltTree {
	t.Helper()
	root := evalTemp(t)
	tr := seatbeltTree{root: root, home: filepath.Join(root, "home"), tmp: filepath.Join(root, "tmp"), project: filepath.Join(root, project)}
	t.Setenv("HOME", tr.home) // the global git configs: none
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_CACHE_HOME", filepath.Join(root, "cache"))
	write(t, filepath.Join(tr.project, "main.go"), "package main\n")
	write(t, filepath.Join(tr.project, ".env"), "TOKEN=1\n")
	write(t, filepath.Join(tr.project, ".git", "config"), "[core]\n")
	write(t, filepath.Join(tr.project, ".git", "hooks", "pre-commit"), "#!/bin/sh\n")
	write(t, filepath.Join(tr.home, ".ssh", "id_ed25519"), "key\n")
	if err := os.MkdirAll(tr.tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	return tr
}

// golden renders the profile and its parameters (the tree's root as
// $ROOT, each value quoted) and compares them with testdata/name.sb.
func (tr seatbeltTree) golden(t *testing.T, name string, s seatbeltSpec) {
	t.Helper()
	profile, params := s.render()
	var b strings.Builder
	b.WriteString(profile)
	b.WriteString("\n;; sandbox-exec parameters (-DNAME=value), $ROOT is the test's directory:\n")
	for _, p := range params {
		k, v, _ := strings.Cut(p, "=")
		b.WriteString(";; " + k + " " + strconv.Quote(strings.ReplaceAll(v, tr.root, "$ROOT")) + "\n")
	}
	path := filepath.Join("testdata", name+".sb")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if b.String() != string(want) {
		t.Errorf("profile of %s differs from %s (run with -update after checking):\n%s", name, path, b.String())
	}
}

func (tr seatbeltTree) spec(t *testing.T, req Request) seatbeltSpec {
	t.Helper()
	caches, err := applyCaches(&req)
	if err != nil {
		t.Fatal(err)
	}
	s, incomplete, err := seatbeltSpecFor(req, tr.home, tr.tmp, caches)
	if err != nil || len(incomplete) > 0 {
		t.Fatalf("seatbeltSpecFor: %v (incomplete %q)", err, incomplete)
	}
	return s
}

// TestSeatbeltProfileOfTheDefaultPolicy: the default policy in a project
// (workspace-write, denyRead @defaults, the caches, network off) writes
// the project, the cache root and the private TMPDIR, but not its .git
// directory itself, its protected paths (whether they exist or not) or its
// .env; it reads everything but the default credential locations (each
// one, existing or not) and the .env; no network rule.
func TestSeatbeltProfileOfTheDefaultPolicy(t *testing.T) {
	tr := newSeatbeltTree(t, "project")
	s := tr.spec(t, Request{Dir: tr.project, Policy: Policy{Mode: ModeWorkspaceWrite, DenyRead: DenyList{DefaultsEntry}}})
	tr.golden(t, "default", s)
}

// TestSeatbeltProfileDeniesASecretPath: a denied directory, a denied file
// that does not exist yet and a relative pattern's match in a writable
// root are neither readable nor writable.
func TestSeatbeltProfileDeniesASecretPath(t *testing.T) {
	tr := newSeatbeltTree(t, "project")
	secrets, lib := filepath.Join(tr.root, "secrets"), filepath.Join(tr.root, "lib")
	write(t, filepath.Join(secrets, "prod.key"), "k\n")
	write(t, filepath.Join(lib, "cert.pem"), "c\n")
	s := tr.spec(t, Request{Dir: tr.project, Policy: Policy{Mode: ModeWorkspaceWrite, Caches: CachesOff(),
		WritableRoots: []string{lib}, DenyRead: DenyList{secrets, "~/.token", "**/*.pem"}}})
	tr.golden(t, "deny-secret", s)
}

// TestSeatbeltProfileKeepsProtectedPathsReadOnlyInAWritableRoot: a
// writable root's .git/config and .git/hooks (and the other protected
// paths) are excluded from its write rule, the .git directory is pinned
// by a literal; read-only mode writes only the private TMPDIR.
func TestSeatbeltProfileKeepsProtectedPathsReadOnlyInAWritableRoot(t *testing.T) {
	tr := newSeatbeltTree(t, "project")
	lib := filepath.Join(tr.root, "lib")
	write(t, filepath.Join(lib, ".git", "config"), "[core]\n")
	write(t, filepath.Join(lib, ".git", "hooks", "post-checkout"), "#!/bin/sh\n")
	s := tr.spec(t, Request{Dir: tr.project, Policy: Policy{Mode: ModeWorkspaceWrite, Caches: CachesOff(), WritableRoots: []string{lib}}})
	if !slices.Contains(s.Protected, filepath.Join(lib, ".git", "config")) || !slices.Contains(s.Protected, filepath.Join(lib, ".git", "hooks")) ||
		!slices.Contains(s.Pinned, filepath.Join(lib, ".git")) {
		t.Fatalf("lib's .git/config and .git/hooks protected, .git pinned: %+v", s)
	}
	tr.golden(t, "protected", s)
	ro := tr.spec(t, Request{Dir: tr.project, Policy: Policy{Mode: ModeReadOnly, WritableRoots: []string{lib}}})
	tr.golden(t, "read-only", ro)
}

// TestSeatbeltProfileOfTheNetwork: off has no network rule, on allows
// every network operation, a proxied network only the proxy's loopback
// port.
func TestSeatbeltProfileOfTheNetwork(t *testing.T) {
	tr := newSeatbeltTree(t, "project")
	for _, mode := range []NetworkMode{NetworkOff, NetworkOn, NetworkProxy} {
		s := tr.spec(t, Request{Dir: tr.project, Policy: Policy{Mode: ModeWorkspaceWrite, Caches: CachesOff(), Network: Network{Mode: mode}}})
		if mode == NetworkProxy {
			s.ProxyPort = 41234
		}
		tr.golden(t, "network-"+string(mode), s)
	}
}

// TestSeatbeltProfileHoldsNoPath: a workspace, a writable root and a
// denied file whose names carry quotes, parentheses, spaces, a newline,
// a backslash and non-ASCII letters reach the profile only as parameter
// values: the profile is exactly the one of plain names, and each path
// is one parameter, unchanged.
func TestSeatbeltProfileHoldsNoPath(t *testing.T) {
	weird := "we\"ird\") (allow file-write* (subpath \"/\")) ; päth ü"
	tr := newSeatbeltTree(t, weird)
	lib := filepath.Join(tr.root, "lib \\ \"x\"\n(deny default)")
	write(t, filepath.Join(lib, "a"), "a\n")
	secret := filepath.Join(tr.project, "sécret \")")
	write(t, secret, "s\n")
	s := tr.spec(t, Request{Dir: tr.project, Policy: Policy{Mode: ModeWorkspaceWrite, Caches: CachesOff(), WritableRoots: []string{lib}, DenyRead: DenyList{secret}}})
	tr.golden(t, "escaping", s)

	plain := newSeatbeltTree(t, "project")
	plainLib := filepath.Join(plain.root, "lib")
	write(t, filepath.Join(plainLib, "a"), "a\n")
	write(t, filepath.Join(plain.project, "secret"), "s\n")
	ps := plain.spec(t, Request{Dir: plain.project, Policy: Policy{Mode: ModeWorkspaceWrite, Caches: CachesOff(), WritableRoots: []string{plainLib},
		DenyRead: DenyList{filepath.Join(plain.project, "secret")}}})
	got, params := s.render()
	want, _ := ps.render()
	if got != want {
		t.Errorf("the profile depends on the paths' content:\n%s\nwant\n%s", got, want)
	}
	for _, p := range []string{tr.project, lib, secret} {
		if !slices.ContainsFunc(params, func(kv string) bool { _, v, _ := strings.Cut(kv, "="); return v == p }) {
			t.Errorf("no parameter is %q: %q", p, params)
		}
	}
}

// FuzzSeatbeltProfileIgnoresPathContent: whatever a path holds, the
// profile is the one of a plain path and the path is its parameter's
// value byte for byte.
func FuzzSeatbeltProfileIgnoresPathContent(f *testing.F) {
	f.Add("/a\") (allow default) (\"")
	f.Add("/päth with spaces\n")
	f.Fuzz(func(t *testing.T, p string) {
		got, params := seatbeltSpec{Writable: []string{p}, Masked: []string{p}}.render()
		want, _ := seatbeltSpec{Writable: []string{"/x"}, Masked: []string{"/x"}}.render()
		if got != want || len(params) != 2 || params[0] != "W0="+p || params[1] != "D0="+p {
			t.Fatalf("path %q: params %q, profile\n%s", p, params, got)
		}
	})
}

// TestSeatbeltVisiblePathInADeniedDirectory: a denied directory that
// holds a visible path hides the rest of itself; the visible path is
// readable and (inside a writable directory) writable, the directories on
// the way to it have readable metadata; a working directory it hides is
// refused.
func TestSeatbeltVisiblePathInADeniedDirectory(t *testing.T) {
	tr := newSeatbeltTree(t, "project")
	work := filepath.Join(tr.root, "work")
	app, other := filepath.Join(work, "jobs", "app"), filepath.Join(work, "jobs", "other")
	write(t, filepath.Join(app, "f"), "f\n")
	write(t, filepath.Join(other, "f"), "f\n")
	pol := Policy{Mode: ModeWorkspaceWrite, Caches: CachesOff(), DenyRead: DenyList{work}, Visible: []string{app}}
	s := tr.spec(t, Request{Dir: app, Policy: pol})
	tr.golden(t, "visible", s)
	if _, _, err := seatbeltSpecFor(Request{Dir: other, Policy: pol}, tr.home, tr.tmp, ""); err == nil || !strings.Contains(err.Error(), "is not visible inside the sandbox") {
		t.Fatalf("a working directory the denied directory hides: %v", err)
	}
}

// TestSeatbeltWrapRunsTheCommandUnderSandboxExec: Wrap's command is
// sandbox-exec -p <profile> -D<params>… -- program args, with TMPDIR the
// private directory; for a proxied network the proxy variables point at a
// loopback port that the profile allows and that reaches the harness's
// proxy: an allowed host is served through it, another is refused and
// logged.
func TestSeatbeltWrapRunsTheCommandUnderSandboxExec(t *testing.T) {
	tr := newSeatbeltTree(t, "project")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "served") }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	b := newSeatbelt("/usr/bin/sandbox-exec", tr.home)
	defer func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	}()
	pol := Policy{Mode: ModeWorkspaceWrite, Caches: CachesOff(), Network: Network{Mode: NetworkProxy, AllowedDomains: []string{"allowed.test"}}}
	cmd, rep, err := b.Wrap(Request{Dir: tr.project, Policy: pol, Path: "/bin/echo", Argv: []string{"echo", "hi"},
		Env: []string{"PATH=/usr/bin:/bin"}, NetworkHosts: map[string]string{"allowed.test": u.Hostname(), "other.test": u.Hostname()}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Backend != BackendSeatbelt || rep.Enforcement != EnforcementPartial {
		t.Fatalf("report %s", rep)
	}
	n := len(cmd.Args)
	if cmd.Path != "/usr/bin/sandbox-exec" || cmd.Args[0] != cmd.Path || cmd.Args[1] != "-p" || !strings.HasPrefix(cmd.Args[2], "(version 1)\n(deny default)") ||
		!slices.Equal(cmd.Args[n-3:], []string{"--", "/bin/echo", "hi"}) || !strings.HasPrefix(cmd.Args[3], "-DW0="+tr.project) {
		t.Fatalf("command line %q", cmd.Args)
	}
	proxy := ""
	for _, kv := range cmd.Env {
		if v, ok := strings.CutPrefix(kv, "HTTP_PROXY="); ok {
			proxy = v
		}
	}
	tmp := slices.IndexFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") })
	pu, err := url.Parse(proxy)
	if err != nil || pu.Hostname() != "127.0.0.1" || tmp < 0 {
		t.Fatalf("HTTP_PROXY %q, env %q", proxy, cmd.Env)
	}
	if !strings.Contains(cmd.Args[2], "(allow network-outbound (remote ip \"localhost:"+pu.Port()+"\"))") {
		t.Fatalf("the profile does not allow the proxy's port %s:\n%s", pu.Port(), cmd.Args[2])
	}
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
	defer client.CloseIdleConnections()
	get := func(host string) (int, string) {
		resp, err := client.Get("http://" + host + ":" + u.Port() + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("allowed.test"); code != http.StatusOK || body != "served" {
		t.Fatalf("allowed host through the proxy: %d %q", code, body)
	}
	if code, _ := get("other.test"); code == http.StatusOK {
		t.Fatalf("a host not allowed was served")
	}
	if refused := cmd.Network.Refused(); len(refused) != 1 || !strings.Contains(refused[0], "other.test") {
		t.Fatalf("refused %q", refused)
	}
}
