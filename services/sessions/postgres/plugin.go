package postgres

import (
	"context"
	"regexp"
	"sync"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/sessions"
)

// Config is the sessions-postgres plugin's configuration (harness.yml row
// `name: sessions-postgres`).
type Config struct {
	// DSN is the connection string (postgres://user:pass@host:5432/db or
	// key=value pairs). A secret: write it as `!env VAR`; dumps redact it.
	DSN string `yaml:"dsn" json:"dsn" harness:"secret"`
	// PoolSize bounds the pooled connections used for reads, listings and
	// deletes (default 4). Each open session uses one more connection of
	// its own, which holds its lock.
	PoolSize int32 `yaml:"poolSize" json:"poolSize,omitempty" jsonschema:"minimum=1,default=4"`
	// Schema holds the tables (default harness); created and migrated at
	// start.
	Schema string `yaml:"schema" json:"schema,omitempty" jsonschema:"default=harness"`
	// ConnectTimeout bounds connecting and migrating at start (default 10s).
	ConnectTimeout time.Duration `yaml:"connectTimeout" json:"connectTimeout,omitempty"`
	// OutageGrace is how long a session's append waits for a lost
	// database connection to come back (a server restart, a network cut)
	// before the append fails (default 0: at once). While it waits, the
	// run is paused at that record; the records are stored in order once
	// the database is back. A job's run (`harness worker`) sets it to the
	// worker row's dbOutageGrace.
	OutageGrace time.Duration `yaml:"outageGrace" json:"outageGrace,omitempty"`
}

// SetDefaults sets PoolSize 4, Schema harness and ConnectTimeout 10s.
func (c *Config) SetDefaults() {
	c.PoolSize, c.Schema, c.ConnectTimeout = 4, "harness", 10*time.Second
}

// Compiled on first use: package init runs at every harness start.
var schemaRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`) })

// Validate requires a DSN, a positive pool size and a plain schema name.
func (c *Config) Validate() error {
	var issues []core.Issue
	if c.DSN == "" {
		issues = append(issues, core.Issue{Path: "dsn", Message: "required (e.g. dsn: !env HARNESS_POSTGRES_DSN)"})
	}
	if c.PoolSize < 1 {
		issues = append(issues, core.Issue{Path: "poolSize", Message: "must be at least 1"})
	}
	if !schemaRE().MatchString(c.Schema) {
		issues = append(issues, core.Issue{Path: "schema", Message: "want lower-case letters, digits and '_' (at most 63)"})
	}
	if c.ConnectTimeout <= 0 {
		issues = append(issues, core.Issue{Path: "connectTimeout", Message: "must be positive"})
	}
	if c.OutageGrace < 0 {
		issues = append(issues, core.Issue{Path: "outageGrace", Message: "must not be negative"})
	}
	if len(issues) > 0 {
		return &core.ConfigError{Plugin: "sessions-postgres", Issues: issues}
	}
	return nil
}

// Plugin is sessions-postgres: it connects, migrates, and provides the
// sessions service over a [Provider]; disposing it closes the pool.
var Plugin = core.Define("sessions-postgres", apply,
	core.WithProvides(sessions.Key.Name()),
	core.WithDescription("session store on PostgreSQL: tables with migrations, advisory-lock writers, LISTEN/NOTIFY followers"))

func apply(c *core.Context, cfg Config) error {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.ConnectTimeout)
	defer cancel()
	p, err := Open(ctx, Options{DSN: cfg.DSN, PoolSize: cfg.PoolSize, Schema: cfg.Schema, OutageGrace: cfg.OutageGrace, Log: c.Logger()})
	if err != nil {
		return err
	}
	if err := c.Effect("close postgres pool", func() (func(), error) { return func() { _ = p.Close() }, nil }); err != nil {
		_ = p.Close()
		return err
	}
	return core.Provide(c, sessions.Key, sessions.New(p))
}
