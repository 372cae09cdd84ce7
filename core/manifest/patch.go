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

// PatchRow either overrides fields of the row ID (Set holds the fields
// given: "name", "config", "disabled") or, with Insert, appends rows to the
// root list (ID empty) or to group ID.
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
			if k.Value != "config" {
				if err := noEnv(file, v); err != nil {
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
func Compose(m *Manifest, patches ...*Patch) (*Manifest, error) {
	out := m.Clone()
	for _, p := range patches {
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
		e.Config = cloneNode(row.Config)
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
