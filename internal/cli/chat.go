package cli

import (
	"bufio"
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
	"github.com/dshgo/harness/services/tokenmeter"
)

func init() {
	Register(func(env *Env) *cobra.Command {
		var f agentFlags
		cmd := &cobra.Command{
			Use:   "chat [flags]",
			Short: "Talk to the agent interactively in one session",
			Long: "chat boots the configured harness and runs one session interactively: each line you type is a\n" +
				"turn (the answer streams to stdout, tool calls and results to stderr). Commands: /context shows the\n" +
				"token meter's figures for the session, /tools lists the tools the model sees, /exit (or end of\n" +
				"input) leaves. Ctrl-C cancels the running turn (its tools are stopped); a second Ctrl-C exits\n" +
				"with status 130, and so does SIGTERM (after cancelling the running turn). --continue and\n" +
				"--session ID resume a stored session. A change to harness.yml (or a --patch file) is applied\n" +
				"before the next turn; a broken one is reported and the running configuration stays.",
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				f.maxStepsSet = cmd.Flags().Changed("max-steps")
				opts, err := f.options()
				if err != nil {
					return UsageError(err)
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
		return cmd
	})
}

// chat runs the interactive loop. Signals: the first SIGINT cancels the
// running turn; a second one (or one while idle) exits with 130. SIGTERM
// cancels the running turn, if any, and exits with 130.
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
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)

	// One line is read per prompt, never during a turn: the approval
	// prompt reads the same terminal then, and must get what is typed.
	next := make(chan struct{}, 1)
	lines := make(chan string)
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
	reload := func() error {
		if w == nil {
			return nil
		}
		changed, err := w.Poll(context.Background())
		switch {
		case !changed:
			return nil
		case err != nil:
			fmt.Fprintf(env.Stderr, "harness: the changed configuration was not applied (the running one stays): %v\n", err)
			return nil
		}
		svc, ok := core.Lookup(host.h.Root.Context(), agent.Key)
		if !ok {
			return UsageError(errors.New("the reloaded configuration has no active agent plugin; leaving"))
		}
		if svc != host.agent {
			// The agent plugin was reloaded (its config or a service it
			// uses changed): continue the same session on the new one,
			// which resumes it from its journal.
			id := ss.ID()
			_ = ss.Close(context.Background())
			host.agent = svc
			reopen := opts
			reopen.ID = id
			if reopen.Cwd, err = os.Getwd(); err != nil {
				return Failure(err)
			}
			if ss, err = host.agent.Open(context.Background(), reopen); err != nil {
				return classify(fmt.Errorf("reopening session %s after the reload: %w", id, err))
			}
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
			line = strings.TrimSpace(l)
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
		case strings.HasPrefix(line, "/") && !strings.Contains(line, " "):
			fmt.Fprintf(env.Stderr, "unknown command %s (known: /context, /tools, /exit)\n", line)
			continue
		}
		if interrupted := runTurn(env.Stderr, ss, line, sig); interrupted {
			return &ExitError{Code: ExitInterrupted, Err: errors.New("interrupted")}
		}
	}
}

// runTurn runs one turn, cancelling it on the first SIGINT or on SIGTERM;
// it reports whether chat should exit (SIGTERM, or a second SIGINT).
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
			exit = exit || cancelled || s == syscall.SIGTERM
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

// readLines sends one line of r to out for each request on next, and
// reads nothing between requests; it closes out at the end of r (or on a
// read error) and returns when done is closed.
func readLines(r io.Reader, next <-chan struct{}, out chan<- string, done <-chan struct{}) {
	defer close(out)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for {
		select {
		case <-next:
		case <-done:
			return
		}
		if !sc.Scan() {
			return
		}
		select {
		case out <- sc.Text():
		case <-done:
			return
		}
	}
}

// printContext prints the token meter's figures for the session, or the
// provider-reported totals when no meter is mounted.
func printContext(w io.Writer, host *agentHost, ss *agent.Session) {
	u := ss.Usage()
	m := ss.Model()
	if meter, ok := core.Lookup(host.h.Root.Context(), tokenmeter.Key); ok {
		st := meter.Session(ss.ID()).Stats()
		fmt.Fprintf(w, "requests: %d (%d estimated)\n", st.Requests, st.EstimatedRequests)
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

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
