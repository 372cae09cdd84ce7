package subagenttools_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/core"
	llmopenai "github.com/dshgo/harness/plugins/llm-openai"
	prompttools "github.com/dshgo/harness/plugins/prompt-tools"
	subagentinprocess "github.com/dshgo/harness/plugins/subagent-inprocess"
	subagenttools "github.com/dshgo/harness/plugins/subagent-tools"
	toolbash "github.com/dshgo/harness/plugins/tool-bash"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/subagent"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// router answers each conversation from its own script. A conversation is
// named by its first user message that starts with "#" (a child's prompt,
// "#A ..."), or "" (the parent). Scripts are consumed in order.
type router struct {
	mu      sync.Mutex
	scripts map[string][]llmtest.Turn
	seen    []string // conversation of each request, in arrival order
	notify  map[string]chan<- time.Time
	// hook, when set, may answer a request first (nil: the script answers).
	hook func(key string, w llmtest.WireRequest) *llmtest.Turn
}

func newRouter(scripts map[string][]llmtest.Turn) *router { return &router{scripts: scripts} }

func conversation(w llmtest.WireRequest) string {
	for _, m := range w.Messages {
		if m.Role == "user" && strings.HasPrefix(m.Text(), "#") {
			key, _, _ := strings.Cut(m.Text(), " ")
			return key
		}
	}
	return ""
}

func (r *router) check(_ llmtest.Request, w llmtest.WireRequest) *llmtest.Turn {
	key := conversation(w)
	if r.hook != nil {
		if t := r.hook(key, w); t != nil {
			return t
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, key)
	if ch := r.notify[key]; ch != nil {
		ch <- time.Now()
		delete(r.notify, key)
	}
	s := r.scripts[key]
	if len(s) == 0 {
		t := llmtest.Error(500, "router: script "+key+" exhausted")
		return &t
	}
	r.scripts[key] = s[1:]
	return &s[0]
}

func (r *router) add(key string, turns ...llmtest.Turn) {
	r.mu.Lock()
	r.scripts[key] = append(r.scripts[key], turns...)
	r.mu.Unlock()
}

// interval is when one call of the test's sleep tool ran.
type interval struct {
	session    string
	start, end time.Time
}

type sleepArgs struct {
	Ms int `json:"ms"`
}

// probe records the sleep tool's calls.
type probe struct {
	mu      sync.Mutex
	calls   []interval
	started chan string // receives the session id when a sleep body starts (if set)
}

func (p *probe) tools(dir string) []*tools.Tool {
	return []*tools.Tool{
		tools.Define("sleep", "Sleep ms milliseconds.", func(ctx context.Context, e *tools.Execution, a sleepArgs) (string, error) {
			in := interval{start: time.Now()}
			if ss, ok := agent.FromContext(ctx); ok {
				in.session = ss.ID()
			}
			if p.started != nil {
				p.started <- in.session
			}
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(time.Duration(a.Ms) * time.Millisecond):
			}
			in.end = time.Now()
			p.mu.Lock()
			p.calls = append(p.calls, in)
			p.mu.Unlock()
			return "slept", nil
		}, tools.WithConcurrencySafe(func(sleepArgs) bool { return true })),
		tools.Define("read_file", "Read a file.", func(ctx context.Context, e *tools.Execution, a struct {
			Path string `json:"path"`
		}) (string, error) {
			b, err := os.ReadFile(filepath.Join(dir, a.Path))
			return string(b), err
		}, tools.WithConcurrencySafe(func(struct {
			Path string `json:"path"`
		}) bool {
			return true
		})),
	}
}

type fixture struct {
	t      testing.TB
	root   *core.Root
	rc     *core.Context
	svc    *agent.Service
	sub    *subagent.Service
	srv    *llmtest.Server
	router *router
	probe  *probe
	dir    string
	state  string
	defs   string
}

type fixtureOpts struct {
	bash     bool   // mount subprocess-local and tool-bash
	defs     string // agent definitions directory
	maxDepth int
	state    string // reuse a state dir (a restart)
	router   *router
}

func newFixture(t *testing.T, scripts map[string][]llmtest.Turn, fo fixtureOpts) *fixture {
	return newFixtureOpts(t, scripts, fo)
}

// newFixtureTB is newFixture for benchmarks.
func newFixtureTB(b testing.TB, r *router) *fixture {
	return newFixtureOpts(b, nil, fixtureOpts{router: r})
}

func newFixtureOpts(t testing.TB, scripts map[string][]llmtest.Turn, fo fixtureOpts) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), state: fo.state, defs: fo.defs, probe: &probe{}, router: fo.router}
	if f.defs == "" {
		f.defs = t.TempDir()
	}
	if f.state == "" {
		f.state = t.TempDir()
	}
	if f.router == nil {
		f.router = newRouter(scripts)
	}
	f.srv = llmtest.New(t, nil, llmtest.WithCheck(f.router.check))
	f.root = core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = f.root.Dispose(context.Background()) })
	rc := f.root.Context()
	f.rc = rc
	rc.Plugin(systemprompt.Plugin, systemprompt.Config{PersonaPrefix: "DEPLOYMENT PERSONA"})
	rc.Plugin(tools.Plugin, nil)
	rc.Plugin(prompttools.Plugin, nil)
	rc.Plugin(llm.Plugin, nil)
	retries := 0
	rc.Plugin(llmopenai.Plugin, llmopenai.Config{
		Provider: "test", BaseURL: f.srv.URL, APIKey: "sk-test", MaxRetries: &retries,
		Timeout: llmopenai.Duration(30 * time.Second),
		Models: []llmopenai.ModelConfig{{Name: "m1", Default: true, Thinking: llm.ThinkingDisabled, ContextWindow: 1 << 20},
			{Name: "m2", Thinking: llm.ThinkingDisabled, ContextWindow: 1 << 20}},
	})
	rc.Plugin(core.Define("test-tools", func(c *core.Context, _ struct{}) error {
		return tools.Register(c, f.probe.tools(f.dir)...)
	}, core.WithInject(tools.Key.Name())), nil)
	if fo.bash {
		rc.Plugin(subprocess.Plugin, nil)
		rc.Plugin(toolbash.Plugin, nil)
	}
	rc.Plugin(sessions.JSONLPlugin, sessions.JSONLConfig{StateDir: f.state})
	rc.Plugin(agent.Plugin, agent.Config{MaxSteps: 10})
	rc.Plugin(subagent.Plugin, subagent.Config{MaxDepth: max(fo.maxDepth, 1)})
	rc.Plugin(subagentinprocess.Plugin, subagentinprocess.Config{Name: "inprocess"})
	fb := rc.Plugin(subagenttools.Plugin, subagenttools.Config{Provider: "inprocess", Dirs: []string{f.defs}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fb.Await(ctx); err != nil {
		t.Fatalf("subagent-tools: %v (state %v, pending on %v)", err, fb.State(), fb.PendingOn())
	}
	f.svc, _ = core.Lookup(rc, agent.Key)
	f.sub, _ = core.Lookup(rc, subagent.Key)
	return f
}

// events collects a session's observed events.
type events struct {
	mu  sync.Mutex
	all []agent.Event
}

func (e *events) add(ev agent.Event) { e.mu.Lock(); e.all = append(e.all, ev); e.mu.Unlock() }

func (e *events) list() []agent.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]agent.Event(nil), e.all...)
}

func (f *fixture) open(o agent.Options) *agent.Session {
	f.t.Helper()
	ss, err := f.svc.Open(context.Background(), o)
	if err != nil {
		f.t.Fatalf("open: %v", err)
	}
	f.t.Cleanup(func() { _ = ss.Close(context.Background()) })
	return ss
}

// records reads a stored session's records.
func (f *fixture) records(id string) []agent.Record {
	f.t.Helper()
	recs, err := agent.ReadSession(context.Background(), f.svc.Sessions(), id)
	if err != nil {
		f.t.Fatalf("read %s: %v", id, err)
	}
	return recs
}

func call(id, name, args string) llmtest.Call { return llmtest.Call{ID: id, Name: name, Args: args} }

func usage(p, c int64) llmtest.Usage {
	return llmtest.Usage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c}
}

func replyWithUsage(text string, u llmtest.Usage) llmtest.Turn {
	return llmtest.Stream(llmtest.TextDelta(text), llmtest.FinishWithUsage("stop", u))
}

func callsWithUsage(u llmtest.Usage, calls ...llmtest.Call) llmtest.Turn {
	return llmtest.Calls(calls...).WithUsage(u)
}

func newFixtureDefs(t *testing.T, r *router, defs string) *fixture {
	return newFixture(t, nil, fixtureOpts{router: r, defs: defs})
}
