package web

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/services/subagent"
	"github.com/dshgo/harness/services/workspaces"
)

// Key is the web service: the running server.
var Key = core.NewKey[*Server]("web")

// Config is the web plugin's configuration (`harness serve` sets addr,
// allowRemote and the TLS files from its flags).
type Config struct {
	// Addr is the listen address host:port (port 0 picks a free port). A
	// non-loopback host needs allowRemote and TLS.
	Addr string `yaml:"addr" json:"addr,omitempty" jsonschema:"default=127.0.0.1:0"`
	// AllowRemote permits a non-loopback Addr (then TLSCert and TLSKey are
	// required too).
	AllowRemote bool `yaml:"allowRemote" json:"allowRemote,omitempty"`
	// TLSCert and TLSKey are PEM files; both set serves HTTPS.
	TLSCert string `yaml:"tlsCert" json:"tlsCert,omitempty"`
	// PEM private key file.
	TLSKey string `yaml:"tlsKey" json:"tlsKey,omitempty"`
	// MaxBodyBytes bounds a request body (default 1 MiB).
	// Largest request body in bytes.
	MaxBodyBytes int64 `yaml:"maxBodyBytes" json:"maxBodyBytes,omitempty" jsonschema:"default=1048576"`
	// Token fixes the access token instead of a random one per start (for
	// scripted clients; at least 32 characters). Empty: random.
	Token string `yaml:"token" json:"token,omitempty"`
	// IdleClose closes an open session that nobody watches (no event
	// stream) and that runs nothing after this long, releasing its
	// exclusive hold; opening it again resumes it from its log. 0 keeps
	// sessions open until deleted or the server stops. Default 10m.
	IdleClose manifest.Duration `yaml:"idleClose" json:"idleClose,omitempty" jsonschema:"default=10m"`
}

// DefaultIdleClose is the default of Config.IdleClose.
const DefaultIdleClose = 10 * time.Minute

// SetDefaults sets the loopback address, 1 MiB bodies and a 10 minute
// idle close.
func (c *Config) SetDefaults() {
	c.Addr, c.MaxBodyBytes, c.IdleClose = "127.0.0.1:0", 1<<20, manifest.Duration(DefaultIdleClose)
}

// Validate enforces the bind policy: a loopback address, or allowRemote with
// TLS.
func (c Config) Validate() error {
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return fmt.Errorf("addr: %w", err)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("tlsCert and tlsKey: set both or neither")
	}
	if !isLoopback(host) {
		if !c.AllowRemote {
			return fmt.Errorf("addr: %q is not a loopback address; serving beyond this machine needs allowRemote (--allow-remote) and TLS", c.Addr)
		}
		if c.TLSCert == "" {
			return fmt.Errorf("addr: %q is not a loopback address: allowRemote requires tlsCert and tlsKey", c.Addr)
		}
	}
	if c.MaxBodyBytes <= 0 {
		return errors.New("maxBodyBytes: must be positive")
	}
	if c.Token != "" && len(c.Token) < 32 {
		return errors.New("token: at least 32 characters")
	}
	if c.IdleClose < 0 {
		return errors.New("idleClose: must not be negative")
	}
	return nil
}

// isLoopback reports whether host (an IP or "localhost") is a loopback
// address. An empty host (all interfaces) is not.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// Plugin serves the web app. It injects the workspaces service and finds
// the agent, the approval service and the sessions per request, so a
// reload of those does not restart the server (its address and token stay).
var Plugin = core.Define("web", apply,
	core.WithInject(workspaces.Key.Name()),
	core.WithProvides(Key.Name()),
	core.WithDescription("the web app of `harness serve`: workspaces, live sessions over SSE, approvals, settings and slots"))

func apply(c *core.Context, cfg Config) error {
	token := cfg.Token
	if token == "" {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		token = hex.EncodeToString(b[:])
	}
	s := newServer(c, cfg, token, core.Use(c, workspaces.Key))
	var ln net.Listener
	if err := c.Effect("listener", func() (func(), error) {
		var err error
		ln, err = net.Listen("tcp", cfg.Addr)
		if err != nil {
			return nil, fmt.Errorf("web: listen: %w", err)
		}
		if cfg.TLSCert != "" {
			cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
			if err != nil {
				ln.Close()
				return nil, fmt.Errorf("web: tls: %w", err)
			}
			ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
		}
		s.bind(ln.Addr().String(), cfg.TLSCert != "")
		return func() { ln.Close() }, nil
	}); err != nil {
		return err
	}
	if err := c.Effect("sessions", func() (func(), error) {
		return s.hub.closeAll, nil
	}); err != nil {
		return err
	}
	// Subagent children of the sessions open here: cards in the parent's
	// conversation, and the child's own read-only view.
	if err := core.On(c, subagent.Started, s.hub.started); err != nil {
		return err
	}
	if err := core.On(c, subagent.Settled, s.hub.settled); err != nil {
		return err
	}
	if err := core.Go(c, func(ctx context.Context) error {
		return s.serve(ctx, ln)
	}); err != nil {
		return err
	}
	return core.Provide(c, Key, s)
}

// serve runs the HTTP server on ln until ctx ends; then it cancels the
// streams, refuses new requests and waits (bounded) for the rest.
func (s *Server) serve(ctx context.Context, ln net.Listener) error {
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          nil,
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	cancel() // ends SSE streams and long polls
	// Requests in flight get 2 s, well inside the harness's stop timeout
	// (5 s): Shutdown also waits that long for a connection a browser
	// opened ahead (a preconnect) and never used.
	sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	<-done
	return nil
}

// normalizeHost lower-cases a Host header value.
func normalizeHost(h string) string { return strings.ToLower(strings.TrimSpace(h)) }
