package cli

import (
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/services/subagent"
)

// cwdRows are the plugins whose config has a `cwd` that defaults to the
// process's working directory.
var cwdRows = map[string]bool{
	"hooks": true, "tool-bash": true, "tool-fs": true, "tool-search": true, "permission": true, "mcp": true, "skills": true,
}

// withWorkdir is the boot option of --cwd DIR: rows that would default to
// the process's working directory get DIR instead (their `cwd`; a relative
// one is taken relative to DIR), and subagent-tools reads its agent
// definitions from DIR's .harness/agents and .claude/agents. The process
// does not change directory, so in-process runs with different --cwd do
// not disturb each other.
func withWorkdir(dir string, lookup func(string) (string, bool)) BootOption {
	return bootOptionFunc(func(o *fxcore.Options) {
		m := o.Manifest.Clone()
		var patch func(rows []manifest.Entry)
		patch = func(rows []manifest.Entry) {
			for i := range rows {
				e := &rows[i]
				patch(e.Children)
				if e.Disabled || e.Group {
					continue
				}
				switch {
				case cwdRows[e.Name]:
					cfg := mapping(e)
					if v := getKey(cfg, "cwd"); v != nil && v.Kind == yaml.ScalarNode && v.Value != "" && v.Tag != "!!null" {
						if !filepath.IsAbs(v.Value) && v.Tag != "!env" {
							setKey(cfg, "cwd", str(filepath.Join(dir, v.Value)))
						}
						continue
					}
					setKey(cfg, "cwd", str(dir))
				case e.Name == "subagent-tools":
					cfg := mapping(e)
					if getKey(cfg, "dirs") != nil {
						continue
					}
					seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
					for _, d := range subagent.DefinitionDirs(dir, lookup) {
						seq.Content = append(seq.Content, str(d))
					}
					setKey(cfg, "dirs", seq)
				}
			}
		}
		patch(m.Plugins)
		o.Manifest = m
	})
}

// mapping returns e's config mapping, making an empty one when it has
// none.
func mapping(e *manifest.Entry) *yaml.Node {
	if e.Config == nil || e.Config.Kind != yaml.MappingNode {
		e.Config = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	return e.Config
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
