package toolbash

import (
	"strings"

	"github.com/dshgo/harness/services/subprocess"
)

// readOnlySigns are what a program prints when a write was refused by a
// read-only mount (EROFS) or, for git receiving a push, the object
// directory it could not create.
var readOnlySigns = []string{"read-only file system", "erofs", "unable to create temporary object directory"}

// sandboxWriteHint is the note for a command that failed in the
// workspace-write sandbox after writing outside the directories it may
// write ("" otherwise): without it a push to a remote outside the
// workspace ends in git's "unable to create temporary object directory",
// which says nothing of the sandbox. It only explains; leaving the sandbox
// stays the person's decision (a call with sandbox "off" asks).
func sandboxWriteHint(v Value, policy *subprocess.SandboxPolicy, dir string) string {
	if policy == nil || policy.Mode != subprocess.SandboxWorkspaceWrite || v.ExitCode == nil || *v.ExitCode == 0 {
		return ""
	}
	out := strings.ToLower(v.Stdout.Text + "\n" + v.Stderr.Text + "\n" + v.Stderr.Head)
	for _, s := range readOnlySigns {
		if strings.Contains(out, s) {
			return "sandbox: the command tried to write outside the directories it may write (" + dir +
				", the sandbox's writable roots and its toolchain cache root; everything else is read-only). " +
				"A command that must write elsewhere (a push to a remote on this machine, a global install) has to run outside the sandbox: " +
				"call bash again with \"sandbox\": \"off\" and a justification, which asks the user"
		}
	}
	return ""
}
