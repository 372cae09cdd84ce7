//go:build !pending

package toolsearch

import (
	"context"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
)

// save would store the complete result in the spill store; until the spill
// service is part of the build, over-cap pages say the list could not be saved.
func save(_ context.Context, c *core.Context, e *tools.Execution, _, _ string) *SpillNote {
	c.Logger().Warn("tool-search: no spill store in this build; complete result not saved", "tool", e.Name())
	return nil
}
