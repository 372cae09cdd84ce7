package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/plugins/web"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// TestSecurityChecks: the API answers only its own pages on its own
// address with the token: 401 without it, 403 for a foreign Origin or Host
// or a cross-site fetch, 400 for a path leaving the workspace.
func TestSecurityChecks(t *testing.T) {
	t.Parallel()
	e := start(t, nil, "default")
	repo := t.TempDir()
	_ = os.WriteFile(filepath.Join(repo, "a.txt"), []byte("hello"), 0o644)
	outside := t.TempDir()
	_ = os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o600)
	_ = os.Symlink(outside, filepath.Join(repo, "link"))
	ws := e.workspace(repo)

	send := func(method, path string, hdr map[string]string, body string) *http.Response {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		r, _ := http.NewRequest(method, e.base+path, rd)
		for k, v := range hdr {
			if k == "Host" {
				r.Host = v
			} else {
				r.Header.Set(k, v)
			}
		}
		resp, err := e.http.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	auth := "Bearer " + e.srv.Token()
	tests := []struct {
		name         string
		method, path string
		hdr          map[string]string
		body         string
		want         int
	}{
		{"no token", "GET", "/api/workspaces", nil, "", 401},
		{"no token, page", "GET", "/", nil, "", 401},
		{"wrong token", "GET", "/api/workspaces", map[string]string{"Authorization": "Bearer " + strings.Repeat("0", 64)}, "", 401},
		{"wrong token in the URL", "GET", "/?token=nope", nil, "", 401},
		{"token", "GET", "/api/workspaces", map[string]string{"Authorization": auth}, "", 200},
		{"foreign Origin", "POST", "/api/workspaces", map[string]string{"Authorization": auth, "Origin": "http://evil.example", "Content-Type": "application/json"}, `{"path":"/tmp"}`, 403},
		{"foreign Origin on a GET", "GET", "/api/workspaces", map[string]string{"Authorization": auth, "Origin": "http://evil.example"}, "", 403},
		{"no Origin on a POST", "POST", "/api/workspaces", map[string]string{"Authorization": auth, "Content-Type": "application/json"}, `{"path":"/tmp"}`, 403},
		{"cross-site fetch", "GET", "/api/workspaces", map[string]string{"Authorization": auth, "Sec-Fetch-Site": "cross-site"}, "", 403},
		{"foreign Host (DNS rebinding)", "GET", "/api/workspaces", map[string]string{"Authorization": auth, "Host": "evil.example:" + port(e.base)}, "", 403},
		{"foreign Host, no token", "GET", "/", map[string]string{"Host": "attacker.test"}, "", 403},
		{"form post", "POST", "/api/workspaces", map[string]string{"Authorization": auth, "Origin": e.base, "Content-Type": "application/x-www-form-urlencoded"}, "path=/tmp", 415},
		{"body over the limit", "POST", "/api/workspaces", map[string]string{"Authorization": auth, "Origin": e.base, "Content-Type": "application/json"}, `{"path":"` + strings.Repeat("a", 2<<20) + `"}`, 413},
		{"OPTIONS (no CORS)", "OPTIONS", "/api/workspaces", map[string]string{"Authorization": auth, "Origin": e.base}, "", 405},
		{"path escape", "GET", "/api/workspaces/" + ws.ID + "/files?path=" + q("../"+filepath.Base(outside)+"/secret"), map[string]string{"Authorization": auth}, "", 400},
		{"absolute path", "GET", "/api/workspaces/" + ws.ID + "/files?path=" + q(filepath.Join(outside, "secret")), map[string]string{"Authorization": auth}, "", 400},
		{"escape through a symlink", "GET", "/api/workspaces/" + ws.ID + "/files?path=" + q("link/secret"), map[string]string{"Authorization": auth}, "", 400},
		{"malformed workspace id", "GET", "/api/workspaces/..%2F..%2Fetc/files", map[string]string{"Authorization": auth}, "", 400},
		{"malformed session id", "GET", "/api/workspaces/" + ws.ID + "/sessions/" + q("../../x") + "/events", map[string]string{"Authorization": auth}, "", 400},
		{"a file inside", "GET", "/api/workspaces/" + ws.ID + "/files?path=a.txt", map[string]string{"Authorization": auth}, "", 200},
	}
	for _, tt := range tests {
		resp := send(tt.method, tt.path, tt.hdr, tt.body)
		if resp.StatusCode != tt.want {
			t.Errorf("%s: %s %s = %d, want %d", tt.name, tt.method, tt.path, resp.StatusCode, tt.want)
		}
		for k := range resp.Header {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Errorf("%s: CORS header %s", tt.name, k)
			}
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("%s: CSP %q", tt.name, csp)
		}
	}

	// The first visit trades the URL's token for an HttpOnly, SameSite=Strict
	// cookie and redirects to a URL without it; the cookie then opens the page.
	resp := send("GET", "/?token="+e.srv.Token(), nil, "")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("exchange: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 || cookies[0].Name != web.CookieName || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Value != e.srv.Token() {
		t.Fatalf("cookie %+v", cookies)
	}
	if resp := send("GET", "/", map[string]string{"Cookie": web.CookieName + "=" + e.srv.Token()}, ""); resp.StatusCode != 200 {
		t.Fatalf("page with the cookie: %d", resp.StatusCode)
	}
	if !strings.HasPrefix(e.srv.URL(), "http://127.0.0.1:") || len(e.srv.Token()) != 64 {
		t.Fatalf("URL %q", e.srv.URL())
	}
}

func port(base string) string { return base[strings.LastIndex(base, ":")+1:] }

// TestBindPolicy: a non-loopback address needs allowRemote and TLS.
func TestBindPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cfg  web.Config
		want string
	}{
		{web.Config{Addr: "127.0.0.1:0"}, ""},
		{web.Config{Addr: "[::1]:8080"}, ""},
		{web.Config{Addr: "localhost:8080"}, ""},
		{web.Config{Addr: "0.0.0.0:8080"}, "needs allowRemote"},
		{web.Config{Addr: ":8080"}, "needs allowRemote"},
		{web.Config{Addr: "192.168.1.10:8080", AllowRemote: true}, "requires tlsCert and tlsKey"},
		{web.Config{Addr: "192.168.1.10:8080", AllowRemote: true, TLSCert: "c.pem", TLSKey: "k.pem"}, ""},
		{web.Config{Addr: "127.0.0.1:0", TLSCert: "c.pem"}, "set both or neither"},
		{web.Config{Addr: "127.0.0.1:0", Token: "short"}, "at least 32"},
	}
	for _, tt := range tests {
		var c web.Config
		c.SetDefaults()
		c.Addr, c.AllowRemote, c.TLSCert, c.TLSKey, c.Token = tt.cfg.Addr, tt.cfg.AllowRemote, tt.cfg.TLSCert, tt.cfg.TLSKey, tt.cfg.Token
		err := c.Validate()
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: %v, want %q", tt.cfg, err, tt.want)
		}
	}
}

var _ = llmtest.Reply

// TestPageInlinesBootData: the page carries the boot data (workspaces and
// the first workspace's sessions) in a JSON script element, with <, > and
// & escaped, so a workspace title cannot close the element and inject
// markup.
func TestPageInlinesBootData(t *testing.T) {
	t.Parallel()
	e := start(t, nil, "default")
	ws := e.workspace(t.TempDir())
	id := e.newSession(ws)
	evil := `</script><script>alert(1)</script>&`
	e.must(http.StatusOK, "PATCH", "/api/workspaces/"+ws.ID, map[string]string{"title": evil}, nil)
	code, body := e.req("GET", "/", nil)
	page := string(body)
	if code != 200 || strings.Contains(page, evil) || strings.Count(page, "<script") != 2 {
		t.Fatalf("page %d:\n%s", code, page)
	}
	_, data, ok := strings.Cut(page, `<script type="application/json" id="boot">`)
	data, _, _ = strings.Cut(data, "</script>")
	var boot struct {
		Workspaces []struct{ ID, Title string }
		Sessions   []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(data), &boot); !ok || err != nil || len(boot.Workspaces) != 1 || boot.Workspaces[0].Title != evil ||
		len(boot.Sessions) != 1 || boot.Sessions[0].ID != id {
		t.Fatalf("boot data %v %+v in:\n%s", err, boot, data)
	}
}
