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
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent/lifecycle"
	"github.com/dshgo/harness/services/checkpoints"
	"github.com/dshgo/harness/services/commands"
	"github.com/dshgo/harness/services/sessions"
)

// Reasons recorded in a checkpoint's Meta.Reason.
const (
	ReasonPrompt  = checkpoints.ReasonPrompt
	ReasonTurnEnd = checkpoints.ReasonTurnEnd
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
		t.Take(ctx, p.Session.Cwd, checkpoints.Meta{Session: p.Session.ID, Prompt: p.Prompt, Turn: p.Turn, Reason: ReasonPrompt})
		return next(ctx, p)
	}); err != nil {
		return err
	}
	// /undo in the front ends that run registered commands (the terminal
	// UI), when the commands registry is up (its row comes earlier).
	if reg, ok := core.Lookup(c, commands.Key); ok && reg != nil {
		if err := reg.Register(c, commands.Command{Name: "undo", Args: "[force]",
			Summary: "restore the files to before your last prompt (checkpoint)", Run: t.undo}); err != nil {
			return err
		}
		if err := reg.Register(c, commands.Command{Name: "rewind", Args: "[N [code|conversation|both [force]]]",
			Summary: "list this session's checkpoints, preview one with diffs, restore its files or the conversation", Run: t.rewind}); err != nil {
			return err
		}
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
	cwds   map[string]string // session id → the workspace it checkpoints (for /undo)
	warned bool
}

// maxSessions bounds the sessions a Taker remembers the workspace of.
const maxSessions = 1024

// undo is /undo: the files of the front end's session back to its
// latest prompt checkpoint (before the last prompt), unless paths
// changed since the agent's last checkpoint ("/undo force" overwrites
// them).
func (t *Taker) undo(ctx context.Context, inv commands.Invocation) (commands.Reply, error) {
	if inv.Session == nil {
		return commands.Reply{Text: "no session: nothing to undo"}, nil
	}
	force := false
	switch strings.TrimSpace(inv.Args) {
	case "":
	case "force":
		force = true
	default:
		return commands.Reply{}, fmt.Errorf("/undo %s: the only argument is force", inv.Args)
	}
	id := inv.Session.ID()
	t.mu.Lock()
	ws := t.cwds[id]
	t.mu.Unlock()
	if ws == "" {
		return commands.Reply{Text: "no checkpoint of this session yet: nothing to undo"}, nil
	}
	s, err := t.store(ws)
	if err != nil {
		return commands.Reply{}, err
	}
	list, err := s.List()
	if err != nil {
		return commands.Reply{}, err
	}
	to := checkpoints.Latest(list, id, ReasonPrompt)
	if to == nil {
		return commands.Reply{Text: "no checkpoint of this session yet: nothing to undo"}, nil
	}
	done, err := s.Rewind(ctx, to, force)
	var refused *checkpoints.RefusedError
	switch {
	case errors.As(err, &refused):
		return commands.Reply{Text: fmt.Sprintf("**Nothing was undone**: %d path(s) changed since the agent's last checkpoint, by someone else: `%s`. `/undo force` overwrites them.",
			len(refused.Paths), strings.Join(refused.Paths, "`, `"))}, nil
	case err != nil && !errors.Is(err, checkpoints.ErrNotRecorded):
		return commands.Reply{}, err
	}
	if len(done) == 0 {
		return commands.Reply{Text: fmt.Sprintf("nothing to undo: the files match checkpoint %d (before your last prompt)", to.ID)}, nil
	}
	sort.Strings(done)
	return commands.Reply{Text: fmt.Sprintf("restored %d path(s) to checkpoint %d (before your last prompt): `%s`. The conversation is unchanged; `harness rewind` lists every checkpoint.",
		len(done), to.ID, strings.Join(done, "`, `"))}, nil
}

// NewTaker returns a Taker over stateDir; log receives failures (nil: slog.Default()).
func NewTaker(stateDir string, limits checkpoints.Limits, log *slog.Logger) *Taker {
	if log == nil {
		log = slog.Default()
	}
	return &Taker{stateDir: stateDir, limits: limits, log: log, stores: map[string]*checkpoints.Store{}, cwds: map[string]string{}}
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
	if meta.Session != "" {
		t.mu.Lock()
		if len(t.cwds) >= maxSessions {
			clear(t.cwds)
		}
		t.cwds[meta.Session] = workspace
		t.mu.Unlock()
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
