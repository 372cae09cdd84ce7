//go:build unix

package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/internal/cli"
	spillpolicy "github.com/dshgo/harness/plugins/spill-policy"
	"github.com/dshgo/harness/services/spill"
	"github.com/dshgo/harness/services/tools"
)

type bigArgs struct {
	Bytes int `json:"bytes"`
}

var (
	noticeRE = regexp.MustCompile(`\(Omitted (\d+) bytes\. Full formatted result stored at: (\S+)\. Use read with offset/limit`)
	// observed holds the spill file's and directory's modes, seen by a result
	// observer while the harness runs.
	observed []os.FileMode
)

// bigTool registers "big", whose result is the given number of bytes of
// numbered lines (like `seq`), and a result observer that records the modes
// of the spill file the model is shown.
var bigTool = core.Define("test-big-tool", func(c *core.Context, _ struct{}) error {
	if err := core.On(c, tools.Result, func(_ context.Context, e *tools.Execution) error {
		if m := noticeRE.FindStringSubmatch(tools.TextOf(e.Outcome().Content)); m != nil {
			for _, p := range []string{m[2], filepath.Dir(m[2])} {
				if fi, err := os.Lstat(p); err == nil {
					observed = append(observed, fi.Mode())
				}
			}
		}
		return nil
	}); err != nil {
		return err
	}
	return tools.Register(c, tools.Define("big", "prints numbered lines", func(_ context.Context, _ *tools.Execution, a bigArgs) (string, error) {
		return seqText(a.Bytes), nil
	}))
}, core.WithInject(tools.Key.Name()))

func seqText(n int) string {
	var b strings.Builder
	for i := 1; b.Len() < n; i++ {
		b.WriteString(itoa(i))
		b.WriteByte('\n')
	}
	return b.String()[:n]
}

// The done-when and B25 through the real CLI: under umask 000, a 2 MB
// result reaches the caller as a preview plus a locator; the spill file is
// private (0600 in a 0700 directory) while the harness runs and deleted on a
// normal exit.
func TestToolCommandSpillsAndCleansUp(t *testing.T) {
	// Serial: the umask is process-wide, and observed is a package variable.
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := t.TempDir()
	spillRoot := filepath.Join(dir, "state", "spill")
	write(t, dir, "harness.yml", "plugins:\n"+
		"  - name: tools\n"+
		"  - name: spill-local\n    config: { root: "+spillRoot+" }\n"+
		"  - name: spill-policy\n    config: { maxInlineBytes: 4000 }\n"+
		"  - name: test-big-tool\n")
	var out, errb bytes.Buffer
	env := &cli.Env{
		Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""),
		Plugins: []core.Plugin{tools.Plugin, spill.Plugin,
			spillpolicy.Plugin, bigTool},
		LookupEnv: func(string) (string, bool) { return "", false },
		Getwd:     func() (string, error) { return dir, nil },
		Ctx:       context.Background(),
	}
	observed = nil
	code := cli.Run([]string{"tool", "big", `{"bytes":2097152}`}, env)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	text := strings.TrimSuffix(out.String(), "\n")
	if len(text) > 4000 {
		t.Errorf("preview is %d bytes, over the 4000-byte cap", len(text))
	}
	m := noticeRE.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no spill notice in %q", text)
	}
	preview, notice, _ := strings.Cut(text, "\n\n(Omitted ")
	if !strings.HasPrefix(preview, "1\n2\n3\n") || !strings.HasSuffix(preview, seqText(2097152)[2097152-1000:]) || strings.Contains(notice, "\n") {
		t.Error("preview lost the head or the tail")
	}
	if !strings.HasPrefix(m[2], spillRoot+string(os.PathSeparator)) {
		t.Errorf("locator %s outside the spill root", m[2])
	}
	if len(observed) != 2 || observed[0] != 0o600 || observed[1] != os.ModeDir|0o700 {
		t.Errorf("modes while running = %v, want [-rw------- drwx------]", observed)
	}
	if _, err := os.Stat(m[2]); !os.IsNotExist(err) {
		t.Errorf("spill file survived a normal exit: %v", err)
	}
	if entries, _ := os.ReadDir(spillRoot); len(entries) != 0 {
		t.Errorf("session directories left after exit: %d", len(entries))
	}
	if want := "harness: note: " + m[2] + " was deleted when the harness stopped; set keep: true"; !strings.Contains(errb.String(), want) {
		t.Errorf("stderr does not tell the user the locator is gone: %q", errb.String())
	}

	// With keep: true the file stays, and nothing is said about it.
	write(t, dir, "harness.yml", "plugins:\n"+
		"  - name: tools\n"+
		"  - name: spill-local\n    config: { root: "+spillRoot+", keep: true }\n"+
		"  - name: spill-policy\n    config: { maxInlineBytes: 4000 }\n"+
		"  - name: test-big-tool\n")
	out.Reset()
	errb.Reset()
	if code := cli.Run([]string{"tool", "big", `{"bytes":100000}`}, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	m = noticeRE.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no spill notice in %q", out.String())
	}
	if data, err := os.ReadFile(m[2]); err != nil || string(data) != seqText(100000) {
		t.Errorf("kept spill file: %d bytes, %v", len(data), err)
	}
	if strings.Contains(errb.String(), "note:") {
		t.Errorf("note printed for a kept file: %q", errb.String())
	}
}
