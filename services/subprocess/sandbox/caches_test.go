package sandbox

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// sandbox.caches in YAML and JSON: absent or true/on is every cache,
// false/off none, a list those caches; anything else is an error naming
// what is accepted. A policy round-trips through JSON.
func TestCachesDecode(t *testing.T) {
	all := CacheNames()
	for _, tc := range []struct {
		yaml string
		want []string
	}{
		{"mode: workspace-write", all},
		{"caches: true", all},
		{"caches: on", all},
		{"caches: off", nil},
		{"caches: false", nil},
		{"caches: []", nil},
		{"caches: [go, npm]", []string{CacheGo, CacheNpm}},
	} {
		var p Policy
		if err := yaml.Unmarshal([]byte(tc.yaml), &p); err != nil {
			t.Fatalf("%s: %v", tc.yaml, err)
		}
		if got := p.Caches.Names(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: caches %v, want %v", tc.yaml, got, tc.want)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var back Policy
		if err := json.Unmarshal(b, &back); err != nil || !slices.Equal(back.Caches.Names(), tc.want) {
			t.Errorf("%s: JSON %s decodes to %v, %v", tc.yaml, b, back.Caches.Names(), err)
		}
	}
	var p Policy
	if err := yaml.Unmarshal([]byte("caches: sometimes"), &p); err == nil || !strings.Contains(err.Error(), "want true/false (on/off) or a list of go, npm") {
		t.Fatalf("caches: sometimes: %v", err)
	}
	if err := yaml.Unmarshal([]byte("caches: [go, maven]"), &p); err != nil {
		t.Fatal(err)
	}
	if err := (Policy{Mode: ModeWorkspaceWrite, Caches: p.Caches}).Validate(); err == nil || !strings.HasPrefix(err.Error(), `caches[1]: unknown cache "maven"`) {
		t.Fatalf("Validate: %v", err)
	}
}
