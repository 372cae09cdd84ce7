package agent_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	prompttools "github.com/dshgo/harness/plugins/prompt-tools"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tokenmeter"
	"github.com/dshgo/harness/services/tools"
)

// instantModel is an in-process adapter with no model time: after a user
// message it calls tool t00, after a tool result it answers.
type instantModel struct{}

func (instantModel) Provider() string { return "bench" }
func (instantModel) Models() []llm.Model {
	return []llm.Model{{Provider: "bench", Name: "m", Default: true, ContextWindow: 1 << 20}}
}
func (instantModel) Stream(_ context.Context, req llm.Request) llm.Stream {
	last := req.Messages[len(req.Messages)-1]
	return func(yield func(llm.Chunk) bool) {
		u := &llm.Usage{PromptTokens: 5000, CompletionTokens: 20, TotalTokens: 5020}
		if last.Role == llm.RoleTool {
			_ = yield(llm.Chunk{Kind: llm.ChunkText, Text: "done"}) &&
				yield(llm.Chunk{Kind: llm.ChunkUsage, Usage: u}) &&
				yield(llm.Chunk{Kind: llm.ChunkFinish, Finish: llm.FinishStop})
			return
		}
		_ = yield(llm.Chunk{Kind: llm.ChunkToolCallStart, Index: 0, ToolCallID: "c", ToolName: "t00"}) &&
			yield(llm.Chunk{Kind: llm.ChunkToolCallDelta, Index: 0, Text: `{"path":"x"}`}) &&
			yield(llm.Chunk{Kind: llm.ChunkToolCallEnd, Index: 0}) &&
			yield(llm.Chunk{Kind: llm.ChunkUsage, Usage: u}) &&
			yield(llm.Chunk{Kind: llm.ChunkFinish, Finish: llm.FinishToolCalls})
	}
}

type pathArgs struct {
	Path string `json:"path" jsonschema:"description=A path"`
}

var benchTools = core.Define("bench-tools", func(c *core.Context, _ struct{}) error {
	var ts []*tools.Tool
	for i := range 20 {
		ts = append(ts, tools.Define(fmt.Sprintf("t%02d", i), "A benchmark tool that echoes its path argument back to the model.",
			func(ctx context.Context, e *tools.Execution, a pathArgs) (string, error) { return "ok " + a.Path, nil },
			tools.WithConcurrencySafe(func(pathArgs) bool { return true })))
	}
	return tools.Register(c, ts...)
}, core.WithInject(tools.Key.Name()))

var benchModel = core.Define("bench-model", func(c *core.Context, _ struct{}) error {
	return llm.Register(c, instantModel{})
}, core.WithInject(llm.Key.Name()))

// BenchmarkStep measures the harness's own work per model step (assemble,
// render, request building, stream folding, tool dispatch through the
// scheduler, journal appends, token meter): an in-process model with no
// latency, 20 tools, a 50-message history. Each iteration is one turn of
// two steps (a tool call, then the answer) on a session resumed from the
// same 50-message log; the metric ms/step is the time per step.
func BenchmarkStep(b *testing.B) {
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer root.Dispose(context.Background())
	rc := root.Context()
	state := b.TempDir()
	for _, p := range []core.Plugin{systemprompt.Plugin, tools.Plugin, prompttools.Plugin, tokenmeter.Plugin, llm.Plugin, benchModel, benchTools} {
		rc.Plugin(p, nil)
	}
	rc.Plugin(sessions.JSONLPlugin, sessions.JSONLConfig{StateDir: state})
	fb := rc.Plugin(agent.Plugin, agent.Config{MaxSteps: 50})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fb.Await(ctx); err != nil {
		b.Fatal(err)
	}
	svc, _ := core.Lookup(rc, agent.Key)
	// A 50-message history: 12 turns of user, assistant(tool call), tool, assistant + 2.
	seed, err := svc.Sessions().Create(ctx, sessions.Header{ID: "seed", Cwd: "/w", Model: "bench/m"})
	if err != nil {
		b.Fatal(err)
	}
	add := func(r agent.Record) {
		e, err := r.Entry()
		if err == nil {
			_, err = seed.Append(ctx, e)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	body := string(make([]byte, 0))
	for range 40 {
		body += "some realistic line of file content or command output\n"
	}
	for i := range 12 {
		id := fmt.Sprintf("h%d", i)
		add(agent.Record{Type: agent.RecordUser, Turn: i + 1, Message: &llm.Message{Role: llm.RoleUser, Content: "please look at file " + id}})
		add(agent.Record{Type: agent.RecordAssistant, Message: &llm.Message{Role: llm.RoleAssistant, Content: "Reading it.", ToolCalls: []llm.ToolCall{{ID: id, Name: "t01", Arguments: `{"path":"` + id + `"}`}}}})
		add(agent.Record{Type: agent.RecordToolResult, Message: &llm.Message{Role: llm.RoleTool, ToolCallID: id, Name: "t01", Content: body}})
		add(agent.Record{Type: agent.RecordAssistant, Message: &llm.Message{Role: llm.RoleAssistant, Content: "It contains the expected content."}})
	}
	add(agent.Record{Type: agent.RecordUser, Turn: 13, Message: &llm.Message{Role: llm.RoleUser, Content: "thanks"}})
	add(agent.Record{Type: agent.RecordAssistant, Message: &llm.Message{Role: llm.RoleAssistant, Content: "You are welcome."}})
	_ = seed.Close()
	seedBytes, err := os.ReadFile(agent.SessionPath(state, "seed"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		id := fmt.Sprintf("s%d", i)
		if err := os.WriteFile(agent.SessionPath(state, id), seedBytes, 0o600); err != nil {
			b.Fatal(err)
		}
		ss, err := svc.Open(context.Background(), agent.Options{ID: id})
		if err != nil {
			b.Fatal(err)
		}
		if n := len(ss.History()); n != 50 {
			b.Fatalf("history %d", n)
		}
		b.StartTimer()
		start := time.Now()
		res, err := ss.Run(context.Background(), "go")
		elapsed += time.Since(start)
		b.StopTimer()
		if err != nil || res.Steps != 2 {
			b.Fatalf("%+v %v", res, err)
		}
		_ = ss.Close(context.Background())
		_ = os.Remove(agent.SessionPath(state, id))
		b.StartTimer()
	}
	b.ReportMetric(float64(elapsed.Microseconds())/1000/float64(2*b.N), "ms/step")
}
