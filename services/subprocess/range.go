package subprocess

import "syscall"

// managedRange is the set of processes a handle owns: what Terminate signals
// and what WaitForExit watches.
type managedRange interface {
	// alive reports whether any member still runs (zombies count as gone).
	alive() (bool, error)
	// signal delivers sig to every member; errors are swallowed.
	signal(sig syscall.Signal)
	// release frees the range's resources once it is empty.
	release()
}
