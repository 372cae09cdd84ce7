package toolweb

import (
	"sync"

	"github.com/dshgo/harness/services/tools"
)

// cache keeps results per session: at most per entries each (the oldest
// goes first) and at most maxSessions sessions (the least recent goes).
type cache struct {
	per int

	mu       sync.Mutex
	sessions map[string]*sessionCache
	order    []string // sessions, least recently used first
}

// maxSessions bounds the sessions a cache holds.
const maxSessions = 32

type sessionCache struct {
	m     map[string]string
	order []string
}

func (c *cache) get(session, key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.sessions[session]
	if !ok {
		return "", false
	}
	c.touchLocked(session)
	v, ok := s.m[key]
	return v, ok
}

func (c *cache) put(session, key, v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.sessions[session]
	if !ok {
		if c.sessions == nil {
			c.sessions = map[string]*sessionCache{}
		}
		s = &sessionCache{m: map[string]string{}}
		c.sessions[session] = s
		if len(c.order) >= maxSessions {
			delete(c.sessions, c.order[0])
			c.order = c.order[1:]
		}
		c.order = append(c.order, session)
	} else {
		c.touchLocked(session)
	}
	if _, had := s.m[key]; !had {
		if len(s.order) >= c.per {
			delete(s.m, s.order[0])
			s.order = s.order[1:]
		}
		s.order = append(s.order, key)
	}
	s.m[key] = v
}

// touchLocked moves session to the end of the order.
func (c *cache) touchLocked(session string) {
	for i, s := range c.order {
		if s == session {
			c.order = append(append(c.order[:i:i], c.order[i+1:]...), session)
			return
		}
	}
}

// sessionOf is the call's session (its scope's label).
func sessionOf(e *tools.Execution) string {
	if sc := e.Scope(); sc != nil {
		return sc.Label()
	}
	return ""
}
