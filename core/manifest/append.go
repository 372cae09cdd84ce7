package manifest

import (
	"fmt"
	"reflect"

	"gopkg.in/yaml.v3"
)

// AppendTag marks a list in a row's config that is appended to the list it
// patches instead of replacing it:
//
//	# a patch layer
//	- id: permission
//	  config:
//	    readOnlyTools: !append [word_count]
//
// It is allowed only as the value of a top-level key of a plugin's config,
// on a list. Composed over a row that sets the key to a list, the result is
// that list followed by the appended items; over a row that does not set
// the key, the items are appended to the plugin's default for the field
// when the config is decoded (so `readOnlyTools: !append [word_count]`
// keeps read, grep and glob). Appending to a value that is not a list, or
// to a field that is not a list, is an error naming FILE:LINE:COL.
const AppendTag = "!append"

// checkAppends rejects !append anywhere in a row's config except on the
// value of a top-level key, and on anything but a list.
func checkAppends(file string, cfg *yaml.Node) error {
	if cfg == nil {
		return nil
	}
	if cfg.Tag == AppendTag {
		return errAt(file, cfg, "!append goes on a top-level config key (`key: !append [items]`), not on the whole config")
	}
	for i, c := range cfg.Content {
		top := cfg.Kind == yaml.MappingNode && i%2 == 1
		if err := checkAppendNode(file, c, top); err != nil {
			return err
		}
	}
	return nil
}

func checkAppendNode(file string, n *yaml.Node, top bool) error {
	if n.Tag == AppendTag {
		if !top {
			return errAt(file, n, "!append is only allowed on a top-level config key (`key: !append [items]`)")
		}
		if n.Kind != yaml.SequenceNode {
			return errAt(file, n, "!append takes a list (`key: !append [items]`)")
		}
	}
	for _, c := range n.Content {
		if err := checkAppendNode(file, c, false); err != nil {
			return err
		}
	}
	return nil
}

// noAppend rejects !append outside a plugin's config.
func noAppend(file string, n *yaml.Node) error {
	if n.Tag == AppendTag {
		return errAt(file, n, "!append is only allowed on a top-level key of a plugin's config")
	}
	for _, c := range n.Content {
		if err := noAppend(file, c); err != nil {
			return err
		}
	}
	return nil
}

// appendTo returns the value of a config key after a patch appended add
// (an !append list) to base, the row's value: base's items then add's. The
// result keeps the !append tag when base was itself an unresolved append
// (so the plugin's default is still prepended at decode time).
func appendTo(base, add *yaml.Node, baseFile string) (*yaml.Node, error) {
	if base.Kind != yaml.SequenceNode || base.Tag == "!env" {
		return nil, fmt.Errorf("!append: the value it appends to (%s:%d:%d) is not a list", baseFile, base.Line, base.Column)
	}
	out := cloneNode(add)
	out.Content = make([]*yaml.Node, 0, len(base.Content)+len(add.Content))
	for _, c := range base.Content {
		out.Content = append(out.Content, cloneNode(c))
	}
	for _, c := range add.Content {
		out.Content = append(out.Content, cloneNode(c))
	}
	out.Style &^= yaml.TaggedStyle
	if base.Tag != AppendTag {
		out.Tag = "!!seq"
	}
	return out, nil
}

// resolveAppends replaces each top-level !append list of a config mapping
// with the field's default (from cfg, a pointer to the defaulted config of
// type t) followed by the list's items.
func resolveAppends(node *yaml.Node, cfg any, t reflect.Type, report func(*yaml.Node, error)) {
	if node == nil || node.Kind != yaml.MappingNode {
		return
	}
	var defaults *yaml.Node
	for i := 0; i+1 < len(node.Content); i += 2 {
		k, v := node.Content[i], node.Content[i+1]
		if v.Tag != AppendTag {
			continue
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return // checkKnown reports the config itself
		}
		f, ok := yamlFields(t)[k.Value]
		if !ok {
			continue // checkKnown reports the unknown key
		}
		if ft := f.Type; ft.Kind() != reflect.Slice {
			report(v, fmt.Errorf("%s: !append needs a list field, %s is %v", k.Value, k.Value, ft))
			continue
		}
		if defaults == nil {
			defaults = &yaml.Node{}
			if err := defaults.Encode(cfg); err != nil {
				report(v, fmt.Errorf("%s: !append: cannot read the plugin's default: %v", k.Value, err))
				return
			}
			if defaults.Kind == yaml.DocumentNode && len(defaults.Content) == 1 {
				defaults = defaults.Content[0]
			}
		}
		var def []*yaml.Node
		if defaults.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(defaults.Content); j += 2 {
				if defaults.Content[j].Value != k.Value {
					continue
				}
				switch d := defaults.Content[j+1]; {
				case d.Kind == yaml.SequenceNode:
					def = d.Content
				case d.Kind == yaml.ScalarNode && d.Tag == "!!null":
				default:
					report(v, fmt.Errorf("%s: !append: the plugin's default is not a list", k.Value))
					continue
				}
			}
		}
		items := make([]*yaml.Node, 0, len(def)+len(v.Content))
		for _, d := range def {
			d = cloneNode(d)
			setPos(d, v.Line, v.Column) // defaults have no place of their own
			items = append(items, d)
		}
		v.Content = append(items, v.Content...)
		v.Tag = "!!seq"
		v.Style &^= yaml.TaggedStyle
	}
}

func setPos(n *yaml.Node, line, col int) {
	n.Line, n.Column = line, col
	for _, c := range n.Content {
		setPos(c, line, col)
	}
}
