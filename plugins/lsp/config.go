package lsp

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dshgo/harness/core/manifest"
)

// Defaults of Config.
const (
	DefaultSettle          = 200 * time.Millisecond
	DefaultTimeout         = 15 * time.Second
	DefaultMaxDiagnostics  = 20
	DefaultMaxRestarts     = 2
	DefaultMaxMessageBytes = 8 << 20
	DefaultMaxFileBytes    = 2 << 20
	DefaultMaxOpenFiles    = 200
	DefaultGrace           = 2 * time.Second
)

// Severities of Config.MinSeverity, most severe first.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityInfo    = "info"
	SeverityHint    = "hint"
)

// Duration is a configuration duration written as a Go duration string in
// harness.yml ("200ms", "15s"); see manifest.Duration.
type Duration = manifest.Duration

// Config is the lsp plugin's configuration: the language servers by
// language name, and how long an edit waits for their diagnostics.
type Config struct {
	// Servers are the language servers by language name (the name is also
	// the languageId sent in didOpen unless the entry sets one). The
	// defaults (DefaultServers: go with gopls) are added under the names
	// the row does not set; `go: {disabled: true}` turns gopls off.
	Servers map[string]ServerConfig `yaml:"servers" json:"servers,omitempty"`
	// Settle is how long to wait, after the first diagnostics of a file's
	// new version arrive, for more (a server may publish in stages);
	// default 200ms.
	Settle Duration `yaml:"settle" json:"settle,omitempty"`
	// Timeout bounds the wait for a file's diagnostics after an edit,
	// including starting the server and its first load of the workspace;
	// default 15s. On expiry the edit result says so.
	Timeout Duration `yaml:"timeout" json:"timeout,omitempty"`
	// MaxDiagnostics bounds the diagnostics shown per file (errors first);
	// default 20.
	MaxDiagnostics int `yaml:"maxDiagnostics" json:"maxDiagnostics,omitempty"`
	// MinSeverity is the least severe diagnostic shown: error, warning
	// (the default), info or hint.
	MinSeverity string `yaml:"minSeverity" json:"minSeverity,omitempty"`
	// MaxRestarts is how many times a server that exits is started again
	// (at the next edit) before it is reported and left stopped; default 2.
	MaxRestarts *int `yaml:"maxRestarts" json:"maxRestarts,omitempty"`
	// MaxMessageBytes bounds one message from a server; a larger one ends
	// that server's connection. Default 8 MiB.
	MaxMessageBytes int `yaml:"maxMessageBytes" json:"maxMessageBytes,omitempty"`
	// MaxFileBytes: files larger than this are not sent to a server;
	// default 2 MiB.
	MaxFileBytes int `yaml:"maxFileBytes" json:"maxFileBytes,omitempty"`
	// MaxOpenFiles bounds the documents kept open per server; the least
	// recently edited is closed first. Default 200.
	MaxOpenFiles int `yaml:"maxOpenFiles" json:"maxOpenFiles,omitempty"`
	// Grace is how long a server may take to exit after shutdown before its
	// process range is terminated; default 2s.
	Grace Duration `yaml:"grace" json:"grace,omitempty"`
	// Cwd is the workspace: relative paths resolve against it and a file
	// with no root marker above it uses it as its root. Empty: the
	// process's working directory.
	Cwd string `yaml:"cwd" json:"cwd,omitempty"`
}

// ServerConfig is one language server, started over stdio in the
// subprocess row's sandbox.
type ServerConfig struct {
	// Command is the executable (looked up on PATH).
	Command string `yaml:"command" json:"command"`
	// Args are the command's arguments.
	Args []string `yaml:"args" json:"args,omitempty"`
	// Env are more environment entries for the server.
	Env map[string]string `yaml:"env" json:"env,omitempty"`
	// Extensions are the file name endings the server handles (".go").
	Extensions []string `yaml:"extensions" json:"extensions"`
	// RootMarkers are file names whose nearest directory above an edited
	// file is the server's workspace root (go.mod); one server runs per
	// (language, root).
	RootMarkers []string `yaml:"rootMarkers" json:"rootMarkers,omitempty"`
	// LanguageID is the languageId of didOpen; default the language name.
	LanguageID string `yaml:"languageId" json:"languageId,omitempty"`
	// InitializationOptions are sent as initialize's initializationOptions.
	InitializationOptions map[string]any `yaml:"initializationOptions" json:"initializationOptions,omitempty"`
	// Disabled turns the entry off.
	Disabled bool `yaml:"disabled" json:"disabled,omitempty"`
}

// DefaultServers are the servers every row has unless it sets the same
// name: gopls for Go. A server that is not installed is simply not used.
func DefaultServers() map[string]ServerConfig {
	return map[string]ServerConfig{
		"go": {Command: "gopls", Extensions: []string{".go"}, RootMarkers: []string{"go.work", "go.mod"}},
	}
}

// SetDefaults fills the defaults.
func (c *Config) SetDefaults() {
	if c.Servers == nil {
		c.Servers = map[string]ServerConfig{}
	}
	for name, s := range DefaultServers() {
		if _, ok := c.Servers[name]; !ok {
			c.Servers[name] = s
		}
	}
	if c.Settle.D() == 0 {
		c.Settle = manifest.Duration(DefaultSettle)
	}
	if c.Timeout.D() == 0 {
		c.Timeout = manifest.Duration(DefaultTimeout)
	}
	if c.MaxDiagnostics == 0 {
		c.MaxDiagnostics = DefaultMaxDiagnostics
	}
	if c.MinSeverity == "" {
		c.MinSeverity = SeverityWarning
	}
	if c.MaxRestarts == nil {
		n := DefaultMaxRestarts
		c.MaxRestarts = &n
	}
	if c.MaxMessageBytes == 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if c.MaxFileBytes == 0 {
		c.MaxFileBytes = DefaultMaxFileBytes
	}
	if c.MaxOpenFiles == 0 {
		c.MaxOpenFiles = DefaultMaxOpenFiles
	}
	if c.Grace.D() == 0 {
		c.Grace = manifest.Duration(DefaultGrace)
	}
}

// Validate reports the first bad field by its path.
func (c Config) Validate() error {
	if severityRank(c.MinSeverity) == 0 {
		return fmt.Errorf("minSeverity: %q is not error, warning, info or hint", c.MinSeverity)
	}
	for name, v := range map[string]int{"maxDiagnostics": c.MaxDiagnostics, "maxMessageBytes": c.MaxMessageBytes,
		"maxFileBytes": c.MaxFileBytes, "maxOpenFiles": c.MaxOpenFiles} {
		if v < 0 {
			return fmt.Errorf("%s: must be positive, got %d", name, v)
		}
	}
	if c.MaxRestarts != nil && *c.MaxRestarts < 0 {
		return fmt.Errorf("maxRestarts: must not be negative, got %d", *c.MaxRestarts)
	}
	if c.Settle.D() < 0 || c.Timeout.D() < 0 || c.Grace.D() < 0 {
		return errors.New("settle, timeout and grace must not be negative")
	}
	owner := map[string]string{}
	names := make([]string, 0, len(c.Servers))
	for name := range c.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := c.Servers[name]
		if s.Disabled {
			continue
		}
		if strings.TrimSpace(s.Command) == "" {
			return fmt.Errorf("servers.%s.command: required", name)
		}
		if len(s.Extensions) == 0 {
			return fmt.Errorf("servers.%s.extensions: at least one file ending (\".go\") is required", name)
		}
		for i, ext := range s.Extensions {
			if ext == "" {
				return fmt.Errorf("servers.%s.extensions[%d]: empty", name, i)
			}
			if other, ok := owner[ext]; ok {
				return fmt.Errorf("servers.%s.extensions[%d]: %q is handled by servers.%s already", name, i, ext, other)
			}
			owner[ext] = name
		}
		if slices.Contains(s.RootMarkers, "") {
			return fmt.Errorf("servers.%s.rootMarkers: empty entry", name)
		}
	}
	return nil
}

// severityRank maps a severity name to LSP's number (1 error … 4 hint),
// 0 for an unknown name.
func severityRank(name string) int {
	switch name {
	case SeverityError:
		return 1
	case SeverityWarning:
		return 2
	case SeverityInfo:
		return 3
	case SeverityHint:
		return 4
	}
	return 0
}
