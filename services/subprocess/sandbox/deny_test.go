package sandbox

import (
	"encoding/json"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"
)

// "@defaults" expands in place to the default list, once, whatever the
// encoding, and entries around it stay.
func TestDefaultsEntryExpandsToTheDefaultList(t *testing.T) {
	want := append(append([]string{"/srv/a"}, DefaultDenyRead()...), "~/.my-token")
	var y struct {
		DenyRead DenyList `yaml:"denyRead"`
	}
	if err := yaml.Unmarshal([]byte(`denyRead: ["/srv/a", "@defaults", "~/.ssh", "~/.my-token", "@defaults"]`), &y); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal([]string(y.DenyRead), want) {
		t.Errorf("yaml: got %q\nwant %q", y.DenyRead, want)
	}
	var p Policy
	if err := json.Unmarshal([]byte(`{"mode":"read-only","denyRead":["/srv/a","@defaults","~/.my-token"]}`), &p); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal([]string(p.DenyRead), want) {
		t.Errorf("json: got %q\nwant %q", p.DenyRead, want)
	}
	built := Policy{Mode: ModeReadOnly, DenyRead: []string{"/srv/a", DefaultsEntry, "~/.my-token"}}
	if got := built.DenyReadPaths(); !slices.Equal(got, want) {
		t.Errorf("built in Go: got %q\nwant %q", got, want)
	}
	if err := built.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}
