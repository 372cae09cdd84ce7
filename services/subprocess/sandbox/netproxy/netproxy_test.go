package netproxy

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/net/proxy"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestRules(t *testing.T) {
	r := Rules{Allow: []string{"proxy.golang.org", "*.example.com", "10.1.2.3"}, Deny: []string{"bad.example.com"}}
	for host, want := range map[string]Verdict{
		"proxy.golang.org":    {Allowed: true, Rule: "proxy.golang.org"},
		"PROXY.golang.org.":   {Allowed: true, Rule: "proxy.golang.org"},
		"a.b.example.com":     {Allowed: true, Rule: "*.example.com"},
		"example.com":         {},
		"evilexample.com":     {},
		"bad.example.com":     {Rule: "bad.example.com"},
		"10.1.2.3":            {Allowed: true, Rule: "10.1.2.3"},
		"golang.org":          {},
		"sum.golang.org.evil": {},
	} {
		if got := r.Decide(host); got != want {
			t.Errorf("Decide(%q) = %+v, want %+v", host, got, want)
		}
	}
	for _, bad := range []string{"", "https://x.org", "x.org:443", "a*.x.org", "x..org", "*"} {
		if err := ValidatePattern(bad); err == nil {
			t.Errorf("ValidatePattern(%q): no error", bad)
		}
	}
	if err := (Rules{Deny: []string{"ok.org", "x.org/p"}}).Validate(); err == nil || !strings.HasPrefix(err.Error(), "deny[1]: ") {
		t.Errorf("Validate: %v, want deny[1]", err)
	}
}

// start runs a proxy with rules and a forwarder on a loopback port, and
// returns the port.
func start(t *testing.T, opts Options) (*Server, int) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "p.sock")
	s, err := Listen(sock, opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = Forward(ctx, ln, sock) }()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = s.Close()
	})
	return s, ln.Addr().(*net.TCPAddr).Port
}

func hostPort(t *testing.T, u string) (string, string) {
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return pu.Hostname(), pu.Port()
}

func TestHTTPAndConnectAndSOCKS(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "tls ok") }))
	defer tlsSrv.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "plain ok "+r.Host)
	}))
	defer plain.Close()
	ip, tlsPort := hostPort(t, tlsSrv.URL)
	_, plainPort := hostPort(t, plain.URL)
	s, port := start(t, Options{
		Rules: Rules{Allow: []string{"allowed.test", "*.wild.test"}, Deny: []string{"no.wild.test"}},
		Hosts: map[string]string{"allowed.test": ip, "a.wild.test": ip, "no.wild.test": ip, "other.test": ip},
	})
	proxyURL, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(port))
	tr := &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	get := func(u string) (int, string) {
		t.Helper()
		resp, err := c.Get(u)
		if err != nil {
			return -1, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("https://allowed.test:" + tlsPort + "/"); code != 200 || body != "tls ok" {
		t.Errorf("CONNECT allowed.test: %d %q", code, body)
	}
	if code, body := get("http://a.wild.test:" + plainPort + "/x"); code != 200 || body != "plain ok a.wild.test:"+plainPort {
		t.Errorf("plain a.wild.test: %d %q", code, body)
	}
	if code, body := get("http://other.test:" + plainPort + "/"); code != 403 || !strings.Contains(body, `add "other.test" to sandbox.network.allowedDomains`) {
		t.Errorf("plain other.test: %d %q, want 403 naming the rule to add", code, body)
	}
	if code, body := get("https://other.test:" + tlsPort + "/"); code != -1 || !strings.Contains(body, "Forbidden") {
		t.Errorf("CONNECT other.test: %d %q, want refused", code, body)
	}
	if code, body := get("http://no.wild.test:" + plainPort + "/"); code != 403 || !strings.Contains(body, `deniedDomains entry "no.wild.test"`) {
		t.Errorf("deny wins: %d %q", code, body)
	}

	// SOCKS5 with names (socks5h).
	d, err := proxy.SOCKS5("tcp", "127.0.0.1:"+strconv.Itoa(port), nil, proxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	sc := &http.Client{Transport: &http.Transport{DialContext: d.(proxy.ContextDialer).DialContext}}
	defer sc.CloseIdleConnections()
	resp, err := sc.Get("http://allowed.test:" + plainPort + "/s")
	if err != nil {
		t.Fatalf("socks allowed: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "plain ok allowed.test:"+plainPort {
		t.Errorf("socks body %q", b)
	}
	if _, err := sc.Get("http://other.test:" + plainPort + "/"); err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Errorf("socks other.test: %v, want not allowed by ruleset", err)
	}
	refs, last := s.Refusals(0)
	if last != 4 || len(refs) != 4 || refs[3].Host != "other.test" || !strings.Contains(refs[3].Message, "allowedDomains") {
		t.Errorf("refusals: %d %+v", last, refs)
	}
}

func TestLoopbackNeedsExplicitRule(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer plain.Close()
	_, plainPort := hostPort(t, plain.URL)
	_, port := start(t, Options{Rules: Rules{Allow: []string{"localhost.test-loop", "127.0.0.1"}}})
	proxyURL, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(port))
	tr := &http.Transport{Proxy: http.ProxyURL(proxyURL)}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	// An IP literal that is listed is reached.
	resp, err := c.Get("http://127.0.0.1:" + plainPort + "/")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("listed 127.0.0.1: %v %v", resp, err)
	}
	resp.Body.Close()
	// A name that DNS resolves to loopback, allowed by a rule that is not
	// the address, is refused.
	_, port2 := start(t, Options{Rules: Rules{Allow: []string{"*.test"}}, Resolve: func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}})
	proxyURL2, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(port2))
	tr2 := &http.Transport{Proxy: http.ProxyURL(proxyURL2)}
	defer tr2.CloseIdleConnections()
	resp, err = (&http.Client{Transport: tr2}).Get("http://x.test:" + plainPort + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 502 || !strings.Contains(string(b), "loopback") {
		t.Errorf("x.test: %d %q, want 502 loopback refused", resp.StatusCode, b)
	}
}

// TestAsk: a host no rule decides is asked about once however many
// requests wait for it; allow-always is kept, deny is kept and named as
// the person's, allow-once asks again next time, no answer (headless) is
// the usual refusal; a denied or allowed host is never asked.
func TestAsk(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer plain.Close()
	ip, plainPort := hostPort(t, plain.URL)
	var mu sync.Mutex
	asked := map[string]int{}
	release := make(chan struct{})
	answers := map[string]Answer{"always.test": AskAllowAlways, "once.test": AskAllowOnce, "deny.test": AskDeny, "nobody.test": AskUnavailable}
	hosts := map[string]string{}
	for h := range answers {
		hosts[h] = ip
	}
	hosts["listed.test"], hosts["blocked.test"] = ip, ip
	_, port := start(t, Options{Rules: Rules{Allow: []string{"listed.test"}, Deny: []string{"blocked.test"}}, Hosts: hosts,
		Ask: func(ctx context.Context, host string, _ int) Answer {
			mu.Lock()
			asked[host]++
			mu.Unlock()
			if host == "always.test" {
				<-release
			}
			return answers[host]
		}})
	proxyURL, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(port))
	tr := &http.Transport{Proxy: http.ProxyURL(proxyURL), DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	get := func(host string) (int, string) {
		resp, err := c.Get("http://" + host + ":" + plainPort + "/")
		if err != nil {
			return -1, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var wg sync.WaitGroup
	codes := make([]int, 5)
	for i := range codes {
		wg.Add(1)
		go func() { defer wg.Done(); codes[i], _ = get("always.test") }()
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		mu.Lock()
		n := asked["always.test"]
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			close(release)
			wg.Wait()
			t.Fatal("always.test was never asked about")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // the other requests are waiting by now
	close(release)
	wg.Wait()
	for i, code := range codes {
		if code != 200 {
			t.Errorf("always.test request %d: %d", i, code)
		}
	}
	get("always.test")
	get("once.test")
	get("once.test")
	if code, body := get("deny.test"); code != 403 || !strings.Contains(body, "refused when you were asked") {
		t.Errorf("deny.test: %d %q", code, body)
	}
	get("deny.test")
	if code, body := get("nobody.test"); code != 403 || !strings.Contains(body, `add "nobody.test" to sandbox.network.allowedDomains`) {
		t.Errorf("nobody.test: %d %q", code, body)
	}
	get("listed.test")
	get("blocked.test")
	// A name that is no host name (the command chose it) is refused
	// without a question.
	d, err := proxy.SOCKS5("tcp", "127.0.0.1:"+strconv.Itoa(port), nil, proxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"bash(*) x", "a\x1b[2Jb", "a..b"} {
		if c, err := d.(proxy.ContextDialer).DialContext(context.Background(), "tcp", net.JoinHostPort(bad, plainPort)); err == nil {
			c.Close()
			t.Errorf("%q: connected", bad)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]int{"always.test": 1, "once.test": 2, "deny.test": 1, "nobody.test": 1}
	for h, n := range want {
		if asked[h] != n {
			t.Errorf("%s asked %d times, want %d (all: %v)", h, asked[h], n, asked)
		}
	}
	if len(asked) != len(want) {
		t.Errorf("asked about a host a rule decides or a name that is no host: %v", asked)
	}
}

// TestAskWithdrawnWhenClientLeaves: a question in flight is withdrawn (its
// ctx ends) when the client that caused it closes its connection, for a
// CONNECT, a plain HTTP request and a SOCKS5 request.
func TestAskWithdrawnWhenClientLeaves(t *testing.T) {
	asking := make(chan string, 4)
	withdrawn := make(chan string, 4)
	_, port := start(t, Options{Ask: func(ctx context.Context, host string, _ int) Answer {
		asking <- host
		<-ctx.Done()
		withdrawn <- host
		return AskUnavailable
	}})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	socks := []byte{5, 1, 0, 5, 1, 0, 3, byte(len("socks.test"))}
	socks = append(append(socks, "socks.test"...), 0, 80)
	for _, c := range []struct{ host, send string }{
		{"connect.test", "CONNECT connect.test:443 HTTP/1.1\r\nHost: connect.test:443\r\n\r\n"},
		{"plain.test", "GET http://plain.test/ HTTP/1.1\r\nHost: plain.test\r\n\r\n"},
		{"socks.test", string(socks)},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(conn, c.send); err != nil {
			t.Fatal(err)
		}
		select {
		case h := <-asking:
			if h != c.host {
				t.Fatalf("asked about %q, want %q", h, c.host)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: never asked", c.host)
		}
		conn.Close()
		select {
		case h := <-withdrawn:
			if h != c.host {
				t.Fatalf("withdrew %q, want %q", h, c.host)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the question stayed open after the client left", c.host)
		}
	}
}
