package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/loader"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/commands"
	"github.com/dshgo/harness/services/tokenmeter"
)

// chatCommand builds `harness chat`.
func chatCommand(env *Env) *cobra.Command {
	var f agentFlags
	var plain bool
	var worktree string
	cmd := &cobra.Command{
		Use:   "chat [flags]",
		Short: "Talk to the agent interactively in one session",
		Long: "On a terminal, chat (and `harness` alone) opens the terminal UI (docs/cli.md: keys and commands);\n" +
			"--plain, or a pipe, keeps the line mode described here.\n" +
			"chat boots the configured harness and runs one session interactively: each line you type is a\n" +
			"turn (the answer streams to stdout, tool calls and results to stderr). Commands: /context shows the\n" +
			"token meter's figures for the session, /compact [instructions] summarizes the older history, /tools lists the tools the model sees, the commands plugins\n" +
			"register (/todos the model's todo list, /tasks the background shells) print their reply, /exit (or end of\n" +
			"input) leaves. Ctrl-C cancels the running turn (its tools are stopped); a second Ctrl-C exits\n" +
			"with status 130, and so does SIGTERM or SIGHUP (after cancelling the running turn). --continue and\n" +
			"--session ID resume a stored session. A change to harness.yml (or a --patch file) is applied\n" +
			"before the next turn; a broken one is reported and the running configuration stays.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.maxStepsSet = cmd.Flags().Changed("max-steps")
			opts, err := f.options()
			if err != nil {
				return UsageError(err)
			}
			if cmd.Flags().Changed("worktree") {
				wt, err := startWorktree(env, &f, worktree)
				if err != nil {
					return err
				}
				defer wt.finish(env.Ctx, env.Stderr)
			}
			if startsTUI(env, plain) {
				return runTUI(env, &f, opts)
			}
			f.p = newPrinter(OutputText, env.Stdout, env.Stderr)
			defer f.p.close()
			host, err := bootAgent(env, &f)
			if err != nil {
				return err
			}
			err = chat(env, host, &f, opts)
			if serr := host.stop(); serr != nil && err == nil {
				err = Failure(fmt.Errorf("stopping: %w", serr))
			}
			return err
		},
	}
	fl := cmd.Flags()
	f.register(fl, "maximum model calls per turn (default: agent maxSteps, 50)")
	fl.StringVar(&worktree, "worktree", "", "chat in a new git worktree `NAME` (branch harness/NAME; auto: a generated name), confined to it; summarized on exit and removed when clean")
	fl.BoolVar(&plain, "plain", false, "line mode even on a terminal (no full-screen UI)")
	registerCompletions(env, cmd)
	return signalStops(cmd)
}

// chat runs the interactive loop. Signals: the first SIGINT cancels the
// running turn; a second one (or one while idle) exits with 130. SIGTERM
// and SIGHUP (the terminal went away) cancel the running turn, if any, so
// its tools are stopped, and exit with 130.
func chat(env *Env, host *agentHost, f *agentFlags, opts agent.Options) error {
	p := f.p
	if p == nil {
		p = newPrinter(OutputText, env.Stdout, env.Stderr)
		defer p.close()
	}
	opts.Observer = p.observe
	c := &chatSession{env: env, host: host, opts: opts}
	if err := c.open(f); err != nil {
		return err
	}
	defer c.close()
	for {
		if err := c.step(); err != nil {
			if errors.Is(err, errLeave) {
				return nil
			}
			return err
		}
	}
}

// errLeave ends a chat with exit status 0 (/exit, end of input).
var errLeave = errors.New("leave")

// chatSession is one `harness chat`: the session, its input and signals,
// and the manifest watcher. open sets it up, step handles one line, close
// undoes open.
type chatSession struct {
	env       *Env
	host      *agentHost
	opts      agent.Options
	ss        *agent.Session
	sessionID string
	sig       chan os.Signal
	next      chan struct{} // asks readLines for one line
	lines     chan inputLine
	done      chan struct{} // closed by close: readLines returns
	w         *loader.Watcher
	// applied holds each watched file's content as of the configuration
	// last applied (nil: the file is missing), so that a reload names
	// only the files that changed.
	applied map[string][]byte
}

// open opens the session, starts reading input and watching the manifest
// files. On error nothing is left to close.
func (c *chatSession) open(f *agentFlags) error {
	ss, err := c.host.open(context.Background(), f, c.opts)
	if err != nil {
		return err
	}
	c.ss, c.sessionID = ss, ss.ID()
	fmt.Fprintf(c.env.Stderr, "session %s · %s · /exit to leave\n", ss.ID(), ss.Model().Route())
	c.sig = make(chan os.Signal, 2)
	signal.Notify(c.sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	// One line is read per prompt, never during a turn: the approval
	// prompt reads the same terminal then, and must get what is typed.
	c.next, c.lines, c.done = make(chan struct{}, 1), make(chan inputLine), make(chan struct{})
	go readLines(c.env.Stdin, c.next, c.lines, c.done)
	// The manifest files are checked before each line is handled, never
	// during a turn: a change applies from the next turn on.
	if files := c.env.ManifestFiles(); len(files) > 0 {
		c.w = c.host.h.Loader.Watcher(loader.WatchOptions{Paths: files,
			Load: func() (*manifest.Manifest, error) { return c.env.ReloadManifest(c.host.boot...) }})
		c.applied = readAll(files)
	}
	return nil
}

// close stops reading input and signals and closes the session.
func (c *chatSession) close() {
	close(c.done)
	signal.Stop(c.sig)
	_ = c.ss.Close(context.Background())
}

// step reads one line at the prompt, applies a changed manifest, then runs
// the line as a command or a turn. errLeave ends the chat normally.
func (c *chatSession) step() error {
	line, ok, err := c.read()
	if err != nil || !ok {
		return err
	}
	if err := c.reload(); err != nil {
		return err
	}
	handled, prompt, err := c.command(line)
	if err != nil || (handled && prompt == "") {
		return err
	}
	if handled {
		line = prompt // a command file's or a skill's expanded prompt
	}
	if interrupted := runTurn(c.env.Stderr, c.ss, line, c.sig); interrupted {
		return &ExitError{Code: ExitInterrupted, Err: errors.New("interrupted")}
	}
	return nil
}

// read prompts and waits for a line (trimmed; ok is false for a line too
// long, which is skipped), a signal (exit 130) or the end of input
// (errLeave).
func (c *chatSession) read() (line string, ok bool, err error) {
	fmt.Fprint(c.env.Stderr, "> ")
	c.next <- struct{}{}
	select {
	case <-c.sig:
		fmt.Fprintln(c.env.Stderr)
		return "", false, &ExitError{Code: ExitInterrupted, Err: errors.New("interrupted")}
	case l, open := <-c.lines:
		if !open {
			fmt.Fprintln(c.env.Stderr)
			return "", false, errLeave
		}
		if l.tooLong {
			fmt.Fprintf(c.env.Stderr, "harness: input line longer than %d MiB skipped\n", maxInputLine>>20)
			return "", false, nil
		}
		return strings.TrimSpace(l.text), true, nil
	}
}

// command runs line when it is empty or a slash command; handled is false
// for a prompt. A registered command that expands to a prompt (a command
// file, a skill) returns it, for step to send. /exit and /quit return
// errLeave.
func (c *chatSession) command(line string) (handled bool, prompt string, err error) {
	env, ss := c.env, c.ss
	switch {
	case line == "":
	case line == "/exit" || line == "/quit":
		return true, "", errLeave
	case line == "/tools":
		for _, t := range c.host.agent.Tools().Tools(ss.Scope()) {
			fmt.Fprintf(env.Stdout, "%s\t%s\n", t.Name(), firstLine(t.Description()))
		}
	case line == "/context":
		printContext(env.Stdout, c.host, ss)
	case line == "/compact" || strings.HasPrefix(line, "/compact "):
		if info, err := ss.Compact(context.Background(), strings.TrimSpace(strings.TrimPrefix(line, "/compact"))); err != nil {
			fmt.Fprintf(env.Stderr, "harness: compaction: %v\n", err)
		} else {
			fmt.Fprintf(env.Stdout, "compacted: %d messages summarized, %d kept; context %d → %d tokens\n", info.Summarized, info.Kept, info.TokensBefore, info.TokensAfter)
		}
	case strings.HasPrefix(line, "/"):
		if ok, prompt := c.registered(line); ok {
			return true, prompt, nil
		}
		if strings.Contains(line, " ") {
			return false, "", nil // a prompt that starts with a path
		}
		fmt.Fprintf(env.Stderr, "unknown command %s (known: /compact, /context, /tools, /exit%s)\n", line, c.registeredNames())
	default:
		return false, "", nil
	}
	return true, "", nil
}

// reload applies a changed manifest (see docs/cli.md, Reload): a change
// the session cannot run on is rolled back.
func (c *chatSession) reload() error {
	if c.w == nil {
		return nil
	}
	env, h := c.env, c.host.h
	prev := h.Loader.Current()
	changed, err := c.w.Poll(context.Background())
	switch {
	case !changed:
		return nil
	case err != nil:
		fmt.Fprintf(env.Stderr, "harness: the changed configuration was not applied (the running one stays): %v\n", err)
		return nil
	}
	if err := c.reopen(); err != nil {
		// The new tree started but the session cannot go on with it:
		// put the previous tree back and continue there.
		if rerr := h.Loader.Reconcile(context.Background(), prev); rerr != nil {
			return Failure(fmt.Errorf("the changed configuration cannot run this session (%v), and restoring the previous one failed: %w", err, rerr))
		}
		if rerr := c.reopen(); rerr != nil {
			return classify(fmt.Errorf("the changed configuration cannot run this session (%v), and the session did not reopen on the previous one: %w", err, rerr))
		}
		fmt.Fprintf(env.Stderr, "harness: the changed configuration was not applied (the previous one runs again): %v\n", err)
		return nil
	}
	now := readAll(c.w.Paths())
	var files []string
	for _, p := range c.w.Paths() {
		if !bytes.Equal(now[p], c.applied[p]) || (now[p] == nil) != (c.applied[p] == nil) {
			files = append(files, p)
		}
	}
	c.applied = now
	from := "configuration reloaded from " + strings.Join(files, ", ")
	if len(files) == 0 {
		from = "configuration reloaded (no file's content changed)"
	}
	fmt.Fprintf(env.Stderr, "%s: %s\n", from, rowChanges(prev, h.Loader.Current()))
	return nil
}

// readAll reads each file (nil when it cannot be read).
func readAll(paths []string) map[string][]byte {
	out := make(map[string][]byte, len(paths))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			out[p] = b
		}
	}
	return out
}

// rowChanges summarizes what a reload changed row by row (rows compared
// by id): "config changed: a, b; added: c; removed: d; disabled: e;
// enabled: f; plugin changed: g", or "no row changed".
func rowChanges(prev, cur *manifest.Manifest) string {
	var old, now []manifest.Entry
	if prev != nil {
		old = prev.Flatten()
	}
	if cur != nil {
		now = cur.Flatten()
	}
	byID := make(map[string]manifest.Entry, len(old))
	for _, e := range old {
		byID[e.ID] = e
	}
	kinds := []string{"config changed", "added", "removed", "disabled", "enabled", "plugin changed"}
	ids := make(map[string][]string, len(kinds))
	seen := make(map[string]bool, len(now))
	for _, e := range now {
		seen[e.ID] = true
		o, ok := byID[e.ID]
		switch {
		case !ok:
			ids["added"] = append(ids["added"], e.ID)
		case o.Disabled != e.Disabled && e.Disabled:
			ids["disabled"] = append(ids["disabled"], e.ID)
		case o.Disabled != e.Disabled:
			ids["enabled"] = append(ids["enabled"], e.ID)
		case o.Name != e.Name:
			ids["plugin changed"] = append(ids["plugin changed"], e.ID)
		case !sameNode(o.Config, e.Config):
			ids["config changed"] = append(ids["config changed"], e.ID)
		}
	}
	for _, e := range old {
		if !seen[e.ID] {
			ids["removed"] = append(ids["removed"], e.ID)
		}
	}
	var parts []string
	for _, k := range kinds {
		if len(ids[k]) > 0 {
			parts = append(parts, k+": "+strings.Join(ids[k], ", "))
		}
	}
	if len(parts) == 0 {
		return "no row changed"
	}
	return strings.Join(parts, "; ")
}

// sameNode reports whether two config nodes hold the same YAML (kinds,
// tags and values), whatever their positions, comments and styles.
func sameNode(a, b *yaml.Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind || a.Tag != b.Tag || a.Value != b.Value || len(a.Content) != len(b.Content) {
		return false
	}
	for i := range a.Content {
		if !sameNode(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

// reopen continues the session on the agent service now active, when a
// reload restarted it (its config or a service it uses changed).
func (c *chatSession) reopen() error {
	svc, ok := core.Lookup(c.host.h.Root.Context(), agent.Key)
	if !ok {
		return errors.New("it has no active agent plugin")
	}
	if svc == c.host.agent {
		return nil
	}
	_ = c.ss.Close(context.Background())
	c.host.agent = svc
	o := c.opts
	o.ID = c.sessionID
	o.Cwd = c.host.cwd
	var err error
	if c.ss, err = c.host.agent.Open(context.Background(), o); err != nil {
		return fmt.Errorf("reopening session %s: %w", c.sessionID, err)
	}
	return nil
}

func runTurn(errw io.Writer, ss *agent.Session, line string, sig <-chan os.Signal) (exit bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type out struct {
		res *agent.Result
		err error
	}
	ch := make(chan out, 1)
	go func() {
		res, err := ss.Run(ctx, line)
		ch <- out{res, err}
	}()
	cancelled := false
	for {
		select {
		case s := <-sig:
			exit = exit || cancelled || s != os.Interrupt // SIGTERM, SIGHUP
			cancelled = true
			cancel()
		case o := <-ch:
			if o.err != nil {
				if errors.Is(o.err, context.Canceled) {
					fmt.Fprintln(errw, "(turn cancelled)")
				} else {
					fmt.Fprintf(errw, "harness: %v\n", classify(o.err))
				}
			}
			return exit
		}
	}
}

// maxInputLine bounds one chat input line (bytes); a longer line is
// skipped whole, with a note, rather than ending the session.
const maxInputLine = 4 << 20

// inputLine is one line read for chat: its text (without the line end), or
// tooLong when it exceeded maxInputLine and was skipped.
type inputLine struct {
	text    string
	tooLong bool
}

// readLines sends one line of r to out for each request on next, and
// reads nothing between requests; it closes out at the end of r (or on a
// read error) and returns when done is closed.
func readLines(r io.Reader, next <-chan struct{}, out chan<- inputLine, done <-chan struct{}) {
	defer close(out)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		select {
		case <-next:
		case <-done:
			return
		}
		l, ok := readLine(br)
		if !ok {
			return
		}
		select {
		case out <- l:
		case <-done:
			return
		}
	}
}

// readLine reads one line of br; ok is false at the end of input (or on a
// read error) when no text is left. A final line without a newline counts.
func readLine(br *bufio.Reader) (l inputLine, ok bool) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if !l.tooLong {
			if len(buf)+len(chunk) > maxInputLine+2 { // + "\r\n"
				l.tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && len(buf) == 0 && !l.tooLong {
			return l, false
		}
		buf = bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r"))
		if len(buf) > maxInputLine {
			l.tooLong, buf = true, nil
		}
		l.text = string(buf)
		return l, true
	}
}

// printContext prints the token meter's figures for the session, or the
// provider-reported totals when no meter is mounted.
func printContext(w io.Writer, host *agentHost, ss *agent.Session) {
	u := ss.Usage()
	m := ss.Model()
	if use, err := ss.ContextInUse(context.Background()); err == nil {
		fmt.Fprintf(w, "context in use: %d tokens", use.Tokens)
		if use.Window > 0 {
			fmt.Fprintf(w, " of %d (%.1f%%)", use.Window, 100*float64(use.Tokens)/float64(use.Window))
		}
		fmt.Fprintf(w, " [%s]\n", use.Source)
	}
	if meter, ok := core.Lookup(host.h.Root.Context(), tokenmeter.Key); ok {
		st := meter.Session(ss.ID()).Stats()
		fmt.Fprintf(w, "cumulative since this process opened the session — requests: %d (%d estimated)\n", st.Requests, st.EstimatedRequests)
		fmt.Fprintf(w, "prompt tokens: %d  completion: %d  cache hits: %d  misses: %d\n", st.Totals.PromptTokens, st.Totals.CompletionTokens, st.Totals.CacheHitTokens, st.Totals.CacheMissTokens)
		if st.Last != nil {
			fmt.Fprintf(w, "context used by the last request: %d tokens", st.Last.PromptTokens)
			if m.ContextWindow > 0 {
				fmt.Fprintf(w, " of %d (%.1f%%)", m.ContextWindow, 100*float64(st.Last.PromptTokens)/float64(m.ContextWindow))
			}
			fmt.Fprintln(w)
		}
		return
	}
	fmt.Fprintf(w, "prompt tokens: %d  completion: %d  cache hits: %d  misses: %d  (no token meter mounted)\n", u.PromptTokens, u.CompletionTokens, u.CacheHitTokens, u.CacheMissTokens)
}

// registered runs line when it names a command that a plugin registered
// with the commands registry (/todos from tool-todo, /tasks from
// tool-terminal, command files and skills from skills), printing its
// reply's text on stderr; ok is false when none has that name. prompt is
// the reply's prompt, which the caller sends as the turn.
func (c *chatSession) registered(line string) (ok bool, prompt string) {
	name, args, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	reg, found := core.Lookup(c.host.h.Root.Context(), commands.Key)
	if !found || reg == nil {
		return false, ""
	}
	cmd, found := reg.Lookup(name)
	if !found || cmd.Run == nil {
		return false, ""
	}
	rep, err := cmd.Run(context.Background(), commands.Invocation{Args: strings.TrimSpace(args), Session: c.ss})
	switch {
	case err != nil:
		fmt.Fprintf(c.env.Stderr, "harness: /%s: %v\n", name, err)
		return true, ""
	case rep.Text != "" && rep.Prompt != "":
		fmt.Fprintln(c.env.Stderr, strings.TrimRight(rep.Text, "\n"))
	case rep.Text != "":
		fmt.Fprintln(c.env.Stdout, strings.TrimRight(rep.Text, "\n"))
	}
	return true, rep.Prompt
}

// registeredNames lists the runnable registered commands (", /todos, /tasks").
func (c *chatSession) registeredNames() string {
	reg, ok := core.Lookup(c.host.h.Root.Context(), commands.Key)
	if !ok || reg == nil {
		return ""
	}
	var b strings.Builder
	for _, cmd := range reg.List() {
		if cmd.Run != nil && cmd.Name != "help" {
			b.WriteString(", /" + cmd.Name)
		}
	}
	return b.String()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
