// Package checkpoint is the checkpoint plugin: it snapshots the session's
// working directory into the checkpoints store (package
// services/checkpoints) before every user prompt (reason "prompt") and when
// the model ends its turn (reason "turn-end"), so `harness rewind` can put
// the files back.
//
//	UserPromptSubmit ─ checkpoint: Take(cwd, "prompt") ─ … (the prompt goes on)
//	Stop             ─ checkpoint: Take(cwd, "turn-end") ─ … (decision unchanged)
//
// The store lives under the same state directory as the sessions-jsonl
// default ($XDG_STATE_HOME/harness, else ~/.local/state/harness), one
// directory per workspace. A checkpoint that fails is logged (a warning the
// first time, then at debug level) and never blocks the prompt or the turn.
package checkpoint

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent/lifecycle"
	"github.com/dshgo/harness/services/checkpoints"
	"github.com/dshgo/harness/services/sessions"
)

// Reasons recorded in a checkpoint's Meta.Reason.
const (
	ReasonPrompt  = "prompt"
	ReasonTurnEnd = "turn-end"
)

// Config is the checkpoint row's configuration.
type Config struct {
	// Enabled takes checkpoints; false turns the plugin off. Default true.
	Enabled bool `yaml:"enabled" json:"enabled" jsonschema:"default=true"`
	// MaxFileBytes: larger files are skipped (listed in the checkpoint).
	// 0: 10 MiB.
	MaxFileBytes int64 `yaml:"maxFileBytes" json:"maxFileBytes,omitempty"`
	// MaxCheckpoints: older checkpoints of a workspace beyond this count are
	// pruned. 0: 100.
	MaxCheckpoints int `yaml:"maxCheckpoints" json:"maxCheckpoints,omitempty"`
	// MaxStoreBytes: older checkpoints are pruned until the contents the
	// rest reference fit (the newest is always kept). 0: 1 GiB.
	MaxStoreBytes int64 `yaml:"maxStoreBytes" json:"maxStoreBytes,omitempty"`
	// MaxEntries: a working directory with more files, directories and
	// links (not counting ignored ones) is not checkpointed; a warning
	// says so once. 0: 50000.
	MaxEntries int `yaml:"maxEntries" json:"maxEntries,omitempty"`
}

// SetDefaults turns Enabled on.
func (c *Config) SetDefaults() { c.Enabled = true }

// Validate rejects negative limits.
func (c Config) Validate() error {
	switch {
	case c.MaxFileBytes < 0:
		return fmt.Errorf("maxFileBytes: must not be negative (got %d)", c.MaxFileBytes)
	case c.MaxCheckpoints < 0:
		return fmt.Errorf("maxCheckpoints: must not be negative (got %d)", c.MaxCheckpoints)
	case c.MaxStoreBytes < 0:
		return fmt.Errorf("maxStoreBytes: must not be negative (got %d)", c.MaxStoreBytes)
	case c.MaxEntries < 0:
		return fmt.Errorf("maxEntries: must not be negative (got %d)", c.MaxEntries)
	}
	return nil
}

// Limits maps the configuration to the store's limits.
func (c Config) Limits() checkpoints.Limits {
	return checkpoints.Limits{MaxFileBytes: c.MaxFileBytes, MaxCheckpoints: c.MaxCheckpoints, MaxStoreBytes: c.MaxStoreBytes, MaxEntries: c.MaxEntries}
}

// Plugin listens to the agent's UserPromptSubmit and Stop events.
var Plugin = core.Define("checkpoint", apply,
	core.WithDescription("snapshots the session's working directory before each prompt and at turn end (harness rewind)"))

func apply(c *core.Context, cfg Config) error {
	if !cfg.Enabled {
		return nil
	}
	t := NewTaker(sessions.DefaultStateDir(nil), cfg.Limits(), c.Logger())
	if err := core.On(c, lifecycle.UserPromptSubmit, func(ctx context.Context, p lifecycle.Prompt, next core.Next[lifecycle.Prompt, lifecycle.Decision]) (lifecycle.Decision, error) {
		t.Take(ctx, p.Session.Cwd, checkpoints.Meta{Session: p.Session.ID, Prompt: p.Prompt, Reason: ReasonPrompt})
		return next(ctx, p)
	}); err != nil {
		return err
	}
	return core.On(c, lifecycle.Stop, func(ctx context.Context, p lifecycle.Stopping, next core.Next[lifecycle.Stopping, lifecycle.Decision]) (lifecycle.Decision, error) {
		d, err := next(ctx, p)
		t.Take(ctx, p.Session.Cwd, checkpoints.Meta{Session: p.Session.ID, Reason: ReasonTurnEnd})
		return d, err
	})
}

// maxStores bounds the open stores a Taker keeps (one per workspace).
const maxStores = 32

// Taker takes checkpoints of workspaces under one state directory, keeping
// their stores open (so the stat cache stays in memory). It is safe for
// concurrent use.
type Taker struct {
	stateDir string
	limits   checkpoints.Limits
	log      *slog.Logger

	mu     sync.Mutex
	stores map[string]*checkpoints.Store
	warned bool
}

// NewTaker returns a Taker over stateDir; log receives failures (nil: slog.Default()).
func NewTaker(stateDir string, limits checkpoints.Limits, log *slog.Logger) *Taker {
	if log == nil {
		log = slog.Default()
	}
	return &Taker{stateDir: stateDir, limits: limits, log: log, stores: map[string]*checkpoints.Store{}}
}

// Take checkpoints workspace with meta. A failure is logged, never
// returned: a checkpoint never stops the agent. An empty workspace is
// ignored.
func (t *Taker) Take(ctx context.Context, workspace string, meta checkpoints.Meta) {
	if workspace == "" {
		return
	}
	if err := t.take(ctx, workspace, meta); err != nil {
		t.mu.Lock()
		first := !t.warned
		t.warned = true
		t.mu.Unlock()
		level := slog.LevelDebug
		if first {
			level = slog.LevelWarn
		}
		t.log.Log(ctx, level, "checkpoint failed (the prompt goes on without it; later failures are logged at debug level)",
			"workspace", workspace, "reason", meta.Reason, "err", err)
	}
}

func (t *Taker) take(ctx context.Context, workspace string, meta checkpoints.Meta) error {
	s, err := t.store(workspace)
	if err != nil {
		return err
	}
	_, err = s.Take(ctx, meta)
	return err
}

func (t *Taker) store(workspace string) (*checkpoints.Store, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.stores[workspace]; ok {
		return s, nil
	}
	s, err := checkpoints.Open(t.stateDir, workspace, t.limits)
	if err != nil {
		return nil, err
	}
	if len(t.stores) >= maxStores {
		clear(t.stores)
	}
	t.stores[workspace] = s
	return s, nil
}
