package harness_test

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// module is this module's path: the prefix of every project import.
const module = "github.com/dshgo/harness"

// frontEnds are the packages that draw for a person (with their
// subpackages): they render what the agent's events carry and decode no
// tool plugin's data, so they import no tool plugin.
var frontEnds = []string{"internal/cli", "internal/tui", "internal/acp", "plugins/web"}

// layerExceptions are the imports the layering rules refuse but the tree
// keeps, each with its reason. An exception that no import uses any more
// fails the test, so the list only shrinks.
var layerExceptions = []struct{ from, to, reason string }{
	{"plugins/std", "plugins/", "std is the standard catalog: the composition root that lists the built-in plugins (harness.New, the CLI and configdoc import it)"},
	{"internal/cli/agente2e", "plugins/", "test support: lists the plugins the agent end-to-end binary adds to the catalog"},
}

// layerOf names the layer of a package path relative to the module ("" is
// the root package).
func layerOf(rel string) string {
	top, _, _ := strings.Cut(rel, "/")
	switch top {
	case "core", "services", "plugins", "internal":
		return top
	}
	return "root"
}

// under reports whether rel is pkg or one of its subpackages.
func under(rel, pkg string) bool {
	pkg = strings.TrimSuffix(pkg, "/")
	return rel == pkg || strings.HasPrefix(rel, pkg+"/")
}

// plugin returns the plugin rel belongs to ("plugins/NAME"), or "".
func plugin(rel string) string {
	parts := strings.SplitN(rel, "/", 3)
	if len(parts) < 2 || parts[0] != "plugins" {
		return ""
	}
	return parts[0] + "/" + parts[1]
}

// layerRule returns why the import from → to breaks the layering, or ""
// when it does not. Both are module-relative package paths.
func layerRule(from, to string) string {
	switch layerOf(from) {
	case "core":
		if layerOf(to) != "core" {
			return "core imports no project package outside core"
		}
	case "services":
		if l := layerOf(to); l != "core" && l != "services" {
			return "a service imports core and other services only"
		}
	case "plugins":
		if l := layerOf(to); l != "core" && l != "services" && l != "plugins" {
			return "a plugin imports core and services only"
		}
		if p := plugin(to); p != "" && p != plugin(from) {
			return "a plugin imports no other plugin (plugins are leaves)"
		}
	}
	for _, fe := range frontEnds {
		if under(from, fe) && strings.HasPrefix(to, "plugins/tool-") {
			return "a front end imports no tool plugin (it renders the agent's events)"
		}
	}
	return ""
}

// projectImports lists every package of the module with its non-test
// imports of project packages, module-relative, from `go list`.
func projectImports(t *testing.T) map[string][]string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("TestLayers needs the go command: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "list", "-e", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	rel := func(p string) (string, bool) {
		if p == module {
			return "", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	pkgs := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		from, ok := rel(fields[0])
		if !ok {
			continue
		}
		pkgs[from] = []string{}
		for _, imp := range fields[1:] {
			if to, ok := rel(imp); ok {
				pkgs[from] = append(pkgs[from], to)
			}
		}
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages: %s", len(pkgs), out)
	}
	return pkgs
}

// TestLayers keeps the layering of docs/architecture.md: core imports no
// project package; services import core and services; plugins import core
// and services, never another plugin; front ends import no tool plugin.
// Test files are not checked (a test may compose a whole harness).
func TestLayers(t *testing.T) {
	pkgs := projectImports(t)
	used := make([]bool, len(layerExceptions))
	froms := make([]string, 0, len(pkgs))
	for from := range pkgs {
		froms = append(froms, from)
	}
	slices.Sort(froms)
	for _, from := range froms {
		for _, to := range pkgs[from] {
			why := layerRule(from, to)
			if why == "" {
				continue
			}
			excepted := false
			for i, e := range layerExceptions {
				if from == e.from && strings.HasPrefix(to, e.to) {
					used[i], excepted = true, true
				}
			}
			if !excepted {
				t.Errorf("%s imports %s: %s", from, to, why)
			}
		}
	}
	for i, e := range layerExceptions {
		if !used[i] {
			t.Errorf("the layering exception %s → %s is no longer needed: remove it from layerExceptions", e.from, e.to)
		}
	}
}

// The rules themselves: each refuses what it should and allows the rest.
func TestLayerRule(t *testing.T) {
	for _, c := range []struct {
		from, to string
		refused  bool
	}{
		{"core/manifest", "core", false},
		{"core", "services/tools", true},
		{"core/loader", "plugins/std", true},
		{"services/agent", "services/tools", false},
		{"services/agent", "core", false},
		{"services/agent", "plugins/hooks", true},
		{"services/tools", "internal/tui", true},
		{"plugins/hooks", "services/agent", false},
		{"plugins/hooks/sub", "plugins/hooks", false},
		{"plugins/hooks", "plugins/approval", true},
		{"plugins/hooks", "internal/cli", true},
		{"internal/tui", "plugins/tool-fs", true},
		{"internal/cli/sub", "plugins/tool-bash", true},
		{"plugins/web", "plugins/tool-todo", true},
		{"internal/cli", "plugins/web", false},
		{"internal/configdoc", "plugins/std", false},
		{"", "plugins/std", false},
	} {
		if got := layerRule(c.from, c.to) != ""; got != c.refused {
			t.Errorf("%s → %s: refused %v, want %v", c.from, c.to, got, c.refused)
		}
	}
}
