package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	llmopenai "github.com/dshgo/harness/plugins/llm-openai"
	prompttools "github.com/dshgo/harness/plugins/prompt-tools"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/compaction"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tokenmeter"
	"github.com/dshgo/harness/services/tools"
)

// smallWindow is the scripted model's context window in tokens.
const smallWindow = 6000

// wireTokens estimates a wire request like a provider counting tokens
// (4 bytes a token): the scripted model refuses requests over its window.
func wireTokens(r llmtest.Request) int { return len(r.Body) / 4 }

// compactionServer checks every request (paired calls and results, the
// window) and answers summary requests itself, so the script holds only
// the agent's own steps. It records the problems it saw.
type compactionServer struct {
	mu        sync.Mutex
	problems  []string
	summaries int
	refused   int
	refuseAt  int // answer CONTEXT_LENGTH to the request with this index (1-based), once
	n         int
	reasoning string // when set, summaries stream this reasoning first (thinking mode)
}

func (c *compactionServer) check(r llmtest.Request, w llmtest.WireRequest) *llmtest.Turn {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if len(w.Messages) > 0 && strings.HasPrefix(w.Messages[0].Text(), "You are compacting") {
		if len(w.Tools) != 0 {
			c.problems = append(c.problems, "the summary request offers tools")
		}
		c.summaries++
		t := llmtest.Reply(fmt.Sprintf("summary %d: the files read so far were f1..fN; keep reading.", c.summaries))
		if c.reasoning != "" {
			t = t.WithReasoning(c.reasoning)
		}
		return &t
	}
	var msgs []llm.Message
	for _, m := range w.Messages {
		lm := llm.Message{Role: llm.Role(m.Role), Content: m.Text(), ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			lm.ToolCalls = append(lm.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		msgs = append(msgs, lm)
	}
	if err := compaction.Paired(msgs); err != nil {
		c.problems = append(c.problems, fmt.Sprintf("request %d: %v", c.n, err))
	}
	if c.refuseAt == c.n || wireTokens(r) > smallWindow {
		c.refuseAt = -1
		c.refused++
		t := llmtest.Error(http.StatusBadRequest, "This model's maximum context length is 6000 tokens. Please reduce the length of the messages.")
		return &t
	}
	return nil
}

func newCompactionFixture(t *testing.T, turns []llmtest.Turn, cs *compactionServer, ccfg *compaction.Config) *fixture {
	t.Helper()
	return newCompactionFixtureMode(t, turns, cs, ccfg, llm.ThinkingDefault)
}

// newCompactionFixtureMode is newCompactionFixture with the model's
// thinking mode; checks run before cs.check (which answers summaries).
func newCompactionFixtureMode(t *testing.T, turns []llmtest.Turn, cs *compactionServer, ccfg *compaction.Config, thinking llm.Thinking, checks ...llmtest.Check) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), state: t.TempDir()}
	var opts []llmtest.Option
	for _, c := range checks {
		opts = append(opts, llmtest.WithCheck(c))
	}
	f.srv = llmtest.New(t, turns, append(opts, llmtest.WithCheck(cs.check))...)
	f.root = core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = f.root.Dispose(context.Background()) })
	rc := f.root.Context()
	f.rc = rc
	mountBase(rc, f)
	rc.Plugin(llm.Plugin, nil)
	retries := 0
	rc.Plugin(llmopenai.Plugin, llmopenai.Config{
		Provider: "test", BaseURL: f.srv.URL, APIKey: "sk-test", MaxRetries: &retries,
		Timeout: llmopenai.Duration(30 * time.Second),
		Models:  []llmopenai.ModelConfig{{Name: "m1", Default: true, ContextWindow: smallWindow, Thinking: thinking}},
	})
	cfg := compaction.Config{}
	cfg.SetDefaults()
	if ccfg != nil {
		cfg = *ccfg
	}
	rc.Plugin(compaction.Plugin, cfg)
	fb := rc.Plugin(agent.Plugin, agent.Config{MaxSteps: 100})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fb.Await(ctx); err != nil {
		t.Fatalf("agent plugin: %v (pending on %v)", err, fb.PendingOn())
	}
	f.svc, _ = core.Lookup(rc, agent.Key)
	return f
}

// steps scripts n steps of two parallel read_file calls each (about 350
// tokens of results per step), then a final answer.
func steps(n int) []llmtest.Turn {
	var turns []llmtest.Turn
	for i := range n {
		turns = append(turns, llmtest.Calls(
			llmtest.Call{ID: fmt.Sprintf("a%d", i), Name: "read_file", Args: `{"path":"big.txt"}`},
			llmtest.Call{ID: fmt.Sprintf("b%d", i), Name: "read_file", Args: `{"path":"big.txt"}`},
		))
	}
	return append(turns, llmtest.Reply("all done"))
}

// A 40-step run on a model whose window holds about 12 steps compacts at
// least twice and finishes; every request the model saw had its tool calls
// and results paired; the log keeps everything and a resumed session
// rebuilds the compacted view exactly and goes on.
func TestCompactionLongRunAndResume(t *testing.T) {
	t.Parallel()
	cs := &compactionServer{}
	f := newCompactionFixture(t, append(steps(40), llmtest.Reply("resumed fine")), cs, nil)
	f.write("big.txt", strings.Repeat("line of a big file\n", 40))
	var compactions []agent.CompactionInfo
	ss := f.open(agent.Options{Observer: func(e agent.Event) {
		if e.Type == agent.EventCompaction {
			compactions = append(compactions, *e.Compaction)
		}
	}})
	res, err := ss.Run(context.Background(), "read big.txt forty times")
	if err != nil {
		t.Fatalf("run: %v (%+v)", err, res)
	}
	if res.Steps != 41 || res.Text != "all done" {
		t.Fatalf("result %+v", res)
	}
	if len(compactions) < 2 || cs.summaries != len(compactions) {
		t.Fatalf("compactions %d, summaries %d", len(compactions), cs.summaries)
	}
	for _, c := range compactions {
		if c.Trigger != "auto" || c.TokensAfter >= c.TokensBefore || c.TokensAfter <= 0 {
			t.Errorf("compaction %+v", c)
		}
	}
	if len(cs.problems) > 0 || cs.refused > 0 {
		t.Fatalf("refused %d; problems:\n%s", cs.refused, strings.Join(cs.problems, "\n"))
	}
	view := ss.History()
	use, err := ss.ContextInUse(context.Background())
	if err != nil || use.Tokens <= 0 || use.Tokens > smallWindow || use.Window != smallWindow {
		t.Fatalf("context in use after compaction: %+v %v", use, err)
	}
	total := ss.Usage()
	id := ss.ID()
	if err := ss.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	// The log keeps every message of the run, and the compaction records.
	recs, err := agent.ReadSession(context.Background(), f.svc.Sessions(), id)
	if err != nil {
		t.Fatal(err)
	}
	var results, records int
	for _, r := range recs {
		switch r.Type {
		case agent.RecordToolResult:
			results++
		case agent.RecordCompaction:
			records++
		}
	}
	if results != 80 || records != len(compactions) {
		t.Fatalf("log: %d results, %d compaction records", results, records)
	}

	// Resume: the same view, the meter reports the compacted context (not
	// 0, not a sum), and the session goes on.
	ss2 := f.open(agent.Options{ID: id})
	got, _ := json.Marshal(ss2.History())
	want, _ := json.Marshal(view)
	if string(got) != string(want) {
		t.Fatalf("resumed view differs:\n%s\nwant:\n%s", got, want)
	}
	use2, err := ss2.ContextInUse(context.Background())
	if err != nil || use2.Tokens <= 0 || use2.Tokens > smallWindow {
		t.Fatalf("context in use after resume: %+v", use2)
	}
	if u := ss2.Usage(); u != total {
		t.Fatalf("cumulative usage after resume %+v, want %+v", u, total)
	}
	if _, err := ss2.Run(context.Background(), "and now?"); err != nil {
		t.Fatal(err)
	}
	last := f.srv.Requests()[len(f.srv.Requests())-1]
	w, _ := last.Wire()
	if !strings.HasPrefix(w.Messages[1].Text(), compaction.SummaryPrefix) {
		t.Fatalf("the resumed request does not start with the summary: %s", w.History())
	}
	if len(cs.problems) > 0 {
		t.Fatal(strings.Join(cs.problems, "\n"))
	}
}

// A CONTEXT_LENGTH error compacts once and retries the step instead of
// ending the turn.
func TestCompactionOnContextLengthError(t *testing.T) {
	t.Parallel()
	cs := &compactionServer{refuseAt: 5}
	cfg := compaction.Config{}
	cfg.SetDefaults()
	cfg.Auto = false // only the error may compact
	f := newCompactionFixture(t, steps(6), cs, &cfg)
	f.write("big.txt", "small\n")
	var notices []string
	ss := f.open(agent.Options{Observer: func(e agent.Event) {
		if e.Type == agent.EventNotice {
			notices = append(notices, e.Text)
		}
	}})
	res, err := ss.Run(context.Background(), "go")
	if err != nil || res.Text != "all done" {
		t.Fatalf("run: %v %+v", err, res)
	}
	if cs.refused != 1 || cs.summaries != 1 || len(notices) != 1 || !strings.Contains(notices[0], "compacted") {
		t.Fatalf("refused %d, summaries %d, notices %q", cs.refused, cs.summaries, notices)
	}
}

// mountBase mounts the prompt, tools, meter and test tools of a fixture.
func mountBase(rc *core.Context, f *fixture) {
	rc.Plugin(systemprompt.Plugin, nil)
	rc.Plugin(tools.Plugin, nil)
	rc.Plugin(prompttools.Plugin, nil)
	rc.Plugin(tokenmeter.Plugin, nil)
	rc.Plugin(sessions.JSONLPlugin, sessions.JSONLConfig{StateDir: f.state})
	rc.Plugin(toolsPlugin, struct {
		Dir string `yaml:"dir"`
	}{f.dir})
}
