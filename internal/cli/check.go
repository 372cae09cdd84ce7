package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
	"github.com/spf13/cobra"
)

// toolsNotOffered reports registered tools that no tool-schema provider
// offers to the model (nil when fine or when either service is absent).
func toolsNotOffered(c *core.Context) error {
	reg, ok := core.Lookup(c, tools.Key)
	if !ok {
		return nil
	}
	prompt, ok := core.Lookup(c, systemprompt.Key)
	if !ok {
		return nil
	}
	return agent.ToolsOffered(reg, prompt, nil)
}

// checkCommand builds `harness check`.
func checkCommand(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "check",
		Short: "Validate the manifest and boot every plugin, then stop",
		Long: "check parses and composes the manifest, decodes every plugin config, boots the plugin tree\n" +
			"and requires every enabled row to become active. It prints `ok: N plugins active` (exit 0)\n" +
			"or each problem with its FILE:LINE:COL or the failed/pending rows (exit 2). With the\n" +
			"subprocess service mounted, a second line shows the default sandbox policy and the\n" +
			"backend the probe chose (`sandbox: workspace-write, network off, via bwrap: full`); with the sandbox\n" +
			"off (`sandbox: off: commands run unsandboxed`) or without a working backend, a warning on stderr\n" +
			"says so. A third line says how each command's processes are contained (`containment: cgroup v2: ...`,\n" +
			"or `containment: process groups (why): ...` with what that costs and how to get a delegated cgroup).\n" +
			"MCP servers of\n" +
			"the mcp row must connect too: each one that failed or exited is listed with its stderr tail (exit 2).\n" +
			"Tools registered while nothing offers their schemas to the model (no prompt-tools row) are an\n" +
			"error when an agent row is mounted (the agent would refuse to run; exit 2), else a warning on stderr.\n" +
			"Then one line per configuration layer, in order: `manifest: FILE (project)` or `manifest: built-in\n" +
			"default`, and `patch: FILE (user)` etc. A warning on stderr names the environment variable to set\n" +
			"when the agent's default model route has no API key.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := env.Boot()
			if err != nil {
				return err
			}
			awaitMCP(env.Ctx, h)
			problems := mcpProblems(h)
			mcpWarnings := mcpNotices(h)
			notOffered := toolsNotOffered(h.Root.Context())
			_, hasAgent := core.Lookup(h.Root.Context(), agent.Key)
			n := 0
			for _, s := range h.Loader.Status() {
				if s.State == "active" {
					n++
				}
			}
			var keyWarning string
			if svc, ok := core.Lookup(h.Root.Context(), agent.Key); ok {
				keyWarning = routeKeyWarning(svc)
			}
			var sandbox, sandboxWarning string
			var probeErr error
			if rt, ok := core.Lookup(h.Root.Context(), subprocess.Key); ok {
				// The boot ran no probe (the first sandboxed spawn would):
				// run it here, interruptibly, for the sandbox line.
				if probeErr = rt.ProbeSandbox(env.Ctx); probeErr == nil {
					sandbox, sandboxWarning = sandboxSummary(rt)
					sandbox += "\n" + containmentLine(rt) + "\n"
				}
			}
			if err := h.Stop(context.Background()); err != nil {
				return Failure(fmt.Errorf("stopping: %w", err))
			}
			if probeErr != nil {
				return Failure(probeErr)
			}
			if len(problems) > 0 {
				lines := make([]string, len(problems))
				for i, p := range problems {
					lines[i] = p.String()
				}
				return UsageError(fmt.Errorf("%d MCP server(s) did not start:\n%s", len(problems), strings.Join(lines, "\n")))
			}
			if notOffered != nil {
				if hasAgent {
					return UsageError(fmt.Errorf("the agent would refuse to run: %w", notOffered))
				}
				fmt.Fprintf(env.Stderr, "harness: warning: %v\n", notOffered)
			}
			if sandboxWarning != "" {
				fmt.Fprintf(env.Stderr, "harness: warning: %s\n", sandboxWarning)
			}
			for _, w := range mcpWarnings {
				fmt.Fprintf(env.Stderr, "harness: warning: mcp: %s\n", w)
			}
			if keyWarning != "" {
				fmt.Fprintf(env.Stderr, "harness: warning: %s\n", keyWarning)
			}
			fmt.Fprintf(env.Stdout, "ok: %s active\n%s", plural(n, "plugin"), sandbox)
			for _, l := range env.Layers() {
				fmt.Fprintln(env.Stdout, layerLine(l))
			}
			if len(env.claudeUsed) > 0 {
				fmt.Fprintf(env.Stdout, "claude settings: %s\n", strings.Join(env.claudeUsed, ", "))
			}
			return nil
		},
	}
}

// layerLine renders one configuration layer for check: the manifest (a
// project harness.yml says that it replaces the default and how to patch
// it instead) or a patch.
func layerLine(l Layer) string {
	switch {
	case l.Kind == "manifest" && l.Path == "":
		return "manifest: built-in default"
	case l.Kind == "manifest" && l.Source == "project":
		return fmt.Sprintf("manifest: %s (project file: it replaces the built-in default; to patch the default instead, write its changes as a patch list in %s)", l.Path, ProjectPatch)
	case l.Kind == "manifest":
		return fmt.Sprintf("manifest: %s (%s)", l.Path, l.Source)
	case l.Path == "":
		return "patch: " + l.Source
	}
	return fmt.Sprintf("patch: %s (%s)", l.Path, l.Source)
}

// routeKeyWarning says when the agent's default model route has no API key
// (its requests would fail), naming where the key is read from; "" when
// it has one, the adapter cannot tell, or the route does not resolve
// (that is reported when a session opens).
func routeKeyWarning(svc *agent.Service) string {
	route := svc.Config().Model
	m, err := svc.LLM().Resolve(route)
	if err != nil {
		return ""
	}
	kerr := svc.LLM().KeyError(route)
	if kerr == nil {
		return ""
	}
	var le *llm.Error
	if errors.As(kerr, &le) && le.Message != "" {
		kerr = errors.New(le.Message)
	}
	return fmt.Sprintf("the agent's default model route %s has no API key: %v", m.Route(), kerr)
}
