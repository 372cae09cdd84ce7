// Package web is the web plugin and the front end behind `harness serve`: an
// HTTP server on loopback (a token, Host and Origin checked on every
// request) that serves the browser app (assets/), streams each session's
// agent events to it, puts approval questions to the person in the page,
// and exposes the workspaces, file views, settings cards and slots. Like the
// CLI and the TUI it renders the agent's events and the tool-call
// presentation model; it decodes no tool's arguments.
package web
