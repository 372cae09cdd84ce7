// Package core is the harness runtime: plugins, fibers, effects, services,
// events and scopes.
package core
