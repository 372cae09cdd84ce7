//go:build windows

package subprocess

import (
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// cgroupParent is never set on Windows (there are no cgroups); the type
// exists so that the runtime's shared code compiles.
type cgroupParent struct {
	dir       string
	delegated bool
}

var errNoCgroups = errors.New("subprocess: Windows has no cgroups")

func (*cgroupParent) leaf(uint64) (cgroupRange, int, error) { return cgroupRange{}, -1, errNoCgroups }
func (*cgroupParent) remove() error                         { return nil }

// cgroupRange is never used on Windows (see cgroupParent).
type cgroupRange struct{}

func (cgroupRange) alive() (bool, error)  { return false, nil }
func (cgroupRange) signal(syscall.Signal) {}
func (cgroupRange) release()              {}

// probeCgroup reports that Windows bounds commands by job objects.
func probeCgroup() (*cgroupParent, error) { return nil, unavailable(reasonJobObject, nil) }

// jobRange is a command's range on Windows: a job object holding the
// command and every process it starts (JOB_OBJECT_LIMIT_BREAKAWAY_OK is
// not set, so none can leave it). The job is created with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: when its last handle closes (release,
// or the harness process ending in any way) every process still in it is
// killed, so no command outlives the harness and no watchdog is needed.
type jobRange struct {
	pid int
	mu  sync.Mutex
	job windows.Handle // 0 once released
}

// newProcessRange creates the job of the suspended command pid, assigns
// the command to it and resumes it. On failure the command is killed and
// reaped.
func newProcessRange(cmd *exec.Cmd, pid int, _ *watchdog) (managedRange, error) {
	job, err := newKillOnCloseJob()
	if err == nil {
		err = assignAndResume(job, pid)
		if err != nil {
			_ = windows.CloseHandle(job)
		}
	}
	if err != nil {
		killAndReap(cmd)
		return nil, fmt.Errorf("job object: %w", err)
	}
	return &jobRange{pid: pid, job: job}, nil
}

// newKillOnCloseJob creates an unnamed job whose processes die with its
// last handle.
func newKillOnCloseJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

// assignAndResume puts process pid (started suspended) in job, then
// resumes its threads: it runs only once it is in the job.
func assignAndResume(job windows.Handle, pid int) error {
	proc, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return err
	}
	err = windows.AssignProcessToJobObject(job, proc)
	_ = windows.CloseHandle(proc)
	if err != nil {
		return err
	}
	return resumeThreads(pid)
}

// resumeThreads resumes every thread of process pid (a process created
// suspended has one, its main thread). os/exec does not expose the thread
// handle CreateProcess returned, so the threads are found by a snapshot.
func resumeThreads(pid int) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return err
	}
	defer func() { _ = windows.CloseHandle(snap) }()
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != uint32(pid) {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return err
		}
		_, err = windows.ResumeThread(th)
		_ = windows.CloseHandle(th)
		if err != nil {
			return err
		}
		resumed++
	}
	if resumed == 0 {
		return fmt.Errorf("no thread of process %d to resume", pid)
	}
	return nil
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION.
type jobAccounting struct {
	TotalUserTime, TotalKernelTime                     int64
	ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime int64
	TotalPageFaultCount, TotalProcesses                uint32
	ActiveProcesses, TotalTerminatedProcesses          uint32
}

// alive reports whether a process of the job still runs.
func (r *jobRange) alive() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.job == 0 {
		return false, nil
	}
	var acct jobAccounting
	if err := windows.QueryInformationJobObject(r.job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&acct)), uint32(unsafe.Sizeof(acct)), nil); err != nil {
		return false, fmt.Errorf("subprocess: job of pid %d: %w", r.pid, err)
	}
	return acct.ActiveProcesses > 0, nil
}

// signal maps the two signals Terminate sends: SIGTERM is a CTRL_BREAK
// to the command's console process group (a console program may end
// cleanly); when that cannot be delivered (the harness has no console),
// and for SIGKILL, every process of the job is terminated at once
// (TerminateJobObject, exit code 1).
func (r *jobRange) signal(sig syscall.Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.job == 0 {
		return
	}
	if sig == syscall.SIGTERM && windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(r.pid)) == nil {
		return
	}
	_ = windows.TerminateJobObject(r.job, 1)
}

// release closes the job (killing whatever it still holds).
func (r *jobRange) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.job != 0 {
		_ = windows.CloseHandle(r.job)
		r.job = 0
	}
}
