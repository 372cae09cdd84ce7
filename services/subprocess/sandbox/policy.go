// Package sandbox turns a subprocess sandbox policy into OS enforcement.
//
// A [Policy] says what a command may do: read everything except the
// DenyRead paths, write nowhere (read-only), or only in its workspace and
// the writable roots (workspace-write), and reach the network or not. A
// [Backend] wraps one spawn so that the kernel enforces it, and returns a
// [Report] saying how much of the policy it enforces (full, partial with
// reasons, or none). One backend per platform is chosen by [Probe]; Linux
// has two, macOS one:
//
//   - bwrap (bubblewrap): mount, PID, IPC and (network off) network
//     namespaces; / read-only, the workspace and writable roots bound
//     writable, fresh /dev, its own /proc, private /tmp, denied paths
//     masked. Full enforcement.
//   - landlock: the Linux Landlock LSM, applied to a dedicated OS thread
//     that forks the child and is then discarded; the harness's other
//     threads are never restricted. Partial: no PID namespace, no private /tmp, and
//     the network rules of the kernel's ABI only.
//   - seatbelt (macOS): sandbox-exec with a profile generated from the
//     policy: writes only in the writable directories minus the protected
//     paths, denied paths neither readable nor writable, no network or
//     only the harness's proxy. Partial: no private PID namespace or /tmp.
//
// The package is used by services/subprocess (Spec.Sandbox); docs/sandbox.md
// says exactly what is and is not contained.
package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Mode is a sandbox policy's file-system mode.
type Mode string

const (
	// ModeOff runs the command unsandboxed.
	ModeOff Mode = "off"
	// ModeReadOnly lets the command read (except DenyRead) and write
	// nowhere but its private /tmp and /dev/null-like devices.
	ModeReadOnly Mode = "read-only"
	// ModeWorkspaceWrite is ModeReadOnly plus write access to the workspace
	// (the spawn's working directory) and the writable roots.
	ModeWorkspaceWrite Mode = "workspace-write"
)

// Policy is what a sandboxed command may do. The zero value (mode "") is
// not a valid policy; a nil *Policy on a spawn means "not sandboxed".
type Policy struct {
	// Mode is off (no sandbox), read-only (read everything but denyRead and
	// write nowhere) or workspace-write (also write the working directory and
	// writableRoots).
	Mode Mode `yaml:"mode" json:"mode" jsonschema:"enum=off,enum=read-only,enum=workspace-write"`
	// WritableRoots are absolute directories writable in workspace-write
	// mode in addition to the workspace ("~/" expands to the home
	// directory). A root that does not exist is skipped.
	WritableRoots []string `yaml:"writableRoots" json:"writableRoots,omitempty"`
	// Network is off (the default: no network), on (the host's network,
	// unfiltered), or a mapping of the domains reachable through the
	// harness's proxy: {allowedDomains: [...], deniedDomains: [...],
	// packageRegistries: true} (see Network).
	Network Network `yaml:"network" json:"network,omitzero"`
	// DenyRead are paths whose content the command must not read: absolute
	// paths, "~/" paths, or doublestar patterns; a relative pattern (such
	// as **/.env) applies inside the workspace and each writable root.
	// The entry "@defaults" stands for the default credential locations
	// (docs/sandbox.md lists them); the default harness.yml writes it.
	DenyRead DenyList `yaml:"denyRead" json:"denyRead,omitempty"`
	// Visible are absolute (or "~/") directories inside a denyRead
	// directory that stay readable: a denied directory that holds one
	// hides everything in it but them (denyRead: [~/work], visible:
	// [~/work/app]). A command whose working directory or writable root is
	// hidden that way is refused. A fleet job's run adds the worker's work
	// root to denyRead and its own work dir here.
	Visible []string `yaml:"visible" json:"visible,omitempty"`
	// Caches are the toolchain caches a workspace-write command writes in
	// the harness's own cache root ($XDG_CACHE_HOME/harness/sandbox, 0700)
	// instead of the user's, which stay read-only: true (the default: go,
	// npm, yarn, pip, cargo and xdg), false, or a list of those names. Each
	// is a directory of the cache root that the command's environment
	// points the toolchain at (GOCACHE and GOMODCACHE, npm_config_cache,
	// YARN_CACHE_FOLDER, PIP_CACHE_DIR, CARGO_HOME, XDG_CACHE_HOME); they
	// persist across commands and sessions. Read-only mode gets none.
	Caches Caches `yaml:"caches" json:"caches,omitzero"`
}

// Enabled reports whether p asks for a sandbox (mode read-only or
// workspace-write).
func (p *Policy) Enabled() bool {
	return p != nil && (p.Mode == ModeReadOnly || p.Mode == ModeWorkspaceWrite)
}

// Clone returns a deep copy.
func (p Policy) Clone() Policy {
	p.WritableRoots = slices.Clone(p.WritableRoots)
	p.DenyRead = slices.Clone(p.DenyRead)
	p.Visible = slices.Clone(p.Visible)
	p.Network = p.Network.Clone()
	p.Caches = p.Caches.clone()
	return p
}

// Validate reports the first bad field by its path (mode, writableRoots[i],
// denyRead[i]). A denyRead entry with glob characters must parse as a
// doublestar pattern.
func (p Policy) Validate() error {
	switch p.Mode {
	case ModeOff, ModeReadOnly, ModeWorkspaceWrite:
	case "":
		return errors.New("mode: required (off, read-only or workspace-write)")
	default:
		return fmt.Errorf("mode: must be off, read-only or workspace-write, got %q", p.Mode)
	}
	for i, r := range p.WritableRoots {
		if strings.IndexByte(r, 0) >= 0 || !(filepath.IsAbs(r) || strings.HasPrefix(r, "~/")) {
			return fmt.Errorf("writableRoots[%d]: must be an absolute or ~/ path, got %q", i, r)
		}
	}
	if err := p.Network.Validate(); err != nil {
		return fmt.Errorf("network.%w", err)
	}
	if err := p.Caches.Validate(); err != nil {
		return fmt.Errorf("caches%w", err)
	}
	for i, v := range p.Visible {
		if strings.IndexByte(v, 0) >= 0 || !(filepath.IsAbs(v) || strings.HasPrefix(v, "~/")) {
			return fmt.Errorf("visible[%d]: must be an absolute or ~/ path, got %q", i, v)
		}
	}
	for i, d := range p.DenyRead {
		if d == "" || strings.IndexByte(d, 0) >= 0 {
			return fmt.Errorf("denyRead[%d]: must be a non-empty path or pattern", i)
		}
		if hasMeta(d) && !doublestar.ValidatePattern(filepath.ToSlash(d)) {
			// A pattern that does not parse would hide nothing when the
			// command starts (its walk fails): refuse it here.
			return fmt.Errorf("denyRead[%d]: invalid glob %q: %w (an unclosed [ or {, or a trailing \\; write \\[ for a literal [)", i, d, doublestar.ErrBadPattern)
		}
	}
	return nil
}

// Enforcement says how much of a policy a backend enforces.
type Enforcement string

const (
	// EnforcementFull: every part of the policy is enforced by the kernel.
	EnforcementFull Enforcement = "full"
	// EnforcementPartial: some parts are enforced; Report.Reasons lists
	// what is not.
	EnforcementPartial Enforcement = "partial"
	// EnforcementNone: the command runs unsandboxed.
	EnforcementNone Enforcement = "none"
)

// Report is what a backend enforces for one policy (or one spawn).
type Report struct {
	// Backend is "bwrap", "landlock", "seatbelt" or "none".
	Backend string `json:"backend"`
	// Enforcement is full, partial or none.
	Enforcement Enforcement `json:"enforcement"`
	// Reasons explain a partial or none enforcement, one short sentence
	// each; empty for full.
	Reasons []string `json:"reasons,omitempty"`
	// Shared is set for a spawn that ran in a sandbox shared with the
	// other commands of the same policy and workspace (a bwrap zygote:
	// same PID namespace and /tmp), rather than in a sandbox of its own.
	Shared bool `json:"shared,omitempty"`
}

// Unsandboxed is the report of a spawn that runs without a sandbox.
func Unsandboxed(reason string) Report {
	return Report{Backend: "none", Enforcement: EnforcementNone, Reasons: []string{reason}}
}

// String renders "bwrap: full", "bwrap (shared): full" or
// "landlock: partial (a; b)".
func (r Report) String() string {
	s := r.Backend
	if r.Shared {
		s += " (shared)"
	}
	s += ": " + string(r.Enforcement)
	if len(r.Reasons) > 0 {
		s += " (" + strings.Join(r.Reasons, "; ") + ")"
	}
	return s
}

// ErrUnavailable is wrapped by the error of a spawn that requires a
// sandbox when no backend works. Its message says how to install
// bubblewrap or opt out.
var ErrUnavailable = errors.New("sandbox required but no sandbox backend works on this machine")

// UnavailableError is the spawn error when a sandbox is required and no
// backend works; Causes are the probe failures of each backend.
type UnavailableError struct{ Causes []error }

func (e *UnavailableError) Error() string {
	var b strings.Builder
	b.WriteString(ErrUnavailable.Error())
	for _, c := range e.Causes {
		b.WriteString("; ")
		b.WriteString(c.Error())
	}
	b.WriteString(". " + unavailableHint + ", " +
		"or opt out of the sandbox with `sandbox: {mode: off}` in the subprocess row of harness.yml (commands then run with your full permissions)")
	return b.String()
}

// Is makes errors.Is(err, ErrUnavailable) hold.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }
