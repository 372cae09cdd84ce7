// Package mcp is the mcp plugin: a Model Context Protocol client, built on
// the official Go SDK, that turns the tools of stdio and streamable-HTTP
// servers into registry tools named mcp__SERVER__TOOL.
//
//	harness.yml row ─► Config (servers / mcpServers / .mcp.json) ─► one supervisor per server (in parallel)
//	   stdio: subprocess.Spawn (own range, scrubbed env) ── stdin/stdout pipes ── SDK IOTransport
//	   http:  SDK StreamableClientTransport (+ headers)        sse: SDK SSEClientTransport
//	   initialize ─► tools/list (all pages) ─► child fiber "mcp-tools": tools.DefineRaw per tool
//	   list_changed ─► re-list ─► replace the child fiber      exit ─► exited (restart: on-failure)
//	   dispose ─► close stdin ─► grace ─► SIGTERM range ─► grace ─► SIGKILL ─► range empty
//
// One row holds every server (see docs/mcp.md for why). A server that fails
// to connect is reported (Manager.Servers, harness check, harness mcp list)
// with its exit status and stderr tail, and does not affect the others.
// Calls have a timeout; at the timeout, or when the caller cancels, the
// SDK sends notifications/cancelled. Server instructions go into the
// mcp-servers prompt section. The Manager is provided under Key for the CLI.
package mcp
