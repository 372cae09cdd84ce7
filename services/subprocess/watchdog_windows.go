//go:build windows

package subprocess

import (
	"context"
	"log/slog"
)

// watchdog is never started on Windows: each command's job object kills
// what it holds when the harness process ends (see jobRange), which is
// what the Unix watchdog is for.
type watchdog struct{}

// startWatchdog returns no watchdog and no error (see watchdog).
func startWatchdog(string, *slog.Logger) (*watchdog, error) { return nil, nil }

func (*watchdog) stop(context.Context) {}
