package cli_test

import (
	"strings"
	"testing"
)

// check warns (exit 0, on stderr) when the agent's default route has no
// API key: its row reads the key from an environment variable that is
// empty, and the warning names that variable. With the variable set, or a
// key in the row, nothing is said.
func TestCheckWarnsWhenTheDefaultRouteHasNoAPIKey(t *testing.T) {
	t.Parallel()
	const keyVar = "HARNESS_TEST_KEY_4E1B" // unique: read from the process environment by llm-openai
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	noKey := strings.Replace(agentManifest("https://models.example.invalid/v1", t.TempDir(), ""), "      apiKey: sk-test\n", "      apiKeyEnv: "+keyVar+"\n", 1)
	requireUnset(t, keyVar)
	r := runAgent(t, repo, noKey, "", "check")
	want := "harness: warning: the agent's default model route test/m1 has no API key: provider \"test\": no API key: set the environment variable " + keyVar
	if r.code != 0 || !strings.Contains(r.stderr, want) || !strings.HasPrefix(r.stdout, "ok: ") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	// The variable set: in the harness binary's environment, not the test
	// process's.
	cmd := processCommand(t, repo, noKey, append(baseEnv(), keyVar+"=sk-from-env"), "check", "--no-claude-settings")
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "API key") {
		t.Fatalf("with the variable set: %v %s", err, out)
	}
	if r := runAgent(t, repo, agentManifest("https://models.example.invalid/v1", t.TempDir(), ""), "", "check"); r.code != 0 || strings.Contains(r.stderr, "API key") {
		t.Fatalf("with a key in the row: exit %d %s", r.code, r.stderr)
	}
}
