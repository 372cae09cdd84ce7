package tools

import (
	"encoding/json"
	"reflect"

	"github.com/invopop/jsonschema"
)

// reflector generates model-facing schemas from Go types: nested structs inline
// (no $ref/$defs, which many models handle badly), struct objects closed
// (additionalProperties: false), fields required unless tagged omitempty or
// omitzero. Field docs come from `jsonschema:"description=..."` tags.
var reflector = jsonschema.Reflector{DoNotReference: true, Anonymous: true}

// schemaOf returns the JSON Schema document for t, without $schema and $id (the
// model sees a bare schema; validation assumes draft 2020-12).
func schemaOf(t reflect.Type) (json.RawMessage, error) {
	s := reflector.ReflectFromType(t)
	s.Version = ""
	s.ID = ""
	return json.Marshal(s)
}

// emptyObjectSchema is the parameter schema of a tool without arguments.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
