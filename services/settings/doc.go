// Package settings is the settings service behind the web app's settings
// page: every plugin row of the running manifest is a settings namespace
// whose fields are its config type's, described by the plugin's JSON Schema
// (`harness schema NAME`).
//
//	Get ──► rows: id, plugin, schema, values (defaults applied; secret fields never sent), revision
//	Update(id, revision, changes)
//	   revision fence ─► merge into the user's patch layer ─► compose over the running manifest
//	   ─► decode + Validate as at boot (field-path errors) ─► loader.Reconcile (hot, all-or-nothing)
//	   ─► write $XDG_CONFIG_HOME/harness/settings.yml (0600 in 0700)
//
// The user's saved values are a patch layer (docs/manifest.md: rows
// `{id, config: {...}}`) in SETTINGS_FILE, layered over harness.yml and the
// --patch files by `harness serve` at boot and at every reload. A change to
// a row that the web app itself runs on (web, workspaces) is saved and
// marked "applies on restart" instead of being reconciled, since restarting
// those would end the page's own server.
//
// Secret fields (`harness:"secret"`, writeOnly in the schema) are
// write-only: Get reports only whether one is set; Update accepts a new
// value, and the settings file that stores it is private to the user.
//
// Revisions fence concurrent edits: the revision is a digest of the
// settings file; an Update naming another revision fails with
// [ErrConflict] and changes nothing.
package settings
