package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/services/subprocess"
)

// Defaults of Config.
const (
	DefaultStartupTimeout  = 30 * time.Second
	DefaultCallTimeout     = 120 * time.Second
	DefaultGrace           = 2 * time.Second
	DefaultStderrTailBytes = 16 << 10
	DefaultMaxMessageBytes = 16 << 20
	// ProjectFileName is the Claude Code project file read when
	// Config.ProjectFile is set.
	ProjectFileName = ".mcp.json"
)

// Transport types of ServerConfig.Type.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
	TypeSSE   = "sse"
)

// Restart policies of ServerConfig.Restart.
const (
	RestartNever     = "never"
	RestartOnFailure = "on-failure"
)

// Config is the mcp plugin's configuration: one row holds every server.
// Servers are keyed by name under `servers` or, pasted from a Claude Code
// `.mcp.json`, under `mcpServers` (both may be used; a name may appear once).
// With ProjectFile (the default) the `mcpServers` of ./.mcp.json (relative
// to Cwd) are added too, once a person trusted the file.
type Config struct {
	// Servers are the MCP servers by name (stdio: command/args/env/cwd; http
	// or sse: url/headers).
	Servers map[string]ServerConfig `yaml:"servers" json:"servers,omitempty"`
	// MCPServers is the same map under Claude Code's .mcp.json key
	// (mcpServers), so a block can be pasted as-is.
	MCPServers map[string]ServerConfig `yaml:"mcpServers" json:"mcpServers,omitempty"`
	// ProjectFile reads the mcpServers of the Claude Code project file
	// .mcp.json in Cwd once a person trusted it (harness mcp trust, or the
	// prompt of the terminal UI and the web app); default true. An untrusted
	// file's servers do not start, and harness check says so. false ignores
	// the file.
	ProjectFile bool `yaml:"projectFile" json:"projectFile"`
	// Roots are more directories advertised to the servers as MCP roots,
	// after the workspace (Cwd) and the sandbox's writableRoots (where
	// Claude Code's permissions.additionalDirectories land); relative paths
	// resolve against Cwd, missing directories are left out.
	Roots []string `yaml:"roots" json:"roots,omitempty"`
	// StateDir holds the trust record (mcp-trust.json). Empty:
	// $XDG_STATE_HOME/harness, else ~/.local/state/harness.
	StateDir string `yaml:"stateDir" json:"stateDir,omitempty"`
	// Cwd is the directory stdio servers start in (unless they set cwd) and
	// where .mcp.json is looked up; empty means the process's working directory.
	Cwd string `yaml:"cwd" json:"cwd,omitempty"`
	// StartupTimeout bounds connecting one server (spawn + initialize + the
	// first tools/list). Default 30s.
	StartupTimeout Duration `yaml:"startupTimeout" json:"startupTimeout,omitempty"`
	// CallTimeout bounds one tool call; on expiry notifications/cancelled is
	// sent and the call fails naming the server. Default 120s.
	CallTimeout Duration `yaml:"callTimeout" json:"callTimeout,omitempty"`
	// Grace is how long a stdio server may take to exit after its stdin is
	// closed before its whole process range is terminated (and again between
	// SIGTERM and SIGKILL). Default 2s.
	Grace Duration `yaml:"grace" json:"grace,omitempty"`
	// StderrTailBytes is how much of a stdio server's stderr is kept for
	// error messages. Default 16 KiB.
	StderrTailBytes int `yaml:"stderrTailBytes" json:"stderrTailBytes,omitempty"`
	// MaxMessageBytes bounds one JSON-RPC message from a stdio server; a
	// longer line fails the connection. Default 16 MiB.
	MaxMessageBytes int `yaml:"maxMessageBytes" json:"maxMessageBytes,omitempty"`
}

// ServerConfig is one server, in Claude Code's .mcp.json shape plus
// harness extensions (cwd, timeout, startupTimeout, restart, disabled).
type ServerConfig struct {
	// Type is stdio (the default when command is set), http (streamable
	// HTTP; "streamable-http" is accepted too) or sse (the legacy transport).
	Type string `yaml:"type" json:"type,omitempty" jsonschema:"enum=stdio,enum=http,enum=streamable-http,enum=sse"`
	// Command is the program of a stdio server (resolved on PATH).
	Command string `yaml:"command" json:"command,omitempty"`
	// Args are its arguments (never shell-interpreted).
	Args []string `yaml:"args" json:"args,omitempty"`
	// Env entries are set in the server's environment on top of the scrubbed
	// parent environment; they are the only way a credential reaches it.
	Env map[string]string `yaml:"env" json:"env,omitempty"`
	// Cwd is the stdio server's working directory (default: Config.Cwd).
	Cwd string `yaml:"cwd" json:"cwd,omitempty"`
	// URL is the endpoint of an http or sse server.
	URL string `yaml:"url" json:"url,omitempty"`
	// Headers are sent with every request to an http or sse server; values
	// may be !env references and are redacted by harness config.
	Headers map[string]string `yaml:"headers" json:"headers,omitempty" harness:"secret"`
	// Timeout overrides Config.CallTimeout for this server's calls.
	// Per-call timeout of this server (default: the row's callTimeout).
	Timeout Duration `yaml:"timeout" json:"timeout,omitempty"`
	// StartupTimeout overrides Config.StartupTimeout for this server.
	// Connect bound of this server (default: the row's startupTimeout).
	StartupTimeout Duration `yaml:"startupTimeout" json:"startupTimeout,omitempty"`
	// Restart is never (default) or on-failure: reconnect after the server
	// exits or its connection breaks (at most 5 times in a row, backing off
	// from 1s).
	Restart string `yaml:"restart" json:"restart,omitempty" jsonschema:"enum=never,enum=on-failure"`
	// Sandbox is the stdio server's OS sandbox. Absent: the deployment's
	// policy (the subprocess row's sandbox, the one bash calls run under;
	// the workspace is the server's cwd), so servers are contained like
	// commands. A policy of its own (mode read-only or workspace-write,
	// writableRoots, network, denyRead) replaces it but keeps the
	// deployment's denyRead; {mode: off} runs the server unsandboxed, with
	// a warning in the log and in harness mcp list.
	Sandbox *subprocess.SandboxPolicy `yaml:"sandbox" json:"sandbox,omitempty"`
	// Disabled keeps the entry without starting it.
	// Keep the entry but do not start the server.
	Disabled bool `yaml:"disabled" json:"disabled,omitempty"`
}

// SetDefaults fills the row's defaults.
func (c *Config) SetDefaults() {
	c.ProjectFile = true
	c.StartupTimeout = Duration(DefaultStartupTimeout)
	c.CallTimeout = Duration(DefaultCallTimeout)
	c.Grace = Duration(DefaultGrace)
	c.StderrTailBytes = DefaultStderrTailBytes
	c.MaxMessageBytes = DefaultMaxMessageBytes
}

// Validate checks the row: durations and sizes positive, every server
// well-formed (errors name the map and server: `servers.github.url: …`), no
// name given twice and no two names mapping to one tool prefix.
func (c Config) Validate() error {
	var errs []error
	if c.StartupTimeout <= 0 || c.CallTimeout <= 0 || c.Grace <= 0 {
		errs = append(errs, errors.New("startupTimeout, callTimeout and grace must be positive durations"))
	}
	if c.StderrTailBytes <= 0 || c.MaxMessageBytes <= 0 {
		errs = append(errs, errors.New("stderrTailBytes and maxMessageBytes must be positive"))
	}
	_, _, err := c.merge(nil)
	return errors.Join(append(errs, err)...)
}

// namedServer is one resolved server entry.
type namedServer struct {
	Name   string // as configured
	Prefix string // sanitized name used in tool names
	Source string // "servers", "mcpServers" or the .mcp.json path
	ServerConfig
}

// merge collects the servers of both maps and of project (the decoded,
// trusted project file; nil for none), validated and sorted by name, and
// the notices about entries it dropped. Servers defined in several places
// run once: the same name under `servers` and `mcpServers` with the same
// definition is one server (different definitions are an error); a
// project-file server whose name, tool prefix or definition (command,
// args, env and cwd, or url and headers) is already in the row is skipped
// with a notice naming the entry kept — the row wins, as Claude Code's
// local and user scopes win over the project's.
func (c Config) merge(project *projectFile) ([]namedServer, []string, error) {
	var out []namedServer
	var errs []error
	var notices []string
	prefixes := map[string]int{} // sanitized name → index in out
	where := func(i int) string { return out[i].Source + "." + out[i].Name }
	add := func(source string, m map[string]ServerConfig, fromProject bool) {
		for _, name := range slices.Sorted(maps.Keys(m)) {
			s := m[name]
			at := fmt.Sprintf("%s.%s", source, name)
			if err := s.validate(name); err != nil {
				errs = append(errs, fmt.Errorf("%s%w", at, err))
				continue
			}
			ns := namedServer{Name: name, Prefix: sanitize(name), Source: source, ServerConfig: s.normalized()}
			if i, dup := prefixes[ns.Prefix]; dup {
				switch {
				case fromProject:
					notices = append(notices, fmt.Sprintf("%s: skipped: %s defines a server of that name", at, where(i)))
				case out[i].Name == name && out[i].signature() == ns.signature():
					// the same server pasted under both keys
				default:
					errs = append(errs, fmt.Errorf("%s: server name clashes with %s (tool names would collide)", at, where(i)))
				}
				continue
			}
			if fromProject {
				if i := slices.IndexFunc(out, func(o namedServer) bool { return o.signature() == ns.signature() }); i >= 0 {
					notices = append(notices, fmt.Sprintf("%s: skipped: the same server as %s", at, where(i)))
					continue
				}
			}
			prefixes[ns.Prefix] = len(out)
			out = append(out, ns)
		}
	}
	add("servers", c.Servers, false)
	add("mcpServers", c.MCPServers, false)
	if project != nil {
		add(project.path+": mcpServers", project.MCPServers, true)
	}
	slices.SortFunc(out, func(a, b namedServer) int { return strings.Compare(a.Name, b.Name) })
	return out, notices, errors.Join(errs...)
}

// signature identifies what a server runs or reaches: transport, command,
// args, env and cwd, or url and headers.
func (n namedServer) signature() string {
	s := n.ServerConfig
	b, _ := json.Marshal([]any{s.Type, s.Command, s.Args, s.Env, s.Cwd, s.URL, s.Headers})
	return string(b)
}

var invalidNameChars = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// sanitize maps a server or tool name onto the registry's name alphabet:
// every character outside A-Z a-z 0-9 _ - becomes _.
func sanitize(name string) string { return invalidNameChars.ReplaceAllString(name, "_") }

func (s ServerConfig) transport() string {
	switch s.Type {
	case "":
		if s.Command == "" && s.URL != "" {
			return TypeHTTP
		}
		return TypeStdio
	case "streamable-http", "streamableHttp":
		return TypeHTTP
	}
	return s.Type
}

func (s ServerConfig) normalized() ServerConfig {
	s.Type = s.transport()
	if s.Restart == "" {
		s.Restart = RestartNever
	}
	return s
}

// validate returns an error whose text starts with ".field: " or ": ".
func (s ServerConfig) validate(name string) error {
	if name == "" {
		return errors.New(": a server needs a non-empty name")
	}
	switch s.Restart {
	case "", RestartNever, RestartOnFailure:
	default:
		return fmt.Errorf(".restart: want never or on-failure, got %q", s.Restart)
	}
	if s.Timeout < 0 || s.StartupTimeout < 0 {
		return errors.New(".timeout: durations must be positive")
	}
	switch t := s.transport(); t {
	case TypeStdio:
		if s.Command == "" {
			return errors.New(".command: a stdio server needs a command")
		}
		if s.URL != "" || len(s.Headers) > 0 {
			return errors.New(": url and headers belong to http and sse servers, not to a stdio server")
		}
		if s.Sandbox != nil {
			if err := s.Sandbox.Validate(); err != nil {
				return fmt.Errorf(".sandbox: %w", err)
			}
		}
	case TypeHTTP, TypeSSE:
		if s.URL == "" {
			return fmt.Errorf(".url: an %s server needs a url", t)
		}
		if !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
			return fmt.Errorf(".url: want an http:// or https:// URL, got %q", s.URL)
		}
		if s.Command != "" || len(s.Args) > 0 || len(s.Env) > 0 || s.Cwd != "" || s.Sandbox != nil {
			return fmt.Errorf(": command, args, env, cwd and sandbox belong to stdio servers, not to an %s server", t)
		}
	default:
		return fmt.Errorf(".type: want stdio, http or sse, got %q", s.Type)
	}
	return nil
}

// projectFile is the part of a Claude Code .mcp.json the plugin reads.
type projectFile struct {
	path       string
	MCPServers map[string]ServerConfig `json:"mcpServers"`
}

// projectState is what the row found in the working directory's
// .mcp.json: nothing (path empty), a file not trusted with its current
// content (untrusted), or a trusted file's servers (file).
type projectState struct {
	path      string
	untrusted bool
	file      *projectFile
}

// loadProjectFile reads dir/.mcp.json. A missing file is no error (an
// empty state). A file not trusted with its current content (see
// TrustProjectFile) is not parsed: its servers stay off and the state says
// so. A malformed trusted file names the file and the JSON problem.
func loadProjectFile(dir, stateDir string) (projectState, error) {
	path, err := filepath.Abs(filepath.Join(dir, ProjectFileName))
	if err != nil {
		return projectState{}, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return projectState{}, nil
	}
	if err != nil {
		return projectState{}, err
	}
	ok, err := trusted(stateDir, path, data)
	if err != nil {
		return projectState{}, err
	}
	if !ok {
		return projectState{path: path, untrusted: true}, nil
	}
	pf, err := parseProjectFile(path, data)
	if err != nil {
		return projectState{}, err
	}
	return projectState{path: path, file: pf}, nil
}

// parseProjectFile decodes a .mcp.json (unknown keys are errors) and
// applies Claude Code's ${VAR} expansion.
func parseProjectFile(path string, data []byte) (*projectFile, error) {
	pf := &projectFile{path: path}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(pf); err != nil {
		return nil, manifest.JSONError(path, data, err)
	}
	for name, s := range pf.MCPServers {
		pf.MCPServers[name] = s.expanded()
	}
	return pf, nil
}

// expanded applies Claude Code's .mcp.json expansion — ${VAR} and
// ${VAR:-default} — to command, args, env values, url and header values.
// It is used for the project file only: harness.yml has !env instead.
func (s ServerConfig) expanded() ServerConfig {
	s.Command = expandVars(s.Command)
	s.URL = expandVars(s.URL)
	s.Args = slices.Clone(s.Args)
	for i, a := range s.Args {
		s.Args[i] = expandVars(a)
	}
	s.Env = expandMap(s.Env)
	s.Headers = expandMap(s.Headers)
	return s
}

func expandMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = expandVars(v)
	}
	return out
}

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

func expandVars(s string) string {
	return varRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := varRef.FindStringSubmatch(ref)
		if v, ok := os.LookupEnv(m[1]); ok {
			return v
		}
		return m[3]
	})
}
