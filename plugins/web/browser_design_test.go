package web_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/settings"
)

// colorScheme emulates the system setting prefers-color-scheme (light or
// dark) for the tab.
func colorScheme(value string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: value}}})
		return err
	})
}

// luminance is the relative luminance (WCAG) of an element's computed
// colour property, in the page.
const luminance = `((sel, prop) => {
  const m = getComputedStyle(document.querySelector(sel))[prop].match(/[\d.]+/g).map(Number);
  const c = m.slice(0, 3).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
})`

// openSessionWith opens the page at e, adds repo as a workspace, starts a
// session and sends prompt, waiting for the turn to end.
func openSessionWith(t *testing.T, ctx context.Context, e *env, repo, prompt string) {
	t.Helper()
	run(t, ctx, "open the page, add the workspace, start a session, send",
		chromedp.Navigate(e.srv.URL()),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`)),
		chromedp.SetValue(chromedp.ID(`workspace-path`), repo),
		chromedp.Click(chromedp.CSS(`#add-workspace button`)),
		chromedp.WaitReady(chromedp.CSS(`#workspaces li.selected`)),
		chromedp.Click(chromedp.ID(`new-session`)),
		chromedp.WaitVisible(chromedp.ID(`view-session`)),
		chromedp.SetValue(chromedp.ID(`prompt`), prompt),
		chromedp.Click(chromedp.ID(`send`)),
		chromedp.WaitVisible(chromedp.CSS(`.done-note[data-result="stop"]`)),
	)
}

// TestBrowserNarrowLayout: at 400×800 the page has no horizontal scroll
// (with a long prompt, a wide code block and a table, a tool card, the
// changes panel open, the settings page); the sidebar collapses behind
// the Menu button, which opens it.
func TestBrowserNarrowLayout(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	repo := t.TempDir()
	write, _ := json.Marshal(map[string]string{"file_path": filepath.Join(repo, "wide.txt"), "content": strings.Repeat("w", 300) + "\n"})
	reply := "A wide answer:\n\n```\n" + strings.Repeat("code ", 60) + "\n```\n\n| " + strings.Repeat("column | ", 12) + "\n|" + strings.Repeat("---|", 12) + "\n| " + strings.Repeat("cell | ", 12) + "\n\n" + strings.Repeat("x", 200)
	e := start(t, []llmtest.Turn{
		llmtest.Calls(llmtest.Call{ID: "w", Name: "write", Args: string(write)}),
		llmtest.Reply(reply),
	}, "bypass")
	e.srv.UseSettings(settings.New(e.h.Loader, settings.Options{File: filepath.Join(t.TempDir(), "settings.yml"), Catalog: e.h.Catalog}))
	run(t, ctx, "a 400×800 window", chromedp.EmulateViewport(400, 800))
	openSessionWith(t, ctx, e, repo, strings.Repeat("long-prompt-", 40))
	scroll := `document.documentElement.scrollWidth`
	check := func(when string) {
		t.Helper()
		if w := get(t, ctx, when+": the page's width", chromedp.Evaluate[int](scroll)); w > 400 {
			wide := get(t, ctx, "the widest elements", chromedp.Evaluate[[]string](`[...document.querySelectorAll("body *")].filter((n) => n.getBoundingClientRect().right > 400.5).slice(0, 8).map((n) => n.tagName + "#" + n.id + "." + n.className + " " + Math.round(n.getBoundingClientRect().right))`))
			t.Errorf("%s: scrollWidth %d > 400; past the edge: %q", when, w, wide)
		}
	}
	check("the session")
	if vis := get(t, ctx, "the sidebar's sections", chromedp.Evaluate[bool](`document.getElementById("workspaces").checkVisibility()`)); vis {
		t.Error("at 400 px the workspaces list shows before the Menu button opens it")
	}
	run(t, ctx, "open the menu", chromedp.Click(chromedp.ID(`nav-toggle`)), chromedp.WaitVisible(chromedp.ID(`workspaces`)))
	check("the menu open")
	run(t, ctx, "the changes panel", chromedp.Click(chromedp.ID(`toggle-changes`)), chromedp.WaitVisible(chromedp.ID(`changes-list`)))
	check("the changes panel")
	run(t, ctx, "screenshot", shot(t, "web-narrow"))
	run(t, ctx, "the settings page", chromedp.Click(chromedp.ID(`nav-settings`)), chromedp.WaitVisible(chromedp.CSS(`#settings-cards .card`)))
	check("the settings page")
}

// TestBrowserDarkMode: with the system in dark mode the page is dark
// (the body's background), its text light, and buttons and inputs take
// the design's colours, not the system's defaults; in light mode the
// same page is light.
func TestBrowserDarkMode(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	repo := t.TempDir()
	e := start(t, []llmtest.Turn{llmtest.Reply("Hello in the **dark**.")}, "default")
	run(t, ctx, "dark mode", colorScheme("dark"))
	openSessionWith(t, ctx, e, repo, "hello")
	bg := get(t, ctx, "the body's background", chromedp.Evaluate[float64](luminance+`("body", "backgroundColor")`))
	fg := get(t, ctx, "the body's text", chromedp.Evaluate[float64](luminance+`("body", "color")`))
	button := get(t, ctx, "a button's background", chromedp.Evaluate[float64](luminance+`("#fork-session", "backgroundColor")`))
	input := get(t, ctx, "the prompt's background", chromedp.Evaluate[float64](luminance+`("#prompt", "backgroundColor")`))
	if bg > 0.05 || fg < 0.6 || button > 0.1 || input > 0.1 {
		t.Errorf("dark mode: luminance of the background %.3f, text %.3f, a button %.3f, the prompt %.3f (want a dark page with light text)", bg, fg, button, input)
	}
	if ratio := (fg + 0.05) / (bg + 0.05); ratio < 4.5 {
		t.Errorf("dark mode: text contrast %.2f:1, want at least 4.5:1", ratio)
	}
	run(t, ctx, "screenshot", shot(t, "web-dark"))
	run(t, ctx, "light mode", colorScheme("light"))
	if bg := get(t, ctx, "the light background", chromedp.Evaluate[float64](luminance+`("body", "backgroundColor")`)); bg < 0.8 {
		t.Errorf("light mode: background luminance %.3f, want a light page", bg)
	}
}
