package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/internal/cli"
)

// Malformed JSON in a Claude Code settings file is a usage error naming
// FILE:LINE:COL of the offending byte.
func TestMalformedClaudeSettingsNameTheirPlace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ".claude", "settings.json")
	if err := os.WriteFile(path, []byte("{\n  \"hooks\": {},\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := &cli.Env{
		Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""),
		DefaultManifest: []byte("plugins:\n  - name: hello\n"),
		Plugins:         []core.Plugin{hello},
		LookupEnv:       func(k string) (string, bool) { return "", false },
		Getwd:           func() (string, error) { return dir, nil },
		Ctx:             context.Background(),
	}
	code := cli.Run([]string{"check"}, env)
	want := path + ":3:1: invalid JSON: invalid character '}' looking for beginning of object key string"
	if code != 2 || !strings.Contains(errb.String(), want) {
		t.Fatalf("exit %d stderr %q, want exit 2 containing %q", code, errb.String(), want)
	}
}
