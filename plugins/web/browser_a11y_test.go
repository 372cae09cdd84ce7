package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/settings"
)

// axeSource is axe-core's browser bundle from testdata/npm (installed by
// .ci/run with npm ci). In CI a missing package fails the test; elsewhere
// it skips with the command that installs it.
func axeSource(t *testing.T) string {
	t.Helper()
	src, msg := axeBundle()
	if msg != "" {
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return src
}

// axeBundle reads axe-core's bundle, or says why it cannot.
func axeBundle() (src, problem string) {
	b, err := os.ReadFile(filepath.Join("testdata", "npm", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		return "", fmt.Sprintf("axe-core is not installed (%v): run `npm ci --prefix plugins/web/testdata/npm`", err)
	}
	return string(b), ""
}

// axeCheck runs axe-core in a step of another test (that test goes on
// without it where axe-core is not installed, except in CI) and reports
// each serious or critical violation as an error.
func axeCheck(t *testing.T, ctx context.Context, when string) {
	t.Helper()
	src, msg := axeBundle()
	if msg != "" {
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Log(msg)
		return
	}
	for _, v := range axeRun(t, ctx, src, when) {
		t.Errorf("%s: axe-core: %s (%s): %s\n    %s", when, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n    "))
	}
}

// axeViolation is one rule axe-core found broken, with where.
type axeViolation struct {
	ID, Impact, Help string
	Nodes            []string
}

// axeRun injects axe-core into the page (unless it is there) and returns
// its violations of impact serious or critical.
func axeRun(t *testing.T, ctx context.Context, src, when string) []axeViolation {
	t.Helper()
	run(t, ctx, when+": inject axe-core", void(chromedp.Evaluate[bool](`(() => { if (!window.axe) { `+src+`
} return true; })()`)))
	out := get(t, ctx, when+": run axe-core", chromedp.Evaluate[string](`axe.run(document, {resultTypes: ["violations"]}).then((r) => JSON.stringify(
  r.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" ") + ": " + (n.failureSummary || "").replace(/\s+/g, " "))}))))`, chromedp.EvalAwaitPromise))
	var vs []axeViolation
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		t.Fatalf("%s: axe-core's answer %q: %v", when, out, err)
	}
	return vs
}

// TestBrowserAccessibility runs axe-core in the main page (a session with
// an answer, a tool card, an approval and the changes panel open) and on
// the settings page and the shortcuts dialog, in light and in dark mode, and fails on any
// violation of impact serious or critical, printing each.
func TestBrowserAccessibility(t *testing.T) {
	t.Parallel()
	src := axeSource(t)
	ctx := browser(t)
	repo := t.TempDir()
	write, _ := json.Marshal(map[string]string{"file_path": filepath.Join(repo, "a.txt"), "content": "alpha\n"})
	e := start(t, []llmtest.Turn{
		llmtest.Calls(llmtest.Call{ID: "w", Name: "write", Args: string(write)}).WithReasoning("Write a file."),
		llmtest.Reply("Done: **a.txt** has one line.\n\n```go\nfmt.Println(1)\n```\n\n- one\n- two"),
	}, "default")
	e.srv.UseSettings(settings.New(e.h.Loader, settings.Options{File: filepath.Join(t.TempDir(), "settings.yml"), Catalog: e.h.Catalog}))
	run(t, ctx, "open the page, add the workspace, start a session, send",
		chromedp.Navigate(e.srv.URL()),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`)),
		chromedp.SetValue(chromedp.ID(`workspace-path`), repo),
		chromedp.Click(chromedp.CSS(`#add-workspace button`)),
		chromedp.WaitReady(chromedp.CSS(`#workspaces li.selected`)),
		chromedp.Click(chromedp.ID(`new-session`)),
		chromedp.WaitVisible(chromedp.ID(`view-session`)),
		chromedp.SetValue(chromedp.ID(`prompt`), "write a file"),
		chromedp.Click(chromedp.ID(`send`)),
		chromedp.WaitVisible(chromedp.CSS(`.approval .allow-once`)),
	)
	var found []string
	report := func(when string, vs []axeViolation) {
		for _, v := range vs {
			found = append(found, fmt.Sprintf("%s: %s (%s): %s\n    %s", when, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n    ")))
		}
	}
	for _, scheme := range []string{"light", "dark"} {
		run(t, ctx, scheme, colorScheme(scheme))
		report(scheme+", an approval open", axeRun(t, ctx, src, scheme+", an approval open"))
	}
	run(t, ctx, "approve, wait for the answer, open the changes panel",
		colorScheme("light"),
		chromedp.Click(chromedp.CSS(`.approval .allow-once`)),
		chromedp.WaitVisible(chromedp.CSS(`.done-note[data-result="stop"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.msg.assistant.md`)),
		chromedp.Click(chromedp.ID(`toggle-changes`)),
		chromedp.WaitVisible(chromedp.ID(`changes-list`)),
	)
	for _, scheme := range []string{"light", "dark"} {
		run(t, ctx, scheme, colorScheme(scheme))
		report(scheme+", the session", axeRun(t, ctx, src, scheme+", the session"))
	}
	run(t, ctx, "the settings page", chromedp.Click(chromedp.ID(`nav-settings`)), chromedp.WaitVisible(chromedp.CSS(`#settings-cards .card`)))
	for _, scheme := range []string{"light", "dark"} {
		run(t, ctx, scheme, colorScheme(scheme))
		report(scheme+", settings", axeRun(t, ctx, src, scheme+", settings"))
	}
	run(t, ctx, "the shortcuts dialog", chromedp.Click(chromedp.ID(`show-shortcuts`)), chromedp.WaitVisible(chromedp.ID(`shortcuts-dialog`)))
	for _, scheme := range []string{"light", "dark"} {
		run(t, ctx, scheme, colorScheme(scheme))
		report(scheme+", the shortcuts", axeRun(t, ctx, src, scheme+", the shortcuts"))
	}
	if len(found) > 0 {
		t.Fatalf("axe-core found %d serious or critical violation(s):\n%s", len(found), strings.Join(found, "\n"))
	}
}
