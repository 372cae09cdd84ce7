package cli

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/dshgo/harness/internal/acp"
)

// acpCommand builds `harness acp`.
func acpCommand(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "acp",
		Short: "Serve the Agent Client Protocol on stdin and stdout (for editors)",
		Long: "acp runs the harness as an Agent Client Protocol agent: an editor (Zed, a JetBrains IDE, any ACP\n" +
			"client) starts it and talks JSON-RPC over stdin and stdout. Each session's working directory is the\n" +
			"cwd the client sends; the configuration is found there as for `harness run` (harness.yml up to the\n" +
			"repository root, else the built-in default: sandboxed commands, the permission row's mode), and\n" +
			"the client answers the approval questions. Logs go to stderr. See docs/editors.md.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runACP(env)
		},
	}
	return signalStops(cmd)
}

// runACP serves ACP until stdin ends or a signal; each working directory a
// client names gets its own harness (one per set of MCP servers the client
// passes), booted as `harness run --cwd DIR` would, with the client's MCP
// servers added to the mcp row (one boot at a time: the Env is shared).
func runACP(env *Env) error {
	var mu sync.Mutex
	logger := env.Logger()
	boot := func(_ context.Context, dir string, servers []acp.MCPServer) (*acp.Host, error) {
		mu.Lock()
		defer mu.Unlock()
		f := &agentFlags{cwd: dir}
		found := false
		if len(servers) > 0 {
			f.boot = append(f.boot, withMCPServers(servers, &found))
		}
		host, err := bootAgent(env, f)
		if err != nil {
			return nil, err
		}
		if len(servers) > 0 && !found {
			logger.Warn("acp: the client's MCP servers are not used: the manifest has no `name: mcp` row", "servers", len(servers))
		}
		awaitMCP(env.Ctx, host.h)
		return &acp.Host{Agent: host.agent, Root: host.h.Root.Context(), Stop: func(ctx context.Context) error { return host.h.Stop(ctx) }}, nil
	}
	err := acp.Serve(env.Ctx, env.Stdin, env.Stdout, acp.Options{Boot: boot, Version: Version, Logger: logger})
	if err != nil {
		return Failure(err)
	}
	return nil
}

// withMCPServers adds servers to the servers of the manifest's mcp row
// (found reports whether it has one); a server the row already names
// (under servers or mcpServers) keeps the row's configuration.
func withMCPServers(servers []acp.MCPServer, found *bool) BootOption {
	return patchRows("mcp", found, func(cfg *yaml.Node) {
		list := getKey(cfg, "servers")
		if list == nil || list.Kind != yaml.MappingNode {
			list = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			setKey(cfg, "servers", list)
		}
		other := getKey(cfg, "mcpServers")
		for _, s := range servers {
			if getKey(list, s.Name) == nil && (other == nil || other.Kind != yaml.MappingNode || getKey(other, s.Name) == nil) {
				setKey(list, s.Name, mcpServerNode(s))
			}
		}
	})
}

// mcpServerNode is s as an mcp row's server entry.
func mcpServerNode(s acp.MCPServer) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
	strMap := func(m map[string]string) *yaml.Node {
		out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			setKey(out, k, str(m[k]))
		}
		return out
	}
	setKey(n, "type", str(s.Type))
	if s.Command != "" {
		setKey(n, "command", str(s.Command))
	}
	if len(s.Args) > 0 {
		args := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, a := range s.Args {
			args.Content = append(args.Content, str(a))
		}
		setKey(n, "args", args)
	}
	if len(s.Env) > 0 {
		setKey(n, "env", strMap(s.Env))
	}
	if s.URL != "" {
		setKey(n, "url", str(s.URL))
	}
	if len(s.Headers) > 0 {
		setKey(n, "headers", strMap(s.Headers))
	}
	return n
}
