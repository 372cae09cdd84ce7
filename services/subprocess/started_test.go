//go:build unix

package subprocess

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRunStartedSeesOutputWhileTheChildRuns: Run hands the collected
// streams to Spec.Started before it waits; a watcher reading them sees the
// child's first line while the child still runs (the child waits for a
// file that only the watcher creates, after it saw the line).
func TestRunStartedSeesOutputWhileTheChildRuns(t *testing.T) {
	rt := newRuntime(t, Options{})
	dir := t.TempDir()
	flag := filepath.Join(dir, "go.flag")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var (
		wg   sync.WaitGroup
		seen string
	)
	stop := make(chan struct{})
	res, err := rt.Run(Spec{
		Context: ctx,
		Argv:    []string{"bash", "-c", `echo first-line; while [ ! -e go.flag ]; do sleep 0.02; done; echo second-line >&2`},
		Dir:     dir,
		Stdin:   IgnoreStdin(),
		Stdout:  Collect(1 << 10),
		Stderr:  Collect(1 << 10),
		Grace:   time.Second,
		Started: func(c Collected) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					if r := c.Stdout.ReadFrom(0); strings.Contains(r.Text, "first-line") {
						seen = r.Text
						_ = os.WriteFile(flag, nil, 0o600)
						return
					}
					select {
					case <-stop:
						return
					case <-time.After(10 * time.Millisecond):
					}
				}
			}()
		},
	})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if seen != "first-line\n" || res.Outcome.ExitCode == nil || *res.Outcome.ExitCode != 0 || res.Stderr.Text() != "second-line\n" {
		t.Fatalf("watched %q; outcome %+v, stderr %q (the child ends only after the watcher saw its first line)", seen, res.Outcome, res.Stderr.Text())
	}
}
