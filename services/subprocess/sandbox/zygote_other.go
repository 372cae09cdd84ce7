//go:build !linux

package sandbox

import (
	"errors"
	"syscall"
)

// errNoZygote is the error of a zygote call on a platform without one.
var errNoZygote = errors.New("sandbox zygote: only the bwrap backend (Linux) runs shared sandboxes")

// ZygoteLaunch is a command to start in a shared sandbox. Only bwrap
// (Linux) has them: on this platform no backend sets [Command.Zygote].
type ZygoteLaunch struct{}

// Spawn fails: there are no shared sandboxes on this platform.
func (l *ZygoteLaunch) Spawn(ZygoteSpawn) (*ZygoteProcess, error) { return nil, errNoZygote }

// ZygoteProcess is a command started in a zygote; none is on this
// platform.
type ZygoteProcess struct {
	// Pid is the command's pid.
	Pid int
	// PidFD refers to the command.
	PidFD int
}

// Wait fails: there are no shared sandboxes on this platform.
func (p *ZygoteProcess) Wait() (ws syscall.WaitStatus, err error) { return ws, errNoZygote }

// ZygoteTag returns "": no backend of this platform runs zygotes.
func ZygoteTag(Backend) string { return "" }
