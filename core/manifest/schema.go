package manifest

import (
	"encoding"
	"reflect"
	"strings"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/invopop/jsonschema"
	orderedmap "github.com/pb33f/ordered-map/v2"
)

//go:generate go run ../../internal/configdoc/gen -root ../.. -o configdoc_gen.go

// ConfigSchema returns the JSON Schema of p's config, generated with
// invopop/jsonschema from the config struct: field names from yaml tags,
// a field's description from its Go doc comment (the built-in plugins'
// comments are compiled in, see configdoc_gen.go; a `jsonschema:"description=…"`
// tag, which third-party plugins may use, takes precedence), durations as strings ("2m"), no
// required fields unless tagged `jsonschema:"required"`, unknown keys
// forbidden, and secret fields (`harness:"secret"`) marked writeOnly.
// Each field's `default` is the value p's SetDefaults gives it (when that
// is not the zero value and the field's tag sets no default).
func ConfigSchema(p core.Plugin) *jsonschema.Schema {
	r := &jsonschema.Reflector{
		FieldNameTag:               "yaml",
		RequiredFromJSONSchemaTags: true,
		DoNotReference:             true,
		ExpandedStruct:             true,
		CommentMap:                 configComments,
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			if t == reflect.TypeFor[time.Duration]() {
				return &jsonschema.Schema{Type: "string", Pattern: `^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$`, Description: "a duration such as 500ms, 30s or 2m"}
			}
			return nil
		},
	}
	s := r.ReflectFromType(p.ConfigType())
	s.Version = ""
	if s.Title == "" {
		s.Title = p.Name()
	}
	if p.Description() != "" && s.Description == "" {
		s.Description = p.Description()
	}
	markSecrets(s, p.ConfigType())
	markDefaults(s, reflect.ValueOf(p.NewConfig()))
	return s
}

// markDefaults sets each property's default from v, the config value
// SetDefaults produced, descending into nested structs. Durations read
// like the manifest writes them ("2m", "500ms").
func markDefaults(s *jsonschema.Schema, v reflect.Value) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct || s == nil || s.Properties == nil {
		return
	}
	for name, f := range yamlFields(v.Type()) {
		ps, ok := s.Properties.Get(name)
		if !ok || ps == nil {
			continue
		}
		fv := v.FieldByIndex(f.Index)
		if fv.Kind() == reflect.Struct && f.Type != durationT {
			markDefaults(ps, fv)
			continue
		}
		if ps.Default == nil && !fv.IsZero() && !isSecret(f) {
			ps.Default = defaultValue(fv)
		}
	}
}

// defaultValue renders a default for JSON: a duration as its short string,
// a text marshaler as its text, anything else as is.
func defaultValue(v reflect.Value) any {
	if v.Kind() == reflect.Int64 && (v.Type() == durationT || v.Type().Name() == "Duration") {
		return shortDuration(time.Duration(v.Int()))
	}
	if tm, ok := v.Interface().(encoding.TextMarshaler); ok {
		if b, err := tm.MarshalText(); err == nil {
			return string(b)
		}
	}
	return v.Interface()
}

// shortDuration writes d without zero trailing units: 2m, 1h30m, 500ms.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func markSecrets(s *jsonschema.Schema, t reflect.Type) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
		if s.Items != nil {
			s = s.Items
		} else if s.AdditionalProperties != nil {
			s = s.AdditionalProperties
		}
	}
	if t.Kind() != reflect.Struct || s == nil || s.Properties == nil {
		return
	}
	for name, f := range yamlFields(t) {
		ps, ok := s.Properties.Get(name)
		if !ok || ps == nil {
			continue
		}
		if isSecret(f) {
			ps.WriteOnly = true
		}
		markSecrets(ps, f.Type)
	}
}

func isSecret(f reflect.StructField) bool {
	return strings.Contains(f.Tag.Get("harness"), "secret")
}

// Schema returns the JSON Schema of a whole harness.yml for the plugins in
// cat: each row's config is checked against its plugin's schema, selected
// by the row's name.
func Schema(cat *core.Catalog) *jsonschema.Schema {
	var rows []*jsonschema.Schema
	names := []any{}
	for _, p := range cat.All() {
		names = append(names, p.Name())
		props := jsonschema.NewProperties()
		props.Set("name", &jsonschema.Schema{Const: p.Name()})
		props.Set("config", ConfigSchema(p))
		rows = append(rows, &jsonschema.Schema{
			If:   &jsonschema.Schema{Properties: propsOf("name", &jsonschema.Schema{Const: p.Name()}), Required: []string{"name"}},
			Then: &jsonschema.Schema{Properties: propsOf("config", ConfigSchema(p))},
		})
	}
	row := &jsonschema.Schema{
		Type: "object",
		Properties: propsOf(
			"id", &jsonschema.Schema{Type: "string", Description: "unique, stable row id (defaults to name)"},
			"name", &jsonschema.Schema{Type: "string", Enum: names, Description: "plugin name from the catalog"},
			"config", &jsonschema.Schema{Description: "the plugin's config (a list of rows for a group)"},
			"disabled", &jsonschema.Schema{Type: "boolean", Description: "true keeps the row without mounting it (and, on a group, its rows)"},
			"group", &jsonschema.Schema{Type: "boolean", Description: "true makes config a list of nested rows"},
		),
		AdditionalProperties: jsonschema.FalseSchema,
		AllOf:                rows,
	}
	return &jsonschema.Schema{
		Version:     jsonschema.Version,
		Title:       "harness.yml",
		Description: "harness deployment manifest",
		Type:        "object",
		Properties: propsOf(
			"plugins", &jsonschema.Schema{Type: "array", Items: row, Description: "the plugin rows, mounted in order"},
			"startTimeout", &jsonschema.Schema{Type: "string", Description: "bound on booting the plugin tree, e.g. 15s"},
			"stopTimeout", &jsonschema.Schema{Type: "string", Description: "bound on disposing the plugin tree, e.g. 5s"},
		),
		AdditionalProperties: jsonschema.FalseSchema,
	}
}

func propsOf(kv ...any) *orderedmap.OrderedMap[string, *jsonschema.Schema] {
	p := jsonschema.NewProperties()
	for i := 0; i+1 < len(kv); i += 2 {
		p.Set(kv[i].(string), kv[i+1].(*jsonschema.Schema))
	}
	return p
}
