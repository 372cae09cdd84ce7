package hooks

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What a SessionStart hook writes to CLAUDE_ENV_FILE is read as shell
// without running anything: exported variables it sets or changes are kept,
// credential-shaped and HARNESS_ names are dropped (named in the log, never
// their value), commands and command substitutions are not run, and the file
// is removed.
func TestEnvFileIsEvaluatedWithoutRunningCommands(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", "/usr/bin:/bin")
	var logs bytes.Buffer
	h := &runner{cwd: dir, log: slog.New(slog.NewTextHandler(&logs, nil)), transcripts: map[string]string{}, warned: map[string]bool{}}
	defer h.removeFallback()
	p, err := h.newEnvFile("sess/../1")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Dir(p)); err != nil || st.Mode().Perm() != 0o700 || filepath.Dir(p) != h.fallbackDir {
		t.Fatalf("env file dir %s: %v %v", filepath.Dir(p), st.Mode(), err)
	}
	marker := filepath.Join(dir, "ran")
	body := `export A=1
export PATH="$PATH:/opt/x"
B=not-exported
export C="$A-two"
export DEPLOY_TOKEN=secret-value
export HARNESS_X=1
export D=$(touch ` + marker + `; echo sub)
touch ` + marker + `
export E=after-error
`
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	env := h.readEnvFile(context.Background(), p)
	if env["A"] != "1" || env["PATH"] != "/usr/bin:/bin:/opt/x" || env["C"] != "1-two" {
		t.Fatalf("env %v", env)
	}
	for _, k := range []string{"B", "DEPLOY_TOKEN", "HARNESS_X"} {
		if _, ok := env[k]; ok {
			t.Errorf("%s must not be passed: %v", k, env)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a command in CLAUDE_ENV_FILE ran")
	}
	if _, err := os.Stat(p); err == nil {
		t.Fatal("the env file was not removed")
	}
	if !strings.Contains(logs.String(), "DEPLOY_TOKEN") || strings.Contains(logs.String(), "secret-value") {
		t.Fatalf("log must name the dropped variable, not its value:\n%s", logs.String())
	}
}
