package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/subprocess"
)

// Key is the worker service.
var Key = core.NewKey[*Service]("worker")

// Config is the worker plugin's configuration (harness.yml row
// `name: worker`).
type Config struct {
	// DSN is the PostgreSQL connection string of the job queue. A secret:
	// write it as `!env VAR`. It may be the sessions-postgres DSN.
	DSN string `yaml:"dsn" json:"dsn" harness:"secret"`
	// Schema holds River's tables (default harness); created and migrated
	// by the first worker, submit or jobs command that connects.
	Schema string `yaml:"schema" json:"schema,omitempty" jsonschema:"default=harness"`
	// PoolSize bounds the pooled connections (default 8).
	PoolSize int32 `yaml:"poolSize" json:"poolSize,omitempty" jsonschema:"minimum=1,default=8"`
	// WorkRoot holds the jobs' work dirs (WorkRoot/job-ID-CREATED, 0700).
	// Empty: $XDG_STATE_HOME/harness/jobs. Put it on a shared volume to let
	// a retry on another machine see the work dir its last attempt left.
	WorkRoot string `yaml:"workRoot" json:"workRoot,omitempty"`
	// KeepWorkDirs keeps every job's work dir (default: a job's work dir is
	// removed when the job is completed, cancelled or discarded, and kept
	// while it is to be retried; a Dir job's directory is never removed).
	KeepWorkDirs bool `yaml:"keepWorkDirs" json:"keepWorkDirs,omitempty"`
	// KeepFailed keeps the work dirs of jobs that end cancelled or
	// discarded (removed by default), to look at what they left.
	KeepFailed bool `yaml:"keepFailed" json:"keepFailed,omitempty"`
	// MaxAttempts is the attempts of a job before it is discarded
	// (default 5).
	MaxAttempts int `yaml:"maxAttempts" json:"maxAttempts,omitempty" jsonschema:"minimum=1,default=5"`
	// JobTimeout bounds one attempt (default 55m): the run is stopped
	// (its tools terminated) and the job retried, resuming its session.
	// It must be below RescueAfter (River rescues only jobs past both).
	JobTimeout time.Duration `yaml:"jobTimeout" json:"jobTimeout,omitempty"`
	// RescueAfter is how long a job may stay running before River takes
	// its worker for dead and retries it (default 1h; River's rescuer, on
	// the elected leader worker, looks every 30 s). A live run is stopped
	// by JobTimeout before that.
	RescueAfter time.Duration `yaml:"rescueAfter" json:"rescueAfter,omitempty"`
	// HeartbeatTimeout is how long a worker may go without a heartbeat
	// (each worker beats every HeartbeatTimeout/4) before the other workers
	// take it for gone and hand its running jobs back to the queue
	// (default 30s; at least 1s). Independent of RescueAfter.
	HeartbeatTimeout time.Duration `yaml:"heartbeatTimeout" json:"heartbeatTimeout,omitempty"`
	// DBOutageGrace is how long running jobs ride out a PostgreSQL outage
	// (a restart, a cut connection) without losing their attempt (default
	// 60s; 0: an outage fails them). A run's session appends wait for the
	// database for that long (its run pauses at the record, and the
	// records are stored in order once the database is back: the run sets
	// its sessions-postgres row's outageGrace to this), and a finished
	// job's result waits for the database as long before the worker hands
	// it to River. Heartbeats missed during an outage do not make the
	// other workers take a worker for gone: a worker that lost the
	// database itself looks for gone workers only after heartbeatTimeout
	// connected again.
	DBOutageGrace time.Duration `yaml:"dbOutageGrace" json:"dbOutageGrace,omitempty"`
	// DrainTimeout is how long SIGTERM waits for running jobs to finish
	// before it stops them and hands them back to the queue (default 5m).
	DrainTimeout time.Duration `yaml:"drainTimeout" json:"drainTimeout,omitempty" jsonschema:" wait this long for running jobs before handing them back (default 5m)"`
	// Grace is the SIGTERM→SIGKILL delay when a run is stopped (default 10s).
	Grace time.Duration `yaml:"grace" json:"grace,omitempty"`
	// FetchPollInterval is how often an idle worker polls besides River's
	// LISTEN/NOTIFY wake-ups (default 1s).
	// Polling interval of an idle worker (default 1s).
	FetchPollInterval time.Duration `yaml:"fetchPollInterval" json:"fetchPollInterval,omitempty"`
	// PassEnv names environment variables every run receives besides the
	// manifest's credential variables (which are passed as they are).
	PassEnv []string `yaml:"passEnv" json:"passEnv,omitempty"`
}

// SetDefaults sets the defaults documented on the fields.
func (c *Config) SetDefaults() {
	c.Schema, c.PoolSize, c.MaxAttempts = "harness", 8, 5
	c.JobTimeout, c.RescueAfter, c.DrainTimeout, c.Grace, c.FetchPollInterval = 55*time.Minute, time.Hour, 5*time.Minute, 10*time.Second, time.Second
	c.HeartbeatTimeout, c.DBOutageGrace = 30*time.Second, time.Minute
}

// Compiled on first use: package init runs at every harness start.
var schemaRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`) })

// Validate checks every field and names the bad ones.
func (c *Config) Validate() error {
	var issues []core.Issue
	add := func(path, msg string) { issues = append(issues, core.Issue{Path: path, Message: msg}) }
	if c.DSN == "" {
		add("dsn", "required (e.g. dsn: !env HARNESS_DATABASE_URL)")
	}
	if !schemaRE().MatchString(c.Schema) {
		add("schema", "want lower-case letters, digits and '_' (at most 63)")
	}
	if c.PoolSize < 1 {
		add("poolSize", "must be at least 1")
	}
	if c.MaxAttempts < 1 {
		add("maxAttempts", "must be at least 1")
	}
	if c.JobTimeout <= 0 {
		add("jobTimeout", "must be positive")
	}
	if c.RescueAfter <= c.JobTimeout {
		add("rescueAfter", "must be above jobTimeout")
	}
	if c.HeartbeatTimeout < time.Second {
		add("heartbeatTimeout", "must be at least 1s")
	}
	if c.DBOutageGrace < 0 {
		add("dbOutageGrace", "must not be negative")
	}
	if c.DrainTimeout <= 0 {
		add("drainTimeout", "must be positive")
	}
	if c.Grace <= 0 || c.Grace > subprocess.MaxGrace {
		add("grace", fmt.Sprintf("must be positive and at most %s", subprocess.MaxGrace))
	}
	if c.FetchPollInterval < time.Millisecond {
		add("fetchPollInterval", "must be at least 1ms")
	}
	if c.WorkRoot != "" && !filepath.IsAbs(c.WorkRoot) {
		add("workRoot", "must be an absolute path")
	}
	if len(issues) > 0 {
		return &core.ConfigError{Plugin: "worker", Issues: issues}
	}
	return nil
}

// Plugin is the worker plugin: it provides the worker [Service] over a
// connection pool (connections are made on first use). It waits for the
// sessions service (sessions-postgres, so that every worker sees every
// session) and the subprocess service (which runs the jobs).
var Plugin = core.Define("worker", apply,
	core.WithInject(sessions.Key.Name(), subprocess.Key.Name()),
	core.WithProvides(Key.Name()),
	core.WithDescription("agent runs as River jobs on PostgreSQL: submit, work (harness worker), list, cancel, follow"))

// Service submits, works, lists and cancels runs. Safe for concurrent use.
type Service struct {
	c        *core.Context // finds the optional tracing service
	cfg      Config
	log      *slog.Logger
	sessions *sessions.Service
	sp       *subprocess.Runtime
	pool     *pgxpool.Pool
	sockets  []string // the DSN's unix socket directories

	mu       sync.Mutex
	migrated bool
	insert   *river.Client[pgx5Tx] // insert-only client, made on first use
}

func apply(c *core.Context, cfg Config) error {
	pc, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		return &core.ConfigError{Plugin: "worker", Issues: []core.Issue{{Path: "dsn", Message: "not a PostgreSQL connection string"}}}
	}
	pc.MaxConns = cfg.PoolSize
	pc.ConnConfig.RuntimeParams["application_name"] = fmt.Sprintf("harness worker pid %d", os.Getpid())
	pool, err := pgxpool.NewWithConfig(context.Background(), pc)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	if err := c.Effect("close worker pool", func() (func(), error) { return pool.Close, nil }); err != nil {
		pool.Close()
		return err
	}
	if cfg.WorkRoot == "" {
		cfg.WorkRoot = filepath.Join(sessions.DefaultStateDir(nil), "jobs")
	}
	s := &Service{c: c, cfg: cfg, log: c.Logger(), pool: pool, sockets: unixSocketDirs(&pc.ConnConfig.Config),
		sessions: core.Use(c, sessions.Key), sp: core.Use(c, subprocess.Key)}
	return core.Provide(c, Key, s)
}

// Config returns the plugin's configuration (WorkRoot resolved).
func (s *Service) Config() Config { return s.cfg }

// Sessions returns the session store the runs are stored in.
func (s *Service) Sessions() *sessions.Service { return s.sessions }

// ready migrates River's schema once per process (under an advisory
// lock, so concurrent starters do not race) and makes the insert-only
// client.
func (s *Service) ready(ctx context.Context) (*river.Client[pgx5Tx], error) {
	if ctx == nil {
		return nil, errors.New("worker: nil context")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.insert != nil {
		return s.insert, nil
	}
	if !s.migrated {
		if err := migrate(ctx, s.pool, s.cfg.Schema); err != nil {
			return nil, err
		}
		s.migrated = true
	}
	c, err := river.NewClient(riverpgxv5.New(s.pool), s.riverConfig(nil))
	if err != nil {
		return nil, fmt.Errorf("worker: river client: %w", err)
	}
	s.insert = c
	return c, nil
}
