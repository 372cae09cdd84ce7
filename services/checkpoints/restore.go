package checkpoints

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// Action is what Apply does to one path.
type Action string

// The actions.
const (
	ActionWrite  Action = "write"  // create or overwrite (content, mode or link)
	ActionDelete Action = "delete" // the checkpoint did not have it
)

// Change is one path a rewind touches.
type Change struct {
	Path   string `json:"path"`
	Action Action `json:"action"`
	// Refused: the current file differs from what the agent left (the
	// "since" checkpoint), so someone else changed it; Apply skips it
	// unless forced.
	Refused bool `json:"refused,omitempty"`
}

// Plan is what rewinding to a checkpoint would do.
type Plan struct {
	To      *Checkpoint `json:"-"`
	Changes []Change    `json:"changes"` // sorted by path
}

// Refused returns the paths a non-forced Apply leaves alone.
func (p *Plan) Refused() []string {
	var out []string
	for _, c := range p.Changes {
		if c.Refused {
			out = append(out, c.Path)
		}
	}
	return out
}

// Plan compares checkpoint to with the current tree. since is the state
// the agent last left (normally the newest checkpoint, taken at turn end);
// a path whose current state differs from since is marked Refused. A nil
// since refuses nothing.
func (s *Store) Plan(ctx context.Context, to, since *Checkpoint) (*Plan, error) {
	if ctx == nil {
		return nil, fmt.Errorf("checkpoints: nil context")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, _, err := s.scanLocked(ctx, false)
	if err != nil {
		return nil, err
	}
	p := &Plan{To: to}
	for path, want := range to.Entries {
		if have, ok := cur.Entries[path]; ok && have.same(want) {
			continue
		}
		p.Changes = append(p.Changes, Change{Path: path, Action: ActionWrite, Refused: changedSince(cur, since, path)})
	}
	for path := range cur.Entries {
		if _, ok := to.Entries[path]; !ok {
			p.Changes = append(p.Changes, Change{Path: path, Action: ActionDelete, Refused: changedSince(cur, since, path)})
		}
	}
	sort.Slice(p.Changes, func(i, j int) bool { return p.Changes[i].Path < p.Changes[j].Path })
	return p, nil
}

// changedSince reports whether path's current state differs from since.
// Directories are not compared: only their contents are.
func changedSince(cur, since *Checkpoint, path string) bool {
	if since == nil {
		return false
	}
	have, hok := cur.Entries[path]
	was, wok := since.Entries[path]
	if (hok && have.Kind == KindDir) || (wok && was.Kind == KindDir) {
		return hok != wok || have.Kind != was.Kind
	}
	if hok != wok {
		return true
	}
	return hok && !have.same(was)
}

// Apply carries out p: deletes first (children before parents), then
// writes (parents before children). Refused changes are skipped unless
// force; a directory left non-empty by a skipped change stays. It returns
// the paths changed; on error, those changed so far.
func (s *Store) Apply(ctx context.Context, p *Plan, force bool) ([]string, error) {
	if ctx == nil {
		return nil, fmt.Errorf("checkpoints: nil context")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var done []string
	for i := len(p.Changes) - 1; i >= 0; i-- {
		c := p.Changes[i]
		if c.Action != ActionDelete || (c.Refused && !force) {
			continue
		}
		err := os.Remove(s.abs(c.Path))
		if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
			continue // holds a refused path
		}
		if err != nil && !os.IsNotExist(err) {
			return done, fmt.Errorf("checkpoints: delete %s: %w", c.Path, err)
		}
		done = append(done, c.Path)
	}
	for _, c := range p.Changes {
		if c.Action != ActionWrite || (c.Refused && !force) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return done, err
		}
		if err := s.write(c.Path, p.To.Entries[c.Path]); err != nil {
			return done, fmt.Errorf("checkpoints: restore %s: %w", c.Path, err)
		}
		done = append(done, c.Path)
	}
	return done, nil
}

func (s *Store) abs(rel string) string { return filepath.Join(s.root, filepath.FromSlash(rel)) }

// write makes rel be e. A directory in the way of a file, or a file in the
// way of a directory, is removed first; a directory only when empty (its
// contents were deletions of the plan).
func (s *Store) write(rel string, e Entry) error {
	dst := s.abs(rel)
	if !strings.HasPrefix(dst, s.root+string(filepath.Separator)) {
		return fmt.Errorf("path escapes the workspace")
	}
	if info, err := os.Lstat(dst); err == nil && (info.IsDir() != (e.Kind == KindDir)) {
		if err := os.Remove(dst); err != nil {
			return err
		}
	}
	switch e.Kind {
	case KindDir:
		if err := os.MkdirAll(dst, 0o700); err != nil {
			return err
		}
		return os.Chmod(dst, e.Mode.Perm())
	case KindSymlink:
		tmp := filepath.Join(filepath.Dir(dst), ".harness-rewind-"+filepath.Base(dst))
		_ = os.Remove(tmp)
		if err := os.Symlink(e.Target, tmp); err != nil {
			return err
		}
		return os.Rename(tmp, dst)
	case KindFile:
		data, err := s.readBlob(e.Blob)
		if err != nil {
			return err
		}
		tmp, err := os.CreateTemp(filepath.Dir(dst), ".harness-rewind-*")
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		if _, err := tmp.Write(data); err != nil {
			tmp.Close()
			return err
		}
		if err := tmp.Close(); err != nil {
			return err
		}
		if err := os.Chmod(tmp.Name(), e.Mode.Perm()); err != nil {
			return err
		}
		return os.Rename(tmp.Name(), dst)
	}
	return fmt.Errorf("unknown entry kind %q", e.Kind)
}

// ErrNotRecorded is Rewind's error when the files were restored but the
// rewound state could not be checkpointed (a later rewind then compares
// with the checkpoint before): a warning, not a failure of the restore.
var ErrNotRecorded = errors.New("restored, but the rewound state was not checkpointed")

// ErrRefused is matched (errors.Is) by a [*RefusedError].
var ErrRefused = errors.New("paths changed by someone else")

// RefusedError is Rewind's error when paths changed since the session's
// latest checkpoint and force is off: nothing was changed.
type RefusedError struct {
	// Paths are the refused paths; Since is the checkpoint they differ from.
	Paths []string
	Since int
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("nothing changed: %d path(s) changed since the agent's last checkpoint (%d), by someone else; force overwrites them:\n  %s",
		len(e.Paths), e.Since, strings.Join(e.Paths, "\n  "))
}

// Is reports whether target is ErrRefused.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Latest returns the newest checkpoint of session in list (sorted by id,
// as List returns it) whose reason is reason ("" any), or nil.
func Latest(list []*Checkpoint, session, reason string) *Checkpoint {
	for i := len(list) - 1; i >= 0; i-- {
		if c := list[i]; c.Meta.Session == session && (reason == "" || c.Meta.Reason == reason) {
			return c
		}
	}
	return nil
}

// Rewind restores the workspace to checkpoint to, all or nothing as far
// as refusals go: paths that differ from the latest checkpoint of to's
// session (the state the agent left) were changed by someone else, and
// unless force is set Rewind changes nothing and returns a *RefusedError
// naming them. After a restore it records the rewound state (reason
// "rewind"), so a later rewind compares with it. It returns the paths
// changed.
func (s *Store) Rewind(ctx context.Context, to *Checkpoint, force bool) ([]string, error) {
	list, err := s.List()
	if err != nil {
		return nil, err
	}
	since := Latest(list, to.Meta.Session, "")
	plan, err := s.Plan(ctx, to, since)
	if err != nil {
		return nil, err
	}
	if refused := plan.Refused(); len(refused) > 0 && !force {
		return nil, &RefusedError{Paths: refused, Since: since.ID}
	}
	done, err := s.Apply(ctx, plan, force)
	if err != nil {
		return done, fmt.Errorf("%w (%d path(s) changed before the error)", err, len(done))
	}
	if _, err := s.Take(ctx, Meta{Session: to.Meta.Session, Reason: "rewind", Prompt: fmt.Sprintf("rewind to %d", to.ID)}); err != nil {
		return done, fmt.Errorf("%w: %v", ErrNotRecorded, err)
	}
	return done, nil
}
