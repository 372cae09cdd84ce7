// Package std lists the plugins built into the harness binary. The root
// package registers each of them in the catalog; services and plugins never
// import the root package, so the import graph stays acyclic.
package std

import (
	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/plugins/approval"
	"github.com/dshgo/harness/plugins/checkpoint"
	"github.com/dshgo/harness/plugins/environment"
	"github.com/dshgo/harness/plugins/hooks"
	"github.com/dshgo/harness/plugins/instructions"
	llmopenai "github.com/dshgo/harness/plugins/llm-openai"
	lsp "github.com/dshgo/harness/plugins/lsp"
	"github.com/dshgo/harness/plugins/mcp"
	"github.com/dshgo/harness/plugins/permission"
	planmode "github.com/dshgo/harness/plugins/plan-mode"
	prompttools "github.com/dshgo/harness/plugins/prompt-tools"
	sandboxnetworkask "github.com/dshgo/harness/plugins/sandbox-network-ask"
	spillpolicy "github.com/dshgo/harness/plugins/spill-policy"
	subagentinprocess "github.com/dshgo/harness/plugins/subagent-inprocess"
	subagenttools "github.com/dshgo/harness/plugins/subagent-tools"
	toolbash "github.com/dshgo/harness/plugins/tool-bash"
	toolfs "github.com/dshgo/harness/plugins/tool-fs"
	toolpowershell "github.com/dshgo/harness/plugins/tool-powershell"
	toolsearch "github.com/dshgo/harness/plugins/tool-search"
	toolterminal "github.com/dshgo/harness/plugins/tool-terminal"
	tooltimeout "github.com/dshgo/harness/plugins/tool-timeout"
	tooltodo "github.com/dshgo/harness/plugins/tool-todo"
	toolweb "github.com/dshgo/harness/plugins/tool-web"
	"github.com/dshgo/harness/plugins/tracing"
	"github.com/dshgo/harness/plugins/web"
	"github.com/dshgo/harness/plugins/worker"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/commands"
	"github.com/dshgo/harness/services/compaction"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/sessions"
	sessionspg "github.com/dshgo/harness/services/sessions/postgres"
	"github.com/dshgo/harness/services/skills"
	"github.com/dshgo/harness/services/spill"
	"github.com/dshgo/harness/services/subagent"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tokenmeter"
	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/workspaces"
	"github.com/dshgo/harness/services/worktrees"
)

// Plugins returns the built-in plugins. Keep one plugin per line.
func Plugins() []core.Plugin {
	return []core.Plugin{
		subprocess.Plugin,
		systemprompt.Plugin,
		approval.Plugin,
		permission.Plugin,
		sandboxnetworkask.Plugin,
		hooks.Plugin,
		prompttools.Plugin,
		instructions.Plugin,
		environment.Plugin,
		tools.Plugin,
		tooltimeout.Plugin,
		tooltodo.Plugin,
		planmode.Plugin,
		checkpoint.Plugin,
		worktrees.Plugin,
		spill.Plugin,
		spillpolicy.Plugin,
		tokenmeter.Plugin,
		toolbash.Plugin,
		toolpowershell.Plugin,
		toolfs.Plugin,
		toolsearch.Plugin,
		toolterminal.Plugin,
		toolweb.Plugin,
		mcp.Plugin,
		lsp.Plugin,
		llm.Plugin,
		compaction.Plugin,
		llmopenai.Plugin,
		sessions.JSONLPlugin,
		sessionspg.Plugin,
		agent.Plugin,
		tracing.Plugin,
		worker.Plugin,
		subagent.Plugin,
		subagentinprocess.Plugin,
		subagenttools.Plugin,
		workspaces.Plugin,
		web.Plugin,
		commands.Plugin,
		skills.Plugin,
	}
}
