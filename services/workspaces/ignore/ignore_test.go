package ignore_test

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/services/workspaces/ignore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDeepestDecidingRuleWins(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, ".gitignore"), "*.log\nbuild/\n/top.txt\n")
	write(filepath.Join(sub, ".gitignore"), "!keep.log\n")
	rootChain := ignore.Chain(nil).WithDir(root)
	subChain := rootChain.WithDir(sub)
	cases := []struct {
		chain ignore.Chain
		path  string
		dir   bool
		want  bool
	}{
		{rootChain, filepath.Join(root, "a.log"), false, true},
		{rootChain, filepath.Join(root, "a.go"), false, false},
		{rootChain, filepath.Join(root, "build"), true, true},
		{rootChain, filepath.Join(root, "build"), false, false},
		{rootChain, filepath.Join(root, "top.txt"), false, true},
		{subChain, filepath.Join(sub, "top.txt"), false, false},
		{subChain, filepath.Join(sub, "x.log"), false, true},
		{subChain, filepath.Join(sub, "keep.log"), false, false},
	}
	for _, c := range cases {
		if got := c.chain.Ignored(c.path, c.dir); got != c.want {
			t.Errorf("Ignored(%s, dir=%v) = %v, want %v", c.path, c.dir, got, c.want)
		}
	}
}
