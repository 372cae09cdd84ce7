package agent

import (
	"context"
	"os"
	"runtime"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
)

// Key is the agent service.
var Key = core.NewKey[*Service]("agent")

// Plugin provides the agent service (the loop and its sessions). It waits
// for the llm, tools, systemPrompt and sessions services.
var Plugin = core.Define("agent", apply,
	core.WithInject(llm.Key.Name(), tools.Key.Name(), systemprompt.Key.Name(), sessions.Key.Name()),
	core.WithProvides(Key.Name()),
	core.WithDescription("the agent loop: sessions that stream the model and run its tool calls"))

// Service opens sessions. Safe for concurrent use; each [Session] runs one
// turn at a time.
type Service struct {
	c        *core.Context
	cfg      Config
	sessions *sessions.Service
	llm      *llm.Service
	tools    *tools.Registry
	prompt   *systemprompt.Service
}

func apply(c *core.Context, cfg Config) error {
	s := &Service{
		c:        c,
		cfg:      cfg,
		sessions: core.Use(c, sessions.Key),
		llm:      core.Use(c, llm.Key),
		tools:    core.Use(c, tools.Key),
		prompt:   core.Use(c, systemprompt.Key),
	}
	if err := s.registerPromptFacts(c); err != nil {
		return err
	}
	return core.Provide(c, Key, s)
}

// Sessions returns the session store the sessions are logged in.
func (s *Service) Sessions() *sessions.Service { return s.sessions }

// Config returns the plugin's configuration.
func (s *Service) Config() Config { return s.cfg }

// LLM returns the model service the sessions use.
func (s *Service) LLM() *llm.Service { return s.llm }

// Tools returns the tool registry the sessions dispatch through.
func (s *Service) Tools() *tools.Registry { return s.tools }

// registerPromptFacts registers the global prompt variables (provider,
// model, cwd, date, os) with process-wide values, so `harness prompt` can
// render templates that name them; each session shadows them in its scope.
// The model's tool list is Assembly.Tools: mount the prompt-tools plugin
// to project the tool registry into it.
func (s *Service) registerPromptFacts(c *core.Context) error {
	facts := map[string]func() (string, bool){
		"provider": func() (string, bool) {
			m, err := s.llm.Resolve(s.cfg.Model)
			return m.Provider, err == nil
		},
		"model": func() (string, bool) {
			m, err := s.llm.Resolve(s.cfg.Model)
			return m.Name, err == nil
		},
		"cwd":  func() (string, bool) { wd, err := os.Getwd(); return wd, err == nil },
		"date": func() (string, bool) { return time.Now().Format(time.DateOnly), true },
		"os":   func() (string, bool) { return runtime.GOOS, true },
	}
	for _, name := range []string{"provider", "model", "cwd", "date", "os"} {
		fn := facts[name]
		if _, err := s.prompt.Variable(c, name, func(context.Context, systemprompt.AssembleContext) (string, bool) { return fn() }); err != nil {
			return err
		}
	}
	return nil
}
