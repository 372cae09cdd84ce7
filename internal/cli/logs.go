package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dshgo/harness/services/agent"
)

// followPoll is how often logs -f looks for new lines and newer files.
const followPoll = 200 * time.Millisecond

// logsCommand builds `harness logs`.
func logsCommand(env *Env) *cobra.Command {
	var list, follow bool
	cmd := &cobra.Command{
		Use:   "logs",
		Short: "Print the path of the terminal UI's newest log file (--list: all; -f: follow it)",
		Long: "The terminal UI writes its log lines (--log-level) to STATE/logs/tui-TIME-PID.log instead of the\n" +
			"screen (STATE: $XDG_STATE_HOME/harness, else ~/.local/state/harness). logs prints the newest file's\n" +
			"path; --list prints every log file, newest first; -f prints the newest file and then what is appended\n" +
			"to it, moving on to a newer file when one appears, until Ctrl-C. Exit 1 when there is no log file.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir := filepath.Join(agent.DefaultStateDir(env.LookupEnv), "logs")
			files, err := tuiLogs(dir)
			if err != nil {
				return Failure(err)
			}
			if len(files) == 0 && !follow {
				return Failure(fmt.Errorf("no log files in %s (the terminal UI writes one per run)", dir))
			}
			switch {
			case list:
				for _, f := range files {
					fmt.Fprintln(env.Stdout, f)
				}
				return nil
			case follow:
				return followLogs(env.Ctx, dir, env.Stdout, env.Stderr)
			}
			fmt.Fprintln(env.Stdout, files[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&list, "list", false, "print every log file, newest first")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "print the newest log file and follow it (Ctrl-C stops)")
	cmd.MarkFlagsMutuallyExclusive("list", "follow")
	return signalStops(cmd)
}

// tuiLogs lists dir's tui-*.log files, newest (modification time, then
// name) first. A missing dir has none.
func tuiLogs(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	type logFile struct {
		path string
		mod  time.Time
	}
	var files []logFile
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), "tui-") || !strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		files = append(files, logFile{filepath.Join(dir, e.Name()), info.ModTime()})
	}
	slices.SortFunc(files, func(a, b logFile) int {
		if c := b.mod.Compare(a.mod); c != 0 {
			return c
		}
		return strings.Compare(b.path, a.path)
	})
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.path
	}
	return out, nil
}

// followLogs copies the newest log file of dir to w, then what is appended
// to it; when a newer file appears it says so on errw and follows that
// one. It returns nil when ctx ends.
func followLogs(ctx context.Context, dir string, w, errw io.Writer) error {
	var cur string
	var f *os.File
	defer func() {
		if f != nil {
			_ = f.Close()
		}
	}()
	t := time.NewTicker(followPoll)
	defer t.Stop()
	for {
		if files, err := tuiLogs(dir); err == nil && len(files) > 0 && files[0] != cur {
			if f != nil {
				_, _ = io.Copy(w, f) // the rest of the old file first
				_ = f.Close()
				f = nil
			}
			nf, err := os.Open(files[0])
			if err == nil {
				fmt.Fprintf(errw, "==> %s <==\n", files[0])
				cur, f = files[0], nf
			}
		}
		if f != nil {
			if _, err := io.Copy(w, f); err != nil {
				return Failure(err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
