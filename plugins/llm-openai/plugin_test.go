package llmopenai_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/harnesstest"
	llmopenai "github.com/dshgo/harness/plugins/llm-openai"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
)

func manifest(url string) string {
	return fmt.Sprintf(`plugins:
  - name: llm
  - id: deepseek
    name: llm-openai
    config:
      provider: deepseek
      baseURL: %s
      apiKeyEnv: HARNESS_TEST_DEEPSEEK_KEY
      timeout: 30s
      retryBaseDelay: 1ms
      models:
        - name: deepseek-v4-flash
          default: true
          contextWindow: 1048576
          maxOutputTokens: 393216
          thinking: enabled
          prices: {cacheHit: 0.028, cacheMiss: 0.28, output: 0.42}
          aliases:
            - {name: deepseek-chat, thinking: disabled}
            - {name: deepseek-reasoner, thinking: enabled}
        - {name: deepseek-v4-pro, contextWindow: 1048576, maxOutputTokens: 393216, thinking: enabled}
  - id: local
    name: llm-openai
    config:
      provider: local
      baseURL: %s
      models: [{name: qwen3}]
`, url, url)
}

func TestPluginRegistersRoutesFromTheManifest(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{
		llmtest.Stream(llmtest.TextDelta("from deepseek"), llmtest.Finish("stop")),
		llmtest.Stream(llmtest.TextDelta("from local"), llmtest.Finish("stop")),
	})
	t.Setenv("HARNESS_TEST_DEEPSEEK_KEY", "sk-env")
	h := harnesstest.Start(t, manifest(srv.URL), harness.WithPlugins(llm.Plugin, llmopenai.Plugin))
	svc := harnesstest.Service(t, h, llm.Key)
	if got := svc.Providers(); strings.Join(got, ",") != "deepseek,local" {
		t.Fatalf("providers = %v", got)
	}
	m, err := svc.Resolve("deepseek/deepseek-reasoner")
	if err != nil || m.Name != "deepseek-v4-flash" || m.ContextWindow != 1048576 || m.Prices.CacheHit != 0.028 {
		t.Fatalf("resolve = %+v, %v", m, err)
	}
	for _, route := range []string{"deepseek/deepseek-chat", "local/qwen3"} {
		r := llm.Collect(svc.Stream(t.Context(), llm.Request{Model: route, Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}))
		if r.Err != nil {
			t.Fatalf("%s: %v", route, r.Err)
		}
	}
	reqs := srv.Requests()
	if reqs[0].Header.Get("Authorization") != "Bearer sk-env" || reqs[1].Header.Get("Authorization") != "" {
		t.Fatalf("auth headers: %q, %q", reqs[0].Header.Get("Authorization"), reqs[1].Header.Get("Authorization"))
	}
	w, _ := reqs[0].Wire()
	if w.Model != "deepseek-v4-flash" || w.Thinking == nil || w.Thinking.Type != "disabled" {
		t.Fatalf("deepseek-chat request: model %s thinking %+v", w.Model, w.Thinking)
	}
	// A rejected key says where it came from.
	srv.Enqueue(llmtest.Error(401, "Authentication Fails"))
	r := llm.Collect(svc.Stream(t.Context(), llm.Request{Model: "deepseek", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}))
	if r.Err == nil || r.Err.Code != llm.CodeAuth || !strings.HasSuffix(r.Err.Message, "(the key is read from the environment variable HARNESS_TEST_DEEPSEEK_KEY)") {
		t.Fatalf("401: %v", r.Err)
	}
}

// A route without its key still activates (the harness boots and its tools
// work); every request on it fails with AUTH wrapping ErrMissingAPIKey,
// naming the variable, and never leaking a key.
func TestPluginWithoutKeyActivatesAndRequestsNameTheVariable(t *testing.T) {
	t.Setenv("HARNESS_TEST_DEEPSEEK_KEY", "")
	m := strings.Replace(manifest("https://api.deepseek.com"), "  - id: local", "  - id: local\n    disabled: true", 1)
	h := harnesstest.Start(t, m, harness.WithPlugins(llm.Plugin, llmopenai.Plugin))
	svc := harnesstest.Service(t, h, llm.Key)
	r := llm.Collect(svc.Stream(t.Context(), llm.Request{Model: "deepseek", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}))
	if !errors.Is(r.Err, llm.ErrMissingAPIKey) || !strings.Contains(r.Err.Error(), "set the environment variable HARNESS_TEST_DEEPSEEK_KEY") {
		t.Fatalf("request error = %v", r.Err)
	}
	if strings.Contains(r.Err.Error(), "sk-") {
		t.Fatalf("error leaks a key: %v", r.Err)
	}
}

func TestDuplicateRouteIsAnError(t *testing.T) {
	t.Setenv("HARNESS_TEST_DEEPSEEK_KEY", "sk")
	srv := llmtest.New(t, nil)
	m := strings.Replace(manifest(srv.URL), "provider: local", "provider: deepseek", 1)
	h, err := harness.New(harness.WithManifest([]byte(m)), harness.WithPlugins(llm.Plugin, llmopenai.Plugin),
		harness.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	err = h.Start(context.Background())
	defer func() { _ = h.Stop(context.Background()) }()
	if err == nil || !errors.Is(err, llm.ErrDuplicateProvider) && !strings.Contains(err.Error(), "already registered") {
		t.Fatalf("start error = %v", err)
	}
}
