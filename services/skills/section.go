package skills

import (
	"strings"
	"sync"
)

// SectionName is the name of the prompt section listing the skills.
const SectionName = "skills"

// SectionOrder places the section after the tool guidance and before the
// project instructions (9950): it changes only when a skill does.
const SectionOrder = 9940

// MaxDescriptionBytes bounds a description in the prompt (the Agent
// Skills spec's limit on the field); a longer one is cut with "…".
const MaxDescriptionBytes = 1024

// Render writes the section text: a preamble, then `- name: description`
// per skill the model may use, sorted by name, each description on one
// line (blanks collapsed) and cut at MaxDescriptionBytes. It depends only
// on the names and descriptions, so the same skills give the same bytes
// on every step, run and machine. "" when there is none.
func Render(c *Catalog) string {
	var b strings.Builder
	for _, s := range c.Skills {
		if s.Hidden {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("# Skills\n\n")
			b.WriteString("Skills are folders of instructions, scripts and resources for particular tasks. When a task matches a skill's description, call the `" + ToolName + "` tool with the skill's name before you start and follow what it returns; files the skill mentions are in its folder, which the tool names. Do not call it for a skill already loaded in this conversation.\n\n")
		}
		b.WriteString("- ")
		b.WriteString(s.Name)
		b.WriteString(": ")
		b.WriteString(cut(strings.Join(strings.Fields(s.Description), " "), MaxDescriptionBytes))
		b.WriteByte('\n')
	}
	return b.String()
}

// Source discovers catalogs per working directory and keeps each until a
// file or directory it was read from changes. Safe for concurrent use.
type Source struct {
	opts Options

	mu    sync.Mutex
	cache map[string]*Catalog
}

// NewSource returns a Source for o (o.Cwd is ignored: Catalog names it).
func NewSource(o Options) *Source { return &Source{opts: o, cache: map[string]*Catalog{}} }

// maxCached bounds the working directories kept.
const maxCached = 64

// Catalog returns the catalog of cwd, discovering it again when it is not
// fresh.
func (s *Source) Catalog(cwd string) *Catalog {
	s.mu.Lock()
	c := s.cache[cwd]
	s.mu.Unlock()
	if c != nil && c.Fresh() {
		return c
	}
	o := s.opts
	o.Cwd = cwd
	c = Discover(o)
	s.mu.Lock()
	if len(s.cache) >= maxCached {
		clear(s.cache)
	}
	s.cache[cwd] = c
	s.mu.Unlock()
	return c
}
