package tools

import "github.com/dshgo/harness/core"

// ReadPolicy is an optional service for tools that read files the model did
// not name one by one, such as grep walking a directory: before showing a
// file's contents they ask whether reading that file is denied, so a deny
// rule on a file (`read(.env)`) also hides it from a search of the directory
// that holds it, as Claude Code applies its Read rules to Grep. The
// permission plugin provides it under ReadPolicyKey; without it nothing is
// filtered.
type ReadPolicy interface {
	// ReadDenied reports whether reading the file at path (absolute) is
	// denied for the execution e, and the rule that denies it as written.
	// Only explicit denials count: a path that would need approval is not
	// denied.
	ReadDenied(e *Execution, path string) (rule string, denied bool)
}

// ReadPolicyKey is the service key of the read policy ("readPolicy").
var ReadPolicyKey = core.NewKey[ReadPolicy]("readPolicy")

// ModeReporter is implemented by a ReadPolicy service that has a permission
// mode (the permission plugin's): hooks tell their scripts the mode in
// force (Claude Code's `permission_mode`).
type ModeReporter interface {
	// PermissionMode returns Claude Code's name of the permission mode in
	// force for calls of scope (nil: unscoped): default, acceptEdits, plan,
	// bypassPermissions or dontAsk.
	PermissionMode(scope *core.ScopeID) string
}

// ModeSwitcher is implemented by a ReadPolicy service whose permission
// mode can change for one session (the permission plugin's): an approved
// plan (the plan-mode plugin's exit_plan_mode) switches the session out of
// plan mode to the mode the person chose.
type ModeSwitcher interface {
	// SetPermissionMode puts calls of scope and of its descendants (a
	// session's subagents) under mode (Claude Code's names: default,
	// acceptEdits, plan, bypassPermissions, dontAsk). A nil scope changes
	// the unscoped calls. Deny rules hold in every mode.
	SetPermissionMode(scope *core.ScopeID, mode string) error
}
