package toolsearch

import (
	"context"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/spill"
	"github.com/dshgo/harness/services/tools"
)

// save stores the complete result in the spill store; failures (no store, a
// storage error) are logged and yield nil: the page then says the complete
// result could not be saved.
func save(ctx context.Context, c *core.Context, e *tools.Execution, name, content string) *SpillNote {
	store, ok := core.Lookup(c, spill.Key)
	if !ok {
		c.Logger().Warn("tool-search: no spill store mounted; complete result not saved", "tool", e.Name())
		return nil
	}
	session := "harness"
	if sc := e.Scope(); sc != nil {
		session = sc.Label()
	}
	ref, err := store.SaveText(ctx, spill.SaveRequest{
		Owner:         spill.Owner{SessionID: session},
		Source:        spill.Source{Kind: spill.SourceTool, ToolName: e.Name(), CallID: e.CallID(), Label: "result"},
		SuggestedName: name,
		Content:       content,
	})
	if err != nil {
		c.Logger().Warn("tool-search: saving the complete result failed", "tool", e.Name(), "err", err)
		return nil
	}
	return &SpillNote{Locator: string(ref.Locator), Hint: ref.Hint}
}
