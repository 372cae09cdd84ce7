package subprocess_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/dshgo/harness/services/subprocess"
)

var errToolTimeout = errors.New("bash: timed out")

// The bash tool's path: a command with a timeout, both streams collected
// with a bounded tail and a spill file, and the truncation facts read back.
func Example() {
	rt, err := subprocess.New(subprocess.Options{}, nil)
	if err != nil {
		panic(err)
	}
	defer rt.Close(context.Background())

	ctx, cancel := context.WithTimeoutCause(context.Background(), 2*time.Second, errToolTimeout)
	defer cancel()
	res, err := rt.Run(subprocess.Spec{
		Context: ctx, // its deadline terminates the whole process tree
		Argv:    []string{"bash", "-c", "seq 1 100000; echo done >&2; exit 3"},
		Dir:     os.TempDir(),
		Env:     map[string]string{"NO_COLOR": "1", "PAGER": "cat"},
		Stdin:   subprocess.IgnoreStdin(),
		Stdout:  subprocess.CollectSpill(64, 64<<20),
		Stderr:  subprocess.CollectSpill(64, 64<<20),
		Grace:   3 * time.Second,
	})
	if err != nil {
		panic(err) // spawn failure: bad spec, missing program or directory
	}
	timedOut := errors.Is(context.Cause(ctx), errToolTimeout)
	out := res.Stdout.ReadFrom(0)
	fmt.Println(res.Outcome, "timedOut:", timedOut)
	fmt.Printf("tail %q lossy=%v of %d bytes; spill file: %v\n", out.Text[len(out.Text)-13:], out.Lossy, res.Stdout.Total(), out.SpillPath != "")
	fmt.Printf("stderr %q truncated=%v\n", res.Stderr.Text(), res.Stderr.Truncated())
	os.Remove(out.SpillPath)
	// Output:
	// exit 3 timedOut: false
	// tail "99999\n100000\n" lossy=true of 588895 bytes; spill file: true
	// stderr "done\n" truncated=false
}
