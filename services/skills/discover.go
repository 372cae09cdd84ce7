package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
)

// Bounds of discovery and loading.
const (
	// MaxFileBytes bounds what is read of one SKILL.md or command file;
	// the rest is left out with a note.
	MaxFileBytes = 256 << 10
	// MaxEntries bounds the entries read from one root directory (skill
	// folders, or command files and subdirectories).
	MaxEntries = 1000
	// MaxCommandDepth bounds the subdirectory nesting of command files.
	MaxCommandDepth = 4
)

// Skill is one discovered skill.
type Skill struct {
	// Name is the frontmatter name (the folder's name when there is none).
	Name string
	// Description says what the skill does and when to use it.
	Description string
	// Dir is the skill's folder; Path its SKILL.md.
	Dir, Path string
	// AllowedTools is the frontmatter's allowed-tools, as written.
	AllowedTools []string
	// Model and License are the frontmatter's, as written.
	Model, License string
	// Hidden is disable-model-invocation: the skill is not listed in the
	// prompt and the skill tool refuses it.
	Hidden bool
	// NoCommand is user-invocable: false: the skill is not offered as
	// /name (the model may still load it).
	NoCommand bool
	// Origin is "project" or "user".
	Origin string
	// Shadowed are the paths of farther skills of the same name.
	Shadowed []string
}

// Command is one discovered command file.
type Command struct {
	// Name is the file's name without .md, subdirectories joined by ':'.
	Name string
	// Description is the frontmatter's, else the body's first line.
	Description string
	// ArgumentHint is the frontmatter's argument-hint, as written.
	ArgumentHint string
	// AllowedTools and Model are the frontmatter's, as written.
	AllowedTools []string
	Model        string
	// Path is the file; Body its text after the frontmatter.
	Path, Body string
	// Origin is "project" or "user".
	Origin string
	// Shadowed are the paths of farther commands of the same name.
	Shadowed []string
}

// Catalog is what one discovery found. Skills and Commands are sorted by
// name.
type Catalog struct {
	Skills   []Skill
	Commands []Command
	Warnings []Warning

	deps []watched // what the catalog was read from (see Fresh)
}

// Skill returns the skill named name.
func (c *Catalog) Skill(name string) (Skill, bool) {
	i, ok := slices.BinarySearchFunc(c.Skills, name, func(s Skill, n string) int { return strings.Compare(s.Name, n) })
	if !ok {
		return Skill{}, false
	}
	return c.Skills[i], true
}

// Root is one directory searched.
type Root struct {
	// Dir is the directory.
	Dir string
	// Origin is "project" or "user".
	Origin string
}

// Options say where to look.
type Options struct {
	// Cwd is the working directory (absolute).
	Cwd string
	// Home is the home directory ("" leaves out ~/.claude).
	Home string
	// ConfigHome is the harness's user config directory's parent
	// ($XDG_CONFIG_HOME, else ~/.config; "" leaves it out).
	ConfigHome string
	// NoUser leaves out the user's roots.
	NoUser bool
}

// SkillRoots returns the skill roots of o, nearest first.
func (o Options) SkillRoots() []Root {
	return o.roots([]string{".harness/skills", ".claude/skills", ".agents/skills"}, "skills", ".claude/skills")
}

// CommandRoots returns the command roots of o, nearest first.
func (o Options) CommandRoots() []Root {
	return o.roots([]string{".harness/commands", ".claude/commands"}, "commands", ".claude/commands")
}

func (o Options) roots(project []string, harnessDir, claudeDir string) []Root {
	var out []Root
	for _, d := range projectDirs(o.Cwd) {
		for _, p := range project {
			out = append(out, Root{Dir: filepath.Join(d, p), Origin: "project"})
		}
	}
	if o.NoUser {
		return out
	}
	if o.ConfigHome != "" {
		out = append(out, Root{Dir: filepath.Join(o.ConfigHome, "harness", harnessDir), Origin: "user"})
	}
	if o.Home != "" {
		out = append(out, Root{Dir: filepath.Join(o.Home, claudeDir), Origin: "user"})
	}
	return out
}

// projectDirs returns cwd and its ancestors up to the repository root,
// nearest first; cwd alone outside a repository.
func projectDirs(cwd string) []string {
	if cwd == "" {
		return nil
	}
	cwd = filepath.Clean(cwd)
	var dirs []string
	for d := cwd; ; {
		dirs = append(dirs, d)
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return dirs
		}
		parent := filepath.Dir(d)
		if parent == d {
			return []string{cwd}
		}
		d = parent
	}
}

// Discover finds the skills and commands of o.
func Discover(o Options) *Catalog {
	c := &Catalog{}
	seen := map[string]int{}
	for _, r := range o.SkillRoots() {
		c.skillsIn(r, seen)
	}
	seenCmd := map[string]int{}
	for _, r := range o.CommandRoots() {
		c.commandsIn(r, r.Dir, "", 0, seenCmd)
	}
	slices.SortFunc(c.Skills, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(c.Commands, func(a, b Command) int { return strings.Compare(a.Name, b.Name) })
	return c
}

func (c *Catalog) warn(path string, line int, format string, args ...any) {
	c.Warnings = append(c.Warnings, Warning{Path: path, Line: line, Message: fmt.Sprintf(format, args...)})
}

// readDir lists dir (sorted by name), at most MaxEntries entries; a missing
// directory is no error.
func (c *Catalog) readDir(dir string) []fs.DirEntry {
	c.watch(dir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.ENOTDIR) {
			c.warn(dir, 0, "cannot be read: %v", err)
		}
		return nil
	}
	if len(ents) > MaxEntries {
		c.warn(dir, 0, "has %d entries; only the first %d are read", len(ents), MaxEntries)
		ents = ents[:MaxEntries]
	}
	return ents
}

// skillNameRE is the Agent Skills name syntax: lower-case letters, digits
// and single hyphens, at most 64 characters.
var skillNameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// MaxNameLen bounds a skill's name (the Agent Skills spec's 64).
const MaxNameLen = 64

func (c *Catalog) skillsIn(r Root, seen map[string]int) {
	for _, e := range c.readDir(r.Dir) {
		dir := filepath.Join(r.Dir, e.Name())
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue // a file beside the folders, or a dangling link
		}
		c.watch(dir)
		path := filepath.Join(dir, "SKILL.md")
		s, ok := c.loadSkill(path, e.Name())
		if !ok {
			continue
		}
		s.Dir, s.Path, s.Origin = dir, path, r.Origin
		if i, dup := seen[s.Name]; dup {
			c.Skills[i].Shadowed = append(c.Skills[i].Shadowed, path)
			continue
		}
		seen[s.Name] = len(c.Skills)
		c.Skills = append(c.Skills, s)
	}
}

// loadSkill reads one SKILL.md; ok is false (with a warning, unless the
// folder has no SKILL.md) when the skill cannot be used.
func (c *Catalog) loadSkill(path, folder string) (Skill, bool) {
	data, _, err := c.readBounded(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Skill{}, false
	}
	if err != nil {
		c.warn(path, 0, "cannot be read: %v; the skill is skipped", err)
		return Skill{}, false
	}
	d, err := parse(data)
	if err != nil {
		c.skipWarning(path, err, "the skill is skipped")
		return Skill{}, false
	}
	m := d.meta
	name := strings.TrimSpace(m.Name)
	if name == "" {
		name = folder
	}
	if len(name) > MaxNameLen || !skillNameRE.MatchString(name) {
		c.warn(path, 2, "name %q: want lower-case letters, digits and single hyphens, at most %d characters; the skill is skipped", name, MaxNameLen)
		return Skill{}, false
	}
	desc := strings.TrimSpace(m.Description)
	if desc == "" {
		c.warn(path, 1, "the frontmatter has no description (the model chooses skills by it); the skill is skipped")
		return Skill{}, false
	}
	return Skill{Name: name, Description: desc, AllowedTools: d.tools, Model: m.Model, License: m.License, Hidden: m.DisableModelInvocation,
		NoCommand: m.UserInvocable != nil && !*m.UserInvocable}, true
}

func (c *Catalog) skipWarning(path string, err error, what string) {
	var le *lineError
	switch {
	case errors.Is(err, errNoFrontmatter):
		c.warn(path, 1, "no frontmatter (a `---` line, then name: and description:, then `---`); %s", what)
	case errors.As(err, &le):
		c.warn(path, le.line, "%s; %s", le.msg, what)
	default:
		c.warn(path, 0, "%v; %s", err, what)
	}
}

// commandNameRE is one segment of a command name (the commands registry's
// syntax, without ':').
var commandNameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

func (c *Catalog) commandsIn(r Root, dir, prefix string, depth int, seen map[string]int) {
	for _, e := range c.readDir(dir) {
		path := filepath.Join(dir, e.Name())
		st, err := os.Stat(path)
		if err != nil {
			continue
		}
		if st.IsDir() {
			if depth+1 < MaxCommandDepth && commandNameRE.MatchString(e.Name()) {
				c.commandsIn(r, path, prefix+e.Name()+":", depth+1, seen)
			}
			continue
		}
		base, isMD := strings.CutSuffix(e.Name(), ".md")
		if !isMD || !st.Mode().IsRegular() {
			continue
		}
		if !commandNameRE.MatchString(base) {
			c.warn(path, 0, "command name %q: want lower-case letters, digits, '-' and '_', starting with a letter; the command is skipped", base)
			continue
		}
		cmd, ok := c.loadCommand(path, prefix+base)
		if !ok {
			continue
		}
		cmd.Origin = r.Origin
		if i, dup := seen[cmd.Name]; dup {
			c.Commands[i].Shadowed = append(c.Commands[i].Shadowed, path)
			continue
		}
		seen[cmd.Name] = len(c.Commands)
		c.Commands = append(c.Commands, cmd)
	}
}

// loadCommand reads one command file; its frontmatter is optional.
func (c *Catalog) loadCommand(path, name string) (Command, bool) {
	data, cut, err := c.readBounded(path)
	if err != nil {
		c.warn(path, 0, "cannot be read: %v; the command is skipped", err)
		return Command{}, false
	}
	if cut {
		c.warn(path, 0, "is larger than %d bytes; the rest is left out", MaxFileBytes)
	}
	d, err := parse(data)
	if err != nil && !errors.Is(err, errNoFrontmatter) {
		c.skipWarning(path, err, "the command is skipped")
		return Command{}, false
	}
	desc := strings.TrimSpace(d.meta.Description)
	if desc == "" {
		desc = firstLine(d.body)
	}
	return Command{Name: name, Description: desc, ArgumentHint: strings.TrimSpace(d.meta.ArgumentHint), AllowedTools: d.tools,
		Model: d.meta.Model, Path: path, Body: d.body}, true
}

// bangRE finds Claude Code's bash lines: `!` before a backquoted command.
var bangRE = regexp.MustCompile("!`[^`\n]+`")

// firstLine is the first non-blank line of body, without a heading's '#'s,
// cut to 120 bytes.
func firstLine(body string) string {
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#"))
		if l != "" {
			return cut(l, 120)
		}
	}
	return ""
}

// readBounded reads at most MaxFileBytes of path; cut reports more.
func (c *Catalog) readBounded(path string) (data []byte, cut bool, err error) {
	c.watch(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, false, err
	}
	if len(data) > MaxFileBytes {
		return data[:MaxFileBytes], true, nil
	}
	return data, false, nil
}
