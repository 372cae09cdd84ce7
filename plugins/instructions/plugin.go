package instructions

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/systemprompt"
)

// SectionName is the name of the prompt section carrying the files.
const SectionName = "instructions"

// SectionOrder places the section after the tool guidance and before the
// environment-bearing tail.
const SectionOrder = 9950

// Plugin registers the instructions section. It waits for systemPrompt.
var Plugin = core.Define("instructions", apply,
	core.WithInject(systemprompt.Key.Name()),
	core.WithDescription("project instructions: AGENTS.md and CLAUDE.md from the repository root to the working directory, plus the user's, in the system prompt"))

func apply(c *core.Context, cfg Config) error {
	if !cfg.Enabled {
		return nil
	}
	s := NewSource(cfg, os.LookupEnv)
	_, err := core.Use(c, systemprompt.Key).Section(c, systemprompt.Section{
		Name:        SectionName,
		Order:       SectionOrder,
		Interpolate: systemprompt.InterpolateOff,
		TextFunc: func(_ context.Context, ac systemprompt.AssembleContext) (string, error) {
			return s.Text(cwdOf(ac))
		},
	})
	return err
}

// cwdOf returns the agent's working directory when the assembly is for an
// agent session (its handle has a Cwd method), else the process's.
func cwdOf(ac systemprompt.AssembleContext) string {
	if a, ok := ac.Agent.(interface{ Cwd() string }); ok && a.Cwd() != "" {
		return a.Cwd()
	}
	wd, _ := os.Getwd()
	return wd
}

// Source renders the instruction section for a working directory and
// caches it until one of the files it depends on changes. Safe for
// concurrent use.
type Source struct {
	opts Options

	mu    sync.Mutex
	cache map[string]*cached
}

type cached struct {
	text string
	deps []watched
}

// NewSource builds a Source from cfg; lookup reads XDG_CONFIG_HOME and HOME
// (os.LookupEnv when nil).
func NewSource(cfg Config, lookup func(string) (string, bool)) *Source {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	home, _ := lookup("HOME")
	user := cfg.UserFile
	switch {
	case user == "-":
		user = ""
	case user == "":
		if x, ok := lookup("XDG_CONFIG_HOME"); ok && filepath.IsAbs(x) {
			user = filepath.Join(x, "harness", "AGENTS.md")
		} else if home != "" {
			user = filepath.Join(home, ".config", "harness", "AGENTS.md")
		}
	case strings.HasPrefix(user, "~/") && home != "":
		user = filepath.Join(home, user[2:])
	}
	return &Source{opts: Options{Files: cfg.Files, UserFile: user, MaxBytes: cfg.MaxBytes, MaxImportDepth: cfg.MaxImportDepth, Home: home},
		cache: map[string]*cached{}}
}

// maxCached bounds the number of working directories kept in the cache.
const maxCached = 64

// Text returns the section text for cwd ("" when no file exists).
func (s *Source) Text(cwd string) (string, error) {
	if cwd == "" {
		return "", nil
	}
	s.mu.Lock()
	c := s.cache[cwd]
	s.mu.Unlock()
	if c != nil && fresh(c.deps) {
		return c.text, nil
	}
	o := s.opts
	o.Cwd = cwd
	files, deps := Load(o)
	text := Render(files, o.MaxBytes)
	s.mu.Lock()
	if len(s.cache) >= maxCached {
		clear(s.cache)
	}
	s.cache[cwd] = &cached{text: text, deps: deps}
	s.mu.Unlock()
	return text, nil
}

func fresh(deps []watched) bool {
	for _, d := range deps {
		if !d.current() {
			return false
		}
	}
	return true
}

// Render writes files as the section text: a preamble, then each file
// under a heading naming its path, with its notes and cut note.
func Render(files []File, maxBytes int) string {
	if len(files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Project instructions\n\n")
	b.WriteString("The files below hold instructions from the user and the project (AGENTS.md, CLAUDE.md). Follow them; where two disagree, the file listed later (nearer the working directory) wins.\n")
	for _, f := range files {
		b.WriteString("\n## ")
		b.WriteString(f.Path)
		if f.ImportedBy != "" {
			fmt.Fprintf(&b, " (imported by %s)", f.ImportedBy)
		}
		b.WriteString("\n\n")
		if f.Text != "" {
			b.WriteString(f.Text)
			if !strings.HasSuffix(f.Text, "\n") {
				b.WriteByte('\n')
			}
		}
		if f.Cut {
			fmt.Fprintf(&b, "\n[harness: %s was cut after %d of its %d bytes (instructions maxBytes)]\n", f.Path, len(f.Text), f.Size)
		}
		for _, n := range f.Notes {
			fmt.Fprintf(&b, "[harness: %s]\n", n)
		}
	}
	return b.String()
}
