package skills

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/commands"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/tools/workdir"
)

// Plugin is the skills row: at start it discovers the skills and commands
// of the process's working directory, logs each [Warning], registers every
// command file with the commands registry (when its row is mounted: it
// comes earlier in harness.yml) and, when at least one skill is there, the
// skill tool and the prompt section. The section and the tool follow the
// session's working directory and see a skill edited, added or removed on
// the next step.
var Plugin = core.Define("skills", apply,
	core.WithInject(systemprompt.Key.Name(), tools.Key.Name()),
	core.WithDescription("skills (SKILL.md folders in .claude/skills, .agents/skills, .harness/skills and the user's) listed in the prompt and loaded by the skill tool; command files (.claude/commands/NAME.md) as /NAME"))

// plugin is one mounted row.
type plugin struct {
	c   *core.Context
	src *Source
	cwd string
}

func apply(c *core.Context, cfg Config) error {
	if !cfg.Enabled {
		return nil
	}
	cwd, err := workdir.Default(cfg.Cwd)
	if err != nil {
		return fmt.Errorf("skills: %w", err)
	}
	p := &plugin{c: c, src: NewSource(userOptions(cfg, os.LookupEnv)), cwd: cwd}
	cat := p.src.Catalog(cwd)
	p.log(cat)
	if err := p.registerCommands(cat); err != nil {
		return err
	}
	if visibleNames(cat) == "(none)" {
		return nil
	}
	if err := tools.Register(c, p.tool()); err != nil {
		return err
	}
	_, err = core.Use(c, systemprompt.Key).Section(c, systemprompt.Section{
		Name: SectionName, Order: SectionOrder, Interpolate: systemprompt.InterpolateOff,
		TextFunc: func(_ context.Context, ac systemprompt.AssembleContext) (string, error) {
			return Render(p.src.Catalog(p.cwdOf(ac.Agent))), nil
		},
	})
	return err
}

// userOptions resolves the user's roots from the environment.
func userOptions(cfg Config, lookup func(string) (string, bool)) Options {
	o := Options{NoUser: !cfg.UserDirs}
	o.Home, _ = lookup("HOME")
	if x, ok := lookup("XDG_CONFIG_HOME"); ok && filepath.IsAbs(x) {
		o.ConfigHome = x
	} else if o.Home != "" {
		o.ConfigHome = filepath.Join(o.Home, ".config")
	}
	return o
}

// cwdOf is the working directory of an agent handle or a front end's
// session (one with a Cwd method), else the process's.
func (p *plugin) cwdOf(h any) string {
	if a, ok := h.(interface{ Cwd() string }); ok && a.Cwd() != "" {
		return a.Cwd()
	}
	return p.cwd
}

// log writes the warnings (shadowed names at debug level).
func (p *plugin) log(cat *Catalog) {
	l := p.c.Logger()
	for _, w := range cat.Warnings {
		l.Warn("skills: " + w.String())
	}
	for _, s := range cat.Skills {
		for _, sh := range s.Shadowed {
			l.Debug("skills: skill "+s.Name+" is taken from "+s.Path, "shadowed", sh)
		}
	}
	for _, cmd := range cat.Commands {
		for _, sh := range cmd.Shadowed {
			l.Debug("skills: command /"+cmd.Name+" is taken from "+cmd.Path, "shadowed", sh)
		}
	}
}

// readDenied asks the read policy (the permission row) whether a read rule
// denies path.
func (p *plugin) readDenied(e *tools.Execution, path string) (string, bool) {
	rp, ok := core.Lookup(p.c, tools.ReadPolicyKey)
	if !ok || rp == nil {
		return "", false
	}
	return rp.ReadDenied(e, path)
}

// registerCommands adds each command file as /name; a name the registry
// already has (a built-in command) keeps its meaning, with a warning.
func (p *plugin) registerCommands(cat *Catalog) error {
	reg, ok := core.Lookup(p.c, commands.Key)
	if !ok || reg == nil {
		return nil
	}
	for _, cmd := range cat.Commands {
		if _, taken := reg.Lookup(cmd.Name); taken {
			p.c.Logger().Warn(fmt.Sprintf("skills: %s: /%s is a built-in command, which keeps its meaning; the file is not used", cmd.Path, cmd.Name))
			continue
		}
		name := cmd.Name
		err := reg.Register(p.c, commands.Command{Name: name, Args: cmd.ArgumentHint, Summary: summary(cmd),
			Run: func(ctx context.Context, inv commands.Invocation) (commands.Reply, error) {
				return p.run(ctx, name, inv)
			}})
		if err != nil {
			return fmt.Errorf("skills: %s: %w", cmd.Path, err)
		}
	}
	// A skill is also /name (Claude Code's), unless a command file or a
	// built-in has the name, or its frontmatter says user-invocable: false.
	for _, s := range cat.Skills {
		if s.NoCommand {
			continue
		}
		if _, taken := reg.Lookup(s.Name); taken {
			p.c.Logger().Debug("skills: /"+s.Name+" is a command already; the skill of that name is loaded by the model only", "skill", s.Path)
			continue
		}
		name := s.Name
		err := reg.Register(p.c, commands.Command{Name: name, Args: "[arguments]", Summary: skillSummary(s),
			Run: func(ctx context.Context, inv commands.Invocation) (commands.Reply, error) {
				return p.runSkill(ctx, name, inv)
			}})
		if err != nil {
			return fmt.Errorf("skills: %s: %w", s.Path, err)
		}
	}
	return nil
}

func skillSummary(s Skill) string {
	return cut(s.Description, 120) + " (" + s.Origin + " skill)"
}

// runSkill is /name of a skill: the prompt is the skill as the skill tool
// would load it (its header, its body with the arguments), with its bash
// lines run and its files read as a command file's are.
func (p *plugin) runSkill(ctx context.Context, name string, inv commands.Invocation) (commands.Reply, error) {
	cwd := p.cwd
	var scope *core.ScopeID
	if inv.Session != nil {
		cwd, scope = p.cwdOf(inv.Session), inv.Session.Scope()
	}
	s, ok := p.src.Catalog(cwd).Skill(name)
	if !ok {
		return commands.Reply{}, fmt.Errorf("the skill %s is gone (harness reads the skills' names when it starts)", name)
	}
	data, err := os.ReadFile(s.Path) // the person asked for it: read rules govern the model's reads

	if err != nil {
		return commands.Reply{}, fmt.Errorf("%s: %w", s.Path, err)
	}
	d, err := parse(data)
	if err != nil {
		return commands.Reply{}, fmt.Errorf("%s no longer parses: %w", s.Path, err)
	}
	prompt := formatSkill(s, d.body, strings.TrimSpace(inv.Args))
	if !strings.Contains(d.body, "$ARGUMENTS") && strings.TrimSpace(inv.Args) == "" {
		prompt += "\n\nThe person asked for this skill: follow it."
	}
	prompt, ran := p.inline(ctx, name, cwd, scope, prompt)
	var text string
	if len(ran) > 0 {
		text = "/" + name + ": " + strings.Join(ran, "; ")
	}
	return commands.Reply{Prompt: prompt, Text: text}, nil
}

func summary(cmd Command) string {
	s := cmd.Description
	if s == "" {
		s = "(no description)"
	}
	return s + " (" + cmd.Origin + ")"
}

// run expands the command file as it is now (in the session's working
// directory when the front end has a session): the reply's prompt is the
// expanded body, with its bash lines run and its files read (inline.go);
// its text says what ran and what of the frontmatter is not honoured.
func (p *plugin) run(ctx context.Context, name string, inv commands.Invocation) (commands.Reply, error) {
	cwd := p.cwd
	var scope *core.ScopeID
	if inv.Session != nil {
		cwd, scope = p.cwdOf(inv.Session), inv.Session.Scope()
	}
	cat := p.src.Catalog(cwd)
	i := -1
	for j := range cat.Commands {
		if cat.Commands[j].Name == name {
			i = j
		}
	}
	if i < 0 {
		return commands.Reply{}, fmt.Errorf("the command file of /%s is gone (harness reads command files when it starts)", name)
	}
	cmd := cat.Commands[i]
	prompt := Expand(strings.TrimLeft(cmd.Body, "\n"), inv.Args)
	if strings.TrimSpace(prompt) == "" {
		return commands.Reply{}, fmt.Errorf("%s: the command's body is empty", cmd.Path)
	}
	prompt, ran := p.inline(ctx, name, cwd, scope, prompt)
	var text []string
	if len(ran) > 0 {
		text = append(text, "/"+cmd.Name+": "+strings.Join(ran, "; "))
	}
	if u := unhonoured(cmd); u != "" {
		text = append(text, u)
	}
	return commands.Reply{Prompt: prompt, Text: strings.Join(text, "\n\n")}, nil
}

// unhonoured notes frontmatter keys a command sets that harness does not
// act on ("" when none).
func unhonoured(cmd Command) string {
	var notes []string
	if cmd.Model != "" {
		notes = append(notes, fmt.Sprintf("model: %s is not honoured (the session's route answers)", cmd.Model))
	}
	if len(cmd.AllowedTools) > 0 {
		notes = append(notes, "allowed-tools is not honoured (the permission rules apply as usual)")
	}
	if len(notes) == 0 {
		return ""
	}
	return "/" + cmd.Name + ": " + strings.Join(notes, "; ")
}
