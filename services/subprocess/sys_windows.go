//go:build windows

package subprocess

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"
)

// spillOpenFlags are 0: Windows has no O_NOFOLLOW or O_CLOEXEC (Go never
// lets a child inherit a handle it was not given). The spill directory is
// private to the user.
const spillOpenFlags = 0

// pathSeparators are the characters that make a command a path.
const pathSeparators = `/\`

// executableFile returns p, or p with the first PATHEXT extension (.COM,
// .EXE, .BAT, .CMD, ... by default) that names a regular file, when p has
// no extension of its own. Windows has no execute bit.
func executableFile(p string) (string, bool) {
	if filepath.Ext(p) != "" && isRegular(p) {
		return p, true
	}
	exts := os.Getenv("PATHEXT")
	if exts == "" {
		exts = ".COM;.EXE;.BAT;.CMD"
	}
	for _, e := range strings.Split(exts, ";") {
		if e != "" && isRegular(p+strings.ToLower(e)) {
			return p + strings.ToLower(e), true
		}
	}
	return "", false
}

func isRegular(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// commandSysProcAttr starts a command suspended, in a console process
// group of its own: newProcessRange puts it in its job object before its
// first instruction runs (so no child it starts can escape the job), and
// Terminate's first step is a CTRL_BREAK to that group.
func commandSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP}
}

// startInCgroup is never called on Windows: there are no cgroups.
func startInCgroup(*syscall.SysProcAttr, int) {}

// markInheritedCloexec does nothing: a Windows child inherits only the
// handles os/exec passes it.
func markInheritedCloexec() {}

// notDumpableCall names what setNotDumpable would do, for its warning.
const notDumpableCall = "not-dumpable (PR_SET_DUMPABLE)"

// setNotDumpable fails: Windows has no equivalent (a same-user process
// can open this one with PROCESS_VM_READ).
func setNotDumpable() error {
	return errors.New("windows has no equivalent of PR_SET_DUMPABLE")
}

// errNoControl is the error of Spec.Control on Windows.
var errNoControl = errors.New("the control channel (Spec.Control, fd 3) is not supported on Windows")

// socketpair fails: a Windows child has no fd 3.
func socketpair() (net.Conn, *os.File, error) { return nil, nil, errNoControl }

// noteLeaderExit does nothing: a job range does not need the leader's exit.
func (h *Handle) noteLeaderExit() {}

// outcomeOf is the exit code: Windows processes end with a code, never a
// signal (a job Terminate ended ends with code 1).
func outcomeOf(ps *os.ProcessState) Outcome {
	code := ps.ExitCode()
	return Outcome{ExitCode: &code}
}

// outcomeOfStatus is outcomeOf for a raw wait status.
func outcomeOfStatus(ws syscall.WaitStatus) Outcome {
	code := ws.ExitStatus()
	return Outcome{ExitCode: &code}
}

// killAndReap ends a started command whose job could not be set up.
func killAndReap(cmd *exec.Cmd) {
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
}
