package toolweb

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dshgo/harness/services/subprocess"
)

// gate decides which hosts the tools may reach: the subprocess runtime's
// sandbox network, as its proxy decides a sandboxed command's connection,
// and a person's answers (kept for the plugin's life, one per host).
type gate struct {
	rt           *subprocess.Runtime // nil: no subprocess row, nothing reachable
	allowPrivate bool

	mu      sync.Mutex
	granted map[string]bool
	denied  map[string]bool
}

// admission is the gate's yes for one host: whether a private address
// may be dialled for it.
type admission struct {
	privateOK bool
}

// admit decides host (port for the question only). The error says why
// and which field to change.
func (g *gate) admit(ctx context.Context, host string, port int) (admission, error) {
	if g.rt == nil {
		return admission{}, fmt.Errorf("%s: refused: no subprocess row is mounted, and the web tools reach only what its sandbox.network allows", host)
	}
	pol := g.rt.SandboxPolicy()
	if pol.Mode == subprocess.SandboxOff || pol.Network.On() {
		return admission{privateOK: g.allowPrivate}, nil
	}
	if !pol.Network.Proxied() {
		return admission{}, fmt.Errorf("%s: refused: the subprocess row's sandbox.network is off, so commands reach no host and neither do the web tools (list the host in sandbox.network.allowedDomains)", host)
	}
	v := pol.Network.Rules().Decide(host)
	switch {
	case v.Allowed:
		return admission{privateOK: g.allowPrivate || namesItself(v.Rule, host)}, nil
	case v.Rule != "":
		return admission{}, fmt.Errorf("%s: refused by sandbox.network.deniedDomains entry %q", host, v.Rule)
	case pol.Network.Ask:
		return g.ask(ctx, host, port)
	}
	return admission{}, fmt.Errorf("%s: refused: sandbox.network.allowedDomains does not list it (add %q there)", host, host)
}

// ask puts host to the runtime's network asker, remembering allow-always
// and deny answers.
func (g *gate) ask(ctx context.Context, host string, port int) (admission, error) {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	g.mu.Lock()
	granted, denied := g.granted[h], g.denied[h]
	g.mu.Unlock()
	if granted {
		return admission{privateOK: g.allowPrivate}, nil
	}
	if denied {
		return admission{}, fmt.Errorf("%s: refused: denied when asked", host)
	}
	ans := g.rt.AskNetwork(ctx, host, port)
	g.mu.Lock()
	defer g.mu.Unlock()
	switch ans {
	case subprocess.NetworkAllowAlways:
		g.granted[h] = true
		fallthrough
	case subprocess.NetworkAllowOnce:
		return admission{privateOK: g.allowPrivate}, nil
	case subprocess.NetworkDeny:
		g.denied[h] = true
		return admission{}, fmt.Errorf("%s: refused: denied when asked", host)
	}
	return admission{}, fmt.Errorf("%s: refused: sandbox.network.allowedDomains does not list it and no one can be asked (add %q there)", host, host)
}

// namesItself reports whether the allow entry is the host's own IP
// address or localhost: the one way a rule opens a private address, as
// for the sandbox's proxy.
func namesItself(rule, host string) bool {
	r := strings.ToLower(strings.Trim(rule, "[]"))
	if r == "localhost" {
		return true
	}
	ra, err1 := netip.ParseAddr(r)
	ha, err2 := netip.ParseAddr(strings.Trim(host, "[]"))
	return err1 == nil && err2 == nil && ra.Unmap() == ha.Unmap()
}

// cgnat is 100.64.0.0/10 (carrier-grade NAT, also some cloud metadata).
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// private reports an address the tools do not connect to by default.
func private(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsUnspecified() || a.IsMulticast() || cgnat.Contains(a)
}

// dialer connects only to addresses the admission allows: the check runs
// on the resolved address at connect time, so a name that resolves (or
// re-resolves) to a private address is refused.
func dialer(ad admission, timeout time.Duration) *net.Dialer {
	return &net.Dialer{Timeout: timeout, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("web: connect to %s: %w", address, err)
		}
		if !ad.privateOK && private(ap.Addr()) {
			return fmt.Errorf("%w: %s is a loopback, private, link-local or multicast address (web.config.allowPrivateAddresses, or the address itself in sandbox.network.allowedDomains, allows it)", errPrivate, ap.Addr())
		}
		return nil
	}}
}

// errPrivate marks a refused private address.
var errPrivate = fmt.Errorf("refused")
