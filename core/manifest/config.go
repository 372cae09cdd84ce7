package manifest

import (
	"encoding"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dshgo/harness/core"
	"gopkg.in/yaml.v3"
)

// LookupEnv reads an environment variable (os.LookupEnv by default).
type LookupEnv func(name string) (string, bool)

// DecodeConfig resolves a row's config for plugin p: !env tags are
// expanded, unknown keys rejected (at any depth, with the allowed keys
// listed), the node decoded over p's defaults, and the result validated.
// It returns a pointer to the plugin's config type. Each problem is an
// *Error reading `FILE:LINE:COL: plugin "NAME" (id ID): invalid config:
// PATH: MESSAGE`, placed at the field's own node when the config has it,
// else at the row's config node (else the row). Every problem of the first
// stage that finds any (!env, unknown keys, decoding, Validate) is
// reported; several are joined with errors.Join, one per line. A Validate
// error made with errors.Join counts one problem per joined error.
func DecodeConfig(p core.Plugin, e Entry, env LookupEnv) (any, error) {
	if env == nil {
		env = os.LookupEnv
	}
	cfg := p.NewConfig()
	node := cloneNode(e.Config)
	var problems []error
	var cause error // the *core.ConfigError of Validate, kept as each problem's cause
	report := func(n *yaml.Node, msg string) {
		pos := e.Pos
		if n != nil {
			pos = Pos{File: fileOf(&e, node, n), Line: n.Line, Col: n.Column}
		}
		problems = append(problems, &Error{Pos: pos, Msg: fmt.Sprintf("plugin %q (id %s): %s", e.Name, e.ID, msg), Err: cause})
	}
	done := func() error {
		if len(problems) == 1 {
			return problems[0]
		}
		return errors.Join(problems...)
	}
	if node != nil {
		expandEnv(node, env, func(n *yaml.Node, err error) { report(n, err.Error()) })
		if problems != nil {
			return nil, done()
		}
		resolveAppends(node, cfg, p.ConfigType(), func(n *yaml.Node, err error) { report(n, "invalid config: "+err.Error()) })
		if problems != nil {
			return nil, done()
		}
		checkKnown(node, p.ConfigType(), "", func(n *yaml.Node, err error) { report(n, "invalid config: "+err.Error()) })
		if problems != nil {
			return nil, done()
		}
		if err := node.Decode(cfg); err != nil {
			// Name each field that failed, at its own position.
			for _, f := range locateDecodeErrors(node, p.ConfigType(), "") {
				report(f.n, "invalid config: "+prefix(f.path)+lineRE.ReplaceAllString(decodeMessage(f.err), ""))
			}
			if problems == nil {
				report(node, "invalid config: "+decodeMessage(err))
			}
			return nil, done()
		}
	}
	if err := core.ValidateConfig(p.Name(), cfg); err != nil {
		var ce *core.ConfigError
		cause = err
		if !errors.As(err, &ce) || len(ce.Issues) == 0 {
			report(node, err.Error())
			return nil, done()
		}
		for _, is := range ce.Issues {
			path := is.Path
			if path == "" {
				// A plain Validate error that starts with a field path
				// ("timeout: must be positive") is placed at that field.
				path = leadingPath(is.Message)
			}
			report(lookupPath(node, path), "invalid config: "+prefix(is.Path)+is.Message)
		}
		return nil, done()
	}
	return cfg, nil
}

// fileOf names the file n was written in: the file of the top-level config
// key whose value holds it (patch merges keep keys from several files),
// else the file that last wrote the row's config.
func fileOf(e *Entry, root, n *yaml.Node) string {
	if root != nil && root.Kind == yaml.MappingNode && n != root {
		for i := 0; i+1 < len(root.Content); i += 2 {
			if contains(root.Content[i], n) || contains(root.Content[i+1], n) {
				return e.configSource(root.Content[i].Value)
			}
		}
	}
	return e.configFile()
}

func contains(tree, n *yaml.Node) bool {
	if tree == n {
		return true
	}
	for _, c := range tree.Content {
		if contains(c, n) {
			return true
		}
	}
	return false
}

var lineRE = regexp.MustCompile(`line (\d+): `)

// pathRE matches a leading config field path such as "models[1].name: ".
var pathRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])*(?:\.[A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])*)*): `)

// wordRE matches a leading identifier followed by a space
// ("toolOrder lists \"x\" more than once").
var wordRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*) `)

// leadingPath returns the field path a validation message starts with
// ("path: …"), else its first word (a field name when the message is
// phrased "toolOrder must …"; a word that names no key finds nothing), or "".
func leadingPath(msg string) string {
	if m := pathRE.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	if m := wordRE.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

func decodeMessage(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return lineRE.ReplaceAllString(strings.Join(te.Errors, "; "), "line $1: ")
	}
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// expandEnv replaces !env nodes in place and reports each one that
// cannot be resolved.
func expandEnv(n *yaml.Node, env LookupEnv, report func(*yaml.Node, error)) {
	if n.Tag != "!env" {
		for _, c := range n.Content {
			expandEnv(c, env, report)
		}
		return
	}
	var name, def string
	hasDef := false
	switch n.Kind {
	case yaml.ScalarNode:
		name = n.Value
	case yaml.SequenceNode:
		if len(n.Content) != 2 || n.Content[0].Kind != yaml.ScalarNode || n.Content[1].Kind != yaml.ScalarNode {
			report(n, errors.New("!env takes a variable name or [NAME, default]"))
			return
		}
		name, def, hasDef = n.Content[0].Value, n.Content[1].Value, true
	default:
		report(n, errors.New("!env takes a variable name or [NAME, default]"))
		return
	}
	if name == "" {
		report(n, errors.New("!env needs a variable name"))
		return
	}
	v, ok := env(name)
	if !ok {
		if !hasDef {
			report(n, fmt.Errorf("environment variable %s is not set (set it, or write !env [%s, default])", name, name))
			return
		}
		v = def
	}
	*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Line: n.Line, Column: n.Column}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		n.Tag = "" // let numbers decode into numeric fields
	} else if v == "true" || v == "false" {
		n.Tag = ""
	}
}

var (
	unmarshalerT     = reflect.TypeFor[yaml.Unmarshaler]()
	textUnmarshalerT = reflect.TypeFor[encoding.TextUnmarshaler]()
	nodeT            = reflect.TypeFor[yaml.Node]()
	durationT        = reflect.TypeFor[time.Duration]()
)

// yamlFields maps the keys yaml.v3 accepts for struct type t to field
// indexes (following inline structs).
func yamlFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(opts, "inline") {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range yamlFields(ft) {
					out[k] = v
				}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f
	}
	return out
}

// checkKnown reports each mapping key that t has no field for, and each
// fraction given for an integer field.
func checkKnown(n *yaml.Node, t reflect.Type, path string, report func(*yaml.Node, error)) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nodeT || t == durationT || reflect.PointerTo(t).Implements(unmarshalerT) || reflect.PointerTo(t).Implements(textUnmarshalerT) {
		return
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		// yaml.v3 truncates a float into an integer field (1.5 → 1)
		// silently; only integral values are integers here.
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" {
			var f float64
			if err := n.Decode(&f); err == nil && (f != math.Trunc(f) || math.IsInf(f, 0)) {
				report(n, fmt.Errorf("%swant an integer, got %s", prefix(path), n.Value))
			}
		}
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			if !(n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
				report(n, fmt.Errorf("%swant a mapping", prefix(path)))
			}
			return
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			f, ok := fields[k.Value]
			if !ok {
				allowed := "allowed: " + strings.Join(slices.Sorted(maps.Keys(fields)), ", ")
				switch {
				case len(fields) > 0:
				case path == "":
					allowed = "this plugin takes no config"
				default:
					allowed = path + " takes no keys"
				}
				report(k, fmt.Errorf("%sunknown key %q (%s)", prefix(path), k.Value, allowed))
				continue
			}
			checkKnown(v, f.Type, join(path, k.Value), report)
		}
	case reflect.Map:
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				checkKnown(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value), report)
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind == yaml.SequenceNode {
			for i, c := range n.Content {
				checkKnown(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i), report)
			}
		}
	}
}

// decodeFailure is one config value that fails to decode into its field.
type decodeFailure struct {
	n    *yaml.Node
	path string
	err  error
}

// locateDecodeErrors finds the deepest config values that fail to decode
// into their fields' types: it decodes each mapping value (and each list or
// map element) on its own and descends into each one that fails. It
// returns them in document order (none when no single value fails).
func locateDecodeErrors(n *yaml.Node, t reflect.Type, path string) []decodeFailure {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	type child struct {
		n    *yaml.Node
		t    reflect.Type
		path string
	}
	var kids []child
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode && t != nodeT:
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			if f, ok := fields[n.Content[i].Value]; ok {
				kids = append(kids, child{n.Content[i+1], f.Type, join(path, n.Content[i].Value)})
			}
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			kids = append(kids, child{n.Content[i+1], t.Elem(), join(path, n.Content[i].Value)})
		}
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && n.Kind == yaml.SequenceNode:
		for i, c := range n.Content {
			kids = append(kids, child{c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)})
		}
	}
	var out []decodeFailure
	for _, k := range kids {
		if err := k.n.Decode(reflect.New(k.t).Interface()); err != nil {
			if deeper := locateDecodeErrors(k.n, k.t, k.path); deeper != nil {
				out = append(out, deeper...)
				continue
			}
			out = append(out, decodeFailure{k.n, k.path, err})
		}
	}
	return out
}

func prefix(path string) string {
	if path == "" {
		return ""
	}
	return path + ": "
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// lookupPath finds the node for a dotted path like "models[1].name" (the
// deepest node found; nil when n is nil).
func lookupPath(n *yaml.Node, path string) *yaml.Node {
	if n == nil || path == "" {
		return n
	}
	cur := n
	for _, part := range strings.Split(path, ".") {
		key, idx := part, -1
		if i := strings.IndexByte(part, '['); i >= 0 && strings.HasSuffix(part, "]") {
			key = part[:i]
			idx, _ = strconv.Atoi(part[i+1 : len(part)-1])
		}
		if key != "" {
			next := (*yaml.Node)(nil)
			if cur.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(cur.Content); i += 2 {
					if cur.Content[i].Value == key {
						next = cur.Content[i+1]
						break
					}
				}
			}
			if next == nil {
				return cur
			}
			cur = next
		}
		if idx >= 0 {
			if cur.Kind != yaml.SequenceNode || idx >= len(cur.Content) {
				return cur
			}
			cur = cur.Content[idx]
		}
	}
	return cur
}
