package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/internal/cli"
)

// harness logs prints the newest TUI log file of STATE/logs, --list every
// one newest first, -f the newest file's lines and what is appended, moving
// to a newer file when one appears; no log file is exit 1.
func TestLogsCommand(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	vars := map[string]string{"XDG_STATE_HOME": state}
	_, errOut, code := runWithEnv(t, "", vars, "logs")
	if code != 1 || !strings.Contains(errOut, "no log files in "+filepath.Join(state, "harness", "logs")) {
		t.Fatalf("no logs: exit %d %q", code, errOut)
	}
	dir := filepath.Join(state, "harness", "logs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := write(t, dir, "tui-20260101T100000-11.log", "old line\n")
	newer := write(t, dir, "tui-20260101T090000-22.log", "newer line\n") // the name sorts first; the time decides
	write(t, dir, "notes.txt", "not a log\n")
	now := time.Now()
	if err := os.Chtimes(old, now.Add(-time.Hour), now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(newer, now.Add(-time.Minute), now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runWithEnv(t, "", vars, "logs")
	if code != 0 || out != newer+"\n" {
		t.Fatalf("logs: exit %d %q %q", code, out, errOut)
	}
	out, _, code = runWithEnv(t, "", vars, "logs", "--list")
	if code != 0 || out != newer+"\n"+old+"\n" {
		t.Fatalf("logs --list: exit %d %q", code, out)
	}

	// -f: the newest file, its appended lines, then a newer file's.
	var stdout, stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		env := &cli.Env{Stdout: &stdout, Stderr: &stderr, Stdin: strings.NewReader(""), Ctx: ctx,
			LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
		done <- cli.Run([]string{"logs", "-f"}, env)
	}()
	waitText := func(b *syncBuffer, s string) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if strings.Contains(b.String(), s) {
				return
			}
		}
		t.Fatalf("never got %q; stdout %q stderr %q", s, stdout.String(), stderr.String())
	}
	waitText(&stdout, "newer line\n")
	appendTo := func(path, s string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	appendTo(newer, "appended line\n")
	waitText(&stdout, "newer line\nappended line\n")
	newest := write(t, dir, "tui-20260101T110000-33.log", "newest line\n")
	waitText(&stderr, "==> "+newest+" <==")
	waitText(&stdout, "appended line\nnewest line\n")
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("logs -f: exit %d; stderr %q", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("logs -f did not stop when its context ended")
	}
	if strings.Contains(stdout.String(), "old line") || strings.Contains(stdout.String(), "not a log") {
		t.Fatalf("stdout %q", stdout.String())
	}
}
