package spill

import (
	"strings"

	"github.com/dshgo/harness/core"
)

// DefaultOwner is the spill owner of calls made outside any session scope
// (for example `harness tool`).
const DefaultOwner = "default"

// SessionScopePrefix opens the label of an agent session's scope
// ("session:<id>", services/agent).
const SessionScopePrefix = "session:"

// OwnerOf returns the spill owner (the session id, reference B1/B3) of a
// call made in scope: the scope's label without SessionScopePrefix, or
// DefaultOwner without a scope or label.
func OwnerOf(scope *core.ScopeID) string {
	if scope == nil || scope.Label() == "" {
		return DefaultOwner
	}
	if id := strings.TrimPrefix(scope.Label(), SessionScopePrefix); id != "" {
		return id
	}
	return scope.Label()
}
