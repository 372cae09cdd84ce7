package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/plugins/permission"
	"gopkg.in/yaml.v3"
)

// errPermFlagsNeedRow is the usage error of --permission-mode and
// --allowed-tools on a manifest without a permission row.
var errPermFlagsNeedRow = errors.New("--permission-mode and --allowed-tools need a `name: permission` row in the manifest")

// permissionFlags validates --permission-mode and --allowed-tools. mode is
// one of the permission plugin's modes (Claude Code's bypassPermissions is
// accepted for bypass); every allowed-tools value holds rules separated by
// commas or spaces outside parentheses ("Bash(git diff *) Read").
func permissionFlags(mode string, allowed []string) (permission.Mode, []string, error) {
	m := permission.Mode(mode)
	if m == "bypassPermissions" {
		m = permission.ModeBypass
	}
	if mode != "" && !m.Valid() {
		return "", nil, fmt.Errorf("--permission-mode %q: not a mode (default, acceptEdits, plan, bypass, dontAsk)", mode)
	}
	var rules []string
	for _, v := range allowed {
		for _, s := range splitRules(v) {
			if _, err := permission.ParseRule(s); err != nil {
				return "", nil, fmt.Errorf("--allowed-tools: %w", err)
			}
			rules = append(rules, s)
		}
	}
	if mode == "" && len(allowed) > 0 && len(rules) == 0 {
		return "", nil, errors.New("--allowed-tools: no rule given")
	}
	return m, rules, nil
}

// splitRules splits s at commas and white space outside parentheses; the
// `unsandboxed` suffix stays with the rule before it ("bash(make deploy)
// unsandboxed" is one rule).
func splitRules(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth--
		case depth <= 0 && (r == ',' || r == ' ' || r == '\t' || r == '\n'):
			if t := strings.TrimSpace(s[start:i]); t != "" {
				out = append(out, t)
			}
			start = i + 1
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	for i := 1; i < len(out); i++ {
		if out[i] == "unsandboxed" && strings.HasSuffix(out[i-1], ")") {
			out[i-1] += " unsandboxed"
			out = slices.Delete(out, i, i+1)
			i--
		}
	}
	return out
}

// withPermissions sets mode (when not empty) and appends allow to the
// `permission` rows' config; *found reports whether there was such a row.
func withPermissions(mode permission.Mode, allow []string, found *bool) BootOption {
	return patchRows("permission", found, func(cfg *yaml.Node) {
		if mode != "" {
			setKey(cfg, "mode", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: string(mode)})
		}
		if len(allow) > 0 {
			seq := getKey(cfg, "allow")
			if seq == nil || seq.Kind != yaml.SequenceNode {
				seq = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
				setKey(cfg, "allow", seq)
			}
			for _, r := range allow {
				seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: r})
			}
		}
	})
}

// patchRows is a boot option that calls edit with the config mapping (made
// one when absent) of every enabled row named name, nested rows included;
// *found reports whether there was one.
func patchRows(name string, found *bool, edit func(cfg *yaml.Node)) BootOption {
	return bootOptionFunc(func(o *fxcore.Options) {
		m := o.Manifest.Clone()
		var patch func(rows []manifest.Entry)
		patch = func(rows []manifest.Entry) {
			for i := range rows {
				e := &rows[i]
				patch(e.Children)
				if e.Name != name || e.Disabled {
					continue
				}
				*found = true
				if e.Config == nil || e.Config.Kind != yaml.MappingNode {
					e.Config = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
				}
				edit(e.Config)
			}
		}
		patch(m.Plugins)
		o.Manifest = m
	})
}

func getKey(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func setKey(n *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content[i+1] = v
			return
		}
	}
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}
