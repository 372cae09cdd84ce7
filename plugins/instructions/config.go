package instructions

import (
	"fmt"

	"github.com/dshgo/harness/core"
)

// Config is the instructions plugin's configuration.
type Config struct {
	// Enabled turns the section on (default true). A disabled plugin
	// registers nothing.
	// Put the instruction files into the system prompt.
	Enabled bool `yaml:"enabled" jsonschema:"default=true"`
	// Files are the file names searched in each directory, in order
	// (default AGENTS.md, CLAUDE.md).
	Files []string `yaml:"files"`
	// UserFile is the user-level instruction file; empty means
	// $XDG_CONFIG_HOME/harness/AGENTS.md (else ~/.config/harness/AGENTS.md);
	// "-" turns it off.
	UserFile string `yaml:"userFile"`
	// MaxBytes bounds the text kept from each file, imports counted each on
	// their own (default 65536). A longer file is cut with a note.
	MaxBytes int `yaml:"maxBytes" jsonschema:"minimum=1,default=65536"`
	// MaxImportDepth bounds nested @path imports (default 5; 0 disables imports).
	// Nesting depth of @path imports (0: imports are not followed).
	MaxImportDepth int `yaml:"maxImportDepth" jsonschema:"minimum=0,default=5"`
}

// Defaults.
const (
	DefaultMaxBytes       = 64 << 10
	DefaultMaxImportDepth = 5
)

// DefaultFiles are the file names searched by default.
var DefaultFiles = []string{"AGENTS.md", "CLAUDE.md"}

// SetDefaults enables the plugin with the default names and bounds.
func (c *Config) SetDefaults() {
	c.Enabled = true
	c.Files = append([]string(nil), DefaultFiles...)
	c.MaxBytes = DefaultMaxBytes
	c.MaxImportDepth = DefaultMaxImportDepth
}

// Validate checks the bounds and that file names are bare names.
func (c Config) Validate() error {
	var issues []core.Issue
	if c.MaxBytes < 1 {
		issues = append(issues, core.Issue{Path: "maxBytes", Message: fmt.Sprintf("must be at least 1, got %d", c.MaxBytes)})
	}
	if c.MaxImportDepth < 0 {
		issues = append(issues, core.Issue{Path: "maxImportDepth", Message: "must not be negative"})
	}
	for i, f := range c.Files {
		if f == "" || f == "." || f == ".." || containsSep(f) {
			issues = append(issues, core.Issue{Path: fmt.Sprintf("files[%d]", i), Message: fmt.Sprintf("%q: want a bare file name such as AGENTS.md", f)})
		}
	}
	if len(issues) > 0 {
		return &core.ConfigError{Issues: issues}
	}
	return nil
}

func containsSep(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' || s[i] == 0 {
			return true
		}
	}
	return false
}
