package harnesstest_test

import (
	"testing"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/harnesstest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var key = core.NewKey[string]("word")

type cfg struct {
	Word string `yaml:"word"`
}

var word = core.Define("word", func(c *core.Context, cfg cfg) error { return core.Provide(c, key, cfg.Word) })

func TestStartBootsFromAManifest(t *testing.T) {
	h := harnesstest.Start(t, "plugins:\n  - name: word\n    config: {word: hi}\n", harness.WithPlugins(word))
	if got := harnesstest.Service(t, h, key); got != "hi" {
		t.Fatalf("got %q", got)
	}
}
