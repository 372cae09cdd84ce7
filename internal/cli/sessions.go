package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/tools"
)

// sessionsCommand builds `harness sessions`.
func sessionsCommand(env *Env) *cobra.Command {
	var (
		asJSON bool
		here   bool
		limit  int
	)
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List stored agent sessions, newest first; show, follow or remove one",
		Long: "sessions lists the sessions of the session store (the manifest's sessions-jsonl or\n" +
			"sessions-postgres row): id, last update, turns, working directory and the first prompt. Resume one\n" +
			"with `harness run --session ID` or `harness chat --session ID`, continue from a copy with --fork ID.\n" +
			"--here lists only sessions of the current directory; --limit N the N newest; --json prints an array of\n" +
			"{id, cwd, model, parent, origin, created, updated, turns, title, path, messages}. It starts only the\n" +
			"session store, not the harness.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withStore(env, func(ctx context.Context, store *sessions.Service) error {
				q := sessions.Query{Limit: limit}
				if here {
					wd, err := env.Getwd()
					if err != nil {
						return Failure(err)
					}
					q.Cwd = wd
				}
				page, err := store.List(ctx, q)
				if err != nil {
					return Failure(err)
				}
				list := page.Sessions
				if asJSON {
					if list == nil {
						list = []sessions.Info{}
					}
					return writeJSON(env.Stdout, list)
				}
				if len(list) == 0 {
					fmt.Fprintf(env.Stderr, "no sessions in %s\n", store.Location(""))
					return nil
				}
				tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tUPDATED\tTURNS\tCWD\tPROMPT")
				for _, row := range sessionTree(list) {
					s := row.info
					fmt.Fprintf(tw, "%s%s\t%s\t%d\t%s\t%s\n", row.prefix, s.ID, s.Updated.Local().Format(time.DateTime), s.Turns, s.Cwd, s.Title)
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&here, "here", false, "only sessions of the current directory")
	cmd.Flags().IntVar(&limit, "limit", 0, "list at most `N` sessions (0: all)")
	cmd.AddCommand(sessionsShow(env), sessionsRm(env), sessionsFollow(env))
	return cmd
}

func sessionsShow(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Print a session's conversation (every record, compacted history included)",
		Long: "show prints session ID as text: its header, then every user prompt, plugin-sourced context,\n" +
			"assistant message (reasoning, text, tool calls) and tool result in order; records of other kinds are\n" +
			"named with their fields. --json prints {\"session\": {...}, \"records\": [...]}: the summary and every\n" +
			"stored record as it is stored.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			return withStore(env, func(ctx context.Context, store *sessions.Service) error {
				stored, err := store.Read(ctx, id)
				if err != nil {
					return storeError(err)
				}
				if asJSON {
					return writeJSON(env.Stdout, showJSON(store, stored))
				}
				for _, r := range stored {
					if err := writeRecord(env.Stdout, r); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func sessionsRm(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "rm ID...",
		Short: "Delete stored sessions",
		Long:  "rm deletes each session ID from the store. A session open in a running harness is refused (exit 2).",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(env, func(ctx context.Context, store *sessions.Service) error {
				for _, id := range args {
					if err := store.Delete(ctx, id); err != nil {
						return storeError(err)
					}
					fmt.Fprintf(env.Stderr, "removed session %s\n", id)
				}
				return nil
			})
		},
	}
}

func sessionsFollow(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "follow ID",
		Short: "Print a session's records, then each new one as it is stored, until interrupted",
		Long: "follow prints session ID like show, then waits and prints every record appended to it (by any\n" +
			"process, on any machine sharing a sessions-postgres store) until Ctrl-C. --json prints one stored\n" +
			"record per line.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(env, func(ctx context.Context, store *sessions.Service) error {
				if _, err := store.Read(ctx, args[0]); err != nil {
					return storeError(err)
				}
				err := store.Follow(ctx, args[0], 0, func(r sessions.Record) error {
					if asJSON {
						_, err := fmt.Fprintf(env.Stdout, "%s\n", r.Data)
						return err
					}
					return writeRecord(env.Stdout, r)
				})
				if err != nil && ctx.Err() == nil {
					return storeError(err)
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print stored records as JSON lines")
	return signalStops(cmd)
}

// storeError maps store errors to exit codes: an unknown or busy session
// is a usage error.
func storeError(err error) error {
	if errors.Is(err, sessions.ErrNotFound) || errors.Is(err, sessions.ErrInUse) {
		return UsageError(err)
	}
	return Failure(err)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// showJSON is `sessions show --json`: the summary and the stored records.
func showJSON(store *sessions.Service, stored []sessions.Record) any {
	var info sessions.Info
	if h, err := sessions.ParseHeader(stored[0]); err == nil {
		info = sessions.Info{ID: h.ID, Cwd: h.Cwd, Model: h.Model, Parent: h.Parent, Origin: h.Origin, Created: h.Time, Updated: h.Time, Path: store.Location(h.ID)}
	}
	recs := make([]json.RawMessage, 0, len(stored))
	for _, r := range stored[1:] {
		info.Add(r)
	}
	for _, r := range stored {
		recs = append(recs, r.Data)
	}
	return struct {
		Session sessions.Info     `json:"session"`
		Records []json.RawMessage `json:"records"`
	}{info, recs}
}

// writeRecord prints one stored record as text.
func writeRecord(w io.Writer, s sessions.Record) error {
	if s.Type == sessions.TypeHeader {
		h, err := sessions.ParseHeader(s)
		if err != nil {
			return Failure(err)
		}
		fmt.Fprintf(w, "session %s\n  cwd:     %s\n  model:   %s\n  created: %s\n", h.ID, h.Cwd, h.Model, h.Time.Local().Format(time.DateTime))
		if h.Parent != "" {
			fmt.Fprintf(w, "  parent:  %s (%s)\n", h.Parent, h.Origin)
		}
		return nil
	}
	recs, err := agent.DecodeRecords([]sessions.Record{s})
	if err != nil {
		return Failure(err)
	}
	r := recs[0]
	switch {
	case r.Type == agent.RecordToolCall || r.Type == agent.RecordUsage:
		return nil // shown with the assistant message and in `harness tokens`
	case r.Type == agent.RecordPrefix:
		fmt.Fprintf(w, "\n── prefix (seq %d): system prompt %d bytes, %d tools ──\n", r.Seq, len(r.System), len(r.Tools))
	case r.Message != nil:
		writeMessage(w, r)
	default:
		fmt.Fprintf(w, "\n── %s (seq %d) ──\n%s\n", r.Type, r.Seq, s.Data)
	}
	return nil
}

func writeMessage(w io.Writer, r agent.Record) {
	m := r.Message
	switch {
	case r.Type == agent.RecordUser && r.Source != "":
		fmt.Fprintf(w, "\n── context from %s ──\n", r.Source)
	case r.Type == agent.RecordUser:
		fmt.Fprintf(w, "\n── user (turn %d) ──\n", r.Turn)
	case r.Type == agent.RecordAssistant:
		aborted := ""
		if r.Aborted {
			aborted = ", aborted"
		}
		fmt.Fprintf(w, "\n── assistant (turn %d, step %d%s) ──\n", r.Turn, r.Step, aborted)
	case r.Type == agent.RecordToolResult:
		status := ""
		switch p := r.Presentation; {
		case p != nil && p.Status == tools.StatusFailed:
			status = ", failed: " + p.Reason()
		case r.IsError:
			status = ", error"
		}
		fmt.Fprintf(w, "\n── tool result: %s (%s%s) ──\n", m.Name, m.ToolCallID, status)
	default:
		fmt.Fprintf(w, "\n── %s (seq %d) ──\n", r.Type, r.Seq)
	}
	if m.Reasoning != "" {
		fmt.Fprintf(w, "[thinking] %s\n", strings.TrimSpace(m.Reasoning))
	}
	if m.Content != "" {
		fmt.Fprintln(w, strings.TrimRight(m.Content, "\n"))
	}
	for _, tc := range m.ToolCalls {
		fmt.Fprintf(w, "→ %s %s (%s)\n", tc.Name, tc.Arguments, tc.ID)
	}
}

// withStore starts the manifest's session store alone (the enabled row
// whose plugin provides the sessions service), runs fn with it, and
// stops it.
func withStore(env *Env, fn func(context.Context, *sessions.Service) error) error {
	h, m, err := env.build(nil)
	if err != nil {
		return err
	}
	var (
		row    manifest.Entry
		plugin core.Plugin
	)
	var find func([]manifest.Entry)
	find = func(rows []manifest.Entry) {
		for _, e := range rows {
			if e.Disabled || plugin != nil {
				continue
			}
			if e.Group {
				find(e.Children)
			} else if p, ok := h.Catalog.Get(e.Name); ok && slices.Contains(p.Provides(), sessions.Key.Name()) {
				row, plugin = e, p
			}
		}
	}
	find(m.Plugins)
	if plugin == nil {
		return UsageError(errors.New("no session store: add a row `name: sessions-jsonl` (or sessions-postgres) to harness.yml"))
	}
	cfg, err := manifest.DecodeConfig(plugin, row, env.LookupEnv)
	if err != nil {
		return UsageError(err)
	}
	root := core.NewRoot(core.WithLogger(env.Logger()))
	ctx := env.Ctx
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = root.Dispose(dctx)
	}()
	f := root.Context().Plugin(plugin, cfg)
	if err := f.Await(ctx); err != nil {
		return UsageError(fmt.Errorf("session store (row %s): %w", row.ID, err))
	}
	store, ok := core.Lookup(root.Context(), sessions.Key)
	if !ok {
		return UsageError(fmt.Errorf("session store (row %s) did not start", row.ID))
	}
	return fn(ctx, store)
}
