package skills

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"strings"

	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/tools/workdir"
)

// ToolName is the skill tool's name (Claude Code's Skill).
const ToolName = "skill"

// MaxBodyBytes bounds the SKILL.md text a call returns; a longer file is
// cut with a note naming the file, which the model can read on.
const MaxBodyBytes = 48 << 10

//go:embed skill.md
var toolDescription string

// Args are the skill tool's arguments.
type Args struct {
	// Name is the skill's name as the prompt lists it.
	Name string `json:"name" jsonschema:"minLength=1,description=The skill's name as listed in the Skills section of the system prompt"`
	// Args are optional arguments for the skill ($ARGUMENTS in its body).
	Args string `json:"args,omitempty" jsonschema:"description=Optional arguments for the skill"`
}

// tool is the skill tool over src; readDenied, when set, reports a read
// rule denying a SKILL.md; cwd is the process's working directory, for
// calls that carry none.
func (p *plugin) tool() *tools.Tool {
	return tools.Define(ToolName, toolDescription, p.load, tools.WithReadOnly(), tools.WithPresent(present))
}

// load is the skill tool's body: the SKILL.md of the named skill in the
// call's working directory, its arguments expanded, under a header naming
// the folder.
func (p *plugin) load(ctx context.Context, e *tools.Execution, a Args) (string, error) {
	cat := p.src.Catalog(workdir.Or(ctx, p.cwd))
	s, ok := cat.Skill(a.Name)
	if !ok || s.Hidden {
		return "", &tools.Error{Name: "SkillError", Code: "SKILL_NOT_FOUND",
			Message: fmt.Sprintf("no skill named %q; the skills are: %s", a.Name, visibleNames(cat))}
	}
	if rule, denied := p.readDenied(e, s.Path); denied {
		return "", &tools.Error{Name: "SkillError", Code: "SKILL_DENIED", Message: fmt.Sprintf("reading %s is denied by the rule %s", s.Path, rule)}
	}
	data, err := os.ReadFile(s.Path)
	if err != nil {
		return "", &tools.Error{Name: "SkillError", Code: "SKILL_UNREADABLE", Message: fmt.Sprintf("%s: %v", s.Path, err)}
	}
	d, err := parse(data)
	if err != nil {
		return "", &tools.Error{Name: "SkillError", Code: "SKILL_INVALID", Message: fmt.Sprintf("%s changed and no longer parses: %v", s.Path, err)}
	}
	return formatSkill(s, d.body, a.Args), nil
}

// formatSkill is the tool's result: a header, then the body (cut at
// MaxBodyBytes with a note).
func formatSkill(s Skill, body, args string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Skill %s loaded from %s\nIts folder is %s: paths in the skill are relative to it; read or run those files from there.\n\n", s.Name, s.Path, s.Dir)
	text := strings.TrimLeft(body, "\n")
	if strings.Contains(text, "$ARGUMENTS") || args != "" {
		text = Expand(text, args)
	}
	if len(text) > MaxBodyBytes {
		text = cut(text, MaxBodyBytes)
		fmt.Fprintf(&b, "%s\n\n[harness: the skill was cut after %d bytes; read the rest of %s with the read tool]\n", text, MaxBodyBytes, s.Path)
		return b.String()
	}
	b.WriteString(text)
	return b.String()
}

func visibleNames(c *Catalog) string {
	var names []string
	for _, s := range c.Skills {
		if !s.Hidden {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// present titles a call with the skill's name.
func present(in tools.PresentInput[Args, string]) tools.Presentation {
	p := tools.Presentation{Kind: tools.KindRead, Title: "skill " + in.Args.Name}
	if in.Succeeded() {
		p.Summarize("loaded")
	}
	return p
}
