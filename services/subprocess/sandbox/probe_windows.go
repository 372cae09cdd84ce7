package sandbox

import "context"

// platformProbes are Windows's backends: none (there is no OS sandbox;
// commands run unconfined, and the reports say so).
func platformProbes() []probe {
	return []probe{{BackendNone, func(context.Context) (Backend, error) { return noneBackend{}, nil }}}
}

// unavailableHint is how to get a backend on Windows, for UnavailableError
// (the none backend always works, so it is not shown in practice).
const unavailableHint = "Windows has no OS sandbox backend in harness yet"

// fixHint is FixHint on Windows.
const fixHint = "there is no OS sandbox on Windows yet"
