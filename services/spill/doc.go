// Package spill is the spill store: the service that keeps the complete text of
// an oversized result outside the model's context and hands back a locator the
// model can read it through.
//
// The picture:
//
//	spill-policy (tools post-execute) ──SaveText──► Store (key "spillStore")
//	                                                  │ spill-local plugin
//	                                                  ▼
//	<root>/session-<sha256(owner)[:12]>/<12 hex random>-<sanitised name>   (dir 0700, file 0600)
//
// [Store] has one operation, SaveText. It stores the content verbatim, reports
// the exact byte count, and returns an opaque [Locator] plus a retrieval hint
// written for the model. It rejects on a real storage failure; the caller
// decides how to degrade (the spill policy keeps the original content).
//
// The spill-local plugin ([Plugin]) provides a [*LocalStore]:
//   - one private directory per owner session (mode 0700, never a symlink,
//     owned by this user), named from a hash of the session id;
//   - files created with O_CREAT|O_EXCL|O_NOFOLLOW and mode 0600 (also under
//     umask 000), named from 96 random bits plus the suggested name sanitised
//     by [EncodeSegment] into one segment, so "../" and separators cannot
//     escape and names cannot be predicted to plant a symlink;
//   - retention: artifacts older than MaxAge are deleted at start and on a
//     timer; unless Keep is set, the owner directories this activation wrote
//     are deleted when the plugin is disposed (normal exit, Ctrl-C, SIGTERM of
//     the CLI), which is bug case B25.
//
// The contract follows dsh's SpillStore/spill-local (reference part B1, B2)
// with B25's privacy and retention rules on top.
package spill
