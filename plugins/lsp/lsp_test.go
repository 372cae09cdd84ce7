package lsp_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/services/tools"
)

const calcGo = "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"

// module writes a small Go module (go.mod, calc.go) into a new directory.
func module(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	for name, body := range map[string]string{"go.mod": "module example.com/calc\n\ngo 1.22\n", "calc.go": calcGo} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func goServer(t *testing.T, mark string) string {
	bin := gopls(t)
	return "        go: {command: " + bin + ", args: [-logfile, /tmp/" + mark + ".log], extensions: [.go], rootMarkers: [go.mod]}\n"
}

func editArgs(path, old, new string) string {
	b, _ := json.Marshal(map[string]string{"file_path": path, "old_string": old, "new_string": new})
	return string(b)
}

// An edit through the real edit tool that breaks the build returns the
// compiler's error from real gopls (sandboxed) in its result; the fixing
// edit's result carries no diagnostics; the diagnostics tool reports the
// file on demand.
func TestEditResultCarriesCompilerErrorFromGopls(t *testing.T) {
	ws := module(t)
	_, reg, _ := boot(t, ws, goServer(t, marker()))
	path := filepath.Join(ws, "calc.go")

	o := call(reg, "edit", editArgs(path, "return a + b", "return a + undefinedThing"))
	text := tools.TextOf(o.Content)
	if o.IsError || !strings.Contains(text, "LSP diagnostics for calc.go:") ||
		!strings.Contains(text, "calc.go:5:13: error: undefined: undefinedThing (compiler)") {
		t.Fatalf("breaking edit result:\n%s", text)
	}

	o = call(reg, "edit", editArgs(path, "return a + undefinedThing", "return a + b"))
	if text := tools.TextOf(o.Content); o.IsError || strings.Contains(text, "LSP diagnostics") {
		t.Fatalf("fixing edit result:\n%s", text)
	}

	if err := os.WriteFile(filepath.Join(ws, "more.go"), []byte("package calc\n\nvar X int = \"s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o = call(reg, "diagnostics", `{"paths":["more.go"]}`)
	if text := tools.TextOf(o.Content); o.IsError || !strings.Contains(text, "more.go:3:13: error: cannot use \"s\" (untyped string constant) as int value") {
		t.Fatalf("diagnostics tool:\n%s", text)
	}
}

// The server runs while the harness runs and is gone when it stops.
func TestServerProcessIsGoneAfterStop(t *testing.T) {
	ws := module(t)
	mark := marker()
	manifest := "plugins:\n  - name: subprocess-local\n    config:\n      sandbox: {mode: workspace-write}\n  - name: tools\n" +
		"  - name: tool-fs\n    config: {cwd: " + ws + "}\n" +
		"  - name: lsp\n    config:\n      cwd: " + ws + "\n      timeout: 60s\n      servers:\n" + goServer(t, mark)
	h, err := harness.New(harness.WithManifest([]byte(manifest)), harness.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	reg := harnessService(t, h)
	o := call(reg, "edit", editArgs(filepath.Join(ws, "calc.go"), "return a + b", "return a - b"))
	if o.IsError {
		t.Fatal(tools.TextOf(o.Content))
	}
	if len(survivors(mark)) == 0 {
		t.Fatal("no gopls process with the marker while the harness runs")
	}
	if err := h.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(survivors(mark)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("processes left after stop: %v", survivors(mark))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A server that announces an oversize message, or writes no framing, is
// reported with a clear error in the result (no panic, nothing allocated
// for the announced size), once: later edits say nothing.
func TestMisbehavingServerIsReportedOnce(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for mode, want := range map[string]string{
		"oversize": "message too large: 1099511627776 bytes announced, the limit is 8388608 (maxMessageBytes)",
		"garbage":  "malformed header line",
	} {
		t.Run(mode, func(t *testing.T) {
			ws := t.TempDir()
			path := filepath.Join(ws, "a.fake")
			if err := os.WriteFile(path, []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// The sandbox hides /tmp but the workspace: run a copy there.
			bin := filepath.Join(ws, "fake-server")
			data, err := os.ReadFile(self)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(bin, data, 0o755); err != nil {
				t.Fatal(err)
			}
			servers := "        fake: {command: " + bin + ", extensions: [.fake], env: {" + fakeEnv + ": " + mode + "}}\n" +
				"      maxRestarts: 0\n"
			_, reg, _ := boot(t, ws, servers)
			o := call(reg, "edit", editArgs(path, "x", "y"))
			text := tools.TextOf(o.Content)
			if o.IsError || !strings.Contains(text, want) || !strings.Contains(text, "not restarted again") {
				t.Fatalf("first edit:\n%s", text)
			}
			o = call(reg, "edit", editArgs(path, "y", "z"))
			if text := tools.TextOf(o.Content); o.IsError || strings.Contains(text, "LSP") {
				t.Fatalf("second edit:\n%s", text)
			}
		})
	}
}
