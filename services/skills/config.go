package skills

// Config is the skills row's configuration.
type Config struct {
	// Enabled turns skills and file commands on (default true). A disabled
	// row registers nothing.
	Enabled bool `yaml:"enabled" jsonschema:"default=true"`
	// UserDirs adds the user's roots ($XDG_CONFIG_HOME/harness/skills and
	// ~/.claude/skills; the same for commands) after the project's (default
	// true).
	// Search the user's skill and command directories too.
	UserDirs bool `yaml:"userDirs" jsonschema:"default=true"`
	// Cwd is the directory discovery starts from at boot (default: the
	// process's working directory; `harness run --cwd DIR` sets it).
	// Directory discovery starts from.
	Cwd string `yaml:"cwd"`
}

// SetDefaults turns the row on with the user's roots.
func (c *Config) SetDefaults() {
	c.Enabled = true
	c.UserDirs = true
}
