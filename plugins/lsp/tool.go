package lsp

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/tools/workdir"
)

// DiagnosticsArgs are the diagnostics tool's arguments.
type DiagnosticsArgs struct {
	// Paths are the files to check; none: every open file.
	Paths []string `json:"paths,omitempty" jsonschema:"description=Files to check (relative to the working directory). Omit for every file opened so far."`
}

// DiagnosticsValue is the diagnostics tool's value: one report per file.
type DiagnosticsValue struct {
	Files []FileReport `json:"files"`
	cwd   string
}

// maxToolPaths bounds the paths of one diagnostics call.
const maxToolPaths = 20

func (m *Manager) diagnosticsTool() *tools.Tool {
	return tools.Define("diagnostics", strings.TrimSpace(diagnosticsDescription), m.diagnostics,
		tools.WithRender(func(_ DiagnosticsArgs, v DiagnosticsValue) []tools.Content {
			return []tools.Content{tools.Text(m.render(v))}
		}),
		tools.WithPresent(presentDiagnostics),
		tools.WithReadOnly(),
		tools.WithConcurrencySafe(func(DiagnosticsArgs) bool { return true }))
}

// diagnostics is the tool's body: each path given (read-denied files
// refused), else the current diagnostics of every open file.
func (m *Manager) diagnostics(ctx context.Context, e *tools.Execution, args DiagnosticsArgs) (DiagnosticsValue, error) {
	cwd := workdir.Of(ctx, e.Context(), m.cwd)
	v := DiagnosticsValue{cwd: cwd}
	if len(args.Paths) == 0 {
		v.Files = m.Current()
		return v, nil
	}
	if len(args.Paths) > maxToolPaths {
		return v, tools.Errorf("INVALID_ARGS", "at most %d paths per call, got %d", maxToolPaths, len(args.Paths))
	}
	policy, _ := core.Lookup(m.c, tools.ReadPolicyKey)
	for _, p := range args.Paths {
		path := p
		if !filepath.IsAbs(path) {
			path = filepath.Join(cwd, path)
		}
		path = filepath.Clean(path)
		if policy != nil {
			if rule, denied := policy.ReadDenied(e, path); denied {
				return v, tools.Errorf("PERMISSION_DENIED", "reading %s is denied by %s", p, rule)
			}
		}
		rep, ok := m.Diagnose(ctx, path, nil)
		if !ok {
			rep = FileReport{Path: path, Note: "no language server handles this file, or it is not installed, or the file cannot be read"}
		}
		v.Files = append(v.Files, rep)
	}
	return v, nil
}

// render is the model-facing text of a diagnostics result.
func (m *Manager) render(v DiagnosticsValue) string {
	if len(v.Files) == 0 {
		return "No files are open in a language server yet."
	}
	var out []string
	for _, rep := range v.Files {
		s := Format(rep, v.cwd, m.cfg.MinSeverity, m.cfg.MaxDiagnostics)
		if s == "" {
			name := rep.Path
			if rel, err := filepath.Rel(v.cwd, rep.Path); err == nil && !strings.HasPrefix(rel, "..") {
				name = rel
			}
			s = fmt.Sprintf("LSP diagnostics for %s: none", name)
		}
		out = append(out, s)
	}
	return strings.Join(out, "\n")
}

// presentDiagnostics is the tool's presentation: kind read, titled with
// the paths (or "open files"), the files as its locations.
func presentDiagnostics(in tools.PresentInput[DiagnosticsArgs, DiagnosticsValue]) tools.Presentation {
	p := tools.Presentation{Kind: tools.KindRead, Title: "open files"}
	if len(in.Args.Paths) > 0 {
		p.Title = strings.Join(in.Args.Paths, ", ")
	}
	for _, path := range in.Args.Paths {
		if !filepath.IsAbs(path) && in.Cwd != "" {
			path = filepath.Join(in.Cwd, path)
		}
		p.Locations = append(p.Locations, tools.Location{Path: path})
	}
	if in.Succeeded() {
		n := 0
		for _, f := range in.Out.Files {
			n += len(f.Diagnostics)
		}
		p.Summarize(fmt.Sprintf("%d diagnostics in %d files", n, len(in.Out.Files)))
	}
	return p
}
