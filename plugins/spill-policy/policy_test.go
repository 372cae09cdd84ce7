package spillpolicy

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/spill"
	"github.com/dshgo/harness/services/tools"
)

// logSink collects log records so tests can assert the warnings.
type logSink struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

type env struct {
	t     *testing.T
	root  *core.Root
	reg   *tools.Registry
	c     *core.Context
	logs  *logSink
	spill string // spill root
}

// newEnv mounts tools, spill-local (unless noStore) and spill-policy with cap.
func newEnv(t *testing.T, cap int, noStore bool) *env {
	t.Helper()
	return newEnvWith(t, Config{MaxInlineBytes: cap}, noStore)
}

// newEnvWith mounts spill-policy with cfg (nil: the row has no config).
func newEnvWith(t *testing.T, cfg any, noStore bool) *env {
	t.Helper()
	logs := &logSink{}
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.MultiWriter(logs), nil))))
	t.Cleanup(func() { _ = root.Dispose(context.Background()) })
	e := &env{t: t, root: root, logs: logs, spill: filepath.Join(t.TempDir(), "spill")}
	e.mount(tools.Plugin, tools.Config{MaxParallel: 4})
	if !noStore {
		e.mount(spill.Plugin, spill.Config{Root: e.spill, Keep: true})
	}
	e.mount(Plugin, cfg)
	e.reg, _ = core.Lookup(root.Context(), tools.Key)
	host := core.Define("test-host", func(c *core.Context, _ struct{}) error { e.c = c; return nil }, core.WithInject(tools.Key.Name()))
	e.mount(host, nil)
	return e
}

func (e *env) mount(p core.Plugin, cfg any) *core.Fiber {
	e.t.Helper()
	f := e.root.Context().Plugin(p, cfg)
	if err := f.Await(context.Background()); err != nil || f.State() != core.StateActive {
		e.t.Fatalf("mount %s: %v %v", p.Name(), f.State(), f.Err())
	}
	return f
}

type textArgs struct {
	N int `json:"n"`
}

// textTool returns a tool named name whose result is body(n).
func textTool(name string, body func(n int) string) *tools.Tool {
	return tools.Define(name, "returns text", func(_ context.Context, _ *tools.Execution, a textArgs) (string, error) {
		return body(a.N), nil
	})
}

func bigText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%50))
		b.WriteString("\n")
	}
	return b.String()[:n]
}

func (e *env) call(name string, n int, scope *core.ScopeID) *tools.Outcome {
	args, _ := json.Marshal(textArgs{N: n})
	return e.reg.Execute(context.Background(), tools.Call{ID: "call_1", Name: name, Arguments: string(args), Scope: scope})
}

var noticeRE = regexp.MustCompile(`\(Omitted (\d+) bytes\. Full formatted result stored at: (\S+)\. Use read with offset/limit, or grep this path to search within it\.\)`)

// The done-when: a 2 MB result reaches the model as a preview plus a
// locator that opens to the complete text.
func TestTwoMegabyteResultBecomesPreviewAndLocator(t *testing.T) {
	e := newEnv(t, DefaultMaxInlineBytes, false)
	if err := e.reg.Register(e.c, textTool("bash", bigText)); err != nil {
		t.Fatal(err)
	}
	full := bigText(2 << 20)
	out := e.call("bash", 2<<20, core.NewScopeID("session-42", nil))
	if out.IsError {
		t.Fatalf("error result: %v", tools.TextOf(out.Content))
	}
	text := tools.TextOf(out.Content)
	if len(text) != DefaultMaxInlineBytes {
		t.Errorf("preview is %d bytes, want exactly %d", len(text), DefaultMaxInlineBytes)
	}
	m := noticeRE.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no notice in preview tail: %q", text[len(text)/2-200:len(text)/2+200])
	}
	preview, _, _ := strings.Cut(text, "\n\n"+m[0])
	if !strings.HasSuffix(text, "\n\n"+m[0]) || !strings.HasPrefix(preview, full[:20_000]) || !strings.HasSuffix(preview, full[len(full)-20_000:]) {
		t.Error("preview does not keep the head and the tail")
	}
	saved, err := os.ReadFile(m[2])
	if err != nil {
		t.Fatal(err)
	}
	if string(saved) != full {
		t.Errorf("spill file has %d bytes, want the complete %d", len(saved), len(full))
	}
	if !strings.HasPrefix(m[2], e.spill) || filepath.Base(filepath.Dir(m[2])) != "session-"+ownerHash(t, "session-42") {
		t.Errorf("locator %s is not in the session's directory", m[2])
	}
	// An agent session's scope is labelled "session:<id>"; the owner is the
	// session id itself.
	out = e.call("bash", 2<<20, core.NewScopeID("session:20261130T040711-f7d84f30", nil))
	if m := noticeRE.FindStringSubmatch(tools.TextOf(out.Content)); m == nil ||
		filepath.Base(filepath.Dir(m[2])) != "session-"+ownerHash(t, "20261130T040711-f7d84f30") {
		t.Errorf("agent session spill not under session-<sha256(id)>: %v", m)
	}
	fi, _ := os.Stat(m[2])
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("spill file mode %v", fi.Mode().Perm())
	}
}

func ownerHash(t *testing.T, id string) string {
	s, err := spill.NewLocalStore(spill.LocalOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(filepath.Base(s.OwnerDir(id)), "session-")
}

func TestPolicyPassesThrough(t *testing.T) {
	e := newEnv(t, 400, false)
	if err := e.reg.Register(e.c,
		textTool("bash", bigText),
		textTool("read", bigText),
		textTool("image", bigText),
		textTool("valued", bigText),
	); err != nil {
		t.Fatal(err)
	}
	// A downstream listener turns "image" into non-text content and "valued"
	// into a value replacement; the policy must leave both alone.
	if err := core.On(e.c, tools.PostExecute, func(ctx context.Context, x *tools.Execution, next core.Next[*tools.Execution, tools.PostDecision]) (tools.PostDecision, error) {
		switch x.Name() {
		case "image":
			return tools.ReplaceContent(tools.Text(bigText(300)), tools.Content{Type: "image", Data: "AAAA", MimeType: "image/png"}), nil
		case "valued":
			return tools.ReplaceValueWith(bigText(300)), nil
		}
		return next(ctx, x)
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool string
		n    int
	}{
		{"bash", 400}, // at the cap: inline
		{"read", 5000},
		{"image", 5000},
		{"valued", 5000},
	} {
		out := e.call(tc.tool, tc.n, nil)
		if got := tools.TextOf(out.Content); noticeRE.MatchString(got) {
			t.Errorf("%s (%d bytes) was spilled", tc.tool, tc.n)
		}
	}
	// Over the cap: spilled, and the preview fits the cap.
	out := e.call("bash", 401, nil)
	if got := tools.TextOf(out.Content); !noticeRE.MatchString(got) || len(got) != 400 {
		t.Errorf("401 bytes not spilled within the cap: %d %q", len(got), got)
	}
	entries, _ := os.ReadDir(filepath.Join(e.spill, "session-"+ownerHash(t, DefaultOwner)))
	if len(entries) != 1 {
		t.Errorf("spill files for unscoped calls: %d, want 1", len(entries))
	}
}

func TestNestedCallsAreNotSpilled(t *testing.T) {
	e := newEnv(t, 100, false)
	e.reg.Register(e.c, textTool("bash", bigText))
	out := e.reg.Execute(context.Background(), tools.Call{ID: "c", Name: "bash", Arguments: `{"n":5000}`, Parent: &tools.Token{}})
	if got := tools.TextOf(out.Content); len(got) != 5000 {
		t.Errorf("nested call result changed: %d bytes", len(got))
	}
}

func TestSpillFailureKeepsTheOriginal(t *testing.T) {
	t.Run("no store", func(t *testing.T) {
		e := newEnv(t, 100, true)
		e.reg.Register(e.c, textTool("bash", bigText))
		out := e.call("bash", 5000, nil)
		if out.IsError || len(tools.TextOf(out.Content)) != 5000 {
			t.Errorf("result changed without a store: error=%v len=%d", out.IsError, len(tools.TextOf(out.Content)))
		}
		if !strings.Contains(e.logs.String(), "no spill store is mounted") {
			t.Error("no warning logged")
		}
	})
	t.Run("save fails", func(t *testing.T) {
		e := newEnv(t, 100, false)
		e.reg.Register(e.c, textTool("bash", bigText))
		os.RemoveAll(e.spill)
		os.WriteFile(e.spill, []byte("not a directory"), 0o600)
		out := e.call("bash", 5000, nil)
		if out.IsError || len(tools.TextOf(out.Content)) != 5000 {
			t.Errorf("a failed save changed the result: error=%v len=%d", out.IsError, len(tools.TextOf(out.Content)))
		}
		if !strings.Contains(e.logs.String(), "saving the result failed") {
			t.Error("no warning logged")
		}
	})
	t.Run("notice does not fit", func(t *testing.T) {
		e := newEnv(t, 40, false)
		e.reg.Register(e.c, textTool("bash", bigText))
		out := e.call("bash", 5000, nil)
		if len(tools.TextOf(out.Content)) != 5000 || !strings.Contains(e.logs.String(), "does not fit maxInlineBytes") {
			t.Errorf("tiny cap: len=%d", len(tools.TextOf(out.Content)))
		}
	})
}

func TestPolicyConfig(t *testing.T) {
	if err := (&Config{MaxInlineBytes: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "maxInlineBytes must be a non-negative integer (got -1)") {
		t.Errorf("Validate = %v", err)
	}
	// Reference B3: maxInlineBytes omitted means the plugin registers
	// nothing; 0 disables it too.
	for name, cfg := range map[string]any{"omitted": nil, "zero": Config{}} {
		e := newEnvWith(t, cfg, false)
		if err := e.reg.Register(e.c, textTool("bash", bigText)); err != nil {
			t.Fatal(err)
		}
		if out := e.call("bash", 100_000, nil); len(tools.TextOf(out.Content)) != 100_000 {
			t.Errorf("%s: the inert policy spilled", name)
		}
	}
}
