package manifest

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// Patch is one parsed patch layer (a top-level list of patch rows).
type Patch struct {
	File string
	Rows []PatchRow
}

// PatchRow either overrides fields of the row ID (the fields given:
// name, config, disabled) or, with Insert, appends rows to the root list
// (ID empty) or to group ID. A config mapping is merged into the row's
// config at the top level (see [Compose]).
type PatchRow struct {
	ID     string
	Name   *string
	Config *yaml.Node
	// ConfigSet is true when the patch sets config (possibly to null).
	ConfigSet bool
	Disabled  *bool
	Insert    []Entry
	Pos       Pos
}

// ReadPatchFile parses the patch file at path.
func ReadPatchFile(path string) (*Patch, error) {
	data, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	return ParsePatch(path, data)
}

// ParsePatch parses a patch layer.
func ParsePatch(file string, data []byte) (*Patch, error) {
	root, err := decodeDocument(file, data)
	if err != nil {
		return nil, err
	}
	p := &Patch{File: file}
	if root == nil || (root.Kind == yaml.ScalarNode && root.Tag == "!!null") {
		return p, nil
	}
	if root.Kind != yaml.SequenceNode {
		return nil, errAt(file, root, "a patch file must be a list of patch rows")
	}
	for _, n := range root.Content {
		if n.Kind != yaml.MappingNode {
			return nil, errAt(file, n, "a patch row must be a mapping")
		}
		row := PatchRow{Pos: Pos{File: file, Line: n.Line, Col: n.Column}}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			switch {
			case k.Value == "insert" && (v.Tag == "!env" || v.Tag == AppendTag):
				// The inserted rows are parsed as manifest rows below:
				// their configs take !env (and !append on a top-level
				// key) as a harness.yml row's do; the list itself not.
				return nil, errAt(file, v, "%s is not allowed on insert (only inside a row's config)", v.Tag)
			case k.Value != "config" && k.Value != "insert":
				if err := noEnv(file, v); err != nil {
					return nil, err
				}
				if err := noAppend(file, v); err != nil {
					return nil, err
				}
			}
			if (k.Value == "id" || k.Value == "name") && (v.Kind != yaml.ScalarNode || v.Tag != "!!str" || v.Value == "") {
				return nil, errAt(file, v, "%s must be a non-empty string", k.Value)
			}
			switch k.Value {
			case "id":
				row.ID = v.Value
			case "name":
				s := v.Value
				row.Name = &s
			case "config":
				row.ConfigSet = true
				if err := checkAppends(file, v); err != nil {
					return nil, err
				}
				if !(v.Kind == yaml.ScalarNode && v.Tag == "!!null") {
					row.Config = v
				}
			case "disabled":
				var b bool
				if err := v.Decode(&b); err != nil {
					return nil, errAt(file, v, "disabled must be true or false")
				}
				row.Disabled = &b
			case "insert":
				rows, err := parseRows(file, v)
				if err != nil {
					return nil, err
				}
				row.Insert = rows
			default:
				return nil, errAt(file, k, "unknown patch key %q (known keys: id, name, config, disabled, insert)", k.Value)
			}
		}
		if row.ID == "" && row.Insert == nil {
			return nil, errAt(file, n, "a patch row needs an id (or is an insert)")
		}
		if row.Insert != nil && (row.Name != nil || row.ConfigSet || row.Disabled != nil) {
			return nil, errAt(file, n, "an insert row carries only insert (and the group id)")
		}
		p.Rows = append(p.Rows, row)
	}
	return p, nil
}

// Compose returns a new manifest: m with the patches applied in order. m
// and the patches are not modified and the result shares no nodes with
// them. A patch row whose id matches nothing, or that inserts into a row
// that is not a group, is an error naming the patch row.
//
// A patch row's config is merged into the row's config at the top level:
// each key the patch gives replaces that key's whole value (a list or a
// nested mapping is replaced, not merged), a key given as ~ is removed,
// and keys the patch does not mention are kept. So a patch
// `{id: permission, config: {mode: bypass}}` keeps the row's deny rules.
// `config: ~` resets the row to the plugin's defaults. The config is
// replaced instead when either side is not a mapping, or when the patch
// row also changes the plugin name (the old keys belong to another
// plugin).
func Compose(m *Manifest, patches ...*Patch) (*Manifest, error) {
	out := m.Clone()
	for _, p := range patches {
		out.Patches = append(out.Patches, p.File)
		for _, row := range p.Rows {
			if err := applyRow(out, p.File, row); err != nil {
				return nil, err
			}
		}
	}
	if err := checkIDs(out.Plugins, map[string]Pos{}); err != nil {
		return nil, err
	}
	return out, nil
}

func applyRow(m *Manifest, file string, row PatchRow) error {
	if row.Insert != nil {
		ins := make([]Entry, len(row.Insert))
		for i, e := range row.Insert {
			ins[i] = e.clone()
		}
		if row.ID == "" {
			m.Plugins = append(m.Plugins, ins...)
			return nil
		}
		g := find(m.Plugins, row.ID)
		if g == nil {
			return &Error{Pos: row.Pos, Msg: fmt.Sprintf("patch insert: no row with id %q", row.ID)}
		}
		if !g.Group {
			return &Error{Pos: row.Pos, Msg: fmt.Sprintf("patch insert: row %q is not a group", row.ID)}
		}
		g.Children = append(g.Children, ins...)
		g.Source = file
		return nil
	}
	e := find(m.Plugins, row.ID)
	if e == nil {
		return &Error{Pos: row.Pos, Msg: fmt.Sprintf("patch: no row with id %q", row.ID)}
	}
	renamed := row.Name != nil && *row.Name != e.Name
	if row.Name != nil {
		if e.Group {
			return &Error{Pos: row.Pos, Msg: fmt.Sprintf("patch: row %q is a group and has no name", row.ID)}
		}
		e.Name = *row.Name
		e.Pos = row.Pos // errors about the plugin name point at the patch that set it
		e.NamePos = row.Pos
	}
	if row.ConfigSet {
		if e.Group {
			return &Error{Pos: row.Pos, Msg: fmt.Sprintf("patch: set the rows of group %q with insert or by their ids", row.ID)}
		}
		if err := mergeConfig(e, file, row.Config, renamed); err != nil {
			return err
		}
	}
	if row.Disabled != nil {
		e.Disabled = *row.Disabled
	}
	e.Source = file
	return nil
}

func find(es []Entry, id string) *Entry {
	for i := range es {
		if es[i].ID == id {
			return &es[i]
		}
		if f := find(es[i].Children, id); f != nil {
			return f
		}
	}
	return nil
}

// mergeConfig applies a patch row's config (from file) to e: a top-level
// merge when both are mappings (or e has none) and the plugin stays the
// same, else a replacement. Either way file becomes e.ConfigSource; kept
// keys from other files remember theirs in e.ConfigSources, so errors
// about them point at the file they were written in.
func mergeConfig(e *Entry, file string, patch *yaml.Node, renamed bool) error {
	base := e.Config
	if patch == nil || patch.Kind != yaml.MappingNode || renamed || (base != nil && base.Kind != yaml.MappingNode) {
		e.Config, e.ConfigSource, e.ConfigSources = cloneNode(patch), file, nil
		return nil
	}
	merged := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: patch.Line, Column: patch.Column}
	sources := map[string]string{}
	given := map[string]int{} // key → its index in patch.Content
	for i := 0; i+1 < len(patch.Content); i += 2 {
		given[patch.Content[i].Value] = i
	}
	// Base keys keep their order (a patched key takes its value in place);
	// keys new to the row follow in the patch's order.
	put := func(k, v *yaml.Node) {
		if !(v.Kind == yaml.ScalarNode && v.Tag == "!!null") { // `key: ~` removes the key
			merged.Content = append(merged.Content, cloneNode(k), cloneNode(v))
		}
	}
	if base != nil {
		for i := 0; i+1 < len(base.Content); i += 2 {
			k := base.Content[i]
			if j, ok := given[k.Value]; ok {
				if add := patch.Content[j+1]; add.Tag == AppendTag {
					// `key: !append [...]` extends the row's list.
					v, err := appendTo(base.Content[i+1], add, e.configSource(k.Value))
					if err != nil {
						return &Error{Pos: Pos{File: file, Line: add.Line, Col: add.Column}, Msg: fmt.Sprintf("patch row %q: config key %s: %v", e.ID, k.Value, err)}
					}
					merged.Content = append(merged.Content, cloneNode(patch.Content[j]), v)
					delete(given, k.Value)
					continue
				}
				put(patch.Content[j], patch.Content[j+1])
				delete(given, k.Value)
				continue
			}
			put(k, base.Content[i+1])
			sources[k.Value] = e.configSource(k.Value)
		}
	}
	for i := 0; i+1 < len(patch.Content); i += 2 {
		if _, ok := given[patch.Content[i].Value]; ok {
			put(patch.Content[i], patch.Content[i+1])
		}
	}
	for k, f := range sources {
		if f == file {
			delete(sources, k)
		}
	}
	if len(sources) == 0 {
		sources = nil
	}
	e.Config, e.ConfigSource, e.ConfigSources = merged, file, sources
	return nil
}
