//go:build unix

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// probeTimeout bounds a probe run (bwrap, sandbox-exec).
const probeTimeout = 10 * time.Second

// probeWaitDelay bounds the wait for a probe's stderr after it exited.
const probeWaitDelay = 200 * time.Millisecond

// runProbe runs path with args and an empty environment, for at most
// probeTimeout and while ctx lasts, and succeeds when it exits 0. Its
// error carries the command's stderr. Once the command has exited, its
// stderr is read for at most probeWaitDelay more: something it left
// behind may hold the pipe open (bwrap's sandbox init can, a while after
// bwrap is gone; seen under load as a probe that waited out `harness
// prompt`'s 5 s stop timeout in exec's copying goroutine), and exec's
// ErrWaitDelay, which it then returns only after an exit 0, is success.
func runProbe(ctx context.Context, path string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Env = []string{}
	cmd.WaitDelay = probeWaitDelay
	if err := cmd.Run(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
