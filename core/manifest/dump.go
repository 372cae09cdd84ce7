package manifest

import (
	"bytes"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/dshgo/harness/core"
	"gopkg.in/yaml.v3"
)

// Redacted replaces secret values in dumps.
const Redacted = "<redacted>"

// Dump renders m as harness.yml text, each row preceded by a comment naming
// the file that defined or last patched it and, when its config was written
// in another file, that file (`# source: p1.yml; config from harness.yml`
// after a patch that set only disabled or name; `# source: p1.yml; config
// keys deny from harness.yml` for keys a patch merge kept). Config values of fields tagged
// `harness:"secret"` (for plugins found in cat), and scalar values of map
// entries whose key names a credential (Authorization, X-Api-Key,
// GITHUB_TOKEN, …), are replaced by <redacted> unless they are !env
// references, which show only the variable name.
func Dump(m *Manifest, cat *core.Catalog) ([]byte, error) {
	root := &yaml.Node{Kind: yaml.MappingNode}
	if m.StartTimeout > 0 {
		root.Content = append(root.Content, scalar("startTimeout"), scalar(m.StartTimeout.String()))
	}
	if m.StopTimeout > 0 {
		root.Content = append(root.Content, scalar("stopTimeout"), scalar(m.StopTimeout.String()))
	}
	root.Content = append(root.Content, scalar("plugins"), dumpRows(m.Plugins, cat))
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	_ = enc.Close()
	return buf.Bytes(), nil
}

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }

func dumpRows(es []Entry, cat *core.Catalog) *yaml.Node {
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	for _, e := range es {
		row := &yaml.Node{Kind: yaml.MappingNode, HeadComment: sourceComment(e)}
		row.Content = append(row.Content, scalar("id"), scalar(e.ID))
		if e.Group {
			row.Content = append(row.Content, scalar("group"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
		} else {
			row.Content = append(row.Content, scalar("name"), scalar(e.Name))
		}
		if e.Disabled {
			row.Content = append(row.Content, scalar("disabled"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
		}
		switch {
		case e.Group:
			row.Content = append(row.Content, scalar("config"), dumpRows(e.Children, cat))
		case e.Config != nil:
			cfg := cloneNode(e.Config)
			if cat != nil {
				if p, ok := cat.Get(e.Name); ok {
					redact(cfg, p.ConfigType())
				}
			}
			stripPositions(cfg)
			row.Content = append(row.Content, scalar("config"), cfg)
		}
		seq.Content = append(seq.Content, row)
	}
	return seq
}

// sourceComment is "source: FILE" (the file that defined or last patched
// the row), followed by where its config was written when that is another
// file: "; config from FILE2" when all of it comes from one file (a patch
// that set only disabled or name keeps the config of the file before it),
// else "; config keys K1, K2 from FILE2" for each other file a patch merge
// kept keys from.
func sourceComment(e Entry) string {
	s := "source: " + e.Source
	if e.Group || e.Config == nil {
		return s
	}
	byFile := map[string][]string{}
	if e.Config.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(e.Config.Content); i += 2 {
			k := e.Config.Content[i].Value
			f := e.configSource(k)
			byFile[f] = append(byFile[f], k)
		}
	}
	if len(byFile) == 0 { // a config that is not a mapping, or {}
		byFile[e.configFile()] = nil
	}
	files := slices.Sorted(maps.Keys(byFile))
	if len(files) == 1 {
		if files[0] != e.Source {
			s += "; config from " + files[0]
		}
		return s
	}
	for _, f := range files {
		if f == e.Source {
			continue
		}
		keys := byFile[f]
		slices.Sort(keys)
		s += "; config keys " + strings.Join(keys, ", ") + " from " + f
	}
	return s
}

func stripPositions(n *yaml.Node) {
	n.Line, n.Column = 0, 0
	n.Style &^= yaml.FlowStyle
	for _, c := range n.Content {
		stripPositions(c)
	}
}

// redact replaces literal values of secret fields in n (config of type t).
func redact(n *yaml.Node, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			f, ok := fields[n.Content[i].Value]
			if !ok {
				continue
			}
			v := n.Content[i+1]
			if isSecret(f) {
				redactValue(v)
				continue
			}
			redact(v, f.Type)
		}
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && n.Kind == yaml.SequenceNode:
		for _, c := range n.Content {
			redact(c, t.Elem())
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			if v := n.Content[i]; (v.Kind == yaml.ScalarNode || v.Tag == "!env") && credentialName(n.Content[i-1].Value) {
				redactValue(v)
				continue
			}
			redact(n.Content[i], t.Elem())
		}
	}
}

// redactValue replaces a secret value by <redacted>. An `!env NAME`
// reference stays as written; in `!env [NAME, default]` only the literal
// default is replaced.
func redactValue(v *yaml.Node) {
	if v.Tag != "!env" {
		*v = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: Redacted}
		return
	}
	if v.Kind == yaml.SequenceNode && len(v.Content) == 2 {
		v.Content[1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: Redacted}
	}
}

// credentialName reports whether a map key names a credential (an HTTP
// header such as Authorization or X-Api-Key, an environment variable such
// as GITHUB_TOKEN): map values are user data that no field tag can mark.
func credentialName(key string) bool {
	k := strings.ToUpper(key)
	for _, w := range []string{"AUTH", "KEY", "TOKEN", "SECRET", "PASSWORD", "PASSPHRASE", "CREDENTIAL", "COOKIE"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// CredentialEnv returns the environment variables this manifest reads
// credentials from, so that the harness can keep them from every child
// process whatever their names (bug cases B10, M5): the variable of every
// `!env` anywhere in a row's config (`apiKey: !env DS_AUTH`, but also
// `headers: {X-Custom: !env MYCRED}` or `callTimeout: !env CT`: the
// manifest cannot tell which value is a secret), and each plain value of a
// credential-named key ending in "Env" (`apiKeyEnv: MY_VAR`, the convention
// for naming a variable that holds a key). The rows of every layer count
// (a composed manifest holds its patches' and inserted rows' configs), and
// so do disabled rows. A child still gets such a variable when its own
// configuration sets it explicitly (an MCP server's env entry). Names are
// returned once each, in manifest order.
func (m *Manifest) CredentialEnv() []string {
	var names []string
	add := func(n string) {
		if n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil {
			return
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i].Value, n.Content[i+1]
				if v.Tag != "!env" && v.Kind == yaml.ScalarNode && credentialName(k) && strings.HasSuffix(strings.ToUpper(k), "ENV") {
					add(v.Value)
					continue
				}
				walk(v)
			}
			return
		}
		switch {
		case n.Tag == "!env" && n.Kind == yaml.ScalarNode:
			add(n.Value)
			return
		case n.Tag == "!env" && n.Kind == yaml.SequenceNode:
			if len(n.Content) > 0 {
				add(n.Content[0].Value)
			}
			return
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	var rows func([]Entry)
	rows = func(es []Entry) {
		for _, e := range es {
			walk(e.Config)
			rows(e.Children)
		}
	}
	rows(m.Plugins)
	return names
}
