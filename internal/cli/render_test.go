package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshgo/harness/services/agent"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// streamGolden is the agent package's golden stream-json turn: every event
// type once at least. The printer renders those events.
var streamGolden = filepath.Join(pkgDir, "..", "..", "services", "agent", "testdata", "stream.jsonl")

// pkgDir is this package's directory, taken before any test runs: a serial
// test changes the process's working directory while it runs (t.Chdir), so
// the golden files are never opened by a relative path.
var pkgDir = func() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return wd
}()

func goldenEvents(t *testing.T) ([]agent.Event, []byte) {
	t.Helper()
	raw, err := os.ReadFile(streamGolden)
	if err != nil {
		t.Fatal(err)
	}
	var es []agent.Event
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		var e agent.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		es = append(es, e)
	}
	return es, raw
}

func render(t *testing.T, format string) (stdout, stderr []byte) {
	t.Helper()
	es, _ := goldenEvents(t)
	var out, errw bytes.Buffer
	p := newPrinter(format, &out, &errw)
	for _, e := range es {
		p.observe(e)
	}
	p.final(es[len(es)-1].Result)
	p.close()
	return out.Bytes(), errw.Bytes()
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(pkgDir, "testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it; review the diff):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// The text rendering of a turn (stderr not a terminal: no status line):
// assistant text on stdout, tool calls, results, todos and notices on
// stderr.
func TestTextRenderingIsGolden(t *testing.T) {
	t.Parallel()
	out, errw := render(t, OutputText)
	checkGolden(t, "render.text.stdout", out)
	checkGolden(t, "render.text.stderr", errw)
}

// stream-json is the agent package's encoding, byte for byte; nothing
// goes to stderr.
func TestStreamJSONRenderingIsTheAgentEncoding(t *testing.T) {
	t.Parallel()
	_, want := goldenEvents(t)
	out, errw := render(t, OutputStreamJSON)
	if !bytes.Equal(out, want) || len(errw) != 0 {
		t.Fatalf("stdout:\n%s\nstderr: %q", out, errw)
	}
}

// json prints the result object once, at the end.
func TestJSONRenderingIsGolden(t *testing.T) {
	t.Parallel()
	out, errw := render(t, OutputJSON)
	if len(errw) != 0 {
		t.Fatalf("stderr: %q", errw)
	}
	checkGolden(t, "render.json", out)
}
