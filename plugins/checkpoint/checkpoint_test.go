package checkpoint_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/plugins/checkpoint"
	"github.com/dshgo/harness/services/checkpoints"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A Taker's checkpoint lands in the store rewind reads, with its meta.
func TestTakerTakes(t *testing.T) {
	state, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	tk := checkpoint.NewTaker(state, checkpoints.Limits{}, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	tk.Take(context.Background(), ws, checkpoints.Meta{Session: "s1", Prompt: "hi", Reason: checkpoint.ReasonPrompt})
	s, err := checkpoints.Open(state, ws, checkpoints.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Meta.Session != "s1" || list[0].Meta.Reason != "prompt" || list[0].Entries["a.txt"].Kind != checkpoints.KindFile {
		t.Fatalf("checkpoints: %+v\nlogs: %s", list, logs.String())
	}
	if logs.Len() != 0 {
		t.Fatalf("a good checkpoint logged: %s", logs.String())
	}
}

// A checkpoint that cannot be taken is logged, a warning the first time
// and at debug level after, and Take returns normally.
func TestTakerWarnsOnce(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	if err := os.WriteFile(state, []byte("a file, not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	tk := checkpoint.NewTaker(state, checkpoints.Limits{}, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	for range 3 {
		tk.Take(context.Background(), t.TempDir(), checkpoints.Meta{Reason: checkpoint.ReasonTurnEnd})
	}
	out := logs.String()
	if strings.Count(out, "level=WARN") != 1 || strings.Count(out, "level=DEBUG") != 2 || !strings.Contains(out, "checkpoint failed") {
		t.Fatalf("want one warning then two debug lines:\n%s", out)
	}
}

func TestConfigValidate(t *testing.T) {
	var c checkpoint.Config
	c.SetDefaults()
	if !c.Enabled || c.Validate() != nil {
		t.Fatalf("defaults: %+v, %v", c, c.Validate())
	}
	c.MaxCheckpoints = -1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "maxCheckpoints") {
		t.Fatalf("negative maxCheckpoints: %v", err)
	}
}
