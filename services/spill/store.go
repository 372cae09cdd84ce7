package spill

import (
	"context"
	"errors"
	"fmt"
)

// Store is the spill service (key "spillStore"): it persists the complete text
// of an oversized result and returns where it went.
//
// SaveText stores Content verbatim (no trimming, no re-encoding) and returns a
// [Ref] whose Bytes is exactly len(Content). It returns an error on a real
// storage failure (permissions, disk full, backend closed) and for an invalid
// request ([ErrInvalidRequest]); it never returns a partial Ref. A Store has no
// retrieval, search or delete operation: the model reads a spilled artifact
// with its ordinary tools, guided by Ref.Hint.
type Store interface {
	SaveText(ctx context.Context, req SaveRequest) (Ref, error)
}

// Locator is an opaque address of a spilled artifact. For the local provider it
// is the absolute file path; other backends may use a URI or a key. Callers show
// it to the model and never parse it.
type Locator string

// SourceKind names what produced spilled content.
type SourceKind string

const (
	// SourceTool marks the result of a tool call (ToolName, CallID, Label).
	SourceTool SourceKind = "tool"
	// SourceSessionReference marks text captured from another session
	// (SessionID is the captured session, Label describes the excerpt).
	SourceSessionReference SourceKind = "session-reference"
)

// Owner is the namespace a spill is stored under. Forked sessions keep reading
// their parent's locators; new spills after a fork use the child's id.
type Owner struct {
	// SessionID is the owning session's id; required.
	SessionID string `json:"sessionId"`
}

// Source is descriptive provenance of spilled content. It is never access
// control: a backend may record it but must not trust it.
type Source struct {
	// Kind is SourceTool or SourceSessionReference.
	Kind SourceKind `json:"kind"`
	// ToolName is the tool that produced the result (Kind tool).
	ToolName string `json:"toolName,omitempty"`
	// CallID is the tool call's id (Kind tool).
	CallID string `json:"callId,omitempty"`
	// SessionID is the captured session (Kind session-reference).
	SessionID string `json:"sessionId,omitempty"`
	// Label says which part was saved, e.g. "result" or "dispatch".
	Label string `json:"label,omitempty"`
}

// SaveRequest is one SaveText call.
type SaveRequest struct {
	// Owner is the storage namespace (Owner.SessionID is required).
	Owner Owner
	// Source is provenance only.
	Source Source
	// SuggestedName is a naming hint such as "bash.txt". It is never used as a
	// path: backends reduce it to one sanitised segment, and the final name is
	// derived from it but never equal to it.
	SuggestedName string
	// Content is the complete text, stored byte for byte.
	Content string
}

// Ref is the outcome of a successful SaveText.
type Ref struct {
	// Locator is where the content went (absolute path for spill-local).
	Locator Locator `json:"locator"`
	// Hint tells the model how to read the artifact back.
	Hint string `json:"hint"`
	// Bytes is the exact stored size: len(Content) in bytes.
	Bytes int64 `json:"bytes"`
}

// FileAdopter is implemented by stores that can take over a file that
// already holds the content (for example a subprocess stream spill of up to
// 64 MiB), so the caller never loads it into memory. AdoptFile moves (or
// copies, then removes) the file at path into the store as req would have
// saved it (req.Content is ignored) and returns its reference; on error the
// store keeps nothing (the file normally stays at path).
type FileAdopter interface {
	AdoptFile(ctx context.Context, req SaveRequest, path string) (Ref, error)
}

// ErrInvalidRequest is wrapped by SaveText errors caused by a malformed request
// (missing owner, unknown source kind).
var ErrInvalidRequest = errors.New("spill: invalid save request")

// ErrClosed is returned by SaveText after the store was disposed.
var ErrClosed = errors.New("spill: store is closed")

// Validate checks the request fields every backend relies on. Errors wrap
// [ErrInvalidRequest] and name the field.
func (r SaveRequest) Validate() error {
	if r.Owner.SessionID == "" {
		return fmt.Errorf("%w: owner.sessionId: must be non-empty", ErrInvalidRequest)
	}
	switch r.Source.Kind {
	case SourceTool, SourceSessionReference:
	case "":
		return fmt.Errorf("%w: source.kind: must be %q or %q", ErrInvalidRequest, SourceTool, SourceSessionReference)
	default:
		return fmt.Errorf("%w: source.kind: unknown kind %q", ErrInvalidRequest, r.Source.Kind)
	}
	return nil
}
