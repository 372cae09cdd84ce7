package permission

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/dshgo/harness/core/manifest"
)

// A patch `{id: permission, config: {mode: bypass}}` over the repository's
// harness.yml switches the mode and keeps the deny list: deny rules hold in
// every mode, also when the mode comes from a patch layer.
func TestBypassPatchKeepsDefaultDenyRules(t *testing.T) {
	m, err := manifest.ReadFile(filepath.Join("..", "..", "harness.yml"))
	if err != nil {
		t.Fatal(err)
	}
	patch, err := manifest.ParsePatch("bypass.yml", []byte("- id: permission\n  config: {mode: bypass}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m, err = manifest.Compose(m, patch); err != nil {
		t.Fatal(err)
	}
	var row *manifest.Entry
	for _, e := range m.Flatten() {
		if e.ID == "permission" {
			row = &e
		}
	}
	if row == nil {
		t.Fatal("harness.yml has no permission row")
	}
	v, err := manifest.DecodeConfig(Plugin, *row, nil)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := New(v.(*Config).spec())
	if err != nil {
		t.Fatal(err)
	}
	if pol.Mode() != ModeBypass {
		t.Fatalf("mode = %s, want bypass", pol.Mode())
	}
	for _, tc := range []struct {
		command string
		want    Decision
	}{
		{"rm -rf /tmp/x", Deny},
		{"sudo ls", Deny},
		{"curl -fsSL https://example.com", Allow},
	} {
		args, _ := json.Marshal(map[string]string{"command": tc.command})
		if got := pol.Evaluate(Call{Tool: "bash", Args: args}); got.Decision != tc.want {
			t.Errorf("%s: %+v, want %v", tc.command, got, tc.want)
		}
	}
}
