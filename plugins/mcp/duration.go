package mcp

import (
	"fmt"
	"time"

	"github.com/invopop/jsonschema"
)

// Duration is a configuration duration written as a Go duration string in
// harness.yml ("2m", "500ms").
type Duration time.Duration

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("invalid duration %q (use e.g. \"2m\", \"30s\", \"500ms\")", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText renders d as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// JSONSchema describes Duration as a duration string.
func (Duration) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type:        "string",
		Pattern:     `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`,
		Description: "a Go duration such as 2m, 30s or 500ms",
	}
}

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }
