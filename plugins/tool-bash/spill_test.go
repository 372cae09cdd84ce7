package toolbash

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/spill"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
)

var fullOutput = regexp.MustCompile(`\[output truncated; full output: (\S+)\]`)

// B25: the complete output of a truncated command is a spill of the
// session: a private file in the session's 0700 directory under the spill
// store's root, deleted when the harness stops.
func TestTruncatedOutputIsSpilledIntoTheSessionDirectory(t *testing.T) {
	t.Parallel()
	root := core.NewRoot()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	spillRoot := filepath.Join(t.TempDir(), "spill")
	for _, m := range []struct {
		p   core.Plugin
		cfg any
	}{{tools.Plugin, nil}, {subprocess.Plugin, nil}, {spill.Plugin, &spill.Config{Root: spillRoot}}} {
		if err := root.Context().Plugin(m.p, m.cfg).Await(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var cfg Config
	cfg.SetDefaults()
	cfg.Cwd = t.TempDir()
	cfg.MaxOutputBytes = 16384
	if err := root.Context().Plugin(Plugin, &cfg).Await(ctx); err != nil {
		t.Fatal(err)
	}
	reg, _ := core.Lookup(root.Context(), tools.Key)
	o := reg.Execute(ctx, tools.Call{ID: "c1", Name: "bash", Scope: core.NewScopeID("session:20261130T0000-b25", nil),
		Arguments: `{"command":"seq 1 500000","description":"print many numbers"}`})
	text := tools.TextOf(o.Content)
	m := fullOutput.FindStringSubmatch(text)
	if o.IsError || m == nil {
		t.Fatalf("no full-output marker: %.300q", text)
	}
	store, _ := spill.NewLocalStore(spill.LocalOptions{Root: spillRoot, Keep: true})
	if filepath.Dir(m[1]) != store.OwnerDir("20261130T0000-b25") {
		t.Errorf("full output %s is not in the session's spill directory %s", m[1], store.OwnerDir("20261130T0000-b25"))
	}
	fi, err := os.Stat(m[1])
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != int64(len(seq(500000))) {
		t.Fatalf("spill file: %v %v", fi, err)
	}
	if di, _ := os.Stat(filepath.Dir(m[1])); di.Mode().Perm() != 0o700 {
		t.Errorf("session directory mode %v", di.Mode().Perm())
	}
	if err := root.Dispose(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m[1]); !os.IsNotExist(err) {
		t.Errorf("spill file survived the harness: %v", err)
	}
}

func seq(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}
