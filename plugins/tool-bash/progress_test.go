package toolbash

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dshgo/harness/services/tools"
)

// TestBashReportsTheOutputTailWhileItRuns: a command that waits for the
// test between its lines (the test releases it when a report showed the
// line before) is seen line by line through the progress sink: stdout,
// then stderr when that grew last.
func TestBashReportsTheOutputTailWhileItRuns(t *testing.T) {
	var cfg Config
	cfg.SetDefaults()
	cfg.Cwd = t.TempDir()
	reg, _ := mountBash(t, cfg)
	var (
		mu      sync.Mutex
		reports []tools.Progress
	)
	release := func(name string) { _ = os.WriteFile(filepath.Join(cfg.Cwd, name), nil, 0o600) }
	ctx := tools.WithProgress(context.Background(), func(p tools.Progress) {
		mu.Lock()
		reports = append(reports, p)
		mu.Unlock()
		switch p.Tail {
		case "first\n":
			release("f1")
		case "second\n":
			release("f2")
		}
	})
	cmd := `echo first; while [ ! -e f1 ]; do sleep 0.02; done; echo second >&2; while [ ! -e f2 ]; do sleep 0.02; done; echo last`
	o := reg.Execute(ctx, tools.Call{ID: "b1", Name: "bash", Arguments: `{"command":"` + cmd + `","description":"lines","timeoutMs":20000}`})
	if got := tools.TextOf(o.Content); o.IsError || got != "first\nlast\n[stderr]\nsecond\n" {
		t.Fatalf("result %q (isError %v): the command was not released by the reports", got, o.IsError)
	}
	mu.Lock()
	n := len(reports)
	first, second := reports[0], reports[min(1, n-1)]
	mu.Unlock()
	if n < 2 || first.CallID != "b1" || first.Name != "bash" || first.Bytes != 6 || second.Tail != "second\n" || second.Bytes != 13 {
		t.Fatalf("reports %+v", reports)
	}
	// Without a sink the same tool reports nothing and runs as before.
	if o := reg.Execute(context.Background(), tools.Call{ID: "b2", Name: "bash", Arguments: `{"command":"echo quiet","description":"q"}`}); tools.TextOf(o.Content) != "quiet\n" {
		t.Fatalf("without a sink: %q", tools.TextOf(o.Content))
	}
}
