package toolsearch

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dshgo/harness/services/tools"
)

// grep and glob present their calls: the pattern and where it looks as the
// title, a count as the summary, the files found as the locations.
func TestSearchCallsPresentPatternCountAndFiles(t *testing.T) {
	root := fixture(t)
	reg := mountSearch(t, configFor(root, "go"))
	present := func(name, args string) (pending, done tools.Presentation) {
		tool, _ := reg.Get(name, nil)
		c := tools.PresentCall{ID: "1", Name: name, Arguments: args, Cwd: root}
		pending = tools.Present(tool, c)
		c.Outcome = reg.Execute(context.Background(), tools.Call{ID: "1", Name: name, Arguments: args})
		return pending, tools.Present(tool, c)
	}
	pending, done := present("grep", `{"pattern":"TODO","include":"*.go","path":"src"}`)
	if pending.Title != "TODO in src (*.go)" || pending.Kind != tools.KindSearch || pending.Status != tools.StatusPending {
		t.Errorf("grep pending: %+v", pending)
	}
	if done.Status != tools.StatusCompleted || done.Summary() != "4 matches in 4 files" || len(done.Locations) != 4 ||
		done.Locations[0] != (tools.Location{Path: filepath.Join(root, "src", "a.go"), Line: 2}) {
		t.Errorf("grep done: %+v %+v", done, done.Meta)
	}
	_, done = present("glob", `{"pattern":"*.go","path":"src/sub"}`)
	if done.Title != "*.go in src/sub" || done.Summary() != "2 files" || len(done.Locations) != 2 ||
		!slices.Contains(done.Locations, tools.Location{Path: filepath.Join(root, "src", "sub", "c.go")}) {
		t.Errorf("glob done: %+v %+v", done, done.Meta)
	}
}
