package acp

import (
	"context"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dshgo/harness/services/agent"
)

// MaxOpenSessions bounds the agent sessions a connection keeps open (each
// holds its history in memory). Opening one more closes the least
// recently used idle session; a later request for it opens it again from
// its log, so the client does not notice. Prompts that run are never
// closed.
const MaxOpenSessions = 16

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
		delete(s.sessions, victim.id)
		if s.closed == nil {
			s.closed = map[string]closedSession{}
		}
		s.seq++
		s.closed[victim.id] = closedSession{reopen: victim.reopen, seq: s.seq}
		s.forgetLocked()
		s.mu.Unlock()
		if err := victim.close(); err != nil {
			s.o.Logger.Warn("acp: closing an idle session", "session", victim.id, "err", err)
		}
	}
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
