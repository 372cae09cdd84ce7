package web_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// xssReply is a model's answer in markdown with HTML and links that would
// run script if they reached the page as markup.
const xssReply = "**outside** and `inline`\n\n" +
	"- `file`\n" +
	"- <script>window.__xss = 1</script>\n" +
	"- <img src=x onerror=\"window.__xss = 2\">\n" +
	"- [click me](javascript:window.__xss=3)\n" +
	"- <a href=\"javascript:window.__xss=4\">raw link</a>\n\n" +
	"<div onmouseover=\"window.__xss=5\">raw block</div>\n\n" +
	"<iframe src=\"javascript:window.__xss=6\"></iframe>\n"

// TestBrowserMarkdownSanitized: an assistant message is shown as rendered
// markdown (bold, code, a list), live and replayed after a reload; the
// HTML the model wrote reaches the page as text, javascript: links lose
// their target, and no script runs.
func TestBrowserMarkdownSanitized(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	e := start(t, []llmtest.Turn{llmtest.Reply(xssReply)}, "default")
	repo := t.TempDir()
	run(t, ctx, "open the page, add the workspace, start a session",
		chromedp.Navigate(e.srv.URL()),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`), chromedp.RetryInterval(2*time.Millisecond)),
		chromedp.SendKeys(chromedp.ID(`workspace-path`), repo),
		chromedp.Click(chromedp.CSS(`#add-workspace button`)),
		chromedp.WaitVisible(chromedp.CSS(`#workspaces li.selected`)),
	)
	if hint := get(t, ctx, "the empty pane", chromedp.Text(chromedp.ID(`view-empty`))); strings.Contains(hint, "Add or pick a workspace") || !strings.Contains(hint, "Start a new session") {
		t.Errorf("empty pane with a workspace selected: %q", hint)
	}
	run(t, ctx, "run the turn",
		chromedp.Click(chromedp.ID(`new-session`)),
		chromedp.WaitVisible(chromedp.CSS(`#sessions li.selected`)),
		chromedp.SendKeys(chromedp.ID(`prompt`), "answer in markdown"),
		chromedp.Click(chromedp.ID(`send`)),
		chromedp.WaitVisible(chromedp.CSS(`.done-note[data-result="stop"]`)),
	)
	check := func(when string) {
		t.Helper()
		run(t, ctx, when+": wait for the rendering", chromedp.WaitVisible(chromedp.CSS(`.msg.assistant.md strong`)))
		var page struct {
			Strong, Code string
			Dangerous    int
			Hrefs        []string
			Text         string
			XSS          string
		}
		raw := get(t, ctx, when+": inspect the message", chromedp.Evaluate[string](`(() => {
  const m = document.querySelector(".msg.assistant");
  return JSON.stringify({
    strong: m.querySelector("strong")?.textContent ?? "",
    code: m.querySelector("li code")?.textContent ?? "",
    dangerous: m.querySelectorAll("script, img, iframe, div, [onerror], [onmouseover], [onclick]").length,
    hrefs: [...m.querySelectorAll("a")].map((a) => a.getAttribute("href") ?? ""),
    text: m.textContent,
    xss: typeof window.__xss,
  });
})()`))
		if err := json.Unmarshal([]byte(raw), &page); err != nil {
			t.Fatal(err)
		}
		if page.Strong != "outside" || page.Code != "file" {
			t.Errorf("%s: markdown not rendered: strong %q, list code %q", when, page.Strong, page.Code)
		}
		if page.Dangerous != 0 || page.XSS != "undefined" {
			t.Errorf("%s: %d dangerous elements, window.__xss is %s", when, page.Dangerous, page.XSS)
		}
		for _, h := range page.Hrefs {
			if strings.Contains(strings.ToLower(h), "javascript") {
				t.Errorf("%s: a link to %q", when, h)
			}
		}
		for _, want := range []string{"<script>window.__xss = 1</script>", `<img src=x onerror="window.__xss = 2">`, "click me", "raw link", `<div onmouseover="window.__xss=5">raw block</div>`, "<iframe"} {
			if !strings.Contains(page.Text, want) {
				t.Errorf("%s: the text %q is lost from %q", when, want, page.Text)
			}
		}
	}
	run(t, ctx, "hover everything", void(chromedp.Evaluate[bool](`[...document.querySelectorAll(".msg.assistant *")].forEach((n) => n.dispatchEvent(new MouseEvent("mouseover", {bubbles: true}))), true`)))
	check("live")
	run(t, ctx, "screenshot", shot(t, "web-markdown"))
	run(t, ctx, "reload and open the session again",
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#sessions li`)),
		chromedp.Click(chromedp.CSS(`#sessions li`)),
		chromedp.WaitVisible(chromedp.CSS(`.done-note[data-result="stop"]`)),
	)
	check("replayed")
	turns := get(t, ctx, "the session's line", chromedp.Text(chromedp.CSS(`#sessions li small`)))
	done := get(t, ctx, "the turn's note", chromedp.Text(chromedp.CSS(`.done-note[data-result="stop"]`)))
	if !strings.HasPrefix(turns, "1 turn ·") || done != "done in 1 step" {
		t.Errorf("wording: session %q, note %q", turns, done)
	}
}

// TestBrowserToolCardsLiveAndFooter: tool cards drawn as the TUI draws
// them, from the presentations only: a write shows its diff and summary
// (never the model-facing result text), a failed read is failed with its
// reason, a running command shows its output so far and an advancing
// timer; the footer shows the model, context use, tokens and cost from
// the usage events.
func TestBrowserToolCardsLiveAndFooter(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	repo := t.TempDir()
	target := filepath.Join(repo, "notes.txt")
	write, _ := json.Marshal(map[string]string{"file_path": target, "content": "alpha\nbeta\n"})
	read, _ := json.Marshal(map[string]string{"file_path": filepath.Join(repo, "missing.txt")})
	u := llmtest.Usage{PromptTokens: 5000, CompletionTokens: 10, TotalTokens: 5010}
	e := startWith(t, []llmtest.Turn{
		llmtest.Calls(llmtest.Call{ID: "w", Name: "write", Args: string(write)}, llmtest.Call{ID: "r", Name: "read", Args: string(read)}).WithUsage(u),
		llmtest.Calls(llmtest.Call{ID: "live", Name: "bash", Args: `{"command":"for i in 1 2 3 4 5 6 7 8 9 10; do echo line$i; sleep 0.5; done"}`}).WithUsage(u),
		llmtest.Reply("done").WithUsage(u),
	}, func(modelURL, state string) string {
		m := testManifest(modelURL, state, "bypass", "")
		return strings.Replace(m, "contextWindow: 1048576}", "contextWindow: 20000, prices: {cacheMiss: 2, output: 8}}", 1)
	})
	run(t, ctx, "open the page, add the workspace, start a session, send",
		chromedp.Navigate(e.srv.URL()),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`), chromedp.RetryInterval(2*time.Millisecond)),
		chromedp.SendKeys(chromedp.ID(`workspace-path`), repo),
		chromedp.Click(chromedp.CSS(`#add-workspace button`)),
		chromedp.WaitVisible(chromedp.CSS(`#workspaces li.selected`)),
		chromedp.Click(chromedp.ID(`new-session`)),
		chromedp.WaitVisible(chromedp.CSS(`#sessions li.selected`)),
		chromedp.SendKeys(chromedp.ID(`prompt`), "write, read, run"),
		chromedp.Click(chromedp.ID(`send`)),
	)
	const live = `.tool[data-call="live"]`
	run(t, ctx, "the running command's output and timer",
		void(chromedp.Poll[bool](`(() => {
  const c = document.querySelector('`+live+`');
  if (!c || !c.classList.contains("running")) return false;
  const out = c.querySelector(".live")?.textContent ?? "";
  const when = c.querySelector(".when")?.textContent ?? "";
  return out.includes("line2") && /^running \d+\.\ds/.test(when);
})()`)),
		shot(t, "web-tool-running"),
	)
	run(t, ctx, "the turn ends", chromedp.WaitVisible(chromedp.CSS(`.done-note[data-result="stop"]`)))
	card := func(id string) (head, when, status, body string, failed bool) {
		t.Helper()
		sel := `.tool[data-call="` + id + `"]`
		head = get(t, ctx, "head of "+id, chromedp.Text(chromedp.CSS(sel+` > .head`)))
		when = get(t, ctx, "time of "+id, chromedp.Text(chromedp.CSS(sel+` > .when`)))
		status = get(t, ctx, "status of "+id, chromedp.Text(chromedp.CSS(sel+` > .status`)))
		body = get(t, ctx, "text of "+id, chromedp.Evaluate[string](`document.querySelector('`+sel+`').textContent`))
		failed = get(t, ctx, "class of "+id, chromedp.Evaluate[bool](`document.querySelector('`+sel+`').classList.contains("error")`))
		return
	}
	head, when, status, body, failed := card("w")
	if !strings.HasPrefix(head, "write ") || !strings.HasSuffix(head, "notes.txt") || failed || !strings.HasPrefix(status, "✓") ||
		!strings.Contains(body, "+ alpha") || !strings.Contains(body, "+ beta") || strings.Contains(body, "<path>") || strings.Contains(body, "</content>") ||
		strings.HasPrefix(when, "running") {
		t.Errorf("write card: head %q, time %q, status %q, failed %v, text %q", head, when, status, failed, body)
	}
	head, when, status, body, failed = card("r")
	if !failed || !strings.HasPrefix(status, "✗ failed: ") || !strings.HasPrefix(when, "failed") || strings.Contains(body, "✓") {
		t.Errorf("failed read card: head %q, time %q, status %q, failed %v, text %q", head, when, status, failed, body)
	}
	head, when, status, body, failed = card("live")
	if failed || !strings.HasPrefix(status, "✓") || !strings.Contains(body, "line10") || strings.HasPrefix(when, "running") {
		t.Errorf("command card: head %q, time %q, status %q, failed %v, text %q", head, when, status, failed, body)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "alpha\nbeta\n" {
		t.Fatalf("file %q %v", b, err)
	}
	footer := get(t, ctx, "the footer", chromedp.Text(chromedp.ID(`usage`)))
	// 3 steps of 5000 in and 10 out: 15000 in, 30 out; the context is the
	// token meter's projection (as /context): the last request's 5000
	// tokens and the reply's few, of 20000; $ (15000×2 + 30×8)/1M.
	for _, want := range []string{"test/m1", "ctx 25.0%", "15.0k in · 30 out", "$0.0302"} {
		if !strings.Contains(footer, want) {
			t.Errorf("footer %q lacks %q", footer, want)
		}
	}
	if strings.Contains(footer, "0 in · 0 out") {
		t.Errorf("footer %q", footer)
	}
}

// void is action a with its value dropped.
func void[T any](a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := a(ctx, tg)
		return err
	})
}

// TestBrowserBudgetWarning: under the agent row's budget of 6000 tokens a
// reply that reports 5010 shows the 80% warning beside the footer and as
// a notice; the next prompt's call would pass the cap: it is not sent, the
// footer says exceeded and the turn ends with reason budget.
func TestBrowserBudgetWarning(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	repo := t.TempDir()
	u := llmtest.Usage{PromptTokens: 5000, CompletionTokens: 10, TotalTokens: 5010}
	e := startWith(t, []llmtest.Turn{llmtest.Reply("first answer").WithUsage(u), llmtest.Reply("never sent")}, func(modelURL, state string) string {
		return strings.Replace(testManifest(modelURL, state, "bypass", ""), "config: {model: test}", "config: {model: test, budget: {maxTokens: 6000}}", 1)
	})
	run(t, ctx, "open the page, add the workspace, start a session, send",
		chromedp.Navigate(e.srv.URL()),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`), chromedp.RetryInterval(2*time.Millisecond)),
		chromedp.SendKeys(chromedp.ID(`workspace-path`), repo),
		chromedp.Click(chromedp.CSS(`#add-workspace button`)),
		chromedp.WaitVisible(chromedp.CSS(`#workspaces li.selected`)),
		chromedp.Click(chromedp.ID(`new-session`)),
		chromedp.WaitVisible(chromedp.CSS(`#sessions li.selected`)),
		chromedp.SendKeys(chromedp.ID(`prompt`), "first"),
		chromedp.Click(chromedp.ID(`send`)),
		chromedp.WaitVisible(chromedp.CSS(`.done-note[data-result="stop"]`)),
		chromedp.WaitVisible(chromedp.ID(`budget`)),
	)
	if w := get(t, ctx, "the warning", chromedp.Text(chromedp.ID(`budget`))); w != "⚠ budget 83% tokens" {
		t.Errorf("budget warning %q", w)
	}
	notes := get(t, ctx, "the notices", chromedp.Evaluate[string](`[...document.querySelectorAll('.notice')].map(n => n.textContent).join("\n")`))
	if !strings.Contains(notes, "budget 83% used: 5010 of 6000 tokens (maxTokens)") {
		t.Errorf("notices %q", notes)
	}
	run(t, ctx, "the next prompt",
		chromedp.SendKeys(chromedp.ID(`prompt`), "second"),
		chromedp.Click(chromedp.ID(`send`)),
		chromedp.WaitVisible(chromedp.CSS(`.done-note[data-result="budget"]`)),
		shot(t, "web-budget-exceeded"),
	)
	if w := get(t, ctx, "the stop", chromedp.Text(chromedp.ID(`budget`))); w != "⚠ budget exceeded (tokens)" {
		t.Errorf("budget stop %q", w)
	}
	if n := len(e.model.Requests()); n != 1 {
		t.Fatalf("%d model requests, want 1", n)
	}
}
