package tokenmeter

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
)

func TestPluginProvidesTheMeter(t *testing.T) {
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer root.Dispose(context.Background())
	for _, cfg := range []Config{
		{Estimator: "bytes", Models: map[string]Model{"m": {ContextWindow: 10}}},
		{Estimator: "o200k"},
		{Estimator: "tokenizer-json", Tokenizer: writeTestTokenizer(t, testTokenizerJSON(t, false))},
	} {
		f := root.Context().Plugin(Plugin, cfg)
		if err := f.Await(context.Background()); err != nil || f.State() != core.StateActive {
			t.Fatalf("%s: %v %v", cfg.Estimator, f.State(), f.Err())
		}
		m, ok := core.Lookup(root.Context(), Key)
		if !ok || m.Estimator().Name() != cfg.Estimator {
			t.Fatalf("%s: meter not provided", cfg.Estimator)
		}
		if err := f.Dispose(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	f := root.Context().Plugin(Plugin, Config{Estimator: "tokenizer-json", Tokenizer: "/nonexistent/tokenizer.json"})
	f.Await(context.Background())
	if f.State() == core.StateActive || f.Err() == nil || !strings.Contains(f.Err().Error(), "tokenizer-json") {
		t.Errorf("missing tokenizer file: %v %v", f.State(), f.Err())
	}
}

func TestPluginConfigValidation(t *testing.T) {
	var cfg Config
	cfg.SetDefaults()
	if cfg.Estimator != "heuristic" || cfg.Validate() != nil {
		t.Fatalf("defaults = %+v", cfg)
	}
	bad := Config{Estimator: "tokenizer-json", Models: map[string]Model{
		"deepseek-chat": {ContextWindow: -1, Prices: &Prices{Output: -2}},
	}}
	err := bad.Validate()
	want := "invalid config: models.deepseek-chat.contextWindow: must not be negative; models.deepseek-chat.prices.output: must not be negative; tokenizer: required by estimator tokenizer-json"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Validate = %v\nwant %s", err, want)
	}
	if err := (&Config{Estimator: "words"}).Validate(); err == nil || !strings.Contains(err.Error(), `estimator: unknown estimator "words"`) {
		t.Errorf("unknown estimator: %v", err)
	}
}
