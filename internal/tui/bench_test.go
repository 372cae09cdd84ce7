package tui_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/internal/tui"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// benchOptions boots a harness (no model turns) for benchmarks.
func benchOptions(b *testing.B) tui.Options {
	srv := llmtest.New(b, nil)
	state := b.TempDir()
	hs := harnesstest.Start(b, manifest(srv.URL, state, "bypass"))
	return tui.Options{Agent: harnesstest.Service(b, hs, agent.Key), Root: hs.Root.Context(), Cwd: b.TempDir(), StateDir: state}
}

// transcriptOf feeds m n messages' worth of events: prompts, Markdown
// answers and tool calls with results, as a long session shows them.
func transcriptOf(m *tui.Model, n int) {
	send := func(e agent.Event) { m.Update(tui.EventMsg(e)) }
	for i := 0; i < n; i += 3 {
		send(agent.Event{Type: agent.EventUser, Text: fmt.Sprintf("question %d: what does `f%d` do?", i, i)})
		send(agent.Event{Type: agent.EventStep, Step: 1})
		send(agent.Event{Type: agent.EventText, Text: fmt.Sprintf("It **computes** the %d-th value:\n\n- reads the input\n- returns `x*%d`\n", i, i)})
		send(agent.Event{Type: agent.EventAssistant})
		id := fmt.Sprintf("c%d", i)
		send(agent.Event{Type: agent.EventToolCall, ToolCall: &agent.ToolCallEvent{ID: id, Name: "bash", Arguments: `{"command":"go test ./..."}`}})
		send(agent.Event{Type: agent.EventToolResult, ToolResult: &agent.ToolResultEvent{CallID: id, Name: "bash", Content: "ok  \tpkg\t0.1s\n", DurationMs: 120}})
	}
	m.View()
}

// BenchmarkStreamedToken is the cost of one streamed text token at 120×40
// with a 500-message transcript: the event's Update plus the frame's View.
// The reference, BenchmarkStreamedTokenUncached, renders the whole
// transcript for every token (what a UI without the per-item cache does).
func BenchmarkStreamedToken(b *testing.B) {
	benchToken(b, false)
}

func BenchmarkStreamedTokenUncached(b *testing.B) {
	benchToken(b, true)
}

func benchToken(b *testing.B, uncached bool) {
	o := benchOptions(b)
	m := tui.New(o)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	transcriptOf(m, 500)
	m.Update(tui.EventMsg(agent.Event{Type: agent.EventStep, Step: 2}))
	token := tui.EventMsg(agent.Event{Type: agent.EventText, Text: "word "})
	para := tui.EventMsg(agent.Event{Type: agent.EventText, Text: "end of a paragraph.\n\n"})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if uncached {
			m.DropCaches()
		}
		if i%40 == 39 {
			m.Update(para)
		} else {
			m.Update(token)
		}
		m.View()
	}
}

// firstFrame is an output that reports its first write.
type firstFrame struct {
	once sync.Once
	done chan struct{}
}

func (f *firstFrame) Write(p []byte) (int, error) {
	if strings.Contains(string(p), "Ask anything") {
		f.once.Do(func() { close(f.done) })
	}
	return len(p), nil
}

// BenchmarkStartupToFirstFrame is the time from tui.New to the first frame
// with the editor written to the terminal (120×40), on a booted harness.
func BenchmarkStartupToFirstFrame(b *testing.B) {
	o := benchOptions(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		out := &firstFrame{done: make(chan struct{})}
		m := tui.New(o)
		p := tea.NewProgram(m, tea.WithInput(strings.NewReader("")), tea.WithOutput(out), tea.WithWindowSize(120, 40), tea.WithoutSignals())
		release, err := m.Bind(p.Send)
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan struct{})
		go func() { defer close(done); _, _ = p.Run() }()
		<-out.done
		b.StopTimer()
		p.Quit()
		<-done
		if err := release(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
