package std_test

import (
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/plugins/std"
	"github.com/invopop/jsonschema"
)

// Every config field of every standard plugin is described in its schema
// (`harness schema NAME`), at any depth: editors show these texts, and
// `harness schema` is the config reference.
func TestEveryConfigFieldHasADescription(t *testing.T) {
	for _, p := range std.Plugins() {
		t.Run(p.Name(), func(t *testing.T) {
			for _, path := range undescribed(manifest.ConfigSchema(p), "") {
				t.Errorf("plugin %s: config field %s has no description (add jsonschema:\"description=…\" to its struct tag)", p.Name(), path)
			}
		})
	}
}

// The whole-manifest schema describes its own keys too.
func TestManifestSchemaKeysHaveDescriptions(t *testing.T) {
	cat, err := core.NewCatalog(std.Plugins()...)
	if err != nil {
		t.Fatal(err)
	}
	s := manifest.Schema(cat)
	paths := undescribed(s, "")
	if row, ok := s.Properties.Get("plugins"); ok {
		paths = append(paths, undescribed(row.Items, "plugins[]")...)
	}
	for _, path := range paths {
		t.Errorf("harness.yml key %s has no description", path)
	}
}

// undescribed lists the property paths under s without a description,
// descending into properties, items and additionalProperties (not into the
// per-plugin conditions of the manifest schema).
func undescribed(s *jsonschema.Schema, path string) []string {
	if s == nil {
		return nil
	}
	var out []string
	if s.Properties != nil {
		for pair := s.Properties.Oldest(); pair != nil; pair = pair.Next() {
			p := pair.Key
			if path != "" {
				p = path + "." + pair.Key
			}
			if pair.Value.Description == "" {
				out = append(out, p)
			}
			out = append(out, undescribed(pair.Value, p)...)
		}
	}
	out = append(out, undescribed(s.Items, path+"[]")...)
	if s.AdditionalProperties != nil && s.AdditionalProperties != jsonschema.FalseSchema && s.AdditionalProperties != jsonschema.TrueSchema {
		out = append(out, undescribed(s.AdditionalProperties, path+".*")...)
	}
	return out
}
