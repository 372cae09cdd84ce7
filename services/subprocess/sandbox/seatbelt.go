package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/dshgo/harness/services/subprocess/sandbox/netproxy"
)

// seatbelt is the macOS backend: each command runs under sandbox-exec
// with a profile generated from the policy (seatbelt_profile.go). The
// profile is built here on every platform; only the probe that picks the
// backend is macOS's (seatbelt_darwin.go).
type seatbelt struct {
	path string // sandbox-exec
	home string // what "~/" expands to

	proxies proxies

	mu     sync.Mutex
	fwds   map[*proxyInst]*hostForwarder
	closed bool

	tmpOnce sync.Once
	tmp     string
	tmpErr  error
}

// hostForwarder listens on a loopback port of the host and joins each
// connection to a proxy's unix socket: a Seatbelt command shares the
// host's network stack, so the port it may reach is the harness's own.
type hostForwarder struct {
	port   int
	cancel context.CancelFunc
	done   chan struct{}
}

func (b *seatbelt) Name() string { return BackendSeatbelt }

// Check lists what the Seatbelt profile does not enforce for p.
func (b *seatbelt) Check(p Policy) Report {
	rep := Report{Backend: BackendSeatbelt, Enforcement: EnforcementPartial}
	rep.Reasons = append(rep.Reasons,
		"no private PID namespace or /tmp: /tmp is read-only and TMPDIR points to a private writable directory",
		"denyRead glob patterns are expanded when a command starts: a matching file created later is readable (literal paths are denied whether they exist or not)")
	if p.Network.Proxied() {
		rep.Reasons = append(rep.Reasons, "network: the proxy's loopback port is on the host's network, so other local processes can reach it too")
	}
	return rep
}

// privateTmp is the backend's writable TMPDIR (0700, one per runtime).
func (b *seatbelt) privateTmp() (string, error) {
	b.tmpOnce.Do(func() { b.tmp, b.tmpErr = os.MkdirTemp("", "harness-sandbox-tmp-") })
	return b.tmp, b.tmpErr
}

// Wrap returns sandbox-exec with the profile of req's policy and the
// command after "--". The environment gets TMPDIR (the private directory)
// and, for a proxied network, the proxy variables.
func (b *seatbelt) Wrap(req Request) (Command, Report, error) {
	rep := b.Check(req.Policy)
	tmp, err := b.privateTmp()
	if err != nil {
		return Command{}, rep, fmt.Errorf("private TMPDIR: %w", err)
	}
	caches, err := applyCaches(&req)
	if err != nil {
		return Command{}, rep, err
	}
	spec, incomplete, err := seatbeltSpecFor(req, b.home, tmp, caches)
	if err != nil {
		return Command{}, rep, err
	}
	if len(incomplete) > 0 {
		rep.Reasons = append(rep.Reasons, fmt.Sprintf("denyRead patterns matched more than %d paths and were applied only in part: %s", maxDenyMatches, strings.Join(incomplete, ", ")))
	}
	env := append(slices.Clip(req.Env), "TMPDIR="+tmp)
	var netLog *NetworkLog
	if req.Policy.Network.Proxied() {
		var ask netproxy.Asker
		if req.Policy.Network.Ask {
			ask = req.NetworkAsk
		}
		p, err := b.proxies.get(req.Policy.Network.Rules(), req.NetworkHosts, ask)
		if err != nil {
			return Command{}, rep, err
		}
		if spec.ProxyPort, err = b.forwarder(p); err != nil {
			return Command{}, rep, err
		}
		env = proxyEnv(env, spec.ProxyPort)
		netLog = &NetworkLog{srv: p.srv, after: p.srv.Seq()}
	}
	profile, params := spec.render()
	args := seatbeltArgs(b.path, profile, params, req.Path, req.Argv)
	prot := protectedIn(req)
	readOnly := append(slices.Clone(prot.GitDirs), roBindable(prot)...)
	return Command{Path: b.path, Args: args, Env: env, ReadOnly: readOnly, Network: netLog}, rep, nil
}

// forwarder returns the host port that forwards to proxy p, starting the
// forwarder on first use.
func (b *seatbelt) forwarder(p *proxyInst) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, errors.New("network proxy: backend closed")
	}
	if f := b.fwds[p]; f != nil {
		return f.port, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("network proxy forwarder: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &hostForwarder{port: ln.Addr().(*net.TCPAddr).Port, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		_ = netproxy.Forward(ctx, ln, p.sock)
	}()
	if b.fwds == nil {
		b.fwds = map[*proxyInst]*hostForwarder{}
	}
	b.fwds[p] = f
	return f.port, nil
}

// Close stops the forwarders and the proxies and removes the private
// TMPDIR.
func (b *seatbelt) Close() error {
	b.mu.Lock()
	b.closed = true
	fwds := b.fwds
	b.fwds = nil
	b.mu.Unlock()
	for _, f := range fwds {
		f.cancel()
		<-f.done
	}
	b.proxies.close()
	if b.tmp == "" {
		return nil
	}
	return os.RemoveAll(b.tmp)
}

// newSeatbelt returns the backend for the sandbox-exec at path.
func newSeatbelt(path, home string) *seatbelt {
	return &seatbelt{path: path, home: home}
}
