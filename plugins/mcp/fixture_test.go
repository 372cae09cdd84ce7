//go:build unix

package mcp_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/plugins/mcp"
	"github.com/dshgo/harness/services/tools"
)

// server returns the YAML of one stdio fixture server entry.
func fixtureServer(name, mode, mark string, extra ...string) string {
	s := fmt.Sprintf("%s:\n  command: %s\n  args: [%s, %s]\n", name, fixture, mode, mark)
	for _, e := range extra {
		s += "  " + e + "\n"
	}
	return s
}

func TestToolsAreRegisteredUnderMcpNamesAndCallable(t *testing.T) {
	t.Parallel()
	mark := marker()
	_, m, reg := boot(t, "servers:\n"+indent(fixtureServer("fx", "ok", mark), "  "))
	st := status(t, m, "fx")
	if st.State != mcp.StateReady || st.ProtocolVersion != "2025-11-25" || st.ServerName != "fixture" {
		t.Fatalf("status %+v", st)
	}
	want := []string{"mcp__fx__big", "mcp__fx__echo", "mcp__fx__fail", "mcp__fx__sleep", "mcp__fx__toggle"}
	if strings.Join(st.Tools, " ") != strings.Join(want, " ") {
		t.Fatalf("tools %v, want %v", st.Tools, want)
	}
	echo, ok := reg.Get("mcp__fx__echo", nil)
	if !ok || !echo.ReadOnly() || echo.Description() != "Echo the text back." {
		t.Fatalf("echo tool: %v readOnly=%v", ok, ok && echo.ReadOnly())
	}
	if sleep, _ := reg.Get("mcp__fx__sleep", nil); sleep.ReadOnly() {
		t.Fatal("sleep has no readOnlyHint but is read-only")
	}
	o := call(reg, "mcp__fx__echo", `{"text":"hi"}`)
	if o.IsError || tools.TextOf(o.Content) != "echo: hi" {
		t.Fatalf("echo: %+v", o)
	}
	o = call(reg, "mcp__fx__echo", `{"text":5}`)
	if !o.IsError || o.Error == nil || o.Error.Code != tools.CodeInvalidArgs {
		t.Fatalf("schema violation not rejected by the registry: %+v", o)
	}
	o = call(reg, "mcp__fx__fail", `{}`)
	if !o.IsError || tools.TextOf(o.Content) != "Error: the fixture failed on purpose" || o.Error.Code != mcp.CodeServerError {
		t.Fatalf("isError result: %+v %+v", o, o.Error)
	}
}

func TestFailingServersAreReportedAndDoNotStopOthers(t *testing.T) {
	t.Parallel()
	mark := marker()
	cfg := "servers:\n" + indent(
		fixtureServer("good", "ok", mark)+
			fixtureServer("crash", "crash", mark)+
			fixtureServer("mute", "noinit", mark, "startupTimeout: 1s")+
			"missing:\n  command: /nonexistent/mcp-server-"+mark+"\n", "  ") +
		"grace: 300ms\n"
	_, m, reg := boot(t, cfg)
	if st := status(t, m, "good"); st.State != mcp.StateReady {
		t.Fatalf("good: %+v", st)
	}
	crash := status(t, m, "crash")
	if crash.State != mcp.StateFailed || !strings.Contains(crash.Error, `mcp server "crash"`) ||
		!strings.Contains(crash.Error, "(server process exit 7)") || !strings.Contains(crash.Error, "cannot open database: permission denied") {
		t.Fatalf("crash: %+v", crash)
	}
	mute := status(t, m, "mute")
	if mute.State != mcp.StateFailed || !strings.Contains(mute.Error, "no answer to initialize within the startup timeout (1s)") ||
		!strings.Contains(mute.Error, "never answering") {
		t.Fatalf("mute: %+v", mute)
	}
	missing := status(t, m, "missing")
	if missing.State != mcp.StateFailed || !strings.Contains(missing.Error, `mcp server "missing"`) || !strings.Contains(missing.Error, "/nonexistent/mcp-server-") {
		t.Fatalf("missing: %+v", missing)
	}
	// The never-answering server and its SIGTERM-ignoring child are gone.
	if s := survivors(mark); len(s) != 1 {
		t.Fatalf("want only the good server alive, got pids %v", s)
	}
	if o := call(reg, "mcp__good__echo", `{"text":"still here"}`); o.IsError {
		t.Fatalf("good server after the others failed: %+v", o)
	}
	if o := call(reg, "mcp__crash__echo", `{}`); o.Error == nil || o.Error.Code != tools.CodeUnknownTool {
		t.Fatalf("a failed server has no tools: %+v", o)
	}
}

func TestNothingSurvivesTheHarness(t *testing.T) {
	t.Parallel()
	mark := marker()
	h, _, _ := boot(t, "grace: 300ms\nservers:\n"+indent(fixtureServer("a", "ok", mark)+fixtureServer("b", "flood", mark), "  "))
	if s := survivors(mark); len(s) != 2 {
		t.Fatalf("want 2 servers running, got %v", s)
	}
	if err := h.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s := survivors(mark); len(s) != 0 {
		t.Fatalf("survivors after stop: %v", s)
	}
}

func TestCallTimeoutNamesServerAndCancelsTheRequest(t *testing.T) {
	t.Parallel()
	_, m, reg := boot(t, "servers:\n"+indent(fixtureServer("slow", "ok", marker(), "timeout: 300ms"), "  "))
	o := call(reg, "mcp__slow__sleep", `{"seconds":30}`)
	if !o.IsError || o.Error.Code != tools.CodeToolTimeout ||
		tools.TextOf(o.Content) != `Error: mcp server "slow": tool "sleep" timed out after 300ms (the server was sent notifications/cancelled)` {
		t.Fatalf("timeout: %+v %+v", tools.TextOf(o.Content), o.Error)
	}
	eventually(t, "the server to see notifications/cancelled", func() bool {
		return strings.Contains(status(t, m, "slow").Stderr, "fixture: sleep cancelled")
	})
	if o := call(reg, "mcp__slow__echo", `{"text":"after"}`); o.IsError {
		t.Fatalf("server unusable after a timeout: %+v", o)
	}
}

func TestServerExitFailsTheNextCallAtOnce(t *testing.T) {
	t.Parallel()
	_, m, reg := boot(t, "servers:\n"+indent(fixtureServer("brief", "exitafter", marker()), "  "))
	eventually(t, "the server to exit", func() bool { return status(t, m, "brief").State == mcp.StateExited })
	o := call(reg, "mcp__brief__echo", `{"text":"x"}`)
	text := tools.TextOf(o.Content)
	if !o.IsError || o.Error.Code != mcp.CodeUnavailable || !strings.Contains(text, `mcp server "brief" exited`) ||
		!strings.Contains(text, "(server process exit 3)") || !strings.Contains(text, "exiting after tools/list") {
		t.Fatalf("call after exit: %q %+v", text, o.Error)
	}
}

func TestRestartOnFailureReconnects(t *testing.T) {
	t.Parallel()
	_, m, _ := boot(t, "servers:\n"+indent(fixtureServer("phoenix", "exitafter", marker(), "restart: on-failure"), "  "))
	eventually(t, "a restart", func() bool {
		st := status(t, m, "phoenix")
		return st.Restarts >= 1 && st.State == mcp.StateReady
	})
}

func TestListChangedAddsAndRemovesTools(t *testing.T) {
	t.Parallel()
	_, _, reg := boot(t, "servers:\n"+indent(fixtureServer("dyn", "ok", marker()), "  "))
	if _, ok := reg.Get("mcp__dyn__extra", nil); ok {
		t.Fatal("extra exists before toggle")
	}
	if o := call(reg, "mcp__dyn__toggle", `{}`); tools.TextOf(o.Content) != "extra=true" {
		t.Fatalf("toggle: %+v", o)
	}
	eventually(t, "extra to appear", func() bool { _, ok := reg.Get("mcp__dyn__extra", nil); return ok })
	if o := call(reg, "mcp__dyn__extra", `{}`); tools.TextOf(o.Content) != "extra!" {
		t.Fatalf("extra: %+v", o)
	}
	call(reg, "mcp__dyn__toggle", `{}`)
	eventually(t, "extra to disappear", func() bool { _, ok := reg.Get("mcp__dyn__extra", nil); return !ok })
	if _, ok := reg.Get("mcp__dyn__echo", nil); !ok {
		t.Fatal("echo gone after re-list")
	}
}

func TestStderrFloodNeverBlocksAndStaysBounded(t *testing.T) {
	t.Parallel()
	_, m, reg := boot(t, "stderrTailBytes: 4096\nservers:\n"+indent(fixtureServer("noisy", "flood", marker()), "  "))
	for i := range 3 {
		if o := call(reg, "mcp__noisy__echo", fmt.Sprintf(`{"text":"%d"}`, i)); o.IsError {
			t.Fatalf("call %d: %+v", i, o)
		}
	}
	if n := len(status(t, m, "noisy").Stderr); n == 0 || n > 4096 {
		t.Fatalf("stderr tail is %d bytes, want 1..4096", n)
	}
}

func TestLargeResultGoesThroughTheSpillPolicy(t *testing.T) {
	t.Parallel()
	_, _, reg := boot(t, "servers:\n"+indent(fixtureServer("bulk", "ok", marker()), "  "),
		"  - name: spill-local\n", "  - name: spill-policy\n    config: { maxInlineBytes: 50000 }\n")
	o := call(reg, "mcp__bulk__big", `{"bytes":5000000}`)
	text := tools.TextOf(o.Content)
	if o.IsError || len(text) > 60000 || !strings.Contains(text, "Full formatted result stored at:") {
		t.Fatalf("5 MB result: isError=%v, %d bytes of content: %.300s", o.IsError, len(text), text)
	}
}

// The servers of a row connect in parallel: each of five fixture servers
// answers initialize only once all five have started, so connecting them
// one after another would leave the first waiting until its startup
// timeout.
func TestServersConnectInParallel(t *testing.T) {
	t.Parallel()
	mark, dir := marker(), t.TempDir()
	var servers strings.Builder
	for i := range 5 {
		fmt.Fprintf(&servers, "s%d:\n  command: %s\n  args: [rendezvous, %s, %s, 5]\n  startupTimeout: 20s\n", i, fixture, mark, dir)
	}
	_, m, _ := boot(t, "servers:\n"+indent(servers.String(), "  "))
	for i := range 5 {
		if st := status(t, m, fmt.Sprintf("s%d", i)); st.State != mcp.StateReady {
			t.Errorf("s%d: %s %s", i, st.State, st.Error)
		}
	}
}

// A tools/list that shutdown cuts short (the server was re-listing after
// notifications/tools/list_changed) is not reported as a failure.
func TestShutdownDuringRelistLogsNoWarning(t *testing.T) {
	t.Parallel()
	logs := &warnings{}
	h, m, reg := bootWith(t, []harness.Option{harness.WithLogger(slog.New(logs))},
		"servers:\n"+indent(fixtureServer("fx", "holdrelist", marker()), "  "))
	if o := call(reg, "mcp__fx__toggle", `{}`); o.IsError {
		t.Fatalf("toggle: %+v", o)
	}
	eventually(t, "the re-list to reach the server", func() bool {
		return strings.Contains(status(t, m, "fx").Stderr, "fixture: holding tools/list")
	})
	if err := h.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if w := logs.all(); len(w) != 0 {
		t.Fatalf("warnings at shutdown: %q", w)
	}
}

// warnings is a slog handler keeping the messages of WARN and ERROR
// records.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (w *warnings) WithAttrs([]slog.Attr) slog.Handler           { return w }
func (w *warnings) WithGroup(string) slog.Handler                { return w }
func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, r.Message)
	return nil
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.msgs)
}

// A server's tools present their calls from their annotations and their
// arguments' schema: the argument naming the subject as the title (else
// the scalar arguments), read for a read-only tool, the result's text.
func TestServerToolsPresentTheirCalls(t *testing.T) {
	t.Parallel()
	_, _, reg := boot(t, "servers:\n"+indent(fixtureServer("fx", "ok", marker()), "  "))
	present := func(name, args string) (pending, done tools.Presentation) {
		tool, ok := reg.Get(name, nil)
		if !ok || !tool.Presents() {
			t.Fatalf("%s: registered %v, presents %v", name, ok, ok && tool.Presents())
		}
		c := tools.PresentCall{ID: "c1", Name: name, Arguments: args, Cwd: "/w"}
		pending = tools.Present(tool, c)
		c.Outcome = call(reg, name, args)
		return pending, tools.Present(tool, c)
	}
	pending, done := present("mcp__fx__echo", `{"text":"hi\nthere"}`)
	if pending.Title != "hi …" || pending.Kind != tools.KindRead || pending.Status != tools.StatusPending {
		t.Errorf("echo pending: %+v", pending)
	}
	if done.Status != tools.StatusCompleted || len(done.Content) != 1 || done.Content[0].Content.Text != "echo: hi\nthere" {
		t.Errorf("echo done: %+v", done)
	}
	pending, _ = present("mcp__fx__sleep", `{"seconds":0.01}`)
	if pending.Title != "seconds=0.01" || pending.Kind != tools.KindOther {
		t.Errorf("sleep pending: %+v", pending)
	}
	_, done = present("mcp__fx__fail", `{}`)
	if done.Title != "mcp__fx__fail" || done.Status != tools.StatusFailed || done.Reason() != "the fixture failed on purpose" {
		t.Errorf("fail done: %+v %+v", done, done.Meta)
	}
}
