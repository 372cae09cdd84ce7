package fxcore_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/core/manifest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type order struct {
	mu  sync.Mutex
	log []string
}

func (o *order) add(s string) { o.mu.Lock(); o.log = append(o.log, s); o.mu.Unlock() }

type dirCfg struct {
	Dir string `yaml:"dir"`
}

// B21: a start that times out (or fails) stops what had started, in reverse
// order, and names the plugin that blocked.
func TestStartTimeoutDisposesStartedPluginsInReverse(t *testing.T) {
	for _, variant := range []string{"test-stuck", "test-fails"} {
		t.Run(variant, func(t *testing.T) {
			var ord order
			release := make(chan struct{})
			var sleeper *exec.Cmd
			spill := core.Define("spill", func(c *core.Context, cfg dirCfg) error {
				return c.Effect("dir", func() (func(), error) {
					if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
						return nil, err
					}
					return func() { ord.add("spill"); os.RemoveAll(cfg.Dir) }, nil
				})
			})
			terminal := core.Define("terminal", func(c *core.Context, _ struct{}) error {
				return c.Effect("helper", func() (func(), error) {
					sleeper = exec.Command("sleep", "3606")
					if err := sleeper.Start(); err != nil {
						return nil, err
					}
					return func() {
						ord.add("terminal")
						_ = sleeper.Process.Signal(syscall.SIGTERM)
						_ = sleeper.Wait()
					}, nil
				})
			})
			stuck := core.Define("test-stuck", func(c *core.Context, _ struct{}) error {
				<-release // ignores its context
				return nil
			})
			fails := core.Define("test-fails", func(c *core.Context, _ struct{}) error { return errors.New("cannot start") })
			dir := filepath.Join(t.TempDir(), "spill")
			m, err := manifest.Parse("harness.yml", []byte("startTimeout: 1s\nplugins:\n  - name: spill\n    config: {dir: "+dir+"}\n  - name: terminal\n  - name: "+variant+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			h, err := fxcore.New(fxcore.Options{
				Manifest: m,
				Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
				Plugins:  []core.Plugin{spill, terminal, stuck, fails},
			})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			err = h.Start(context.Background())
			took := time.Since(start)
			close(release)
			if err == nil {
				t.Fatal("start succeeded")
			}
			want := "test-stuck"
			if variant == "test-fails" {
				want = "cannot start"
			} else if !strings.Contains(err.Error(), "start timeout") {
				t.Fatalf("err = %v", err)
			}
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v, want it to name %q", err, want)
			}
			if took > 4*time.Second {
				t.Fatalf("start took %v", took)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Fatalf("spill dir left behind: %v", err)
			}
			if sleeper == nil || sleeper.ProcessState == nil {
				t.Fatal("helper process not reaped")
			}
			if got := ord.log; !slices.Equal(got, []string{"terminal", "spill"}) {
				t.Fatalf("stop order = %v", got)
			}
		})
	}
}

func TestStartAndStop(t *testing.T) {
	var ord order
	p := core.Define("p", func(c *core.Context, _ struct{}) error {
		return c.Effect("x", func() (func(), error) { return func() { ord.add("stopped") }, nil })
	})
	m, _ := manifest.Parse("harness.yml", []byte("plugins:\n  - name: p\n"))
	h, err := fxcore.New(fxcore.Options{Manifest: m, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Plugins: []core.Plugin{p}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := h.Loader.Status(); len(st) != 1 || st[0].State != "active" {
		t.Fatalf("status %+v", st)
	}
	if err := h.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ord.log, []string{"stopped"}) {
		t.Fatal(ord.log)
	}
}

// Boot policy (ARCHITECTURE §4): a failed boot names every failed row with
// its error and every pending row with what it waits for, not only the
// first failure.
func TestFailedBootListsEveryFailedAndPendingRow(t *testing.T) {
	failA := core.Define("fail-a", func(*core.Context, struct{}) error { return errors.New("a is broken") })
	failB := core.Define("fail-b", func(*core.Context, struct{}) error { return errors.New("b is broken") })
	waits := core.Define("waits", func(*core.Context, struct{}) error { return nil }, core.WithInject("nothing-provides-this"))
	m, err := manifest.Parse("harness.yml", []byte("plugins:\n  - name: fail-a\n  - name: waits\n  - name: fail-b\n"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := fxcore.New(fxcore.Options{Manifest: m, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Plugins: []core.Plugin{failA, failB, waits}})
	if err != nil {
		t.Fatal(err)
	}
	err = h.Start(context.Background())
	if err == nil {
		t.Fatal("start succeeded")
	}
	for _, want := range []string{"3 entries did not activate", "fail-a (fail-a): failed: a is broken",
		"waits (waits): pending (waiting for service: nothing-provides-this)", "fail-b (fail-b): failed: b is broken"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("boot error lacks %q:\n%v", want, err)
		}
	}
}
