package core

import "strings"

// protectedPaths is the list ProtectedPaths returns a copy of.
var protectedPaths = [...]string{
	"harness.yml",
	"harness.patch.yml",
	".harness/",
	".claude/",
	".mcp.json",
	".git/config",
	".git/hooks/",
	".gitmodules",
}

// ProtectedPaths returns the paths, relative to a workspace and to each
// other directory an agent may write, that an agent must not change
// unasked, because the harness (or git, or a tool the user runs later)
// trusts them and runs what they say outside any sandbox: the harness's
// manifest and project patch, its agent definitions (.harness/), Claude
// Code settings with their hooks and agents (.claude/), MCP servers
// (.mcp.json), and git's config, hooks and submodule URLs. A trailing
// slash marks a directory, protected with everything in it. Each call
// returns a new slice.
//
// It is the one list of both enforcers, which must agree: the subprocess
// sandbox (package services/subprocess/sandbox) binds these paths
// read-only and undoes what a sandboxed command changed in them, and the
// permission plugin asks before a file tool writes one, whatever its
// allow rules say. Neither may import the other, so the list lives here.
func ProtectedPaths() []string { return append([]string(nil), protectedPaths[:]...) }

// IsProtectedPath reports whether rel, a slash-separated clean path
// relative to a workspace root, is one of [ProtectedPaths] or lies inside a
// protected directory. It does not allocate.
func IsProtectedPath(rel string) bool {
	for _, p := range protectedPaths {
		if dir, ok := strings.CutSuffix(p, "/"); ok {
			if rel == dir || strings.HasPrefix(rel, p) {
				return true
			}
		} else if rel == p {
			return true
		}
	}
	return false
}
