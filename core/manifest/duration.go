package manifest

import (
	"fmt"
	"time"

	"github.com/invopop/jsonschema"
)

// Duration is a configuration field written in harness.yml as a Go
// duration string ("2m", "30s", "500ms"). It decodes from YAML and JSON
// text, renders back as the same kind of string, and publishes a JSON
// Schema string pattern, so every plugin's config spells durations alike.
// A malformed value is an error that shows the value and an example.
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
