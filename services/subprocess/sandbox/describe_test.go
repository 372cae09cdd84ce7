package sandbox

import (
	"strings"
	"testing"
)

// TestDescribeNamesSeatbeltsMechanism: for the seatbelt backend every part
// of a policy says how Seatbelt applies it, never bwrap's or Landlock's
// mechanism, and a proxied network is said to go through the proxy.
func TestDescribeNamesSeatbeltsMechanism(t *testing.T) {
	p := Policy{Mode: ModeWorkspaceWrite, DenyRead: DenyList{"~/.ssh"}, Visible: []string{"~/.ssh/pub"}, Caches: CachesOff()}
	for _, n := range []Network{{Mode: NetworkOff}, {Mode: NetworkProxy, AllowedDomains: []string{"example.com"}}} {
		p.Network = n
		parts := Describe(p, BackendSeatbelt)
		if len(parts) != 5 {
			t.Fatalf("network %s: %d parts, want writes, denyRead, visible, protected paths, network", n, len(parts))
		}
		for _, part := range parts {
			if by := part.By[0]; !strings.HasPrefix(by, "seatbelt: ") {
				t.Errorf("network %s, %s: %q", n, part.Name, by)
			}
		}
		if net := parts[4].By[0]; strings.Contains(net, "proxy") != n.Proxied() {
			t.Errorf("network %s: %q", n, net)
		}
	}
}
