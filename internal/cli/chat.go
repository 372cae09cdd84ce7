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

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/loader"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/plugins/agent"
	tooltodo "github.com/dshgo/harness/plugins/tool-todo"
	"github.com/dshgo/harness/services/tokenmeter"
)

func init() {
	Register(func(env *Env) *cobra.Command {
		var f agentFlags
		var plain bool
		cmd := &cobra.Command{
			Use:   "chat [flags]",
			Short: "Talk to the agent interactively in one session",
			Long: "On a terminal, chat (and `harness` alone) opens the terminal UI (docs/cli.md: keys and commands);\n" +
				"--plain, or a pipe, keeps the line mode described here.\n" +
				"chat boots the configured harness and runs one session interactively: each line you type is a\n" +
				"turn (the answer streams to stdout, tool calls and results to stderr). Commands: /context shows the\n" +
				"token meter's figures for the session, /todos the model's todo list, /compact [instructions] summarizes the older history, /tools lists the tools the model sees, /exit (or end of\n" +
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
				if startsTUI(env, plain) {
					return runTUI(env, &f, opts)
				}
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
		fl.BoolVar(&plain, "plain", false, "line mode even on a terminal (no full-screen UI)")
		return cmd
	})
}

// chat runs the interactive loop. Signals: the first SIGINT cancels the
// running turn; a second one (or one while idle) exits with 130. SIGTERM
// and SIGHUP (the terminal went away) cancel the running turn, if any, so
// its tools are stopped, and exit with 130.
func chat(env *Env, host *agentHost, f *agentFlags, opts agent.Options) error {
	p := newPrinter(OutputText, env.Stdout, env.Stderr)
	defer p.close()
	opts.Observer = p.observe
	ss, err := host.open(context.Background(), f, opts)
	if err != nil {
		return err
	}
	defer func() { _ = ss.Close(context.Background()) }()
	fmt.Fprintf(env.Stderr, "session %s · %s · /exit to leave\n", ss.ID(), ss.Model().Route())

	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sig)

	// One line is read per prompt, never during a turn: the approval
	// prompt reads the same terminal then, and must get what is typed.
	next := make(chan struct{}, 1)
	lines := make(chan inputLine)
	done := make(chan struct{})
	defer close(done)
	go readLines(env.Stdin, next, lines, done)

	// The manifest files are checked before each line is handled, never
	// during a turn: a change applies from the next turn on.
	var w *loader.Watcher
	if files := env.ManifestFiles(); len(files) > 0 {
		w = host.h.Loader.Watcher(loader.WatchOptions{Paths: files,
			Load: func() (*manifest.Manifest, error) { return env.ReloadManifest(host.boot...) }})
	}
	sessionID := ss.ID()
	// reopen continues the session on the agent service now active, when
	// a reload restarted it (its config or a service it uses changed).
	reopen := func() error {
		svc, ok := core.Lookup(host.h.Root.Context(), agent.Key)
		if !ok {
			return errors.New("it has no active agent plugin")
		}
		if svc == host.agent {
			return nil
		}
		id := sessionID
		_ = ss.Close(context.Background())
		host.agent = svc
		o := opts
		o.ID = id
		var err error
		if o.Cwd, err = os.Getwd(); err != nil {
			return err
		}
		if ss, err = host.agent.Open(context.Background(), o); err != nil {
			return fmt.Errorf("reopening session %s: %w", id, err)
		}
		return nil
	}
	reload := func() error {
		if w == nil {
			return nil
		}
		prev := host.h.Loader.Current()
		changed, err := w.Poll(context.Background())
		switch {
		case !changed:
			return nil
		case err != nil:
			fmt.Fprintf(env.Stderr, "harness: the changed configuration was not applied (the running one stays): %v\n", err)
			return nil
		}
		if err := reopen(); err != nil {
			// The new tree started but the session cannot go on with it:
			// put the previous tree back and continue there.
			if rerr := host.h.Loader.Reconcile(context.Background(), prev); rerr != nil {
				return Failure(fmt.Errorf("the changed configuration cannot run this session (%v), and restoring the previous one failed: %w", err, rerr))
			}
			if rerr := reopen(); rerr != nil {
				return classify(fmt.Errorf("the changed configuration cannot run this session (%v), and the session did not reopen on the previous one: %w", err, rerr))
			}
			fmt.Fprintf(env.Stderr, "harness: the changed configuration was not applied (the previous one runs again): %v\n", err)
			return nil
		}
		fmt.Fprintf(env.Stderr, "configuration reloaded from %s\n", strings.Join(w.Paths(), ", "))
		return nil
	}

	for {
		fmt.Fprint(env.Stderr, "> ")
		next <- struct{}{}
		var line string
		select {
		case <-sig:
			fmt.Fprintln(env.Stderr)
			return &ExitError{Code: ExitInterrupted, Err: errors.New("interrupted")}
		case l, ok := <-lines:
			if !ok {
				fmt.Fprintln(env.Stderr)
				return nil
			}
			if l.tooLong {
				fmt.Fprintf(env.Stderr, "harness: input line longer than %d MiB skipped\n", maxInputLine>>20)
				continue
			}
			line = strings.TrimSpace(l.text)
		}
		if err := reload(); err != nil {
			return err
		}
		switch {
		case line == "":
			continue
		case line == "/exit" || line == "/quit":
			return nil
		case line == "/tools":
			for _, t := range host.agent.Tools().Tools(ss.Scope()) {
				fmt.Fprintf(env.Stdout, "%s\t%s\n", t.Name(), firstLine(t.Description()))
			}
			continue
		case line == "/context":
			printContext(env.Stdout, host, ss)
			continue
		case line == "/compact" || strings.HasPrefix(line, "/compact "):
			if info, err := ss.Compact(context.Background(), strings.TrimSpace(strings.TrimPrefix(line, "/compact"))); err != nil {
				fmt.Fprintf(env.Stderr, "harness: compaction: %v\n", err)
			} else {
				fmt.Fprintf(env.Stdout, "compacted: %d messages summarized, %d kept; context %d → %d tokens\n", info.Summarized, info.Kept, info.TokensBefore, info.TokensAfter)
			}
			continue
		case line == "/todos":
			printTodos(env.Stdout, env.Stderr, ss)
			continue
		case strings.HasPrefix(line, "/") && !strings.Contains(line, " "):
			fmt.Fprintf(env.Stderr, "unknown command %s (known: /compact, /context, /todos, /tools, /exit)\n", line)
			continue
		}
		if interrupted := runTurn(env.Stderr, ss, line, sig); interrupted {
			return &ExitError{Code: ExitInterrupted, Err: errors.New("interrupted")}
		}
	}
}

// runTurn runs one turn, cancelling it on the first SIGINT or on SIGTERM
// or SIGHUP; it reports whether chat should exit (SIGTERM, SIGHUP, or a
// second SIGINT).
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
		fmt.Fprintf(w, "prompt tokens: %d  completion: %d  cache hits: %d\n", st.Totals.PromptTokens, st.Totals.CompletionTokens, st.Totals.CacheHitTokens)
		if st.Last != nil {
			fmt.Fprintf(w, "context used by the last request: %d tokens", st.Last.PromptTokens)
			if m.ContextWindow > 0 {
				fmt.Fprintf(w, " of %d (%.1f%%)", m.ContextWindow, 100*float64(st.Last.PromptTokens)/float64(m.ContextWindow))
			}
			fmt.Fprintln(w)
		}
		return
	}
	fmt.Fprintf(w, "prompt tokens: %d  completion: %d  cache hits: %d  (no token meter mounted)\n", u.PromptTokens, u.CompletionTokens, u.CacheHitTokens)
}

// printTodos prints the session's todo list (tool-todo's state).
func printTodos(w, errw io.Writer, ss *agent.Session) {
	items, err := tooltodo.Parse(ss.State(tooltodo.StateKey))
	if err != nil {
		fmt.Fprintf(errw, "harness: the stored todo list is unreadable: %v\n", err)
		return
	}
	_, _ = io.WriteString(w, tooltodo.Format(items))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
