package acp

import (
	"strings"
	"testing"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/tools"
)

// BenchmarkToolCallUpdates measures the mapping of one command's events
// (its call, one progress event with an 8 KiB tail, its result) to the
// session updates a client receives.
func BenchmarkToolCallUpdates(b *testing.B) {
	tail := strings.Repeat("ok  \tgithub.com/x/y\t0.01s\n", 8<<10/25)
	pending := tools.Presentation{ToolCallID: "c1", Title: "go test ./...", Kind: tools.KindExecute, Status: tools.StatusPending}
	running := tools.Presentation{ToolCallID: "c1", Status: tools.StatusInProgress, Content: []tools.ToolCallContent{tools.TerminalContent("c1", tail, nil, "")}}
	code := 0
	done := tools.Presentation{ToolCallID: "c1", Title: "go test ./...", Kind: tools.KindExecute, Status: tools.StatusCompleted,
		Content: []tools.ToolCallContent{tools.TerminalContent("c1", tail, &code, "")}}
	events := []agent.Event{
		{Type: agent.EventToolCall, ToolCall: &agent.ToolCallEvent{ID: "c1", Name: "bash", Arguments: `{"command":"go test ./..."}`, Presentation: &pending}},
		{Type: agent.EventToolProgress, ToolProgress: &agent.ToolProgressEvent{CallID: "c1", Name: "bash", Presentation: &running}},
		{Type: agent.EventToolResult, ToolResult: &agent.ToolResultEvent{CallID: "c1", Name: "bash", Presentation: &done}},
	}
	m := newMapper(false)
	b.ReportAllocs()
	for b.Loop() {
		for _, e := range events {
			if len(m.updates(e)) == 0 {
				b.Fatal("no update")
			}
		}
	}
}
