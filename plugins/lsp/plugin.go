package lsp

import (
	"context"
	_ "embed"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/tools/workdir"
)

// Key is the "lsp" service: the row's *Manager.
var Key = core.NewKey[*Manager]("lsp")

// Plugin is the lsp plugin: language servers over stdio, diagnostics
// appended to the results of file edits, and the diagnostics tool.
var Plugin = core.Define("lsp", apply,
	core.WithInject(tools.Key.Name(), subprocess.Key.Name()),
	core.WithProvides(Key.Name()),
	core.WithDescription("Language servers (gopls, …) over stdio: diagnostics appended to edit and write results, and a diagnostics tool."))

//go:embed diagnostics.md
var diagnosticsDescription string

// guidance is the tool-lsp prompt section: one stable sentence.
const guidance = "Results of file edits end with the language server's diagnostics for the edited file when it reports problems (\"LSP diagnostics for FILE:\"); fix the errors they name before running the build. The diagnostics tool shows the current ones."

func apply(c *core.Context, cfg Config) error {
	cwd, err := workdir.Default(cfg.Cwd)
	if err != nil {
		return err
	}
	m := &Manager{c: c, cfg: cfg, cwd: cwd, rt: core.Use(c, subprocess.Key), log: c.Logger(),
		servers: map[serverKey]*server{}, told: map[serverKey]bool{}}
	if err := c.Effect("lsp servers", func() (func(), error) {
		return func() {
			ctx, cancel := context.WithTimeout(context.Background(), 3*cfg.Grace.D()+5*time.Second)
			defer cancel()
			m.close(ctx)
		}, nil
	}); err != nil {
		return err
	}
	if err := core.Provide(c, Key, m); err != nil {
		return err
	}
	if err := core.On(c, tools.PostExecute, m.postExecute); err != nil {
		return err
	}
	// The tool and the prompt's sentence only where a configured server is
	// installed: a session without one (a Python project with no pyright)
	// pays no tokens for a promise nothing keeps.
	if !anyInstalled(cfg.Servers) {
		c.Logger().Debug("lsp: no configured language server is on PATH; no diagnostics tool", "servers", len(cfg.Servers))
		return nil
	}
	if err := tools.Register(c, m.diagnosticsTool()); err != nil {
		return err
	}
	if sp, ok := core.Lookup(c, systemprompt.Key); ok {
		if _, err := sp.Section(c, systemprompt.Section{Name: "tool:lsp", Order: systemprompt.SectionOrder(systemprompt.OrderToolLSP),
			Text: guidance, Interpolate: systemprompt.InterpolateOff}); err != nil {
			return err
		}
	}
	return nil
}

// postExecute appends the diagnostics of the files a successful call
// changed to its result. A changing call is one whose presentation (the
// tool's own presenter) is of kind edit; its locations are the files, and
// a diff's new text is the content sent to the server (else the file is
// read). Blocked results and failures are left alone.
func (m *Manager) postExecute(ctx context.Context, e *tools.Execution, next core.Next[*tools.Execution, tools.PostDecision]) (tools.PostDecision, error) {
	d, err := next(ctx, e)
	if err != nil || d.Kind == tools.PostBlock {
		return d, err
	}
	o := e.Outcome()
	if o == nil || o.IsError || e.Tool() == nil || !e.Tool().Presents() {
		return d, nil
	}
	cwd := workdir.Of(ctx, e.Context(), m.cwd)
	p := tools.Present(e.Tool(), tools.PresentCall{ID: e.CallID(), Name: e.Name(), Arguments: e.Arguments(), Cwd: cwd, Outcome: o})
	if p.Kind != tools.KindEdit {
		return d, nil
	}
	var blocks []string
	for _, loc := range p.Locations {
		path := loc.Path
		if !filepath.IsAbs(path) {
			path = filepath.Join(cwd, path)
		}
		rep, ok := m.Diagnose(ctx, path, newText(p, loc.Path))
		if !ok {
			continue
		}
		if s := Format(rep, cwd, m.cfg.MinSeverity, m.cfg.MaxDiagnostics); s != "" {
			blocks = append(blocks, s)
		}
	}
	if len(blocks) == 0 {
		return d, nil
	}
	content := d.Content
	if content == nil {
		content = o.Content
	}
	d.Content = append(append([]tools.Content(nil), content...), tools.Text(strings.Join(blocks, "\n")))
	return d, nil
}

// newText is the new text of path in p's diffs, nil when p has none.
func newText(p tools.Presentation, path string) *string {
	for _, c := range p.Content {
		if c.Type == tools.ContentDiff && c.Path == path && c.NewText != nil {
			return c.NewText
		}
	}
	return nil
}

// anyInstalled reports whether the command of one of servers is on PATH.
func anyInstalled(servers map[string]ServerConfig) bool {
	for _, s := range servers {
		if _, err := exec.LookPath(s.Command); err == nil {
			return true
		}
	}
	return false
}
