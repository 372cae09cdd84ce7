package acp

import (
	"context"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dshgo/harness/services/agent"
)

// MaxOpenSessions bounds the agent sessions a connection keeps open (each
// holds its history in memory). Opening one more closes the least
// recently used idle session; a later request for it opens it again from
// its log, so the client does not notice. Prompts that run are never
// closed.
const MaxOpenSessions = 16

// MaxHosts bounds the harnesses a connection keeps booted (one per
// working directory and set of MCP servers). Booting one more stops the
// least recently used one whose sessions are all idle, closing those
// sessions as evict does (they open again, and boot their harness again,
// on their next request); when every harness has a running prompt, the
// new session is refused.
const MaxHosts = 8

// maxClosed bounds how many closed sessions the server can open again;
// past it, the oldest are forgotten (the client then gets "no such
// session" and can session/load it).
const maxClosed = 4096

// reopen is what opening a session again takes: its directory, the
// client's MCP servers, and the permission mode the client set ("" for
// none).
type reopen struct {
	dir     string
	servers []sdk.McpServer
	mode    string
}

// evict closes the least recently used idle session while
// MaxOpenSessions or more are open, remembering how to open it again.
func (s *server) evict() {
	for {
		s.mu.Lock()
		if len(s.sessions) < MaxOpenSessions {
			s.mu.Unlock()
			return
		}
		var victim *session
		for _, ss := range s.sessions {
			if !ss.isRunning() && (victim == nil || ss.used < victim.used) {
				victim = ss
			}
		}
		if victim == nil || !victim.retire() {
			s.mu.Unlock()
			return // every one runs a prompt: allow more
		}
		s.closeLocked(victim)
		s.mu.Unlock()
		if err := victim.close(); err != nil {
			s.o.Logger.Warn("acp: closing an idle session", "session", victim.id, "err", err)
		}
	}
}

// closeLocked takes retired session ss out of the open ones and
// remembers how to open it again; the caller closes it.
func (s *server) closeLocked(ss *session) {
	delete(s.sessions, ss.id)
	if s.closed == nil {
		s.closed = map[string]closedSession{}
	}
	s.seq++
	s.closed[ss.id] = closedSession{reopen: ss.reopen, seq: s.seq}
	s.forgetLocked()
}

// retireHosts stops harnesses, least recently used first, while MaxHosts
// or more run: one whose every session is idle (no prompt, no open under
// way) has those sessions closed (see evict), then is stopped. An error
// when none can go. Called with s.bootMu held.
func (s *server) retireHosts() error {
	for {
		s.mu.Lock()
		if len(s.hosts) < MaxHosts {
			s.mu.Unlock()
			return nil
		}
		h, victims := s.idleHostLocked()
		if h == nil {
			s.mu.Unlock()
			return fmt.Errorf("acp: %d harnesses run prompts (one per working directory and set of MCP servers): a new directory has to wait for one to finish", len(s.hosts))
		}
		for _, ss := range victims {
			s.closeLocked(ss)
		}
		delete(s.hosts, h.key)
		s.mu.Unlock()
		for _, ss := range victims {
			if err := ss.close(); err != nil {
				s.o.Logger.Warn("acp: closing an idle session", "session", ss.id, "err", err)
			}
		}
		if err := s.stopHost(h); err != nil {
			s.o.Logger.Warn("acp: stopping an idle harness", "dir", h.dir, "err", err)
		}
	}
}

// idleHostLocked returns the least recently used harness whose sessions
// can all be closed, with those sessions (retired), or nil.
func (s *server) idleHostLocked() (*hostEntry, []*session) {
	var best *hostEntry
	for _, h := range s.hosts {
		if best == nil || h.used < best.used {
			if s.idleLocked(h) {
				best = h
			}
		}
	}
	if best == nil {
		return nil, nil
	}
	var victims []*session
	for _, ss := range s.sessions {
		if ss.host != best {
			continue
		}
		if !ss.retire() { // a prompt started just now: the harness is busy
			for _, v := range victims {
				v.unretire()
			}
			return nil, nil
		}
		victims = append(victims, ss)
	}
	return best, victims
}

// idleLocked reports whether every use of h is an open session without a
// running prompt.
func (s *server) idleLocked(h *hostEntry) bool {
	n := 0
	for _, ss := range s.sessions {
		if ss.host == h {
			if ss.isRunning() {
				return false
			}
			n++
		}
	}
	return n == h.users
}

// closedSession is a session evict closed.
type closedSession struct {
	reopen
	seq uint64 // when it was closed
}

// forgetLocked drops the oldest closed sessions past maxClosed.
func (s *server) forgetLocked() {
	for len(s.closed) > maxClosed {
		oldest := ""
		for id, c := range s.closed {
			if oldest == "" || c.seq < s.closed[oldest].seq {
				oldest = id
			}
		}
		delete(s.closed, oldest)
	}
}

// session returns the session id, opening it again when evict closed it
// (a session that was never stored, as one that had no prompt yet, is
// opened as a new session under the same id).
func (s *server) session(ctx context.Context, id sdk.SessionId) (*session, error) {
	if ss, err := s.lookup(id); err == nil {
		return ss, nil
	}
	s.mu.Lock()
	c, ok := s.closed[string(id)]
	delete(s.closed, string(id))
	s.mu.Unlock()
	if !ok {
		return s.lookup(id)
	}
	return s.openAs(ctx, c.reopen, agent.Options{ID: string(id)}, true)
}

// retire marks an idle session closed, so that a prompt that found it
// just before evict took it opens it again instead of starting on it
// (false: a prompt started meanwhile).
func (ss *session) retire() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.running != nil {
		return false
	}
	ss.retired = true
	return true
}

// unretire undoes retire.
func (ss *session) unretire() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.retired = false
}
