// Package netproxy is the sandbox's network proxy: an HTTP proxy (CONNECT
// tunnels and plain http:// requests) and a SOCKS5 proxy (CONNECT only) on
// one unix socket, that let a sandboxed command reach the hosts its policy
// allows and refuse the rest with a message naming the host and the rule
// to add.
//
// The proxy runs in the harness, outside the sandbox; the command's
// network namespace has only a loopback device, where a forwarder
// ([Forward]) passes TCP connections on to the proxy's socket, which the
// sandbox binds in. The command finds it through HTTP_PROXY, HTTPS_PROXY
// and ALL_PROXY ([Env]). The same socket speaks both protocols: a
// connection whose first byte is 5 is SOCKS5, anything else HTTP.
//
// Names are decided as the client sent them, before resolution (SOCKS5
// clients must send names: socks5h://); the proxy resolves allowed names
// itself and refuses to connect an allowed name to a loopback,
// link-local, unspecified or multicast address (a name pointed at the
// host's own services or a cloud metadata address), unless the rule that
// allowed it names that address or localhost.
package netproxy

import (
	"fmt"
	"net/netip"
	"strings"
)

// Rules decide which hosts a command may reach. Each entry is a host name
// ("proxy.golang.org"), a glob "*.example.com" (any name ending in
// ".example.com", not example.com itself), or an IP address. Matching is
// case-insensitive and ignores a trailing dot. Deny wins over Allow.
type Rules struct {
	// Allow are the hosts a command may connect to.
	Allow []string
	// Deny are hosts refused even when Allow matches.
	Deny []string
}

// Validate reports the first malformed entry as allow[i] or deny[i].
func (r Rules) Validate() error {
	for i, a := range r.Allow {
		if err := ValidatePattern(a); err != nil {
			return fmt.Errorf("allow[%d]: %w", i, err)
		}
	}
	for i, d := range r.Deny {
		if err := ValidatePattern(d); err != nil {
			return fmt.Errorf("deny[%d]: %w", i, err)
		}
	}
	return nil
}

// ValidatePattern checks one rule entry: a host name, "*." followed by a
// host name, or an IP address. No scheme, port, path or other wildcard.
func ValidatePattern(p string) error {
	if _, err := netip.ParseAddr(p); err == nil {
		return nil
	}
	name := strings.TrimPrefix(p, "*.")
	switch {
	case p == "":
		return fmt.Errorf("empty host")
	case strings.Contains(p, "://"):
		return fmt.Errorf("%q: a host name only, without a scheme (write %q)", p, p[strings.Index(p, "://")+3:])
	case strings.ContainsAny(name, "*?[]{}"):
		return fmt.Errorf("%q: the only wildcard is a leading \"*.\" (any subdomain)", p)
	case strings.ContainsAny(name, ":/@ \t"):
		return fmt.Errorf("%q: a host name only, without port, path or user", p)
	}
	for _, label := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("%q: not a host name (empty or over-long label)", p)
		}
	}
	return nil
}

// Match returns the first pattern in list that matches host ("" when
// none does).
func Match(list []string, host string) string {
	h := normalize(host)
	for _, p := range list {
		if matches(normalize(p), h) {
			return p
		}
	}
	return ""
}

func matches(p, h string) bool {
	if suffix, ok := strings.CutPrefix(p, "*."); ok {
		return strings.HasSuffix(h, "."+suffix)
	}
	if pa, err := netip.ParseAddr(p); err == nil {
		ha, err := netip.ParseAddr(h)
		return err == nil && pa.Unmap() == ha.Unmap()
	}
	return p == h
}

func normalize(h string) string {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}

// Verdict is a decision about one host.
type Verdict struct {
	// Allowed says the host may be reached.
	Allowed bool
	// Rule is the entry that decided: the allow entry that matched, or
	// the deny entry that refused ("" when no entry matched: refused).
	Rule string
}

// Decide applies r to host: a deny match refuses, else an allow match
// allows, else refused.
func (r Rules) Decide(host string) Verdict {
	if d := Match(r.Deny, host); d != "" {
		return Verdict{Rule: d}
	}
	if a := Match(r.Allow, host); a != "" {
		return Verdict{Allowed: true, Rule: a}
	}
	return Verdict{}
}
