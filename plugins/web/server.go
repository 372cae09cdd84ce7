package web

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/settings"
	"github.com/dshgo/harness/services/workspaces"
)

// CookieName is the cookie that carries the access token after the first
// visit (HttpOnly, SameSite=Strict, Path=/; Secure over TLS).
const CookieName = "harness_token"

// Server is the web service: the HTTP handler, its access token and the
// live sessions. Safe for concurrent use.
type Server struct {
	c     *core.Context
	cfg   Config
	token string
	ws    *workspaces.Service
	hub   *hub
	slots *Slots

	mu       sync.Mutex
	settings *settings.Service
	addr     string
	secure   bool
	hosts    map[string]bool // accepted Host header values
}

func newServer(c *core.Context, cfg Config, token string, ws *workspaces.Service) *Server {
	s := &Server{c: c, cfg: cfg, token: token, ws: ws, slots: newSlots()}
	s.hub = newHub(s)
	return s
}

// bind records the address the server listens on and the Host values it
// accepts: the address itself, and localhost:PORT for a loopback address.
func (s *Server) bind(addr string, secure bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addr, s.secure = addr, secure
	host, port, _ := net.SplitHostPort(addr)
	s.hosts = map[string]bool{normalizeHost(addr): true}
	if isLoopback(host) {
		s.hosts["localhost:"+port] = true
		s.hosts[normalizeHost(net.JoinHostPort("127.0.0.1", port))] = true
	}
	if h, _, _ := net.SplitHostPort(s.cfg.Addr); h != "" && !isLoopback(h) {
		s.hosts[normalizeHost(net.JoinHostPort(h, port))] = true
	}
}

// Addr returns the address the server listens on (host:port).
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Token returns the access token of this start.
func (s *Server) Token() string { return s.token }

// BaseURL returns the server's URL without the token
// (http://127.0.0.1:PORT).
func (s *Server) BaseURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	scheme := "http"
	if s.secure {
		scheme = "https"
	}
	return scheme + "://" + s.addr
}

// URL returns the URL to open: the base URL with the token as a query
// parameter. The first visit exchanges it for the cookie and redirects to a
// URL without it.
func (s *Server) URL() string { return s.BaseURL() + "/?token=" + url.QueryEscape(s.token) }

// Slots returns the slot registry plugins add web components to.
func (s *Server) Slots() *Slots { return s.slots }

// handler is the whole HTTP surface behind the security checks.
func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	s.routes(mux)
	return s.guard(mux)
}

// guard applies, in order: security headers on every response; the Host
// check (403); the Origin and Sec-Fetch-Site checks (403); the token (401)
// with the first-visit exchange; the method and content-type rules for state
// changes (405, 415); the body limit. No CORS header is ever written.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		if !s.hostOK(r.Host) {
			httpError(w, http.StatusForbidden, "forbidden host %q: this server answers only to its own address (DNS rebinding protection)", r.Host)
			return
		}
		if why := s.originProblem(r); why != "" {
			httpError(w, http.StatusForbidden, "%s", why)
			return
		}
		if r.Method == http.MethodGet && r.URL.Path == "/" && r.URL.Query().Has("token") {
			s.exchange(w, r)
			return
		}
		if !s.authorized(r) {
			httpError(w, http.StatusUnauthorized, "missing or wrong token: open the URL `harness serve` printed")
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			if r.ContentLength != 0 && !isJSON(r.Header.Get("Content-Type")) {
				httpError(w, http.StatusUnsupportedMediaType, "request bodies must be application/json")
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		default:
			httpError(w, http.StatusMethodNotAllowed, "method %s not allowed", r.Method)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) hostOK(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hosts[normalizeHost(host)]
}

// originProblem refuses cross-site requests: an Origin header must be this
// server's own origin (required for every state-changing method), and a
// browser's Sec-Fetch-Site, when sent, must not be cross-site.
func (s *Server) originProblem(r *http.Request) string {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return "cross-site request refused (Sec-Fetch-Site: " + r.Header.Get("Sec-Fetch-Site") + ")"
	}
	origin := r.Header.Get("Origin")
	safe := r.Method == http.MethodGet || r.Method == http.MethodHead
	if origin == "" {
		if safe {
			return ""
		}
		return "state-changing requests need an Origin header"
	}
	u, err := url.Parse(origin)
	if err != nil || !s.hostOK(u.Host) || u.Scheme != s.scheme() || u.Host != r.Host {
		return fmt.Sprintf("origin %q refused: only this server's own pages may call it", origin)
	}
	return ""
}

func (s *Server) scheme() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.secure {
		return "https"
	}
	return "http"
}

// authorized reports whether r carries the token (cookie or bearer).
func (s *Server) authorized(r *http.Request) bool {
	if c, err := r.Cookie(CookieName); err == nil && s.tokenOK(c.Value) {
		return true
	}
	if a, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.tokenOK(a) {
		return true
	}
	return false
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

// exchange answers the first visit GET /?token=T: a right token sets the
// cookie and redirects to "/" (so the token leaves the address bar and the
// history); a wrong one is 401.
func (s *Server) exchange(w http.ResponseWriter, r *http.Request) {
	if !s.tokenOK(r.URL.Query().Get("token")) {
		httpError(w, http.StatusUnauthorized, "wrong token: open the URL `harness serve` printed")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: s.token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.scheme() == "https"})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func isJSON(ct string) bool {
	ct, _, _ = strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(ct), "application/json")
}

// apiError is the JSON body of every error response.
type apiError struct {
	Error string `json:"error"`
	// Fields maps a field path to its problem (settings validation).
	Fields map[string]string `json:"fields,omitempty"`
}

func httpError(w http.ResponseWriter, code int, format string, args ...any) {
	writeJSON(w, code, apiError{Error: fmt.Sprintf(format, args...)})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	_ = enc.Encode(v)
}

// readJSON decodes the body into v strictly (unknown fields are errors); a
// body over the limit is 413, bad JSON 400.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpError(w, http.StatusRequestEntityTooLarge, "request body over %d bytes", tooBig.Limit)
			return false
		}
		httpError(w, http.StatusBadRequest, "bad JSON body: %v", err)
		return false
	}
	return true
}
