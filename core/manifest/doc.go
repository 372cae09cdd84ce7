// Package manifest reads harness.yml, the deployment manifest: which plugins
// a harness mounts, with which ids and configs.
//
//	plugins:
//	  - id: bash                 # unique, stable; defaults to name when that is unique
//	    name: tool-bash          # a plugin name in the compiled-in catalog
//	    config: {timeout: 2m}    # decoded strictly into the plugin's config struct
//	    disabled: false          # keep the row, do not mount it
//	  - id: tools-group
//	    group: true              # config is a list of nested rows
//	    config:
//	      - {id: grep, name: tool-search}
//
// The dialect is strict, because every silent acceptance dsh and others
// shipped became a production incident: exactly one YAML document; no
// duplicate keys; no tabs; unknown keys (top level, row, or plugin config)
// are errors; the only tags are !env (`!env VAR`, an error when VAR is
// unset, or `!env [VAR, default]`), allowed only inside config, and
// !append on a top-level config key (see [AppendTag]); `${...}` stays
// literal. Every error names the place as FILE:LINE:COL.
//
// YAML typing follows yaml.v3 (YAML 1.2 core schema with yaml.v3's
// leniencies): `no` stays the string "no" in a string field, and `yes`,
// `on`, `true` decode as true in a bool field. A null config (`config: ~`)
// means all defaults. `plugins: ~` means no plugins.
//
// Patch files (dsh cordis.patch.yml) are a top-level list: a row
// `{id: X, field: value, …}` replaces those fields of row X (its config
// is merged into the row's config at the top level, and `key: !append
// [items]` extends a list; docs/manifest.md has the rules), `{insert: [rows]}` appends rows, and
// `{id: G, insert: [rows]}` appends into group G. Patches compose over deep
// copies, so a composed manifest never aliases its layers.
package manifest
