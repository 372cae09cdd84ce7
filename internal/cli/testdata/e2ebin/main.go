// Command e2ebin is the harness binary for the end-to-end tests: the
// standard catalog plus every plugin the default agent needs that the
// standard catalog does not list (yet).
package main

import (
	"github.com/dshgo/harness"
	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/internal/cli/agente2e"
)

func main() {
	for _, p := range agente2e.Missing() {
		core.Register(p)
	}
	harness.Main()
}
