// Package badlistener does not compile on purpose: it registers a listener
// of the wrong shape, and core's TestListenerShapeErrorNamesAnExportedType
// checks that the compiler's message names the exported listener type.
package badlistener

import (
	"context"

	"github.com/dshgo/harness/core"
)

var ev = core.NewWaterfallEvent[string, int]("badlistener")

// Register forgets the next parameter of a waterfall listener.
func Register(c *core.Context) error {
	return core.On(c, ev, func(ctx context.Context, p string) (int, error) { return 0, nil })
}
