package sandbox

import (
	"context"
	"fmt"
	"os/exec"
)

// sandboxExec is where macOS installs sandbox-exec. The absolute path,
// not a PATH lookup: a sandbox-exec earlier on PATH would be trusted with
// every command.
const sandboxExec = "/usr/bin/sandbox-exec"

// seatbeltProbeProfile is the profile of the probe run: the smallest one
// sandbox-exec must apply, so that a machine where it cannot (a harness
// already inside a sandbox) is found by the probe, not by a command.
const seatbeltProbeProfile = "(version 1)(allow default)"

// probeSeatbelt finds sandbox-exec and runs it once with a minimal
// profile, so a machine where it cannot apply a profile (the harness
// itself already sandboxed) is found here.
func probeSeatbelt(ctx context.Context) (Backend, error) {
	if _, err := exec.LookPath(sandboxExec); err != nil {
		return nil, fmt.Errorf("seatbelt: %s not found (%v)", sandboxExec, err)
	}
	if err := runProbe(ctx, sandboxExec, "-p", seatbeltProbeProfile, "--", "/usr/bin/true"); err != nil {
		return nil, fmt.Errorf("seatbelt: %s does not work here (already inside a sandbox?): %w", sandboxExec, err)
	}
	return newSeatbelt(sandboxExec, home()), nil
}
