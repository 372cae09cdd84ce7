package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dshgo/harness/services/checkpoints"
	"github.com/dshgo/harness/services/commands"
)

// /rewind lists the session's prompt checkpoints, previews one (the paths
// it would restore, with a diff of each text file from now back to then)
// and restores one: the terminal UI's and chat's way to `harness rewind`.
//
//	/rewind                      the list, newest first
//	/rewind N                    what restoring checkpoint N would do, with diffs
//	/rewind N code [force]       restore the files (refused paths stay; force overwrites)
//	/rewind N conversation       take the conversation back to before N's prompt
//	/rewind N both [force]       the files, then the conversation

const (
	maxListed      = 20 // checkpoints /rewind lists
	maxDiffFiles   = 8  // files a preview shows a diff of
	maxDiffLines   = 60 // lines of one file's diff
	rewindArgsHelp = "/rewind, /rewind N, /rewind N code|conversation|both [force]"
)

// rewind is the /rewind command.
func (t *Taker) rewind(ctx context.Context, inv commands.Invocation) (commands.Reply, error) {
	if inv.Session == nil {
		return commands.Reply{Text: "no session: nothing to rewind"}, nil
	}
	args := strings.Fields(inv.Args)
	var n int
	if len(args) > 0 {
		v, err := strconv.Atoi(args[0])
		if err != nil || v <= 0 || len(args) > 3 || (len(args) >= 2 && args[1] != "code" && args[1] != "conversation" && args[1] != "both") ||
			(len(args) == 3 && (args[2] != "force" || args[1] == "conversation")) {
			return commands.Reply{}, fmt.Errorf("/rewind %s: want %s", inv.Args, rewindArgsHelp)
		}
		n = v
	}
	ws := t.workspaceOf(inv.Session)
	if ws == "" {
		return commands.Reply{Text: "no checkpoint of this session yet: nothing to rewind"}, nil
	}
	s, err := t.store(ws)
	if err != nil {
		return commands.Reply{}, err
	}
	list, err := s.List()
	if err != nil {
		return commands.Reply{}, err
	}
	id := inv.Session.ID()
	if n == 0 {
		return commands.Reply{Text: listText(list, id)}, nil
	}
	var to *checkpoints.Checkpoint
	for _, c := range list {
		if c.ID == n && c.Meta.Session == id {
			to = c
		}
	}
	if to == nil {
		return commands.Reply{}, fmt.Errorf("/rewind %d: no checkpoint %d of this session (/rewind lists them)", n, n)
	}
	if len(args) == 1 {
		text, err := t.preview(ctx, s, to, checkpoints.Latest(list, id, ""))
		return commands.Reply{Text: text}, err
	}
	what, force := args[1], len(args) == 3
	var conv conversationRewinder
	if what != "code" {
		var ok bool
		if conv, ok = inv.Session.(conversationRewinder); !ok {
			return commands.Reply{}, fmt.Errorf("/rewind %d %s: this front end's session cannot rewind its conversation; /rewind %d code restores the files", n, what, n)
		}
		if to.Meta.Turn <= 0 {
			return commands.Reply{}, fmt.Errorf("/rewind %d %s: checkpoint %d does not say which turn it came before (an older harness took it); /rewind %d code restores the files", n, what, n, n)
		}
	}
	var text []string
	if what != "conversation" {
		done, err := s.Rewind(ctx, to, force)
		var refused *checkpoints.RefusedError
		switch {
		case errors.As(err, &refused):
			return commands.Reply{Text: fmt.Sprintf("**Nothing was restored**: %d path(s) changed since the agent's last checkpoint, by someone else: `%s`. `/rewind %d %s force` overwrites them.",
				len(refused.Paths), strings.Join(refused.Paths, "`, `"), n, what)}, nil
		case err != nil && !errors.Is(err, checkpoints.ErrNotRecorded):
			return commands.Reply{}, err
		case len(done) == 0:
			text = append(text, fmt.Sprintf("the files already match checkpoint %d", n))
		default:
			text = append(text, fmt.Sprintf("restored %d path(s) to checkpoint %d (before the prompt %q): `%s`.",
				len(done), n, excerpt(to.Meta.Prompt, 60), strings.Join(done, "`, `")))
		}
	}
	if what == "code" {
		return commands.Reply{Text: strings.Join(append(text, "The conversation is unchanged."), " ")}, nil
	}
	if err := conv.RewindConversation(ctx, to.Meta.Turn); err != nil {
		return commands.Reply{Text: strings.Join(text, " ")}, fmt.Errorf("/rewind %d %s: the conversation: %w", n, what, err)
	}
	text = append(text, fmt.Sprintf("The conversation is back to before the prompt %q (turn %d); the prompt is in the editor.", excerpt(to.Meta.Prompt, 60), to.Meta.Turn))
	if what == "conversation" {
		text = append(text, "The files are unchanged.")
	}
	return commands.Reply{Text: strings.Join(text, " "), Rewound: true, Draft: to.Meta.Prompt}, nil
}

// conversationRewinder is a session that can take its conversation back
// (an *agent.Session).
type conversationRewinder interface {
	RewindConversation(ctx context.Context, turn int) error
}

// workspaceOf is the directory the session's checkpoints are of: the one
// this process checkpointed for it, else the session's working directory
// (a resumed session).
func (t *Taker) workspaceOf(ss commands.Session) string {
	t.mu.Lock()
	ws := t.cwds[ss.ID()]
	t.mu.Unlock()
	if ws == "" {
		if c, ok := ss.(interface{ Cwd() string }); ok {
			ws = c.Cwd()
		}
	}
	return ws
}

// listText is the session's prompt checkpoints, newest first, with how
// many paths restoring each would change (from the session's latest
// checkpoint: what the agent left).
func listText(list []*checkpoints.Checkpoint, session string) string {
	latest := checkpoints.Latest(list, session, "")
	var b strings.Builder
	rows := 0
	for i := len(list) - 1; i >= 0 && rows < maxListed; i-- {
		c := list[i]
		if c.Meta.Session != session || c.Meta.Reason != ReasonPrompt {
			continue
		}
		if rows == 0 {
			b.WriteString("| N | time | before the prompt | paths to restore |\n|---|---|---|---|\n")
		}
		rows++
		fmt.Fprintf(&b, "| %d | %s | %s | %d |\n", c.ID, c.Time.Local().Format("15:04:05"),
			strings.ReplaceAll(excerpt(c.Meta.Prompt, 60), "|", "/"), len(checkpoints.Differing(c, latest)))
	}
	if rows == 0 {
		return "no checkpoint of this session yet: nothing to rewind"
	}
	b.WriteString("\n`/rewind N` shows what restoring N would do; `/rewind N code` restores the files, `/rewind N conversation` takes the conversation back to before that prompt, `/rewind N both` does both.")
	return b.String()
}

// preview is what restoring to would do: each path's action, and a diff
// from the file as it is now back to the checkpoint's.
func (t *Taker) preview(ctx context.Context, s *checkpoints.Store, to, since *checkpoints.Checkpoint) (string, error) {
	plan, err := s.Plan(ctx, to, since)
	if err != nil {
		return "", err
	}
	if len(plan.Changes) == 0 {
		return fmt.Sprintf("nothing to restore: the files match checkpoint %d", to.ID), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Restoring checkpoint %d (before the prompt %q) would change %d path(s):\n\n", to.ID, excerpt(to.Meta.Prompt, 60), len(plan.Changes))
	diffs := 0
	for _, c := range plan.Changes {
		what := "restore"
		if c.Action == checkpoints.ActionDelete {
			what = "delete (new since)"
		}
		if c.Refused {
			what += ", **refused**: changed by someone else since the agent's last checkpoint (`force` overwrites)"
		}
		fmt.Fprintf(&b, "- `%s`: %s\n", c.Path, what)
		if diffs < maxDiffFiles {
			if d := t.diffOf(s, to, c); d != "" {
				diffs++
				fmt.Fprintf(&b, "\n```diff\n%s```\n\n", d)
			}
		}
	}
	fmt.Fprintf(&b, "\n`/rewind %d code` restores them; `/rewind %d both` also takes the conversation back to before that prompt.", to.ID, to.ID)
	return b.String(), nil
}

// diffOf is the unified diff of one change of text files, from now to the
// checkpoint, cut to maxDiffLines; "" when either side is not small text.
func (t *Taker) diffOf(s *checkpoints.Store, to *checkpoints.Checkpoint, c checkpoints.Change) string {
	then, now, ok := s.Sides(to, c.Path)
	if !ok {
		return ""
	}
	return checkpoints.UnifiedDiff("now/"+c.Path, "then/"+c.Path, now, then, maxDiffLines)
}

// excerpt is the first line of s, cut to n runes.
func excerpt(s string, n int) string {
	s, _, cut := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	} else if cut {
		return s + "…"
	}
	return s
}
