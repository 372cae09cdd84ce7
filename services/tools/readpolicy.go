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
