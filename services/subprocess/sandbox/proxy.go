package sandbox

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dshgo/harness/services/subprocess/sandbox/netproxy"
)

// proxies are a backend's network proxies, one per distinct rule set
// (started on first use, stopped by close).
type proxies struct {
	mu     sync.Mutex
	m      map[string]*proxyInst
	closed bool
}

// proxyInst is one running proxy.
type proxyInst struct {
	// dir is the private (0700) directory holding the socket and the
	// forwarder's mount point.
	dir, sock, exe string
	port           int
	srv            *netproxy.Server
}

// maxProxies bounds the proxies (distinct rule sets) of a backend.
const maxProxies = 16

// get returns the proxy for rules, starting it when needed.
func (ps *proxies) get(rules netproxy.Rules, hosts map[string]string, ask netproxy.Asker) (*proxyInst, error) {
	key := strings.Join(rules.Allow, "\n") + "\x00" + strings.Join(rules.Deny, "\n") + "\x00" + strconv.FormatBool(ask != nil)
	for _, h := range slices.Sorted(maps.Keys(hosts)) {
		key += "\x00" + h + "=" + hosts[h]
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.closed {
		return nil, errors.New("network proxy: backend closed")
	}
	if p := ps.m[key]; p != nil {
		return p, nil
	}
	if len(ps.m) >= maxProxies {
		return nil, fmt.Errorf("network proxy: more than %d distinct network policies", maxProxies)
	}
	p, err := startProxy(rules, hosts, ask)
	if err != nil {
		return nil, err
	}
	if ps.m == nil {
		ps.m = map[string]*proxyInst{}
	}
	ps.m[key] = p
	return p, nil
}

// startProxy creates the private directory and starts a proxy on its
// socket, with a random loopback port for the forwarders.
func startProxy(rules netproxy.Rules, hosts map[string]string, ask netproxy.Asker) (*proxyInst, error) {
	dir, err := os.MkdirTemp("", "harness-netproxy-")
	if err != nil {
		return nil, fmt.Errorf("network proxy: %w", err)
	}
	p := &proxyInst{dir: dir, sock: filepath.Join(dir, "proxy.sock"), exe: filepath.Join(dir, "forwarder")}
	// The mount point of the forwarder executable (bound over it).
	if err := os.WriteFile(p.exe, nil, 0o500); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("network proxy: %w", err)
	}
	var b [2]byte
	_, _ = rand.Read(b[:])
	p.port = 20000 + int(binary.LittleEndian.Uint16(b[:]))%40000
	p.srv, err = netproxy.Listen(p.sock, netproxy.Options{Rules: rules, Hosts: hosts, Ask: ask})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return p, nil
}

// close stops every proxy and removes its directory.
func (ps *proxies) close() {
	ps.mu.Lock()
	ps.closed = true
	m := ps.m
	ps.m = nil
	ps.mu.Unlock()
	for _, p := range m {
		_ = p.srv.Close()
		_ = os.RemoveAll(p.dir)
	}
}

// proxyEnv is env without any proxy variable, plus those of the proxy at
// port.
func proxyEnv(env []string, port int) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(netproxy.EnvNames, k)
	})
	return append(out, netproxy.Env(port)...)
}

// NetworkLog is the proxy's record of the requests it refused since a
// command started (Command.Network).
type NetworkLog struct {
	srv   *netproxy.Server
	after uint64
}

// Refused returns the messages of the requests the proxy refused since
// the command started, one per host and port, in order. The proxy is
// shared by the commands of the same network policy: a command running at
// the same time may have made some of them.
func (l *NetworkLog) Refused() []string {
	if l == nil {
		return nil
	}
	refs, _ := l.srv.Refusals(l.after)
	var out []string
	seen := map[string]bool{}
	for _, r := range refs {
		if k := r.Host + ":" + strconv.Itoa(r.Port); !seen[k] {
			seen[k] = true
			out = append(out, r.Message)
		}
	}
	return out
}
