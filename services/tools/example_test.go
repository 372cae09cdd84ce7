package tools_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
)

// The arguments the model sends, as a Go struct: the JSON Schema the model
// sees is generated from it.
type WordCountArgs struct {
	Text string `json:"text" jsonschema:"description=The text to count words in"`
	Min  int    `json:"min,omitempty" jsonschema:"minimum=1,description=Only count words of at least this many letters"`
}

// WordCount is a typed tool: name, description, body. The body only ever sees
// validated arguments.
var WordCount = tools.Define("word_count", "Count the words in a text.",
	func(ctx context.Context, e *tools.Execution, a WordCountArgs) (int, error) {
		n := 0
		for _, w := range strings.Fields(a.Text) {
			if len(w) >= a.Min {
				n++
			}
		}
		return n, nil
	},
	tools.WithRender(func(a WordCountArgs, n int) []tools.Content {
		return []tools.Content{tools.Text(fmt.Sprintf("%d words", n))}
	}),
	tools.WithConcurrencySafe(func(WordCountArgs) bool { return true }))

// The plugin that contributes the tool: registration is an effect of its
// fiber, so unloading the plugin removes the tool.
var WordCountPlugin = core.Define("tool-word-count", func(c *core.Context, _ struct{}) error {
	return tools.Register(c, WordCount)
}, core.WithInject(tools.Key.Name()))

// Example_typedTool defines a typed tool, mounts it next to the registry and
// calls it the way the agent loop does: with the model's raw JSON arguments.
func Example_typedTool() {
	root := core.NewRoot()
	defer root.Dispose(context.Background())
	root.Context().Plugin(tools.Plugin, nil)
	root.Context().Plugin(WordCountPlugin, nil).Await(context.Background())
	reg, _ := core.Lookup(root.Context(), tools.Key)

	ok := reg.Execute(context.Background(), tools.Call{ID: "1", Name: "word_count", Arguments: `{"text":"a bb ccc","min":"2"}`})
	bad := reg.Execute(context.Background(), tools.Call{ID: "2", Name: "word_count", Arguments: `{"txt":"a"}`})
	fmt.Fprintln(os.Stdout, tools.TextOf(ok.Content))
	fmt.Fprintln(os.Stdout, tools.TextOf(bad.Content))
	// Output:
	// 2 words
	// Error: invalid arguments: /text: required: missing required property "text"; /txt: additionalProperties: unknown key "txt" (allowed keys: min, text)
}
