// Package workspaces is the workspaces service: a persistent record of each
// directory a user works in through the web app, with its sessions.
//
//	Add(path) ──► canonical path (absolute, symlinks resolved, a directory)
//	              ──► stable id (hash of the path) ──► STATEDIR/workspaces.json
//	AddSession(id, session, cwd)   cwd must be the workspace's path
//	Touch(id)                      the last-used workspace lists (and opens) first
//
// The record is one JSON file (0600 in a 0700 directory) rewritten
// atomically (temporary file, then rename) on every change, so a crash
// leaves either the old or the new list. The service does not read session
// logs: a caller that has the sessions service checks each session's header
// against the workspace path with [Service.Validate].
//
// The plugin `workspaces` provides the service under [Key]; its stateDir
// defaults to the sessions store's ($XDG_STATE_HOME/harness).
package workspaces
