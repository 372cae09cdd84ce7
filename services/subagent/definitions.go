package subagent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// Definition is an agent definition: a Markdown file whose YAML front
// matter names the agent and whose body is its persona (Claude Code's
// `.claude/agents/*.md` format).
//
//	---
//	name: reviewer
//	description: Reviews a diff for bugs
//	tools: read, grep, glob        # or a YAML list; omitted: every tool of the parent
//	model: deepseek/deepseek-v4-pro # omitted or "inherit": the parent's model
//	---
//	You are a meticulous code reviewer...
type Definition struct {
	// Name is how the task tool's subagent_type selects it.
	Name string `json:"name"`
	// Description tells the model when to use it.
	Description string `json:"description"`
	// Tools is the allow-list (names or globs); nil means every tool.
	Tools []string `json:"tools,omitempty"`
	// Model is a model route; "" inherits the parent's.
	Model string `json:"model,omitempty"`
	// Provider is the subagents provider to use ("" for the default).
	Provider string `json:"provider,omitempty"`
	// Persona is the Markdown body.
	Persona string `json:"persona"`
	// Path is the file it was read from.
	Path string `json:"path"`
}

// frontMatter is the YAML header of a definition. Unknown keys (Claude
// Code's color, ...) are ignored.
type frontMatter struct {
	Name        yaml.Node `yaml:"name"`
	Description yaml.Node `yaml:"description"`
	Tools       yaml.Node `yaml:"tools"`
	Model       string    `yaml:"model"`
	Provider    string    `yaml:"provider"`
}

// Compiled on first use: package init runs at every harness start.
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`) })

// ParseDefinition parses one definition file's content; errors name
// path:line.
func ParseDefinition(path string, data []byte) (Definition, error) {
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	if strings.TrimRight(lines[0], " \t") != "---" {
		return Definition{}, fmt.Errorf("%s:1: an agent definition starts with a YAML front matter line \"---\"", path)
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], " \t") == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return Definition{}, fmt.Errorf("%s:1: the front matter is not closed by a \"---\" line", path)
	}
	var fm frontMatter
	if err := yaml.Unmarshal([]byte(strings.Join(lines[1:end], "\n")), &fm); err != nil {
		return Definition{}, fmt.Errorf("%s:%s", path, yamlLine(err, 1))
	}
	at := func(n *yaml.Node) int { return max(n.Line, 1) + 1 }
	d := Definition{Name: strings.TrimSpace(fm.Name.Value), Description: strings.TrimSpace(fm.Description.Value), Model: strings.TrimSpace(fm.Model),
		Provider: strings.TrimSpace(fm.Provider), Persona: strings.TrimSpace(strings.Join(lines[end+1:], "\n")), Path: path}
	if d.Model == "inherit" {
		d.Model = ""
	}
	if fm.Name.Kind != yaml.ScalarNode && fm.Name.Kind != 0 || !nameRE().MatchString(d.Name) {
		return Definition{}, fmt.Errorf("%s:%d: name %q: want letters, digits, '.', '_' or '-' (at most 64)", path, at(&fm.Name), d.Name)
	}
	if d.Description == "" {
		return Definition{}, fmt.Errorf("%s:%d: agent %q has no description", path, at(&fm.Description), d.Name)
	}
	tools, err := toolList(&fm.Tools)
	if err != nil {
		return Definition{}, fmt.Errorf("%s:%d: tools: %w", path, at(&fm.Tools), err)
	}
	d.Tools = tools
	return d, nil
}

// toolList reads "a, b" or [a, b]; an absent field is nil (every tool).
func toolList(n *yaml.Node) ([]string, error) {
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil, nil
		}
		out := []string{}
		for _, t := range strings.Split(n.Value, ",") {
			if t = strings.TrimSpace(t); t != "" {
				out = append(out, t)
			}
		}
		return out, nil
	case yaml.SequenceNode:
		out := []string{}
		for _, e := range n.Content {
			if e.Kind != yaml.ScalarNode {
				return nil, errors.New("want a list of tool names")
			}
			out = append(out, strings.TrimSpace(e.Value))
		}
		return out, nil
	}
	return nil, errors.New("want a comma-separated string or a list of tool names")
}

var lineRE = regexp.MustCompile(`line (\d+)`)

// yamlLine rewrites yaml.v3's "yaml: line N: msg" as "LINE: msg", with the
// line counted in the whole file (offset: lines before the YAML).
func yamlLine(err error, offset int) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := lineRE.FindStringSubmatchIndex(msg); m != nil {
		var n int
		_, _ = fmt.Sscanf(msg[m[2]:m[3]], "%d", &n) // the pattern matched digits
		rest := strings.TrimPrefix(strings.TrimPrefix(msg[m[1]:], ":"), " ")
		if strings.HasPrefix(rest, "did not find expected ',' or") {
			n++ // yaml.v3 counts the flow collection's opening line from 0 here
		}
		return fmt.Sprintf("%d: %s", n+offset, rest)
	}
	return fmt.Sprintf("%d: %s", 1+offset, msg)
}

// DefinitionDirs returns where definitions are looked for, highest
// precedence first: cwd/.harness/agents, cwd/.claude/agents, then
// $XDG_CONFIG_HOME/harness/agents (or ~/.config/harness/agents).
func DefinitionDirs(cwd string, lookup func(string) (string, bool)) []string {
	dirs := []string{filepath.Join(cwd, ".harness", "agents"), filepath.Join(cwd, ".claude", "agents")}
	if x, ok := lookup("XDG_CONFIG_HOME"); ok && x != "" {
		dirs = append(dirs, filepath.Join(x, "harness", "agents"))
	} else if h, ok := lookup("HOME"); ok && h != "" {
		dirs = append(dirs, filepath.Join(h, ".config", "harness", "agents"))
	}
	return dirs
}

// LoadDefinitions reads every *.md file of dirs (missing dirs are
// skipped). A name defined in several dirs keeps the first (highest
// precedence); within one dir a duplicate is an error. Every bad file is
// reported (errors joined, each naming file:line); the good ones are still
// returned, sorted by name.
func LoadDefinitions(dirs []string) ([]Definition, error) {
	byName := map[string]Definition{}
	var errs []error
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		here := map[string]string{}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			p := filepath.Join(dir, e.Name())
			data, err := os.ReadFile(p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			d, err := ParseDefinition(p, data)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if prev, dup := here[d.Name]; dup {
				errs = append(errs, fmt.Errorf("%s:2: agent %q is also defined in %s", p, d.Name, prev))
				continue
			}
			here[d.Name] = p
			if _, seen := byName[d.Name]; !seen {
				byName[d.Name] = d
			}
		}
	}
	out := make([]Definition, 0, len(byName))
	for _, d := range byName {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, errors.Join(errs...)
}
