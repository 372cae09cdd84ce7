package lsp

import "testing"

// The diagnostics tool and the prompt's sentence come only with a
// configured server on PATH: none installed is false, one is true.
func TestAnyInstalledLooksForTheServersCommands(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if anyInstalled(DefaultServers()) {
		t.Fatal("a server counts as installed with an empty PATH")
	}
	t.Setenv("PATH", "/bin:/usr/bin")
	if !anyInstalled(map[string]ServerConfig{"none": {Command: "harness-no-such-server"}, "sh": {Command: "sh"}}) {
		t.Fatal("sh on PATH does not count as installed")
	}
}
