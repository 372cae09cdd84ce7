package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/checkpoints"
	"github.com/dshgo/harness/services/sessions"
)

// rewindCommand builds `harness rewind`.
func rewindCommand(env *Env) *cobra.Command {
	var f rewindFlags
	cmd := &cobra.Command{
		Use:   "rewind",
		Short: "List the checkpoints of this directory; restore its files (--to N --code), the conversation (--conversation) or both",
		Long: "rewind lists the checkpoints the checkpoint row took of the current directory (before each prompt,\n" +
			"at each turn end), newest session first: N, time, session, reason, the prompt's start and how many\n" +
			"paths changed since the checkpoint before it. --session ID lists that session's (default: the latest\n" +
			"session with checkpoints). --to N --code puts the files back as checkpoint N had them: changed ones\n" +
			"rewritten (bytes, mode, symlinks), new ones deleted. A path changed since the session's latest\n" +
			"checkpoint (the agent's last turn end) was changed by someone else: it is refused, listed, and\n" +
			"nothing is changed (exit 1) unless --force. --to N --conversation takes the session's conversation\n" +
			"back to before the prompt checkpoint N came before (a rewind record in its log; nothing is deleted),\n" +
			"so `harness run --session ID` goes on from there; --both does the files, then the conversation.\n" +
			"--dry-run prints the plan and changes nothing. It starts no harness.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runRewind(env.Ctx, env, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.session, "session", "", "the session whose checkpoints to list or rewind (default: the latest with checkpoints)")
	fl.IntVar(&f.to, "to", 0, "restore to checkpoint `N` (the N column of the list)")
	fl.BoolVar(&f.code, "code", false, "restore the files (with --to)")
	fl.BoolVar(&f.conversation, "conversation", false, "take the session's conversation back to before checkpoint N's prompt (with --to)")
	fl.BoolVar(&f.both, "both", false, "the files, then the conversation (with --to)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print what --to would do and change nothing")
	fl.BoolVar(&f.force, "force", false, "also overwrite paths changed since the agent's last checkpoint")
	return cmd
}

type rewindFlags struct {
	session                  string
	to                       int
	code, conversation, both bool
	dryRun, force            bool
}

func runRewind(ctx context.Context, env *Env, f rewindFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if f.to < 0 {
		return UsageError(fmt.Errorf("rewind: --to %d: want a checkpoint number from the list", f.to))
	}
	if f.to == 0 && (f.code || f.conversation || f.both || f.force || f.dryRun) {
		return UsageError(errors.New("rewind: --code, --conversation, --both, --force and --dry-run need --to N (run `harness rewind` for the list)"))
	}
	if n := btoi(f.code) + btoi(f.conversation) + btoi(f.both); f.to > 0 && n != 1 {
		return UsageError(errors.New("rewind: --to needs one of --code (the files), --conversation or --both"))
	}
	wd, err := env.workDir()
	if err != nil {
		return Failure(err)
	}
	stateDir := sessions.DefaultStateDir(env.LookupEnv)
	dir, err := checkpoints.Dir(stateDir, wd)
	if err != nil {
		return Failure(err)
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if f.to > 0 {
			return Failure(fmt.Errorf("rewind: no checkpoints of %s (in %s)", wd, dir))
		}
		fmt.Fprintf(env.Stderr, "no checkpoints of %s (in %s)\n", wd, dir)
		return nil
	}
	store, err := checkpoints.Open(stateDir, wd, checkpoints.Limits{})
	if err != nil {
		return Failure(err)
	}
	list, err := store.List()
	if err != nil {
		return Failure(err)
	}
	if f.to > 0 {
		return rewindTo(ctx, env, store, list, f)
	}
	return listCheckpoints(env, list, f.session, wd, dir)
}

// sessionOrder returns the sessions of list, the one with the newest
// checkpoint first.
func sessionOrder(list []*checkpoints.Checkpoint) []string {
	var order []string
	seen := map[string]bool{}
	for i := len(list) - 1; i >= 0; i-- {
		if s := list[i].Meta.Session; !seen[s] {
			seen[s] = true
			order = append(order, s)
		}
	}
	return order
}

// changedPaths counts the paths (not directories) whose state differs
// between prev and c; prev nil: every path of c.
func changedPaths(prev, c *checkpoints.Checkpoint) int {
	n := 0
	for p, e := range c.Entries {
		if e.Kind == checkpoints.KindDir {
			continue
		}
		if prev == nil {
			n++
			continue
		}
		if was, ok := prev.Entries[p]; !ok || was != e {
			n++
		}
	}
	if prev != nil {
		for p, e := range prev.Entries {
			if _, ok := c.Entries[p]; !ok && e.Kind != checkpoints.KindDir {
				n++
			}
		}
	}
	return n
}

func listCheckpoints(env *Env, list []*checkpoints.Checkpoint, session, wd, dir string) error {
	order := sessionOrder(list)
	if session != "" {
		if !contains(order, session) {
			return Failure(fmt.Errorf("rewind: session %s has no checkpoints of %s (in %s)", session, wd, dir))
		}
		order = []string{session}
	}
	if len(order) == 0 {
		fmt.Fprintf(env.Stderr, "no checkpoints of %s (in %s)\n", wd, dir)
		return nil
	}
	if session == "" {
		order = order[:1]
	}
	prev := map[int]*checkpoints.Checkpoint{}
	for i := 1; i < len(list); i++ {
		prev[list[i].ID] = list[i-1]
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "N\tTIME\tSESSION\tREASON\tCHANGED\tPROMPT")
	for _, s := range order {
		for i := len(list) - 1; i >= 0; i-- {
			c := list[i]
			if c.Meta.Session != s {
				continue
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\n", c.ID, c.Time.Local().Format(time.DateTime), c.Meta.Session,
				c.Meta.Reason, changedPaths(prev[c.ID], c), excerpt(c.Meta.Prompt, 60))
		}
	}
	return tw.Flush()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// excerpt is the first line of s, at most n runes.
func excerpt(s string, n int) string {
	s, _, cut := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	} else if cut {
		return s + "…"
	}
	return s
}

func rewindTo(ctx context.Context, env *Env, store *checkpoints.Store, list []*checkpoints.Checkpoint, f rewindFlags) error {
	var to *checkpoints.Checkpoint
	for _, c := range list {
		if c.ID == f.to {
			to = c
		}
	}
	if to == nil {
		return UsageError(fmt.Errorf("rewind: --to %d: no such checkpoint of %s (run `harness rewind` for the list)", f.to, store.Workspace()))
	}
	if f.session != "" && f.session != to.Meta.Session {
		return UsageError(fmt.Errorf("rewind: checkpoint %d belongs to session %s, not %s", f.to, to.Meta.Session, f.session))
	}
	files, conv := f.code || f.both, f.conversation || f.both
	if conv && to.Meta.Turn <= 0 {
		return Failure(fmt.Errorf("rewind: checkpoint %d does not say which turn it came before (a turn-end checkpoint, or one an older harness took): --code restores the files", to.ID))
	}
	if f.dryRun && conv {
		fmt.Fprintf(env.Stdout, "conversation of session %s: back to before turn %d (%q)\n", to.Meta.Session, to.Meta.Turn, excerpt(to.Meta.Prompt, 60))
		if !files {
			return nil
		}
	}
	if f.dryRun {
		// Compared with the session's latest checkpoint: the state the
		// agent left.
		plan, err := store.Plan(ctx, to, checkpoints.Latest(list, to.Meta.Session, ""))
		if err != nil {
			return Failure(err)
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ACTION\tPATH")
		for _, c := range plan.Changes {
			action := string(c.Action)
			if action == string(checkpoints.ActionWrite) {
				action = "restore"
			}
			if c.Refused && !f.force {
				action = "refused (" + action + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\n", action, c.Path)
		}
		for _, sk := range to.Skipped { // not in the checkpoint: left as they are
			fmt.Fprintf(tw, "skipped (%s)\t%s\n", sk.Reason, sk.Path)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if len(plan.Changes) == 0 {
			fmt.Fprintf(env.Stderr, "nothing to do: the files match checkpoint %d\n", to.ID)
		}
		return nil
	}
	if files {
		done, err := store.Rewind(ctx, to, f.force)
		switch {
		case errors.Is(err, checkpoints.ErrRefused):
			return Failure(fmt.Errorf("rewind: %s", strings.Replace(err.Error(), "force overwrites", "--force overwrites", 1)))
		case errors.Is(err, checkpoints.ErrNotRecorded):
			fmt.Fprintf(env.Stderr, "warning: %v\n", err)
		case err != nil:
			return Failure(err)
		}
		fmt.Fprintf(env.Stdout, "restored %s to checkpoint %d: %d path(s) changed\n", store.Workspace(), to.ID, len(done))
	}
	if conv {
		svc := sessions.New(sessions.NewJSONL(sessions.JSONLDir(sessions.DefaultStateDir(env.LookupEnv))))
		if err := agent.RewindStored(ctx, svc, to.Meta.Session, to.Meta.Turn); err != nil {
			return Failure(fmt.Errorf("rewind: the conversation of session %s: %w", to.Meta.Session, err))
		}
		fmt.Fprintf(env.Stdout, "the conversation of session %s is back to before turn %d (%q); `harness run --session %s PROMPT` goes on from there\n",
			to.Meta.Session, to.Meta.Turn, excerpt(to.Meta.Prompt, 60), to.Meta.Session)
	}
	return nil
}
