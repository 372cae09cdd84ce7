package mcp

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rootsOf returns the roots the client advertises: the workspace (the
// row's cwd), the sandbox's writable roots (where Claude Code's
// permissions.additionalDirectories land) and the row's roots, absolute,
// cleaned, existing directories only, without duplicates, in that order.
func rootsOf(cwd string, writable, extra []string) []string {
	var out []string
	add := func(d string) {
		if strings.HasPrefix(d, "~/") {
			home, err := os.UserHomeDir()
			if err != nil {
				return
			}
			d = filepath.Join(home, d[2:])
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(cwd, d)
		}
		d = filepath.Clean(d)
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() || slices.Contains(out, d) {
			return
		}
		out = append(out, d)
	}
	add(cwd)
	for _, d := range writable {
		add(d)
	}
	for _, d := range extra {
		add(d)
	}
	return out
}

// fileURI is the file:// URI of an absolute path.
func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// sdkRoots are dirs as MCP roots (URI and base name).
func sdkRoots(dirs []string) []*mcp.Root {
	out := make([]*mcp.Root, 0, len(dirs))
	for _, d := range dirs {
		out = append(out, &mcp.Root{URI: fileURI(d), Name: filepath.Base(d)})
	}
	return out
}

// Roots returns the directories advertised to every server as MCP roots.
func (m *Manager) Roots() []string {
	m.rootsMu.Lock()
	defer m.rootsMu.Unlock()
	return slices.Clone(m.roots)
}

// SetRoots replaces the advertised roots with dirs (absolute directories;
// relative ones resolve against the row's cwd, missing ones are dropped)
// and sends notifications/roots/list_changed to every connected server, which
// then asks for roots/list again: for a front end whose session gains a
// directory. The workspace stays first unless dirs leaves it out.
func (m *Manager) SetRoots(dirs []string) {
	next := rootsOf(m.cwd, nil, dirs)
	if !slices.Contains(dirs, m.cwd) {
		next = slices.DeleteFunc(next, func(d string) bool { return d == m.cwd })
	}
	m.rootsMu.Lock()
	old := m.roots
	m.roots = next
	clients := make([]*mcp.Client, 0, len(m.clients))
	for c := range m.clients {
		clients = append(clients, c)
	}
	m.rootsMu.Unlock()
	var gone []string
	for _, d := range old {
		if !slices.Contains(next, d) {
			gone = append(gone, fileURI(d))
		}
	}
	for _, c := range clients {
		if len(gone) > 0 {
			c.RemoveRoots(gone...)
		}
		c.AddRoots(sdkRoots(next)...)
	}
}

// trackClient makes c advertise the current roots and keeps it for
// SetRoots until forgetClient.
func (m *Manager) trackClient(c *mcp.Client) {
	m.rootsMu.Lock()
	defer m.rootsMu.Unlock()
	if m.clients == nil {
		m.clients = map[*mcp.Client]struct{}{}
	}
	m.clients[c] = struct{}{}
	c.AddRoots(sdkRoots(m.roots)...)
}

func (m *Manager) forgetClient(c *mcp.Client) {
	m.rootsMu.Lock()
	defer m.rootsMu.Unlock()
	delete(m.clients, c)
}
