package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// isLive reports whether the sessions list shows session id open.
func (e *env) isLive(ws workspace, id string) bool {
	e.t.Helper()
	var list []struct {
		ID   string
		Live bool
	}
	e.must(http.StatusOK, "GET", "/api/workspaces/"+ws.ID+"/sessions", nil, &list)
	for _, s := range list {
		if s.ID == id {
			return s.Live
		}
	}
	return false
}

// waitClosed polls the sessions list until session id is no longer open
// (failing after patience).
func (e *env) waitClosed(ws workspace, id string) {
	e.t.Helper()
	for deadline := time.Now().Add(patience); e.isLive(ws, id); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			e.t.Fatalf("session %s is still open after %v", id, patience)
		}
	}
}

// TestIdleSessionsCloseAndReopen: with idleClose set, a session nobody
// watches and that runs nothing is closed, releasing its exclusive hold (the
// agent service can open it); a watched one stays open; reopening the
// closed one replays it and takes prompts. A session another holder has
// open shows read-only (replay, a readonly event, prompts refused with 409)
// and opens for input once it is released.
func TestIdleSessionsCloseAndReopen(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	e := startWith(t, []llmtest.Turn{
		llmtest.Reply("hi from B"),
		llmtest.Reply("B again"),
	}, func(modelURL, state string) string {
		return testManifest(modelURL, state, "default", "    config: {idleClose: 300ms}\n")
	})
	ws := e.workspace(repo)
	a, b := e.newSession(ws), e.newSession(ws)
	sa := e.stream(ws, a, "")
	sa.until("A's session event", isType("session"))

	sb := e.stream(ws, b, "")
	e.must(202, "POST", "/api/workspaces/"+ws.ID+"/sessions/"+b+"/prompt", map[string]string{"text": "hello"}, nil)
	sb.until("B's answer", isType("result"))
	sb.until("B idle", func(ev event) bool { return ev.Type == "busy" && !ev.Busy })
	sb.cancel() // nobody watches B now
	e.waitClosed(ws, b)
	if !e.isLive(ws, a) {
		t.Fatal("the watched session A was closed")
	}

	// The hold is released: another holder (here the agent service
	// itself, as another front end would) can open B.
	svc := harnesstest.Service(t, e.h, agent.Key)
	held, err := svc.Open(context.Background(), agent.Options{ID: b, Cwd: repo})
	if err != nil {
		t.Fatalf("B is still held after the idle close: %v", err)
	}
	ro := e.stream(ws, b, "")
	ev := ro.until("the read-only notice", isType("readonly"))
	if !strings.Contains(ev.Reason, "another process") {
		t.Fatalf("readonly reason %q", ev.Reason)
	}
	if !hasText(ro.seen, "hi from B") {
		t.Fatalf("the read-only view did not replay B: %v", types(ro.seen))
	}
	code, body := e.req("POST", "/api/workspaces/"+ws.ID+"/sessions/"+b+"/prompt", map[string]string{"text": "refused"})
	if code != http.StatusConflict || !strings.Contains(string(body), "read-only") {
		t.Fatalf("prompt on a read-only view: %d %s", code, body)
	}
	ro.cancel()
	if err := held.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	// Released, and nobody watches the read-only view: opening B again
	// resumes it for input.
	var again *stream
	for deadline := time.Now().Add(patience); ; time.Sleep(20 * time.Millisecond) {
		again = e.stream(ws, b, "")
		again.until("B's replayed session event", isType("session"))
		if code, _ := e.req("POST", "/api/workspaces/"+ws.ID+"/sessions/"+b+"/prompt", map[string]string{"text": "again"}); code == http.StatusAccepted {
			break
		}
		again.cancel()
		if time.Now().After(deadline) {
			t.Fatal("B did not open for input after its holder closed it")
		}
	}
	again.until("B's second answer", func(ev event) bool { return ev.Type == "result" && hasText(again.seen, "B again") })
}

// hasText reports whether an assistant message or text delta among evs
// contains s.
func hasText(evs []event, s string) bool {
	for _, ev := range evs {
		if strings.Contains(ev.Text, s) || (ev.Message != nil && strings.Contains(ev.Message.Content, s)) {
			return true
		}
	}
	return false
}
