package harness_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// heavyInitBytes is the heap a package's init may allocate before main
// without being named here. GODEBUG=inittrace=1 prints bytes and allocations
// per package; unlike the clock times beside them they are the same on every
// run, so the test asserts on them.
const heavyInitBytes = 64 << 10

// heavyInits are the packages whose init allocates heavyInitBytes or more for
// `harness --help`, each with who links it and why it stays. A package that
// is no longer heavy fails the test, so the list only shrinks.
var heavyInits = map[string]string{
	"github.com/alecthomas/chroma/v2/lexers":     "glamour (internal/tui) highlights code blocks with chroma; registering every lexer is chroma's init",
	"github.com/alecthomas/chroma/v2/styles":     "glamour, as above: chroma parses every embedded style in init",
	"github.com/santhosh-tekuri/jsonschema/v6":   "services/tools validates tool arguments; the library compiles the draft metaschemas in init",
	"github.com/microcosm-cc/bluemonday":         "plugins/web sanitises rendered markdown",
	"github.com/microcosm-cc/bluemonday/css":     "bluemonday's CSS property table",
	"github.com/gorilla/css/scanner":             "bluemonday's CSS scanner",
	"github.com/yuin/goldmark/extension":         "plugins/web and glamour render markdown with goldmark",
	"github.com/yuin/goldmark/util":              "goldmark, as above",
	"github.com/yuin/goldmark/parser":            "goldmark, as above",
	"charm.land/glamour/v2/internal/autolink":    "glamour's autolink patterns",
	"github.com/dlclark/regexp2/v2/syntax":       "services/tokenmeter's split patterns (regexp2 for lookaheads); the Unicode category tables",
	"github.com/google/jsonschema-go/jsonschema": "the MCP SDK (plugins/mcp) validates with it; its init reads the embedded metaschemas",
	"golang.org/x/net/html":                      "plugins/tool-web reads pages (html-to-markdown) and bluemonday parses HTML",
}

// neverHeavy are packages whose tables must be built on first use, never in
// init: naming one in heavyInits is a mistake the test reports.
var neverHeavy = []string{
	"github.com/dshgo/harness/",    // our own packages: tables on first use
	"github.com/tiktoken-go/",      // the tokenizer vocabularies (tokenmeter now embeds its own)
	"github.com/openai/openai-go/", // removed from the binary; must not come back
}

// initCost is one line of GODEBUG=inittrace=1:
// "init PKG @0.5 ms, 0.1 ms clock, 1234 bytes, 12 allocs".
type initCost struct {
	pkg           string
	bytes, allocs int
}

func parseInitTrace(out []byte) []initCost {
	var costs []initCost
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		b, err1 := strconv.Atoi(f[7])
		a, err2 := strconv.Atoi(f[9])
		if err1 == nil && err2 == nil {
			costs = append(costs, initCost{pkg: strings.ReplaceAll(f[1], "%2e", "."), bytes: b, allocs: a})
		}
	}
	return costs
}

// TestHelpRunsNoHeavyInit builds the binary as the README does and runs
// `harness --help` with GODEBUG=inittrace=1: no package outside heavyInits
// allocates heavyInitBytes or more in its init, none of neverHeavy does, and
// every package in heavyInits still does.
func TestHelpRunsNoHeavyInit(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "harness-inittrace")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd/harness").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(t.Context(), bin, "--help")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("harness --help: %v\n%s", err, stderr.Bytes())
	}
	costs := parseInitTrace(stderr.Bytes())
	if len(costs) < 50 {
		t.Fatalf("found %d inittrace lines in\n%s", len(costs), stderr.Bytes())
	}
	heavy := map[string]bool{}
	for _, c := range costs {
		if c.bytes < heavyInitBytes {
			continue
		}
		heavy[c.pkg] = true
		if _, known := heavyInits[c.pkg]; !known {
			t.Errorf("init %s allocates %d bytes in %d allocs before main: build its tables on first use, or name it in heavyInits with the reason", c.pkg, c.bytes, c.allocs)
		}
	}
	for pkg := range heavyInits {
		for _, p := range neverHeavy {
			if strings.HasPrefix(pkg, p) {
				t.Errorf("heavyInits names %s, whose tables must be built on first use", pkg)
			}
		}
		if !heavy[pkg] {
			t.Errorf("init %s no longer allocates %d bytes or more: remove it from heavyInits", pkg, heavyInitBytes)
		}
	}
}
