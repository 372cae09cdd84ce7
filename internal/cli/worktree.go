package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/worktrees"
)

// worktreeManager is the manager the manifest's worktrees row configures
// (its dir), or the default one (the state directory) without a row.
func worktreeManager(env *Env) (*worktrees.Manager, error) {
	m, err := env.LoadManifest()
	if err != nil {
		return nil, err
	}
	cfg := worktrees.Config{}
	var walk func([]manifest.Entry) error
	walk = func(rows []manifest.Entry) error {
		for _, e := range rows {
			switch {
			case e.Disabled:
			case e.Group:
				if err := walk(e.Children); err != nil {
					return err
				}
			case e.Name == worktrees.Plugin.Name():
				c, err := manifest.DecodeConfig(worktrees.Plugin, e, env.LookupEnv)
				if err != nil {
					return UsageError(err)
				}
				cfg = *c.(*worktrees.Config)
			}
		}
		return nil
	}
	if err := walk(m.Plugins); err != nil {
		return nil, err
	}
	return worktrees.New(cfg.ManagerDir(env.LookupEnv)), nil
}

// worktreeAuto is the --worktree value that asks for a generated name.
const worktreeAuto = "auto"

// runWorktree is the worktree of one run: made before the harness boots
// (the session's working directory), summarized, and removed when clean,
// after it stopped.
type runWorktree struct {
	m *worktrees.Manager
	w *worktrees.Worktree
}

// startWorktree makes the worktree name (worktreeAuto: a generated name)
// of the repository that holds the run's working directory, and points
// the run at it: f.cwd is the worktree (its subdirectory matching the one
// the run was started in, when there is one), and the sandbox's writable
// roots gain the worktree and the parts of the repository's git directory
// that committing there writes (worktrees.Worktree.Writable), nothing
// git executes.
func startWorktree(env *Env, f *agentFlags, name string) (*runWorktree, error) {
	switch {
	case name == "":
		return nil, UsageError(errors.New("--worktree: give a NAME (branch harness/NAME), or auto for a generated one"))
	case name == worktreeAuto:
		name = ""
	}
	if err := worktrees.ValidateName(name); name != "" && err != nil {
		return nil, UsageError(fmt.Errorf("--worktree: %w", err))
	}
	m, err := worktreeManager(env)
	if err != nil {
		return nil, err
	}
	repo, err := env.workDir()
	if err != nil {
		return nil, Failure(err)
	}
	if f.cwd != "" {
		repo = filepath.Join(repo, f.cwd) // --cwd, relative to the working directory unless absolute
		if filepath.IsAbs(f.cwd) {
			repo = f.cwd
		}
	}
	w, err := m.Create(env.Ctx, repo, name)
	if err != nil {
		return nil, UsageError(fmt.Errorf("--worktree: %w", err))
	}
	fmt.Fprintf(env.Stderr, "harness: worktree %s: branch %s at %s, in %s\n", w.Name, w.Branch, short(w.Base), w.Dir)
	f.cwd = w.Dir
	// Started in a subdirectory: the same one of the worktree, when it
	// is there (tracked).
	if sub, err := worktrees.Subdir(env.Ctx, repo); err == nil && sub != "." {
		if st, err := os.Stat(filepath.Join(w.Dir, sub)); err == nil && st.IsDir() {
			f.cwd = filepath.Join(w.Dir, sub)
		}
	}
	// The worktree itself is among them: the session may start in a
	// subdirectory.
	f.boot = append(f.boot, withWritableRoots(w.Writable()))
	return &runWorktree{m: m, w: w}, nil
}

// withWritableRoots adds roots to the writableRoots of each sandboxed
// subprocess-local row: the one containment policy every command, terminal
// and file tool of the run is checked against.
func withWritableRoots(roots []string) BootOption {
	return bootOptionFunc(func(o *fxcore.Options) {
		m := o.Manifest.Clone()
		var patch func(rows []manifest.Entry)
		patch = func(rows []manifest.Entry) {
			for i := range rows {
				e := &rows[i]
				patch(e.Children)
				if e.Disabled || e.Name != "subprocess-local" || e.Config == nil || e.Config.Kind != yaml.MappingNode {
					continue
				}
				if sb := getKey(e.Config, "sandbox"); sb != nil && sb.Kind == yaml.MappingNode {
					appendTo(sb, "writableRoots", roots...)
				}
			}
		}
		patch(m.Plugins)
		o.Manifest = m
	})
}

// checkRoots warns when the run's sandbox is on but lacks the worktree's
// git roots (a subprocess row whose sandbox block is not a plain
// mapping): commits in the worktree then fail in the sandbox.
func (rw *runWorktree) checkRoots(env *Env, host *agentHost) {
	rt, ok := core.Lookup(host.h.Root.Context(), subprocess.Key)
	if !ok {
		return
	}
	p := rt.SandboxPolicy()
	if !p.Enabled() || p.Mode != subprocess.SandboxWorkspaceWrite {
		return
	}
	for _, r := range rw.w.Writable() {
		if !slices.Contains(p.WritableRoots, r) {
			fmt.Fprintf(env.Stderr, "harness: warning: the sandbox's writableRoots lack %s (the subprocess row's sandbox block is not a plain mapping): git commit in the worktree will fail in the sandbox\n", r)
			return
		}
	}
}

// finish prints the worktree's summary to w and removes the worktree when
// it is clean (its branch stays when it has commits of its own); a dirty
// one is kept. It also warns about files another live worktree of the
// repository changes too. It runs after the harness stopped, under a
// context of its own (an interrupted run still gets its summary).
func (rw *runWorktree) finish(ctx context.Context, w io.Writer) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	s, err := worktrees.Summarize(ctx, rw.w)
	if err != nil {
		fmt.Fprintf(w, "harness: worktree %s: %v (kept in %s)\n", rw.w.Name, err, rw.w.Dir)
		return
	}
	printSummary(w, s)
	rw.warnOverlaps(ctx, w, s)
	if s.Dirty() {
		fmt.Fprintf(w, "harness: worktree %s kept in %s: it has uncommitted changes or untracked files (commit or discard them, then `harness worktree prune`)\n", rw.w.Name, rw.w.Dir)
		return
	}
	kept, err := rw.m.Remove(ctx, rw.w)
	switch {
	case err != nil:
		fmt.Fprintf(w, "harness: worktree %s kept in %s: %v\n", rw.w.Name, rw.w.Dir, err)
	case kept:
		fmt.Fprintf(w, "harness: worktree %s removed (clean); branch %s kept with its commits\n", rw.w.Name, rw.w.Branch)
	default:
		fmt.Fprintf(w, "harness: worktree %s removed (clean, no commits); branch %s deleted\n", rw.w.Name, rw.w.Branch)
	}
}

func (rw *runWorktree) warnOverlaps(ctx context.Context, w io.Writer, s *worktrees.Summary) {
	others, err := rw.m.List(ctx, rw.w.Repo)
	if err != nil {
		return
	}
	sums := []*worktrees.Summary{s}
	for _, o := range others {
		if o.Name == rw.w.Name {
			continue
		}
		if sum, err := worktrees.Summarize(ctx, o); err == nil {
			sums = append(sums, sum)
		}
	}
	for _, ov := range worktrees.Overlaps(sums) {
		if ov.A == rw.w.Name || ov.B == rw.w.Name {
			fmt.Fprintf(w, "harness: warning: %s\n", ov)
		}
	}
}

// printSummary writes a worktree's branch, commits, changed files and
// diff stat.
func printSummary(w io.Writer, s *worktrees.Summary) {
	fmt.Fprintf(w, "harness: worktree %s: branch %s (base %s): %s, %s\n", s.Worktree.Name, s.Worktree.Branch,
		short(s.Worktree.Base), plural(len(s.Commits), "commit"), plural(len(s.Changes), "changed file"))
	for _, c := range s.Commits {
		fmt.Fprintf(w, "  commit %s %s\n", c.Hash, c.Subject)
	}
	for _, c := range s.Changes {
		fmt.Fprintf(w, "  %-12s %s\n", c.State(), c.Path)
	}
	if s.DiffStat != "" {
		for _, l := range strings.Split(s.DiffStat, "\n") {
			fmt.Fprintf(w, "  %s\n", strings.TrimSpace(l))
		}
	}
	if s.Truncated {
		fmt.Fprintln(w, "  (lists cut at 10,000 entries)")
	}
}

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

// worktreeCommand builds `harness worktree`.
func worktreeCommand(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "worktree",
		Short: "List and prune the git worktrees of harness run --worktree",
		Long: "The worktrees harness run --worktree NAME made for the repository of the working directory\n" +
			"(branch harness/NAME, in the worktrees row's dir: $XDG_STATE_HOME/harness/worktrees by default).",
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(worktreeListCommand(env), worktreePruneCommand(env))
	return cmd
}

func worktreeListCommand(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the worktrees: branch, state (clean or dirty), commits, changed files, directory; warn about overlaps",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, repo, err := worktreeRepo(env)
			if err != nil {
				return err
			}
			list, err := m.List(env.Ctx, repo)
			if err != nil {
				return Failure(err)
			}
			var sums []*worktrees.Summary
			for _, w := range list {
				s, err := worktrees.Summarize(env.Ctx, w)
				if err != nil {
					fmt.Fprintf(env.Stdout, "%s\t%s\t(unreadable: %v)\t%s\n", w.Name, w.Branch, err, w.Dir)
					continue
				}
				sums = append(sums, s)
				state := "clean"
				if s.Dirty() {
					state = "dirty"
				}
				fmt.Fprintf(env.Stdout, "%s\t%s\t%s\t%s\t%s\t%s\n", w.Name, w.Branch, state,
					plural(len(s.Commits), "commit"), plural(len(s.Changes), "changed file"), w.Dir)
			}
			for _, ov := range worktrees.Overlaps(sums) {
				fmt.Fprintf(env.Stderr, "harness: warning: %s\n", ov)
			}
			return nil
		},
	}
}

func worktreePruneCommand(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "prune",
		Short: "Remove the clean worktrees (keeping branches with commits of their own); keep and name the dirty ones",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, repo, err := worktreeRepo(env)
			if err != nil {
				return err
			}
			res, err := m.Prune(env.Ctx, repo)
			if err != nil {
				return Failure(err)
			}
			for _, p := range res {
				switch {
				case p.Err != nil && errors.Is(p.Err, worktrees.ErrDirty):
					fmt.Fprintf(env.Stdout, "kept %s: dirty (uncommitted changes or untracked files) in %s\n", p.Worktree.Name, p.Worktree.Dir)
				case p.Err != nil:
					fmt.Fprintf(env.Stdout, "kept %s: %v\n", p.Worktree.Name, p.Err)
				case p.BranchKept:
					fmt.Fprintf(env.Stdout, "removed %s (branch %s kept: it has commits of its own)\n", p.Worktree.Name, p.Worktree.Branch)
				default:
					fmt.Fprintf(env.Stdout, "removed %s (and its branch %s)\n", p.Worktree.Name, p.Worktree.Branch)
				}
			}
			return nil
		},
	}
}

func worktreeRepo(env *Env) (*worktrees.Manager, string, error) {
	m, err := worktreeManager(env)
	if err != nil {
		return nil, "", err
	}
	repo, err := env.workDir()
	if err != nil {
		return nil, "", Failure(err)
	}
	return m, repo, nil
}
