package web_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/chromedp/chromedp"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/plugins/web"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/settings"
)

// TestBrowserSubagentChild: a parent that calls task shows the child's
// card in the conversation; opening the child while it runs shows its
// session read-only (no input) with its answer arriving live; the card
// settles with the child's answer and usage; the sidebar lists the child
// under its parent.
func TestBrowserSubagentChild(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	repo := t.TempDir()
	gate := make(chan struct{})
	e := startModel(t, delegation(t, gate), func(modelURL, state string) string {
		return testManifest(modelURL, state, "bypass", subagentRows(state))
	})
	e.workspace(repo)
	run(t, ctx, "open the page and start a session",
		chromedp.Navigate(e.srv.URL()),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`)),
		chromedp.Click(chromedp.ID(`new-session`)),
		chromedp.WaitVisible(chromedp.CSS(`#sessions li.selected`)),
	)
	parent := get(t, ctx, "the parent's id", chromedp.Evaluate[string](`document.querySelector("#sessions li.selected").dataset.id`))
	run(t, ctx, "delegate: the child's card appears while it runs",
		chromedp.SendKeys(chromedp.ID(`prompt`), "delegate the count"),
		chromedp.Click(chromedp.ID(`send`)),
		chromedp.WaitVisible(chromedp.CSS(`.subagent[data-state="running"] .open-child`)),
	)
	child := get(t, ctx, "the child's id", chromedp.Evaluate[string](`document.querySelector(".subagent").dataset.child`))
	run(t, ctx, "open the running child",
		chromedp.Click(chromedp.CSS(`.subagent .open-child`)),
		chromedp.WaitVisible(chromedp.ID(`readonly`)),
	)
	if formShown := get(t, ctx, "the prompt form", chromedp.Evaluate[bool](`!document.getElementById("prompt-form").hidden`)); formShown {
		t.Fatal("the child's session takes input")
	}
	close(gate)
	run(t, ctx, "the child's answer arrives live",
		chromedp.WaitVisible(chromedp.CSS(`.done-note[data-result="stop"]`)),
	)
	if a := get(t, ctx, "the child's answer", chromedp.Text(chromedp.CSS(`.msg.assistant`))); a != "There are 3 files." {
		t.Fatalf("child answer %q", a)
	}
	run(t, ctx, "back to the parent: the card settled, the child listed under it",
		chromedp.WaitVisible(chromedp.CSS(`#sessions li[data-id="`+parent+`"]`)),
		chromedp.Click(chromedp.CSS(`#sessions li[data-id="`+parent+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.subagent[data-state="completed"] .usage`)),
		chromedp.WaitVisible(chromedp.CSS(`.done-note[data-result="stop"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#sessions li.child[data-id="`+child+`"][data-parent="`+parent+`"]`)),
		shot(t, "web-subagent"),
	)
	card := get(t, ctx, "the card", chromedp.Text(chromedp.CSS(`.subagent`)))
	if !strings.Contains(card, "count files") || !strings.Contains(card, "There are 3 files.") || !strings.Contains(card, "tokens:") {
		t.Fatalf("card %q", card)
	}
	if form := get(t, ctx, "the parent's prompt form", chromedp.Evaluate[bool](`!document.getElementById("prompt-form").hidden`)); !form {
		t.Fatal("the parent's input stayed hidden")
	}
	run(t, ctx, "open the settled child from the sidebar",
		chromedp.Click(chromedp.CSS(`#sessions li.child[data-id="`+child+`"]`)),
		chromedp.WaitVisible(chromedp.ID(`readonly`)),
		chromedp.WaitVisible(chromedp.CSS(`.msg.assistant`)),
	)
}

// slotAssets are the ES modules of the slots test plugin: one custom
// element per slot, each rendering the props the page documents.
var slotAssets = fstest.MapFS{
	"sidebar.js": {Data: []byte(`class T extends HTMLElement {
  connectedCallback() { this.textContent = "sidebar sees " + (this.workspace ? this.workspace.path : "no workspace"); }
}
customElements.define("slottest-sidebar", T);`)},
	"header.js": {Data: []byte(`class T extends HTMLElement {
  connectedCallback() {
    this.seen = this.events.length;
    this.render();
    this.addEventListener("event", (ev) => { this.seen++; this.last = ev.detail.type; this.render(); });
  }
  render() { this.textContent = "header of " + this.sessionId + ": " + this.seen + " events, last " + (this.last || "none"); this.dataset.last = this.last || ""; }
}
customElements.define("slottest-header", T);`)},
	"card.js": {Data: []byte(`class T extends HTMLElement {
  connectedCallback() {
    const input = document.createElement("input");
    input.name = "greeting";
    input.value = this.values.greeting || "";
    const button = document.createElement("button");
    button.textContent = "Save greeting";
    button.className = "own-save";
    const out = document.createElement("span");
    out.className = "own-status";
    button.onclick = async () => {
      try { const r = await this.save({ greeting: input.value }); out.textContent = r.applied ? "applied" : "saved"; }
      catch (e) { out.textContent = "error " + e.message; }
    };
    const title = document.createElement("strong");
    title.textContent = "own card of " + this.plugin + " (row " + this.id + ", schema has greeting: " + !!(this.schema.properties && this.schema.properties.greeting) + ")";
    this.append(title, input, button, out);
  }
}
customElements.define("slottest-card", T);`)},
}

type slotConfig struct {
	Greeting string `yaml:"greeting" json:"greeting,omitempty" jsonschema:"description=What the test plugin says"`
}

// slotPlugin puts a component into the sidebar, session.header and
// settings.plugin.item slots (the last one replacing its own card), and
// stores the greeting it runs with in greeting.
func slotPlugin(greeting *atomic.Value) core.Plugin {
	return core.Define("slottest", func(c *core.Context, cfg slotConfig) error {
		greeting.Store(cfg.Greeting)
		return addSlotComponents(c)
	}, core.WithInject(web.Key.Name()))
}

// addSlotComponents adds the slots test plugin's three components.
func addSlotComponents(c *core.Context) error {
	for _, comp := range []web.Component{
		{Slot: web.SlotSidebar, Element: "slottest-sidebar", Module: "sidebar.js"},
		{Slot: web.SlotSessionHeader, Element: "slottest-header", Module: "header.js"},
		{Slot: web.SlotSettingsPluginItem, Plugin: "slottest", Element: "slottest-card", Module: "card.js"},
	} {
		if err := web.AddComponent(c, "slottest", slotAssets, comp); err != nil {
			return err
		}
	}
	return nil
}

// TestBrowserSlots: components a plugin put into the sidebar,
// session.header and settings.plugin.item slots are mounted by the page
// with their documented props: the sidebar one gets the selected
// workspace, the header one the session id, the events so far and an
// "event" DOM event per new one, and the settings one replaces the
// plugin's generated card and saves through save(values), hot-reloading
// the plugin.
func TestBrowserSlots(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	repo := t.TempDir()
	var greeting atomic.Value
	e := startWith(t, []llmtest.Turn{llmtest.Reply("Hello, slots.")}, func(modelURL, state string) string {
		return testManifest(modelURL, state, "default", "  - name: slottest\n    config: {greeting: hi}\n")
	}, harness.WithPlugins(slotPlugin(&greeting)))
	e.srv.UseSettings(settings.New(e.h.Loader, settings.Options{File: t.TempDir() + "/settings.yml", Catalog: e.h.Catalog}))
	run(t, ctx, "the sidebar component without a workspace",
		chromedp.Navigate(e.srv.URL()),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#slot-sidebar slottest-sidebar`)),
	)
	if s := get(t, ctx, "sidebar text", chromedp.Text(chromedp.CSS(`#slot-sidebar slottest-sidebar`))); s != "sidebar sees no workspace" {
		t.Fatalf("sidebar before a workspace: %q", s)
	}
	run(t, ctx, "the sidebar component with the workspace",
		chromedp.SendKeys(chromedp.ID(`workspace-path`), repo),
		chromedp.Click(chromedp.CSS(`#add-workspace button`)),
		chromedp.WaitVisible(chromedp.CSS(`#workspaces li.selected`)),
	)
	real := get(t, ctx, "the workspace path", chromedp.Evaluate[string](`document.querySelector("#workspaces li.selected small").textContent`))
	run(t, ctx, "sidebar follows the workspace",
		chromedp.WaitVisible(chromedp.CSS(`#slot-sidebar slottest-sidebar`)),
		discard(chromedp.Poll[bool](`document.querySelector("#slot-sidebar slottest-sidebar").textContent === "sidebar sees " + `+jsString(real), chromedp.WithPollingTimeout(patience))),
	)
	run(t, ctx, "the session header component",
		chromedp.Click(chromedp.ID(`new-session`)),
		chromedp.WaitVisible(chromedp.CSS(`#slot-session-header slottest-header`)),
		chromedp.SendKeys(chromedp.ID(`prompt`), "hello"),
		chromedp.Click(chromedp.ID(`send`)),
		chromedp.WaitVisible(chromedp.CSS(`.done-note[data-result="stop"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#slot-session-header slottest-header[data-last="busy"]`)),
	)
	id := get(t, ctx, "the session id", chromedp.Evaluate[string](`document.querySelector("#sessions li.selected").dataset.id`))
	header := get(t, ctx, "header text", chromedp.Text(chromedp.CSS(`#slot-session-header slottest-header`)))
	if !strings.HasPrefix(header, "header of "+id+": ") || strings.Contains(header, ": 0 events") {
		t.Fatalf("header %q (session %s)", header, id)
	}
	run(t, ctx, "the plugin's own settings card",
		chromedp.Click(chromedp.ID(`nav-settings`)),
		chromedp.WaitVisible(chromedp.CSS(`.card[data-row="slottest"] slottest-card input[name="greeting"]`)),
	)
	title := get(t, ctx, "own card title", chromedp.Text(chromedp.CSS(`.card[data-row="slottest"] slottest-card strong`)))
	generated := get(t, ctx, "generated parts", chromedp.Evaluate[int](`document.querySelectorAll('.card[data-row="slottest"] button.save').length`))
	value := get(t, ctx, "the value shown", chromedp.Evaluate[string](`document.querySelector('.card[data-row="slottest"] input[name="greeting"]').value`))
	if title != "own card of slottest (row slottest, schema has greeting: true)" || generated != 0 || value != "hi" {
		t.Fatalf("own card %q, %d generated save buttons, value %q", title, generated, value)
	}
	run(t, ctx, "save through the card",
		chromedp.SetValue(chromedp.CSS(`.card[data-row="slottest"] input[name="greeting"]`), "hello from my card"),
		chromedp.Click(chromedp.CSS(`.card[data-row="slottest"] .own-save`)),
		chromedp.WaitVisible(chromedp.CSS(`.card[data-row="slottest"] .own-status`)),
		discard(chromedp.Poll[bool](`document.querySelector('.card[data-row="slottest"] .own-status').textContent === "applied"`, chromedp.WithPollingTimeout(patience))),
	)
	if g := greeting.Load(); g != "hello from my card" {
		t.Fatalf("the plugin runs with greeting %q", g)
	}
}

// discard runs a and drops its value.
func discard[T any](a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := a(ctx, t)
		return err
	})
}

func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}
