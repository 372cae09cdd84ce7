// Package filecount is a harness tool plugin that reads files: it resolves
// the model's relative paths against the session's working directory.
package filecount

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/tools/workdir"
)

// Args name the file to count the words of.
type Args struct {
	Path string `json:"path" jsonschema:"description=File path, relative to the working directory"`
}

// Tool counts the words of a file.
var Tool = tools.Define("file_word_count", "Count the words in a file.",
	func(ctx context.Context, e *tools.Execution, a Args) (int, error) {
		path := a.Path
		if !filepath.IsAbs(path) {
			// The session's directory (agent.Options.Cwd), carried by ctx;
			// "." (the process directory) only outside a session.
			path = filepath.Join(workdir.Or(ctx, "."), path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return 0, tools.Errorf("FS_READ", "cannot read %s", a.Path)
		}
		return len(strings.Fields(string(b))), nil
	})

// Plugin mounts as `name: tool-file-word-count`.
var Plugin = tools.RegisterPlugin("tool-file-word-count", Tool)
