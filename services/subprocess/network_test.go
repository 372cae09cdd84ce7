//go:build unix

package subprocess

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/subprocess/sandbox"
)

// needCurl returns curl's path; a missing curl fails the test in CI and
// skips it elsewhere.
func needCurl(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("curl")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("curl not installed (.ci/run installs it): %v", err)
		}
		t.Skipf("curl not installed: %v", err)
	}
	return p
}

// proxiedTestServers starts an HTTPS and an HTTP server on loopback and
// returns their ports and the address both listen on.
func proxiedTestServers(t *testing.T) (ip, tlsPort, plainPort string) {
	t.Helper()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "tls ok") }))
	t.Cleanup(tlsSrv.Close)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "plain ok "+r.Host) }))
	t.Cleanup(plain.Close)
	tu, _ := url.Parse(tlsSrv.URL)
	pu, _ := url.Parse(plain.URL)
	return tu.Hostname(), tu.Port(), pu.Port()
}

// TestSandboxNetworkProxy: with a proxied network, curl in the sandbox
// reaches an allowed name (HTTPS through CONNECT, HTTP, SOCKS5), is refused
// a name not listed with a message naming it and the rule to add, is
// refused a denied name even when a glob allows it, and cannot connect
// to the server's address directly (no proxy) or over raw TCP.
func TestSandboxNetworkProxy(t *testing.T) {
	needCurl(t)
	ip, tlsPort, plainPort := proxiedTestServers(t)
	for _, backend := range []string{sandbox.BackendBwrap, bwrapPerCommand} {
		t.Run(backend, func(t *testing.T) {
			rt := sandboxRuntime(t, backend, Options{NetworkHosts: map[string]string{
				"allowed.test": ip, "a.wild.test": ip, "no.wild.test": ip, "other.test": ip}})
			p := &SandboxPolicy{Mode: SandboxWorkspaceWrite, Network: SandboxNetwork{Mode: SandboxNetworkProxy,
				AllowedDomains: []string{"allowed.test", "*.wild.test"}, DeniedDomains: []string{"no.wild.test"}}}
			ws := t.TempDir()
			run := func(script string) (int, string, string) {
				t.Helper()
				code, out, errOut, rep := runIn(t, rt, p, ws, script)
				checkShared(t, rt, backend, rep)
				return code, out, errOut
			}
			if code, out, errOut := run("curl -sS -k https://allowed.test:" + tlsPort + "/"); code != 0 || out != "tls ok" {
				t.Errorf("https allowed.test: exit %d, %q %q", code, out, errOut)
			}
			if code, out, errOut := run("curl -sS http://a.wild.test:" + plainPort + "/p"); code != 0 || out != "plain ok a.wild.test:"+plainPort {
				t.Errorf("http a.wild.test: exit %d, %q %q", code, out, errOut)
			}
			if code, out, errOut := run(`curl -sS -x "$ALL_PROXY" http://allowed.test:` + plainPort + "/s"); code != 0 || out != "plain ok allowed.test:"+plainPort {
				t.Errorf("socks5h allowed.test: exit %d, %q %q", code, out, errOut)
			}
			if code, out, errOut := run("curl -sS -k https://other.test:" + tlsPort + "/"); code == 0 || !strings.Contains(errOut, "403") {
				t.Errorf("https other.test: exit %d, %q %q, want a refused CONNECT", code, out, errOut)
			}
			// The refusal reaches the command's result, naming the host
			// and the rule (curl shows only "response 403").
			res := runScript(t, rt, p, ws, "curl -sS -k https://refused.test:"+tlsPort+"/; curl -sS -k https://refused.test:"+tlsPort+"/")
			if len(res.NetworkRefused) != 1 || !strings.Contains(res.NetworkRefused[0], `network access to refused.test is not allowed: add "refused.test" to sandbox.network.allowedDomains`) {
				t.Errorf("Result.NetworkRefused = %q, want one refusal of refused.test", res.NetworkRefused)
			}
			if code, out, _ := run("curl -sS http://other.test:" + plainPort + "/"); code != 0 || !strings.Contains(out, `network access to other.test is not allowed: add "other.test" to sandbox.network.allowedDomains`) {
				t.Errorf("http other.test: exit %d, %q, want the refusal naming the host and the rule", code, out)
			}
			if code, out, _ := run("curl -sS http://no.wild.test:" + plainPort + "/"); code != 0 || !strings.Contains(out, `no.wild.test is refused by sandbox.network.deniedDomains entry "no.wild.test"`) {
				t.Errorf("http no.wild.test: exit %d, %q, want deny to win over *.wild.test", code, out)
			}
			if code, out, errOut := run("curl -sS -m 5 --noproxy '*' http://" + ip + ":" + plainPort + "/"); code == 0 {
				t.Errorf("direct http to %s without the proxy: exit 0, %q %q", ip, out, errOut)
			}
			if code, out, _ := run("exec 3<>/dev/tcp/" + ip + "/" + plainPort + " && echo connected"); code == 0 || strings.Contains(out, "connected") {
				t.Errorf("raw TCP to %s:%s: exit %d %q, want no route", ip, plainPort, code, out)
			}
		})
	}
}

// TestLandlockProxiedNetworkIsOff: under Landlock a proxied network is
// no network (TCP connect denied), and the report says why.
func TestLandlockProxiedNetworkIsOff(t *testing.T) {
	needCurl(t)
	ip, _, plainPort := proxiedTestServers(t)
	rt := sandboxRuntime(t, sandbox.BackendLandlock, Options{})
	p := &SandboxPolicy{Mode: SandboxWorkspaceWrite, Network: SandboxNetwork{Mode: SandboxNetworkProxy, AllowedDomains: []string{ip}}}
	code, out, _, rep := runIn(t, rt, p, t.TempDir(), "curl -sS -m 5 --noproxy '*' http://"+ip+":"+plainPort+"/")
	if code == 0 {
		t.Fatalf("landlock, proxied network: direct connect succeeded: %q", out)
	}
	if !strings.Contains(rep.String(), "the domain allowlist needs bwrap") {
		t.Fatalf("report %v: want the reason the allowlist is not available", rep)
	}
}
