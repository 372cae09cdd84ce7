package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"time"
)

// Options configure a [Server].
type Options struct {
	// Rules decide which hosts may be reached.
	Rules Rules
	// Hosts maps host names to addresses, like /etc/hosts, ahead of DNS.
	// Its entries are trusted: the proxy connects to them whatever the
	// address (loopback included). Tests point names at local servers.
	Hosts map[string]string
	// Resolve looks names up (default net.DefaultResolver.LookupNetIP
	// for "ip"); unlike Hosts, its answers go through the loopback and
	// link-local check.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Ask, when set, is asked about a host that no rule allows or denies
	// (once per host: concurrent requests share the question; allow-always
	// and deny answers are kept for the server's life). Nil: refused.
	Ask Asker
	// Log receives one line per refused request (nil: discarded).
	Log *slog.Logger
	// MaxConns bounds the connections served at once (default 512); a
	// connection beyond it is closed at once.
	MaxConns int
	// DialTimeout bounds each outbound connect (default 30 s).
	DialTimeout time.Duration
}

// Refusal is one request the proxy refused.
type Refusal struct {
	// Seq numbers refusals from 1, in order.
	Seq uint64
	// Time is when the request was refused.
	Time time.Time
	// Host is the host the request named; Port its port.
	Host string
	Port int
	// Message says why and what rule to add.
	Message string
}

// maxRefusals is how many recent refusals a server keeps.
const maxRefusals = 64

// Server is a running proxy. Safe for concurrent use.
type Server struct {
	opts  Options
	ln    net.Listener
	http  *http.Server
	conns chan net.Conn // HTTP connections (first byte not 5), for http.Server
	ctx   context.Context
	stop  context.CancelFunc
	slots chan struct{}
	wg    sync.WaitGroup

	mu       sync.Mutex
	refusals []Refusal
	seq      uint64
	active   map[net.Conn]struct{}
	closed   bool
	handlers sync.WaitGroup // HTTP handlers running; added to under mu while !closed

	asks asks
}

// Listen starts a proxy on the unix socket path (created; it must not
// exist). Close stops it.
func Listen(path string, opts Options) (*Server, error) {
	if err := opts.Rules.Validate(); err != nil {
		return nil, fmt.Errorf("netproxy: %w", err)
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = 512
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = 30 * time.Second
	}
	if opts.Resolve == nil {
		opts.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("netproxy: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("netproxy: %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{opts: opts, ln: ln, conns: make(chan net.Conn), ctx: ctx, stop: stop,
		slots: make(chan struct{}, opts.MaxConns), active: map[net.Conn]struct{}{}}
	s.http = &http.Server{Handler: http.HandlerFunc(s.serveHTTP), ReadHeaderTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(opts.Log.Handler(), slog.LevelDebug)}
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		_ = s.http.Serve(chanListener{s})
	}()
	go func() {
		defer s.wg.Done()
		s.accept()
	}()
	return s, nil
}

// Close stops accepting, ends every connection and waits for the
// server's goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for c := range s.active {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.stop()
	err := s.ln.Close()
	_ = s.http.Close()
	s.wg.Wait()
	s.handlers.Wait() // http.Server.Close does not wait for them
	return err
}

// Refusals returns the refusals numbered after seq (at most the last
// maxRefusals), and the number of the last refusal so far.
func (s *Server) Refusals(after uint64) ([]Refusal, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Refusal
	for _, r := range s.refusals {
		if r.Seq > after {
			out = append(out, r)
		}
	}
	return out, s.seq
}

// Seq is the number of the last refusal so far (0: none yet).
func (s *Server) Seq() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq
}

// track registers c for Close; false when the server is closed.
func (s *Server) track(c net.Conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !add {
		delete(s.active, c)
		return true
	}
	if s.closed {
		return false
	}
	s.active[c] = struct{}{}
	return true
}

func (s *Server) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		select {
		case s.slots <- struct{}{}:
		default:
			_ = c.Close() // over MaxConns
			continue
		}
		if !s.track(c, true) {
			_ = c.Close()
			<-s.slots
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.sniff(c)
		}()
	}
}

// sniff reads the first byte: 5 is SOCKS5, anything else goes to the
// HTTP server (which then owns the connection).
func (s *Server) sniff(c net.Conn) {
	release := func() {
		s.track(c, false)
		_ = c.Close()
		<-s.slots
	}
	br := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	b, err := br.Peek(1)
	_ = c.SetReadDeadline(time.Time{})
	if err != nil {
		release()
		return
	}
	if b[0] == 5 {
		defer release()
		s.serveSOCKS(c, br)
		return
	}
	pc := &peekedConn{Conn: c, r: br, release: release}
	select {
	case s.conns <- pc:
	case <-s.ctx.Done():
		release()
	}
}

// peekedConn is a connection whose first bytes sit in r; Close releases
// the server's slot once.
type peekedConn struct {
	net.Conn
	r       *bufio.Reader
	once    sync.Once
	release func()
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
func (c *peekedConn) Close() error {
	c.once.Do(c.release)
	return nil
}

// chanListener feeds the HTTP connections to http.Server.
type chanListener struct{ s *Server }

func (l chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.s.conns:
		return c, nil
	case <-l.s.ctx.Done():
		return nil, net.ErrClosed
	}
}
func (l chanListener) Close() error   { return nil }
func (l chanListener) Addr() net.Addr { return l.s.ln.Addr() }

// refuse records a refusal and returns its message.
func (s *Server) refuse(host string, port int, v Verdict, asked bool, proto string) string {
	msg := RefusalMessage(host, v)
	if asked {
		msg = fmt.Sprintf("harness sandbox: network access to %s was refused when you were asked (to allow it for good, add %q to sandbox.network.allowedDomains in the subprocess row of harness.yml)", host, host)
	}
	s.mu.Lock()
	s.seq++
	s.refusals = append(s.refusals, Refusal{Seq: s.seq, Time: time.Now(), Host: host, Port: port, Message: msg})
	if len(s.refusals) > maxRefusals {
		s.refusals = s.refusals[len(s.refusals)-maxRefusals:]
	}
	s.mu.Unlock()
	s.opts.Log.Info("sandbox network: refused", "proto", proto, "host", host, "port", port, "rule", v.Rule)
	return msg
}

// RefusalMessage is the text of a refused request to host: which rule
// refused it and what to add to the policy to allow it.
func RefusalMessage(host string, v Verdict) string {
	if v.Rule != "" {
		return fmt.Sprintf("harness sandbox: network access to %s is refused by sandbox.network.deniedDomains entry %q (remove it there to allow %s)", host, v.Rule, host)
	}
	msg := fmt.Sprintf("harness sandbox: network access to %s is not allowed: add %q to sandbox.network.allowedDomains in the subprocess row of harness.yml", host, host)
	if _, err := netip.ParseAddr(normalize(host)); err == nil {
		return msg
	}
	return msg + fmt.Sprintf(" (or \"*.%s\" for its subdomains)", parentDomain(host))
}

// parentDomain is host without its first label (host itself when it has
// only one or two labels).
func parentDomain(host string) string {
	if _, err := netip.ParseAddr(host); err == nil {
		return host
	}
	for i := 0; i < len(host); i++ {
		if host[i] == '.' {
			rest := host[i+1:]
			for j := 0; j < len(rest); j++ {
				if rest[j] == '.' {
					return rest
				}
			}
			return host
		}
	}
	return host
}

// dial connects to host:port for a request the rules allowed by rule.
func (s *Server) dial(ctx context.Context, host string, port int, rule string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.DialTimeout)
	defer cancel()
	var addrs []netip.Addr
	trusted := false
	if a, ok := s.opts.Hosts[normalize(host)]; ok {
		ip, err := netip.ParseAddr(a)
		if err != nil {
			return nil, fmt.Errorf("hosts entry for %s: %w", host, err)
		}
		addrs, trusted = []netip.Addr{ip}, true
	} else if ip, err := netip.ParseAddr(normalize(host)); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		found, err := s.opts.Resolve(ctx, host)
		if err != nil {
			return nil, err
		}
		addrs = found
	}
	localOK := trusted || normalize(rule) == "localhost"
	if ip, err := netip.ParseAddr(normalize(rule)); err == nil && len(addrs) == 1 && ip.Unmap() == addrs[0].Unmap() {
		localOK = true
	}
	var d net.Dialer
	var errs []error
	for _, a := range addrs {
		a = a.Unmap()
		if !localOK && (a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsUnspecified() || a.IsMulticast()) {
			errs = append(errs, fmt.Errorf("%s resolves to %s, a loopback, link-local or multicast address: the sandbox's proxy does not connect names to the host's own services (list the address itself, or localhost, in sandbox.network.allowedDomains to reach it)", host, a))
			continue
		}
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(a.String(), strconv.Itoa(port)))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("%s: no address", host)
	}
	return nil, errors.Join(errs...)
}

// serveHTTP serves CONNECT tunnels and absolute-URI http:// requests.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()
	if r.Method == http.MethodConnect {
		s.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Scheme != "http" {
		http.Error(w, "harness sandbox network proxy: send absolute http:// URLs or CONNECT host:port", http.StatusBadRequest)
		return
	}
	host := r.URL.Hostname()
	port := 80
	if p := r.URL.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			http.Error(w, "bad port", http.StatusBadRequest)
			return
		}
		port = n
	}
	v, asked := s.decide(r.Context(), host, port)
	if !v.Allowed {
		http.Error(w, s.refuse(host, port, v, asked, "http"), http.StatusForbidden)
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = pr.In.URL
			pr.Out.Header.Del("Proxy-Authorization")
			pr.Out.Header.Del("Proxy-Connection")
		},
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return s.dial(ctx, host, port, v.Rule) },
			Proxy:       nil,
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, fmt.Sprintf("harness sandbox network proxy: %s: %v", r.URL.Host, err), http.StatusBadGateway)
		},
		ErrorLog: slog.NewLogLogger(s.opts.Log.Handler(), slog.LevelDebug),
	}
	rp.ServeHTTP(w, r)
	rp.Transport.(*http.Transport).CloseIdleConnections()
}

// connect serves one CONNECT tunnel.
func (s *Server) connect(w http.ResponseWriter, r *http.Request) {
	host, ps, err := net.SplitHostPort(r.Host)
	port, perr := strconv.Atoi(ps)
	if err != nil || perr != nil || port <= 0 || port > 65535 {
		http.Error(w, "harness sandbox network proxy: CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	v, asked := s.decide(r.Context(), host, port)
	if !v.Allowed {
		http.Error(w, s.refuse(host, port, v, asked, "connect"), http.StatusForbidden)
		return
	}
	up, err := s.dial(r.Context(), host, port, v.Rule)
	if err != nil {
		http.Error(w, fmt.Sprintf("harness sandbox network proxy: %s: %v", r.Host, err), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = up.Close()
		http.Error(w, "hijack unsupported", http.StatusInternalServerError)
		return
	}
	c, brw, err := hj.Hijack()
	if err != nil {
		_ = up.Close()
		return
	}
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		_ = c.Close()
		_ = up.Close()
		return
	}
	var client io.Reader = c
	if n := brw.Reader.Buffered(); n > 0 {
		client = io.MultiReader(io.LimitReader(brw.Reader, int64(n)), c)
	}
	s.splice(c, client, up)
}

// splice copies both ways until both directions ended (or the server
// closes), then closes both connections.
func (s *Server) splice(c net.Conn, client io.Reader, up net.Conn) {
	if !s.track(up, true) {
		_ = up.Close()
		_ = c.Close()
		return
	}
	defer s.track(up, false)
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(up, client)
		closeWrite(up)
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(c, up)
		closeWrite(c)
		done <- struct{}{}
	}()
	<-done
	<-done
	_ = up.Close()
	_ = c.Close()
}

// closeWrite half-closes c when it can (the peer reads EOF), else closes
// it.
func closeWrite(c net.Conn) {
	if p, ok := c.(*peekedConn); ok {
		c = p.Conn
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}
