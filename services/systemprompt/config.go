package systemprompt

import "fmt"

// Config is the systemprompt plugin's configuration: the deployment-authored
// part of the system prompt (C2). Decoded strictly from harness.yml.
type Config struct {
	// PersonaPrefix is the deployment persona placed before first-party
	// guidance (section deployment:persona-prefix, order 0). A template:
	// {{var}} references are substituted strictly when the prompt is
	// rendered. Empty renders nothing.
	PersonaPrefix string `yaml:"personaPrefix" json:"personaPrefix,omitempty"`
	// PersonaSuffix is placed after guidance and environment facts (section
	// deployment:persona-suffix, order 10200): the place for
	// machine-specific text such as the working directory. A template.
	PersonaSuffix string `yaml:"personaSuffix" json:"personaSuffix,omitempty"`
	// IncludeHarnessIdentity registers the harness identity sentence first
	// (section harness:identity, order -1000): "You are an AI agent running
	// in harness, using the model <provider/model>." for an agent session.
	// Default true. The key is dsh's (reference C2).
	// Open the prompt with the one-sentence harness identity.
	IncludeHarnessIdentity bool `yaml:"includeHarnessIdentity" json:"includeHarnessIdentity" jsonschema:"default=true"`
	// IncludeRuntimeContext delivers runtime-context snapshots; false
	// registers a global suppressor. Default true.
	IncludeRuntimeContext bool `yaml:"includeRuntimeContext" json:"includeRuntimeContext" jsonschema:"default=true"`
	// ToolOrder lists model-facing tool names in the order the model sees
	// them, with the "<unlisted-tools>" rest entry exactly once (where the
	// others go, sorted by name). Absent: all tools sorted by name. Names
	// no provider knows fail at assembly.
	ToolOrder []string `yaml:"toolOrder" json:"toolOrder,omitempty"`
}

// DefaultConfig returns the configuration with its defaults applied.
func DefaultConfig() Config {
	var c Config
	c.SetDefaults()
	return c
}

// SetDefaults sets IncludeHarnessIdentity and IncludeRuntimeContext to
// true; it is called before decoding.
func (c *Config) SetDefaults() {
	c.IncludeHarnessIdentity = true
	c.IncludeRuntimeContext = true
}

// Validate checks toolOrder's shape and that the persona templates contain
// only well-formed {{name}} references. Whether the referenced variables
// exist is decided when the prompt is rendered.
func (c Config) Validate() error {
	if err := validateToolOrder(c.ToolOrder); err != nil {
		return err // already names toolOrder, in dsh's words (C7)
	}
	for _, f := range []struct{ field, section, text string }{
		{"personaPrefix", PersonaPrefixSection, c.PersonaPrefix},
		{"personaSuffix", PersonaSuffixSection, c.PersonaSuffix},
	} {
		if err := checkSyntax(f.text, f.section); err != nil {
			return fmt.Errorf("%s: %w", f.field, err)
		}
	}
	return nil
}

// checkSyntax reports malformed references in a template, accepting any
// well-formed variable name.
func checkSyntax(text, section string) error {
	_, err := interpolate(text, "section", section, nil, true)
	return err
}
