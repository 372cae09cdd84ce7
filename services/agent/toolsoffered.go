package agent

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
)

// ErrToolsNotOffered is matched (errors.Is) by a [*ToolsNotOfferedError].
var ErrToolsNotOffered = errors.New("tools are registered but none is offered to the model")

// ToolsNotOfferedError is returned by [Service.Open] and by a turn when the
// tool registry holds tools but no tool-schema provider offers them to the
// model (the prompt-tools plugin is not mounted, or is pending): a real
// model would never see them, and a scripted test would still pass.
type ToolsNotOfferedError struct {
	// Tools are the names of the registered tools (the first 5, then "…").
	Tools []string
	// Count is the number of registered tools.
	Count int
}

func (e *ToolsNotOfferedError) Error() string {
	return fmt.Sprintf("%d tool(s) are registered (%s) but no tool provider offers their schemas to the model: mount the prompt-tools plugin (harness.yml row `- {id: prompt-tools, name: prompt-tools}`)",
		e.Count, strings.Join(e.Tools, ", "))
}

// Is reports whether target is ErrToolsNotOffered.
func (e *ToolsNotOfferedError) Is(target error) bool { return target == ErrToolsNotOffered }

// toolsOffered fails when scope sees registered tools while no tool-schema
// provider would offer them to the model.
func (s *Service) toolsOffered(scope *core.ScopeID) error {
	return ToolsOffered(s.tools, s.prompt, scope)
}

// ToolsOffered returns a *[ToolsNotOfferedError] when reg holds tools visible
// in scope (nil: the global scope) and prompt has no tool-schema provider
// for it, else nil. `harness check` uses it to report the problem before
// the agent would refuse to run.
func ToolsOffered(reg *tools.Registry, prompt *systemprompt.Service, scope *core.ScopeID) error {
	if prompt.ToolProviders(scope) > 0 {
		return nil
	}
	ts := reg.Tools(scope)
	if len(ts) == 0 {
		return nil
	}
	e := &ToolsNotOfferedError{Count: len(ts)}
	for _, t := range ts[:min(len(ts), 5)] {
		e.Tools = append(e.Tools, t.Name())
	}
	if len(ts) > 5 {
		e.Tools = append(e.Tools, "…")
	}
	return e
}
