package pgtest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy is a TCP forwarder to the test database that a test can cut off
// and restore, to play a database outage (a restart, a network cut)
// without disturbing the shared server or the other tests: while cut, its
// open connections are closed and new ones are accepted and closed at
// once, as a restarting server does.
type Proxy struct {
	// DSN is the test database's DSN with the proxy's address.
	DSN string
	// Addr is the proxy's host:port.
	Addr string

	target string
	l      net.Listener
	wg     sync.WaitGroup

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]bool
	n     int // connections forwarded
}

// NewProxy calls Need and starts a proxy to the test database, open; it
// stops with t.
func NewProxy(t testing.TB) *Proxy {
	t.Helper()
	u, err := url.Parse(Need(t))
	if err != nil {
		t.Fatalf("pgtest: the test DSN is not a URL: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: l.Addr().String(), target: u.Host, l: l, conns: map[net.Conn]bool{}}
	u.Host = p.Addr
	p.DSN = u.String()
	t.Cleanup(func() {
		_ = l.Close()
		p.Cut()
		p.wg.Wait()
	})
	p.wg.Go(p.accept)
	return p
}

// Cut closes every forwarded connection and refuses new ones until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

// Restore forwards new connections again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// Forwarded is the number of connections forwarded so far.
func (p *Proxy) Forwarded() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

func (p *Proxy) accept() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		cut := p.cut
		p.mu.Unlock()
		if cut {
			_ = c.Close()
			continue
		}
		d, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		if p.cut { // cut while dialling
			p.mu.Unlock()
			_ = c.Close()
			_ = d.Close()
			continue
		}
		p.conns[c], p.conns[d] = true, true
		p.n++
		p.mu.Unlock()
		pipe := func(to, from net.Conn) {
			_, _ = io.Copy(to, from)
			_ = to.Close()
			_ = from.Close()
			p.mu.Lock()
			delete(p.conns, to)
			delete(p.conns, from)
			p.mu.Unlock()
		}
		p.wg.Go(func() { pipe(d, c) })
		p.wg.Go(func() { pipe(c, d) })
	}
}
