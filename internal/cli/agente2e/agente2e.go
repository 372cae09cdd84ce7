// Package agente2e lists the plugins the agent end-to-end tests need, so a
// test binary (or an in-process cli.Run) can add those the standard catalog
// does not include. Test support only.
package agente2e

import (
	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/plugins/approval"
	"github.com/dshgo/harness/plugins/environment"
	"github.com/dshgo/harness/plugins/hooks"
	"github.com/dshgo/harness/plugins/instructions"
	llmopenai "github.com/dshgo/harness/plugins/llm-openai"
	"github.com/dshgo/harness/plugins/mcp"
	"github.com/dshgo/harness/plugins/permission"
	prompttools "github.com/dshgo/harness/plugins/prompt-tools"
	"github.com/dshgo/harness/plugins/std"
	toolbash "github.com/dshgo/harness/plugins/tool-bash"
	toolfs "github.com/dshgo/harness/plugins/tool-fs"
	toolsearch "github.com/dshgo/harness/plugins/tool-search"
	tooltodo "github.com/dshgo/harness/plugins/tool-todo"
	"github.com/dshgo/harness/plugins/worker"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/commands"
	"github.com/dshgo/harness/services/compaction"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/sessions"
	sessionspg "github.com/dshgo/harness/services/sessions/postgres"
	"github.com/dshgo/harness/services/skills"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tokenmeter"
	"github.com/dshgo/harness/services/tools"
)

// Needed lists every plugin of the agent e2e manifests.
func Needed() []core.Plugin {
	return []core.Plugin{
		subprocess.Plugin, systemprompt.Plugin, tools.Plugin, prompttools.Plugin, tokenmeter.Plugin,
		llm.Plugin, llmopenai.Plugin, sessions.JSONLPlugin, sessionspg.Plugin, agent.Plugin,
		toolbash.Plugin, toolfs.Plugin, toolsearch.Plugin,
		approval.Plugin, permission.Plugin, hooks.Plugin, mcp.Plugin,
		commands.Plugin, skills.Plugin, tooltodo.Plugin, instructions.Plugin, environment.Plugin, compaction.Plugin, worker.Plugin,
	}
}

// Missing returns the plugins of Needed that std.Plugins does not list.
func Missing() []core.Plugin {
	have := map[string]bool{}
	for _, p := range std.Plugins() {
		have[p.Name()] = true
	}
	var out []core.Plugin
	for _, p := range Needed() {
		if !have[p.Name()] {
			out = append(out, p)
		}
	}
	return out
}
