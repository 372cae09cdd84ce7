// Package wordcount is a harness tool plugin: importing it adds word_count.
package wordcount

import (
	"context"
	"strings"

	"github.com/dshgo/harness/services/tools"
)

// Args are what the model sends; the JSON Schema it sees comes from them.
type Args struct {
	Text string `json:"text" jsonschema:"description=The text to count words in"`
}

// Tool counts the words of a text.
var Tool = tools.Define("word_count", "Count the words in a text.",
	func(ctx context.Context, e *tools.Execution, a Args) (int, error) {
		return len(strings.Fields(a.Text)), nil
	})

// Plugin mounts as `name: tool-word-count`; importing the package
// registers it.
var Plugin = tools.RegisterPlugin("tool-word-count", Tool)
