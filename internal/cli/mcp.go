package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/plugins/mcp"
	"github.com/dshgo/harness/services/tools"
	"github.com/spf13/cobra"
)

// awaitMCP waits until every configured MCP server's first connect attempt
// has settled (each is bounded by its startupTimeout), for the commands that
// report on the servers or hand their tools to a headless run: mcp, check,
// plugins, prompt, run and job-run. Boot does not wait: servers connect in
// the background, and the other commands (tool bash, tools, chat, serve)
// never wait for them.
func awaitMCP(ctx context.Context, h *fxcore.Harness) {
	if m, ok := core.Lookup(h.Root.Context(), mcp.Key); ok {
		_ = m.Wait(ctx)
	}
}

// awaitMCPTool waits for the MCP server that owns the tool name, if any
// (`harness tool mcp__fs__read_file`); any other name waits for nothing.
func awaitMCPTool(ctx context.Context, h *fxcore.Harness, name string) {
	if m, ok := core.Lookup(h.Root.Context(), mcp.Key); ok {
		_ = m.WaitForTool(ctx, name)
	}
}

// mcpNotices are the mcp row's notices (an untrusted .mcp.json, skipped
// duplicates) and the servers that run outside the sandbox, for check.
func mcpNotices(h *fxcore.Harness) []string {
	m, ok := core.Lookup(h.Root.Context(), mcp.Key)
	if !ok {
		return nil
	}
	out := m.Notices()
	for _, s := range m.Servers() {
		if s.Unsandboxed != "" {
			out = append(out, fmt.Sprintf("server %q %s", s.Name, s.Unsandboxed))
		}
	}
	return out
}

// mcpPending lists the MCP servers still connecting, for `harness tools`.
func mcpPending(h *fxcore.Harness) []string {
	if m, ok := core.Lookup(h.Root.Context(), mcp.Key); ok {
		return m.Pending()
	}
	return nil
}

// mcpProblems lists the MCP servers that failed to start or exited, one
// message each (with the stderr tail the manager keeps).
func mcpProblems(h *fxcore.Harness) []mcpProblem {
	m, ok := core.Lookup(h.Root.Context(), mcp.Key)
	if !ok {
		return nil
	}
	var out []mcpProblem
	for _, s := range m.Servers() {
		if s.State == mcp.StateFailed || s.State == mcp.StateExited {
			out = append(out, mcpProblem{Server: s.Name, State: string(s.State), Error: s.Error})
		}
	}
	return out
}

// mcpProblem is an MCP server that failed to start or exited, as `harness
// plugins` reports it (under the table, and in --json as the mcp row's
// "problems").
type mcpProblem struct {
	Server string `json:"server"`
	State  string `json:"state"`
	Error  string `json:"error"`
}

func (p mcpProblem) String() string {
	return fmt.Sprintf("mcp server %q: %s: %s", p.Server, p.State, p.Error)
}

func withMCP(env *Env, fn func(h *fxcore.Harness, m *mcp.Manager) error) (err error) {
	h, err := env.Boot(SkipAudit())
	if err != nil {
		return err
	}
	defer func() {
		if serr := stopHarness(h); serr != nil && err == nil {
			err = Failure(fmt.Errorf("stopping: %w", serr))
		}
	}()
	awaitMCP(env.Ctx, h)
	if env.Interrupted() {
		// Boot's wait for the servers ended on the signal: report
		// nothing about half-started servers (M4).
		return errInterrupted()
	}
	m, ok := core.Lookup(h.Root.Context(), mcp.Key)
	if !ok {
		return UsageError(fmt.Errorf("no MCP client: mount the %q plugin in harness.yml (docs/mcp.md)", mcp.Plugin.Name()))
	}
	return fn(h, m)
}

func printJSON(env *Env, v any) error {
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// mcpCommand builds `harness mcp`.
func mcpCommand(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Inspect and call the configured MCP servers (list, tools, call)",
		Long: "mcp boots the configured harness, waits for the MCP servers of the mcp row to connect\n" +
			"(each within its startupTimeout) and reports on them. See docs/mcp.md.",
	}
	cmd.AddCommand(mcpList(env), mcpTools(env), mcpCall(env), mcpTrust(env))
	return cmd
}

func mcpList(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the MCP servers: name, transport, state, tool count, protocol version, error",
		Long: "list prints one line per configured server. --json prints an array of {name, source, transport,\n" +
			"state, tools, protocolVersion, serverName, serverVersion, restarts, error}. Exit 0 even when a\n" +
			"server failed (its error and stderr tail are shown); `harness check` fails instead.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withMCP(env, func(_ *fxcore.Harness, m *mcp.Manager) error {
				servers := m.Servers()
				if asJSON {
					return printJSON(env, servers)
				}
				tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tTRANSPORT\tSTATE\tTOOLS\tPROTOCOL\tSERVER")
				for _, s := range servers {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", s.Name, s.Transport, s.State, len(s.Tools),
						orDash(s.ProtocolVersion), orDash(strings.TrimSpace(s.ServerName+" "+s.ServerVersion)))
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				for _, s := range servers {
					if s.Error != "" {
						fmt.Fprintf(env.Stdout, "\n%s: %s\n", s.Name, s.Error)
					}
				}
				for _, n := range m.Notices() {
					fmt.Fprintf(env.Stdout, "\n%s\n", n)
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func mcpTools(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tools SERVER",
		Short: "List one MCP server's tools: registry name, read-only, description",
		Long: "tools prints the tools of SERVER from its last tools/list. --json prints an array of\n" +
			"{name, tool, description, readOnly, inputSchema}. An unknown server is a usage error (exit 2).",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return UsageError(fmt.Errorf("mcp tools takes SERVER, got %d argument(s)", len(args)))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return withMCP(env, func(_ *fxcore.Harness, m *mcp.Manager) error {
				list, err := m.Tools(args[0])
				if err != nil {
					return UsageError(err)
				}
				if asJSON {
					return printJSON(env, list)
				}
				tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tREAD-ONLY\tDESCRIPTION")
				for _, t := range list {
					first, _, _ := strings.Cut(t.Description, "\n")
					ro := "-"
					if t.ReadOnly {
						ro = "yes"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, ro, first)
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func mcpCall(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "call SERVER TOOL ['JSON-ARGS']",
		Short: "Call one MCP tool through the whole tool pipeline (like harness tool mcp__SERVER__TOOL)",
		Long: "call runs TOOL of SERVER with the JSON arguments (default {}) through the registry's full\n" +
			"pipeline: validation, policy, approval, guards, the call, post-execute policy (spill).\n" +
			"Output and exit codes are those of `harness tool`.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 || len(args) > 3 {
				return UsageError(fmt.Errorf("mcp call takes SERVER TOOL and optional 'JSON-ARGS', got %d argument(s)", len(args)))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var o *tools.Outcome
			err := withMCP(env, func(h *fxcore.Harness, m *mcp.Manager) error {
				name, err := m.ToolName(args[0], args[1])
				if err != nil {
					return UsageError(err)
				}
				reg, ok := core.Lookup(h.Root.Context(), tools.Key)
				if !ok {
					return UsageError(fmt.Errorf("no tool registry: mount the %q plugin in harness.yml", tools.Key.Name()))
				}
				call := tools.Call{ID: "cli", Name: name}
				if len(args) == 3 {
					call.Arguments = args[2]
				}
				o = reg.Execute(env.Ctx, call)
				return nil
			})
			if err != nil {
				return err
			}
			return printOutcome(env, o, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func mcpTrust(env *Env) *cobra.Command {
	var revoke bool
	var stateDir string
	cmd := &cobra.Command{
		Use:   "trust",
		Short: "Trust the project's .mcp.json as it is now, so its servers start (--revoke: untrust it)",
		Long: "trust records that you trust the .mcp.json of the working directory with its current content\n" +
			"(its SHA-256) in $XDG_STATE_HOME/harness/mcp-trust.json; the mcp row then starts its servers, as\n" +
			"Claude Code does after its approval prompt. It prints the servers it trusted: review the file\n" +
			"first, since each stdio server is a program harness runs. A later change to the file needs\n" +
			"trusting again. --revoke removes the record. See docs/mcp.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := env.Getwd()
			if err != nil {
				return Failure(err)
			}
			path, servers, err := mcp.TrustProjectFile(stateDir, dir, revoke)
			if err != nil {
				return UsageError(err)
			}
			if revoke {
				fmt.Fprintf(env.Stdout, "untrusted %s\n", path)
				return nil
			}
			fmt.Fprintf(env.Stdout, "trusted %s\n", path)
			for _, name := range slices.Sorted(maps.Keys(servers)) {
				s := servers[name]
				what := s.URL
				if what == "" {
					what = strings.Join(append([]string{s.Command}, s.Args...), " ")
				}
				fmt.Fprintf(env.Stdout, "  %s: %s\n", name, what)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&revoke, "revoke", false, "remove the trust record of the file")
	cmd.Flags().StringVar(&stateDir, "state-dir", "", "the directory of mcp-trust.json (default $XDG_STATE_HOME/harness; the mcp row's stateDir)")
	return cmd
}
