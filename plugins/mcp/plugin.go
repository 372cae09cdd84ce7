package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/tools/workdir"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Key is the "mcp" service: the row's *Manager (server states for the CLI).
var Key = core.NewKey[*Manager]("mcp")

// maxInstructionBytes bounds one server's instructions in the prompt.
const maxInstructionBytes = 8 << 10

// Plugin is the mcp plugin: one row, every configured server.
var Plugin = core.Define("mcp", apply,
	core.WithInject(tools.Key.Name(), subprocess.Key.Name()),
	core.WithProvides(Key.Name()),
	core.WithDescription("Model Context Protocol client: stdio and streamable HTTP servers as mcp__SERVER__TOOL tools."))

// Version is the client version sent in initialize (clientInfo.version).
var Version = "dev"

func apply(c *core.Context, cfg Config) error {
	cwd, err := workdir.Default(cfg.Cwd)
	if err != nil {
		return err
	}
	var project projectState
	if cfg.ProjectFile {
		if project, err = loadProjectFile(cwd, StateDir(cfg.StateDir)); err != nil {
			return err
		}
	}
	servers, notices, err := cfg.merge(project.file)
	if err != nil {
		return err
	}
	if project.untrusted {
		notices = append(notices, untrustedNotice(project.path))
	}
	m := &Manager{
		c: c, log: c.Logger(), runtime: core.Use(c, subprocess.Key), cwd: cwd, version: Version,
		startup: cfg.StartupTimeout.D(), call: cfg.CallTimeout.D(), grace: cfg.Grace.D(),
		tailBytes: cfg.StderrTailBytes, maxMessage: cfg.MaxMessageBytes, notices: notices,
	}
	if project.untrusted {
		m.untrusted = project.path
	}
	var writable []string
	if m.runtime != nil {
		if p := m.runtime.SandboxPolicy(); p.Mode == subprocess.SandboxWorkspaceWrite {
			writable = p.WritableRoots
		}
	}
	m.roots = rootsOf(cwd, writable, cfg.Roots)
	for _, n := range notices {
		m.log.Warn("mcp: " + n)
	}
	for _, ns := range servers {
		s := &server{m: m, cfg: ns, relist: make(chan struct{}, 1), first: make(chan struct{}), state: StateStarting}
		if ns.Type == TypeStdio {
			s.stderr = newTail(cfg.StderrTailBytes)
		}
		m.servers = append(m.servers, s)
	}
	if err := core.Provide(c, Key, m); err != nil {
		return err
	}
	if sp, ok := core.Lookup(c, systemprompt.Key); ok {
		if _, err := sp.Section(c, systemprompt.Section{
			Name:        "mcp-servers",
			Order:       systemprompt.SectionOrder(systemprompt.OrderMCPServers),
			TextFunc:    m.instructions,
			Interpolate: systemprompt.InterpolateOff,
		}); err != nil {
			return err
		}
		if _, err := sp.Context(c, systemprompt.PromptContext{Name: "mcp-pending", Order: 3100, TextFunc: m.pendingContext}); err != nil {
			return err
		}
	}
	for _, s := range m.servers {
		if s.cfg.Disabled {
			s.state = StateDisabled
			s.settleFirst()
			continue
		}
		if err := core.Go(c, s.run); err != nil {
			return err
		}
	}
	return nil
}

// Manager is the mcp plugin's service: the configured servers, each
// connected in parallel, in the background, by its own supervisor when the
// row applies. Nothing waits for them unless it asks (Wait, WaitForTool):
// a slow or dead server delays only what uses it.
type Manager struct {
	c          *core.Context
	log        *slog.Logger
	runtime    *subprocess.Runtime
	cwd        string
	version    string
	startup    time.Duration
	call       time.Duration
	grace      time.Duration
	tailBytes  int
	maxMessage int
	servers    []*server
	notices    []string
	untrusted  string // the .mcp.json present but not trusted ("" when none)

	rootsMu sync.Mutex
	roots   []string                 // advertised as MCP roots
	clients map[*mcp.Client]struct{} // the live clients, for SetRoots
}

// Notices are what the row left out and why, one sentence each: a project
// .mcp.json that is present but not trusted, servers skipped because the
// row defines them already. `harness check` and `harness mcp list` print
// them.
func (m *Manager) Notices() []string { return slices.Clone(m.notices) }

// UntrustedProjectFile is the path of the .mcp.json in the working
// directory when it is present but not trusted with its current content,
// else "".
func (m *Manager) UntrustedProjectFile() string { return m.untrusted }

// untrustedNotice says that path is not trusted, naming its servers when
// it parses.
func untrustedNotice(path string) string {
	what := ""
	if data, err := os.ReadFile(path); err == nil {
		if pf, err := parseProjectFile(path, data); err == nil && len(pf.MCPServers) > 0 {
			what = " (servers: " + strings.Join(slices.Sorted(maps.Keys(pf.MCPServers)), ", ") + ")"
		}
	}
	return fmt.Sprintf("%s%s is not trusted, so its servers do not start: review it, then run `harness mcp trust` (a change to the file needs trusting again)", path, what)
}

// Wait blocks until every server's first connect attempt has settled
// (ready, failed or disabled) or ctx ends (then it returns ctx's error).
// Each attempt is bounded by its startup timeout, so Wait is too.
func (m *Manager) Wait(ctx context.Context) error {
	for _, s := range m.servers {
		select {
		case <-s.first:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

// WaitForTool is Wait for the servers that could own the registry tool
// name (mcp__SERVER__TOOL): a name no server's prefix matches returns at
// once. `harness tool mcp__fs__read_file` waits for fs only; `harness tool
// bash` for nothing.
func (m *Manager) WaitForTool(ctx context.Context, name string) error {
	for _, s := range m.servers {
		if !strings.HasPrefix(name, "mcp__"+s.cfg.Prefix+"__") {
			continue
		}
		select {
		case <-s.first:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

// Pending returns the names of the servers whose first connect attempt has
// not settled yet (their tools are not registered yet), sorted.
func (m *Manager) Pending() []string {
	var out []string
	for _, s := range m.servers {
		select {
		case <-s.first:
		default:
			out = append(out, s.cfg.Name)
		}
	}
	return out
}

// pendingContext is the mcp-pending runtime context: the servers still
// connecting, so the model knows their tools are coming (empty when none).
func (m *Manager) pendingContext(context.Context, systemprompt.AssembleContext) (string, error) {
	pending := m.Pending()
	if len(pending) == 0 {
		return "", nil
	}
	return fmt.Sprintf("MCP servers still connecting: %s. Their tools (mcp__SERVER__*) are not offered yet; they are added when the server is ready.",
		strings.Join(pending, ", ")), nil
}

// ServerStatus is one server as `harness mcp list` reports it.
type ServerStatus struct {
	// Name is the configured name; Source the map or file it came from.
	Name   string `json:"name"`
	Source string `json:"source"`
	// Transport is stdio, http or sse.
	Transport string `json:"transport"`
	State     State  `json:"state"`
	// Tools are the registry names of the server's tools.
	Tools []string `json:"tools"`
	// ProtocolVersion, ServerName and ServerVersion come from initialize.
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	ServerName      string `json:"serverName,omitempty"`
	ServerVersion   string `json:"serverVersion,omitempty"`
	// Restarts counts reconnects (restart: on-failure).
	Restarts int `json:"restarts,omitempty"`
	// Error says why the server is failed or exited, with the exit status
	// and the tail of its stderr.
	Error string `json:"error,omitempty"`
	// Sandbox says what the OS sandbox of a stdio server enforces (nil when
	// the server runs unsandboxed or is not connected).
	Sandbox *subprocess.SandboxReport `json:"sandbox,omitempty"`
	// Unsandboxed says why a stdio server runs outside the sandbox that
	// bash calls run in (its entry sets sandbox mode off).
	Unsandboxed string `json:"unsandboxed,omitempty"`
	// Stderr is the kept tail of a stdio server's stderr.
	Stderr string `json:"stderr,omitempty"`
}

// Servers returns the status of every configured server, sorted by name.
func (m *Manager) Servers() []ServerStatus {
	out := make([]ServerStatus, 0, len(m.servers))
	for _, s := range m.servers {
		out = append(out, s.status())
	}
	return out
}

// ToolInfo is one tool of a server, as the server describes it.
type ToolInfo struct {
	// Name is the registry name (mcp__SERVER__TOOL); Tool the server's name.
	Name        string `json:"name"`
	Tool        string `json:"tool"`
	Description string `json:"description,omitempty"`
	ReadOnly    bool   `json:"readOnly,omitempty"`
	InputSchema any    `json:"inputSchema,omitempty"`
}

// Tools returns the tools of the named server from its last tools/list, or
// an error when no server has that name.
func (m *Manager) Tools(server string) ([]ToolInfo, error) {
	s := m.find(server)
	if s == nil {
		return nil, fmt.Errorf("no MCP server named %q (configured: %s)", server, strings.Join(m.names(), ", "))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ToolInfo, 0, len(s.tools))
	for _, t := range s.tools {
		out = append(out, ToolInfo{Name: ToolName(s.cfg.Name, t.Name), Tool: t.Name, Description: t.Description,
			ReadOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint, InputSchema: t.InputSchema})
	}
	return out, nil
}

// ToolName returns the registry name of the named server's tool, or an
// error naming the server when there is no such server.
func (m *Manager) ToolName(server, tool string) (string, error) {
	if m.find(server) == nil {
		return "", fmt.Errorf("no MCP server named %q (configured: %s)", server, strings.Join(m.names(), ", "))
	}
	return ToolName(server, tool), nil
}

func (m *Manager) find(name string) *server {
	for _, s := range m.servers {
		if s.cfg.Name == name {
			return s
		}
	}
	return nil
}

func (m *Manager) names() []string {
	out := []string{}
	for _, s := range m.servers {
		out = append(out, s.cfg.Name)
	}
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

func (s *server) status() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ServerStatus{Name: s.cfg.Name, Source: s.cfg.Source, Transport: s.cfg.Type, State: s.state, Restarts: s.restarts, Tools: []string{}}
	if s.state == StateReady {
		for _, t := range s.tools {
			st.Tools = append(st.Tools, ToolName(s.cfg.Name, t.Name))
		}
	}
	if s.init != nil {
		st.ProtocolVersion = s.init.ProtocolVersion
		if s.init.ServerInfo != nil {
			st.ServerName, st.ServerVersion = s.init.ServerInfo.Name, s.init.ServerInfo.Version
		}
	}
	if s.err != nil {
		st.Error = s.err.Error()
	}
	if s.stderr != nil {
		st.Stderr = s.stderr.String()
	}
	if s.cfg.Type == TypeStdio && s.m.runtime != nil {
		st.Unsandboxed = containmentOf(s.m.runtime.SandboxPolicy(), s.cfg.Sandbox).warning
	}
	if s.conn != nil && s.conn.proc != nil && s.conn.sandboxed {
		rep := s.conn.proc.Sandbox()
		st.Sandbox = &rep
	}
	return st
}

// instructions renders the mcp-servers prompt section: the instructions
// of every ready server (each cut at 8 KiB), or nothing.
func (m *Manager) instructions(context.Context, systemprompt.AssembleContext) (string, error) {
	var b strings.Builder
	for _, s := range m.servers {
		s.mu.Lock()
		text := ""
		if s.state == StateReady && s.init != nil {
			text = strings.TrimSpace(s.init.Instructions)
		}
		s.mu.Unlock()
		if text == "" {
			continue
		}
		if len(text) > maxInstructionBytes {
			text = strings.ToValidUTF8(text[:maxInstructionBytes], "") + " …"
		}
		if b.Len() == 0 {
			b.WriteString("# MCP server instructions\n\nTools named mcp__SERVER__TOOL come from these servers.")
		}
		fmt.Fprintf(&b, "\n\n## %s\n\n%s", s.cfg.Name, text)
	}
	return b.String(), nil
}

// compile-time check that the section function has the service's type.
var _ systemprompt.TextFunc = (*Manager)(nil).instructions
