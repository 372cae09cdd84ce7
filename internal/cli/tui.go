package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dshgo/harness/internal/tui"
	"github.com/dshgo/harness/plugins/approval"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/sessions"
)

// startsTUI reports whether chat starts the terminal UI: stdin and stdout
// are terminals and --plain is not given.
func startsTUI(env *Env, plain bool) bool {
	if plain {
		return false
	}
	in, ok1 := env.Stdin.(*os.File)
	out, ok2 := env.Stdout.(*os.File)
	return ok1 && ok2 && approval.IsTerminal(in) && approval.IsTerminal(out)
}

// rootRunsChat makes `harness` run chat: the root takes chat's flags
// (`harness --permission-mode plan` is `harness chat --permission-mode
// plan`). Without arguments it starts the interactive agent on a terminal
// (the UI); without a terminal and without chat flags it prints the help,
// as before.
func rootRunsChat(env *Env, root *cobra.Command) {
	root.Args = cobra.NoArgs
	signalStops(root) // chat decides its own exit status on a signal
	chat, _, err := root.Find([]string{"chat"})
	if err != nil || chat == root || chat.RunE == nil {
		return
	}
	chatFlags := map[string]bool{}
	chat.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" || root.Flags().Lookup(f.Name) != nil || root.PersistentFlags().Lookup(f.Name) != nil {
			return
		}
		root.Flags().AddFlag(f) // the same flag: setting it on the root sets chat's
		chatFlags[f.Name] = true
	})
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		set := false
		cmd.Flags().Visit(func(f *pflag.Flag) { set = set || chatFlags[f.Name] })
		if !set && !startsTUI(env, false) {
			return cmd.Help()
		}
		return chat.RunE(chat, nil)
	}
}

// runTUI runs chat as the terminal UI. While it runs, slog writes to a
// private file under the state directory (StateDir/logs), whose path is
// printed when the UI exits.
func runTUI(env *Env, f *agentFlags, opts agent.Options) error {
	state := agent.DefaultStateDir(env.LookupEnv)
	logPath, logFile, err := openTUILog(state)
	if err != nil {
		return Failure(err)
	}
	stderr := env.Stderr
	env.Stderr = logFile
	defer func() {
		env.Stderr = stderr
		_ = logFile.Close()
		fmt.Fprintf(stderr, "harness: log of this run: %s\n", logPath)
	}()
	host, err := bootAgent(env, f)
	if err != nil {
		return err
	}
	wd := host.cwd
	opts.ID = f.session
	if f.cont {
		page, err := host.agent.Sessions().List(env.Ctx, sessions.Query{Cwd: wd, Limit: 1})
		if err != nil || len(page.Sessions) == 0 {
			_ = host.stop()
			return UsageError(fmt.Errorf("--continue: no session for %s", wd))
		}
		opts.ID = page.Sessions[0].ID
	}
	_, noColor := env.LookupEnv("NO_COLOR")
	err = tui.Run(env.Ctx, tui.Options{Agent: host.agent, Root: host.h.Root.Context(), Session: opts,
		Cwd: wd, StateDir: state, LogPath: logPath, NoColor: noColor})
	if serr := host.stop(); serr != nil && err == nil {
		err = Failure(fmt.Errorf("stopping: %w", serr))
	}
	return classify(err)
}

// openTUILog creates StateDir/logs/tui-TIME-PID.log (0600 in a 0700
// directory).
func openTUILog(state string) (string, *os.File, error) {
	dir := filepath.Join(state, "logs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, fmt.Errorf("log directory: %w", err)
	}
	path := filepath.Join(dir, fmt.Sprintf("tui-%s-%d.log", time.Now().Format("20060102T150405"), os.Getpid()))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", nil, fmt.Errorf("log file: %w", err)
	}
	return path, f, nil
}
