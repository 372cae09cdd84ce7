// Package lsp is the lsp plugin: language servers (gopls by default)
// started on demand over stdio, whose diagnostics are appended to the
// results of file edits, and a read-only diagnostics tool.
//
//	edit/write call ──► tools.PostExecute (this plugin)
//	                     │ presentation of kind edit: its files
//	                     ▼
//	               server for (language, root)  ── started at first use, in the
//	                     │ didOpen / didChange      subprocess row's sandbox;
//	                     ▼                          restarted MaxRestarts times
//	               publishDiagnostics of that version, then Settle
//	                     │
//	                     ▼
//	result + "LSP diagnostics for calc.go:\n  calc.go:12:5: error: … (compiler)"
//
// Servers are processes of the subprocess service, under the same
// containment policy as bash calls (with its toolchain caches, which gopls
// needs), and are stopped (shutdown, exit, then the process range
// terminated) when the row's scope ends. A server that is not installed is
// not used (logged once at debug); one that keeps exiting is reported once
// in a result and left stopped.
//
// The JSON-RPC client is a small one of this package (Content-Length
// framing, requests with ids and context cancellation, notifications, every
// message bounded by MaxMessageBytes): the client needs four methods and
// one notification, and the LSP libraries for Go are either internal to
// gopls or unmaintained with heavy dependencies.
//
// Not supported: completions, hover, rename, code actions, formatting;
// files changed other than by an edit-kind tool (bash, say) are seen by a
// server only when they are next edited or checked with the tool.
package lsp
