package agent_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/core"
	llmopenai "github.com/dshgo/harness/plugins/llm-openai"
	prompttools "github.com/dshgo/harness/plugins/prompt-tools"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tokenmeter"
	"github.com/dshgo/harness/services/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is a running root with the services the agent needs, a scripted
// model under the route "test/m1", and test tools over a temp directory.
type fixture struct {
	t     *testing.T
	root  *core.Root
	rc    *core.Context
	svc   *agent.Service
	srv   *llmtest.Server
	dir   string
	state string
}

type readArgs struct {
	Path string `json:"path"`
}

type slowArgs struct {
	Seconds int `json:"seconds"`
}

// testTools: read (parallel-safe) and slow (exclusive, waits on ctx) and
// current_time (no arguments).
func testTools(dir string) []*tools.Tool {
	return []*tools.Tool{
		tools.Define("read_file", "Read a file.", func(ctx context.Context, e *tools.Execution, a readArgs) (string, error) {
			b, err := os.ReadFile(filepath.Join(dir, a.Path))
			if err != nil {
				return "", tools.Errorf("FS_NOT_FOUND", "cannot read %s", a.Path)
			}
			return string(b), nil
		}, tools.WithConcurrencySafe(func(readArgs) bool { return true })),
		tools.Define("slow", "Wait.", func(ctx context.Context, e *tools.Execution, a slowArgs) (string, error) {
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(time.Duration(a.Seconds) * time.Second):
				return "done", nil
			}
		}),
		tools.Define("current_time", "Now.", func(ctx context.Context, e *tools.Execution, _ struct{}) (string, error) {
			return "12:00", nil
		}),
	}
}

var toolsPlugin = core.Define("test-tools", func(c *core.Context, cfg struct {
	Dir string `yaml:"dir"`
}) error {
	return tools.Register(c, testTools(cfg.Dir)...)
}, core.WithInject(tools.Key.Name()))

func newFixture(t *testing.T, turns []llmtest.Turn, opts ...llmtest.Option) *fixture {
	return newFixtureCfg(t, turns, agent.Config{}, opts...)
}

func newFixtureCfg(t *testing.T, turns []llmtest.Turn, acfg agent.Config, opts ...llmtest.Option) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), state: t.TempDir()}
	f.srv = llmtest.New(t, turns, opts...)
	f.root = core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = f.root.Dispose(context.Background()) })
	rc := f.root.Context()
	f.rc = rc
	rc.Plugin(systemprompt.Plugin, nil)
	rc.Plugin(tools.Plugin, nil)
	rc.Plugin(prompttools.Plugin, nil)
	rc.Plugin(tokenmeter.Plugin, nil)
	mountLLM(rc, f.srv.URL)
	rc.Plugin(toolsPlugin, struct {
		Dir string `yaml:"dir"`
	}{f.dir})
	rc.Plugin(sessions.JSONLPlugin, sessions.JSONLConfig{StateDir: f.state})
	if acfg.MaxSteps == 0 {
		acfg.MaxSteps = agent.DefaultMaxSteps
	}
	fb := rc.Plugin(agent.Plugin, acfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fb.Await(ctx); err != nil {
		t.Fatalf("agent plugin: %v (state %v, pending on %v)", err, fb.State(), fb.PendingOn())
	}
	svc, ok := core.Lookup(rc, agent.Key)
	if !ok {
		t.Fatal("agent service not provided")
	}
	f.svc = svc
	return f
}

// mountLLM mounts the llm service and an OpenAI-compatible route "test"
// with model m1 (thinking switch enabled) at url.
func mountLLM(rc *core.Context, url string) {
	rc.Plugin(llm.Plugin, nil)
	retries := 2
	rc.Plugin(llmopenai.Plugin, llmopenai.Config{
		Provider: "test", BaseURL: url, APIKey: "sk-test",
		MaxRetries: &retries, RetryBaseDelay: llmopenai.Duration(time.Millisecond), RetryMaxDelay: llmopenai.Duration(time.Second),
		Timeout: llmopenai.Duration(30 * time.Second),
		Models:  []llmopenai.ModelConfig{{Name: "m1", Default: true, Thinking: llm.ThinkingDisabled, ContextWindow: 1 << 20}},
	})
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

func (f *fixture) write(name, content string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, name), []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// wire returns request i decoded.
func (f *fixture) wire(i int) llmtest.WireRequest {
	f.t.Helper()
	reqs := f.srv.Requests()
	if i >= len(reqs) {
		f.t.Fatalf("only %d requests", len(reqs))
	}
	w, err := reqs[i].Wire()
	if err != nil {
		f.t.Fatal(err)
	}
	return w
}
