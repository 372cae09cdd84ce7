package web_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"net/http"
	"net/http/httptest"

	"github.com/chromedp/chromedp"
	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/plugins/web"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/settings"
	"github.com/dshgo/harness/services/tools"
)

var updateShots = flag.Bool("screenshots", false, "write the browser tests' screenshots to docs/images/ (checked by a person)")

// chrome is the one headless Chromium (Debian package chromium) of this
// test binary: the first browser test starts it, TestMain stops it. Each
// browser test gets a BrowserContext of its own in it (its own cookies and
// storage: the tests' servers share the host 127.0.0.1, and cookies do not
// tell ports apart) with one tab, so the tests run in parallel and pay for
// one browser start.
var chrome struct {
	once sync.Once
	ctx  context.Context // the browser's first context; its tab stays idle
	stop func()
	err  error
}

// tabs caps the browser tests running at once: each one drives a page and
// a harness under -race, and more than two at once only crowd the CPUs
// they share.
var tabs = make(chan struct{}, 2)

// browserLife bounds one test's tab. Every step has its own bound
// (patience); this one only ends a tab that hangs.
const browserLife = 5 * time.Minute

// startChrome starts the shared browser at path.
func startChrome(path string) error {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // root in CI; the pages are our own
		chromedp.Flag("disable-gpu", true),
		chromedp.WindowSize(1280, 860),
		chromedp.Flag("harness-web-test", true), // a marker to find the processes by
	)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	chrome.ctx, chrome.stop = ctx, func() {
		_ = chromedp.Cancel(ctx) // closes the browser and waits for it to exit
		cancel()
		acancel()
	}
	// The first run starts the browser, which lives as long as ctx: bound
	// the start without a deadline on ctx.
	slow := time.AfterFunc(patience, cancel)
	defer slow.Stop()
	if err := chromedp.Do(ctx); err != nil {
		return fmt.Errorf("start chromium: %w", err)
	}
	return nil
}

// stopChrome stops the shared browser if a test started it.
func stopChrome() {
	if chrome.stop != nil {
		chrome.stop()
	}
}

// browser returns a new tab, in a BrowserContext of its own, of the shared
// headless Chromium, once fewer than cap(tabs) browser tests run. Without
// Chromium the test fails in CI (CI set) and is skipped elsewhere.
func browser(t testing.TB) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed: .ci/run installs the Debian package chromium (apt-get install -y chromium)")
		}
		t.Skip("chromium is not installed (apt-get install -y chromium); CI fails here instead")
	}
	chrome.once.Do(func() { chrome.err = startChrome(path) })
	if chrome.err != nil {
		t.Fatal(chrome.err)
	}
	tabs <- struct{}{}
	t.Cleanup(func() { <-tabs }) // registered first, so it runs after the tab has closed
	ctx, cancel := chromedp.NewContext(chrome.ctx, chromedp.WithNewBrowserContext())
	ctx, tcancel := context.WithTimeout(ctx, browserLife)
	t.Cleanup(func() {
		_ = chromedp.Cancel(ctx) // closes the tab and disposes of its BrowserContext
		tcancel()
		cancel()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return ctx
}

// shot saves a full-page screenshot as docs/images/NAME.png with
// -screenshots, else in the test's temp dir.
func shot(t testing.TB, name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		buf, err := chromedp.FullScreenshot(100)(ctx, tg)
		if err != nil {
			return err
		}
		dir := t.TempDir()
		if *updateShots {
			dir = filepath.Join("..", "..", "docs", "images")
		}
		return os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644)
	})
}

func run(t testing.TB, ctx context.Context, step string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, patience)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
		t.Fatalf("%s: %v\npage text:\n%s", step, err, body)
	}
}

// get runs one action returning a value.
func get[T any](t *testing.T, ctx context.Context, step string, a chromedp.Action[T]) T {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, patience)
	defer cancel()
	v, err := chromedp.Run(sctx, a)
	if err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
		t.Fatalf("%s: %v\npage text:\n%s", step, err, body)
	}
	return v
}

// TestBrowserWorkspacePromptApprovalReplay drives the page in headless
// Chromium: open it with the token, add a workspace, start a session, send
// a prompt, watch the answer stream and the tool card appear, approve the
// edit, find the file on disk, reload and see the session replayed.
func TestBrowserWorkspacePromptApprovalReplay(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("# demo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(repo, "notes.txt")
	args, _ := json.Marshal(map[string]string{"file_path": target, "content": "written from the browser\n"})
	e := start(t, []llmtest.Turn{
		llmtest.Calls(llmtest.Call{ID: "call-1", Name: "write", Args: string(args)}).WithReasoning("The user wants notes."),
		llmtest.Reply("I wrote notes.txt for you."),
	}, "default")

	run(t, ctx, "open the page with the token",
		chromedp.Navigate(e.srv.URL()),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`), chromedp.RetryInterval(2*time.Millisecond)))
	loc := get(t, ctx, "the location", chromedp.Location())
	if strings.Contains(loc, "token") {
		t.Fatalf("location %q still carries the token", loc)
	}
	run(t, ctx, "add the workspace",
		chromedp.SendKeys(chromedp.ID(`workspace-path`), repo),
		chromedp.Click(chromedp.CSS(`#add-workspace button`)),
		chromedp.WaitVisible(chromedp.CSS(`#workspaces li.selected`)),
		chromedp.WaitVisible(chromedp.CSS(`#files .entry`)),
	)
	run(t, ctx, "start a session",
		chromedp.Click(chromedp.ID(`new-session`)),
		chromedp.WaitVisible(chromedp.ID(`view-session`)),
		chromedp.WaitVisible(chromedp.CSS(`#sessions li.selected`)),
	)
	run(t, ctx, "send the prompt",
		chromedp.SendKeys(chromedp.ID(`prompt`), "write some notes"),
		chromedp.Click(chromedp.ID(`send`)),
		chromedp.WaitVisible(chromedp.CSS(`.tool[data-tool="write"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.approval .allow-once`)),
	)
	diff := get(t, ctx, "read the approval", chromedp.Text(chromedp.CSS(`.approval .diff`)))
	run(t, ctx, "screenshot", shot(t, "web-approval"))
	if !strings.Contains(diff, "+ written from the browser") || !strings.Contains(diff, "notes.txt") {
		t.Fatalf("approval diff %q", diff)
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("the file exists before the approval")
	}
	run(t, ctx, "approve once and wait for the answer",
		chromedp.Click(chromedp.CSS(`.approval .allow-once`)),
		chromedp.WaitVisible(chromedp.CSS(`.done-note[data-result="stop"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.tool[data-tool="write"] .result`)),
		shot(t, "web-session"),
	)
	answer := get(t, ctx, "the answer", chromedp.Text(chromedp.CSS(`.msg.assistant`)))
	if answer != "I wrote notes.txt for you." {
		t.Fatalf("answer %q", answer)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "written from the browser\n" {
		t.Fatalf("file %q %v", b, err)
	}

	run(t, ctx, "reload and open the session again",
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#sessions li`)),
		chromedp.Click(chromedp.CSS(`#sessions li`)),
		chromedp.WaitVisible(chromedp.CSS(`.done-note[data-result="stop"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.tool[data-tool="write"] .result`)),
	)
	replayed := get(t, ctx, "the replayed answer", chromedp.Text(chromedp.CSS(`.msg.assistant`)))
	reasoning := get(t, ctx, "the replayed reasoning", chromedp.Text(chromedp.CSS(`.msg.reasoning`)))
	approvals := get(t, ctx, "open approvals", chromedp.Evaluate[int](`document.querySelectorAll(".approval").length`))
	if replayed != "I wrote notes.txt for you." || reasoning != "The user wants notes." || approvals != 0 {
		t.Fatalf("replayed %q, reasoning %q, %d open approvals", replayed, reasoning, approvals)
	}
	run(t, ctx, "view the written file",
		chromedp.Click(chromedp.CSS(`#files .entry[data-path="notes.txt"]`)),
		chromedp.WaitVisible(chromedp.ID(`view-file`)),
	)
	shown := get(t, ctx, "read the file view", chromedp.TextContent(chromedp.ID(`file-text`)))
	if shown != "written from the browser\n" && shown != "written from the browser" {
		t.Fatalf("file view %q", shown)
	}
}

// TestBrowserSettingsCards changes settings on cards generated from the
// plugins' JSON Schemas: a bad value shows its field error, a good one
// hot-reloads the running plugin, and a secret typed in is never sent back.
func TestBrowserSettingsCards(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	e := start(t, nil, "default")
	file := filepath.Join(t.TempDir(), "settings.yml")
	e.srv.UseSettings(settings.New(e.h.Loader, settings.Options{File: file, Catalog: e.h.Catalog}))

	run(t, ctx, "open the settings page",
		chromedp.Navigate(e.srv.URL()),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`)),
		chromedp.Click(chromedp.ID(`nav-settings`)),
		chromedp.WaitVisible(chromedp.CSS(`.card[data-row="approval"] select[name="policy"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.card[data-row="tool-bash"] input[name="timeout"]`)),
		shot(t, "web-settings"),
	)
	run(t, ctx, "a bad duration",
		chromedp.SetValue(chromedp.CSS(`.card[data-row="tool-bash"] input[name="timeout"]`), "forever"),
		chromedp.Click(chromedp.CSS(`.card[data-row="tool-bash"] button.save`)),
		chromedp.WaitVisible(chromedp.CSS(`.card[data-row="tool-bash"] .field[data-field="timeout"] .field-error:not(:empty)`)),
	)
	msg := get(t, ctx, "the field error", chromedp.Text(chromedp.CSS(`.card[data-row="tool-bash"] .field[data-field="timeout"] .field-error`)))
	if !strings.HasPrefix(msg, "timeout:") || !strings.Contains(msg, "forever") {
		t.Fatalf("field error %q", msg)
	}
	if _, err := os.Stat(file); err == nil {
		t.Fatal("a refused change was saved")
	}
	run(t, ctx, "a good value",
		chromedp.SetValue(chromedp.CSS(`.card[data-row="approval"] select[name="policy"]`), "never"),
		chromedp.Click(chromedp.CSS(`.card[data-row="approval"] button.save`)),
		chromedp.WaitVisible(chromedp.CSS(`.card[data-row="approval"] .row .ok`)),
	)
	approver, _ := core.Lookup(e.h.Root.Context(), tools.ApprovalKey)
	if u := approver.(interface{ Unanswerable() string }).Unanswerable(); !strings.Contains(u, "never") {
		t.Fatalf("not hot-reloaded: %q", u)
	}
	const secret = "sk-typed-in-the-browser-0123456789"
	run(t, ctx, "a secret",
		chromedp.SendKeys(chromedp.CSS(`.card[data-row="test"] input[name="apiKey"]`), secret),
		chromedp.Click(chromedp.CSS(`.card[data-row="test"] button.save`)),
		chromedp.WaitVisible(chromedp.CSS(`.card[data-row="test"] .row .ok`)),
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`)),
		chromedp.Click(chromedp.ID(`nav-settings`)),
		chromedp.WaitVisible(chromedp.CSS(`.card[data-row="test"] input[name="apiKey"][placeholder="set (write-only)"]`)),
	)
	html := get(t, ctx, "the page", chromedp.Evaluate[string](`document.documentElement.outerHTML + [...document.querySelectorAll("input")].map(i => i.value).join(" ")`))
	if strings.Contains(html, secret) {
		t.Fatal("the secret came back to the page")
	}
	if raw, _ := os.ReadFile(file); !strings.Contains(string(raw), secret) {
		t.Fatalf("the secret was not saved:\n%s", raw)
	}
}

// pageTiming describes the page's load from the browser's Performance
// API: the navigation (redirect, response, DOMContentLoaded), every
// resource fetched (path, start and end in ms, bytes) and when the app
// was ready (its "harness-ready" mark).
const pageTiming = `(() => {
  const n = performance.getEntriesByType("navigation")[0];
  const r = (x) => Math.round(x);
  return JSON.stringify({redirect: r(n.redirectEnd - n.redirectStart), html: [r(n.requestStart), r(n.responseEnd), n.transferSize],
    domContentLoaded: r(n.domContentLoadedEventEnd), ready: r(performance.getEntriesByName("harness-ready")[0].startTime),
    fetched: performance.getEntriesByType("resource").map((e) => [e.name.replace(location.origin, ""), r(e.startTime), r(e.responseEnd), e.transferSize])});
})()`

// BenchmarkPageLoad measures page load to interactive from a cold server:
// each iteration starts a new harness with the web plugin (not timed), then
// times navigating to its URL with the token (the cookie exchange and
// redirect included) until the app has loaded its boot data
// (body[data-ready]). The reference is a navigation to a one-line static
// page from a plain httptest server in the same browser. The last load's
// timing (what the page fetched, when) is logged.
//
//	go test ./plugins/web -run '^$' -bench PageLoad -benchtime 20x
func BenchmarkPageLoad(b *testing.B) {
	ctx := browser(b)
	b.Run("app", func(b *testing.B) {
		for i := range b.N {
			b.StopTimer()
			h := harnesstest.Start(b, "plugins:\n  - name: workspaces\n    config: {stateDir: "+b.TempDir()+"}\n  - name: web\n")
			srv := harnesstest.Service(b, h, web.Key)
			b.StartTimer()
			run(b, ctx, "load", chromedp.Navigate(srv.URL()), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`), chromedp.RetryInterval(2*time.Millisecond)))
			b.StopTimer()
			if i == b.N-1 { // what the page fetched on its way (not timed)
				timing, err := chromedp.Run(ctx, chromedp.Evaluate[string](pageTiming))
				if err != nil {
					b.Fatal(err)
				}
				b.Logf("last load: %s", timing)
			}
			_ = h.Stop(context.Background())
			b.StartTimer()
		}
	})
	b.Run("reference/static", func(b *testing.B) {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(`<!doctype html><body data-ready="1">ok</body>`))
		}))
		defer ts.Close()
		for range b.N {
			run(b, ctx, "load", chromedp.Navigate(ts.URL), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`), chromedp.RetryInterval(2*time.Millisecond)))
		}
	})
}
