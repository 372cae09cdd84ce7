package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// A session's requests only grow: across steps, turns and two resumes in
// new processes (--continue, then --session ID), with the working tree and
// the git status changed in between, every request starts with the bytes
// of the one before it, tools and messages, so a provider's prefix cache
// (DeepSeek's: a hit costs 1/50 of a miss) matches all of it. The test
// reports the share of each request's bytes that is the previous one.
func TestPromptPrefixOnlyGrowsAcrossResumes(t *testing.T) {
	t.Parallel()
	needTools(t, "git", "bwrap")
	p := newProject(t, map[string]string{"README.md": "# demo\n", "main.go": "package main\n"})
	hostGit := p.env()
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "initial"}} {
		if out, err := inDir(t, p.dir, hostGit, "git", args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	srv := llmtest.New(t, nil, llmtest.WithCheck(llmtest.DeepSeekReasoningCheck))
	writeFile(t, filepath.Join(p.home, ".config", "harness", "harness.yml"), "- {id: deepseek, config: {baseURL: '"+srv.URL+"', maxRetries: 0}}\n")

	srv.Enqueue(read("c1", "README.md"), bash("c2", "ls", "list the files"), answer("A demo."))
	first := p.runWith(t, srv, "run", "-o", "json", "What is this project?")
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal([]byte(first), &res); err != nil || res.SessionID == "" {
		t.Fatalf("the json result has no sessionId (%v):\n%s", err, first)
	}

	// Between the processes: the working tree and the git status change.
	writeFile(t, filepath.Join(p.dir, "README.md"), "# demo\n\nChanged.\n")
	writeFile(t, filepath.Join(p.dir, "notes.txt"), "new, untracked\n")
	srv.Enqueue(bash("c3", "cat notes.txt", "read the notes"), answer("Notes read."))
	p.runWith(t, srv, "run", "--continue", "Read notes.txt.")

	if out, err := inDir(t, p.dir, hostGit, "git", "commit", "-qam", "change"); err != nil {
		t.Fatalf("git commit: %v\n%s", err, out)
	}
	writeFile(t, filepath.Join(p.dir, "more.txt"), "more\n")
	srv.Enqueue(answer("Done."))
	p.runWith(t, srv, "run", "--session", res.SessionID, "Anything else?")

	reqs := srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests, want 6", len(reqs))
	}
	// The resumed session's new git status reaches the model as a message
	// at the end, not by editing the system prompt.
	w, err := reqs[3].Wire()
	if err != nil {
		t.Fatal(err)
	}
	if last := w.Messages[len(w.Messages)-1].Text(); !strings.Contains(last, "Parts of the system prompt changed") || !strings.Contains(last, "notes.txt") {
		t.Errorf("request 4 does not end with the changed environment section:\n%s", last)
	}
	prev := wirePrefix(t, reqs[0].Body)
	for i, r := range reqs[1:] {
		cur := wirePrefix(t, r.Body)
		shared, total := sharedPrefix(prev, cur)
		t.Logf("request %d: %d of %d prefix bytes are request %d's (%.1f%% of the request; %.1f%% of request %d)",
			i+2, shared, total, i+1, 100*float64(shared)/float64(total), 100*float64(shared)/float64(prev.size()), i+1)
		if !bytes.Equal(prev.tools, cur.tools) {
			t.Errorf("request %d: the tool list differs from request %d's:\n%s\n---\n%s", i+2, i+1, prev.tools, cur.tools)
		}
		for j, m := range prev.messages {
			if j >= len(cur.messages) || !bytes.Equal(m, cur.messages[j]) {
				got := "(missing)"
				if j < len(cur.messages) {
					got = string(cur.messages[j])
				}
				t.Errorf("request %d: message %d differs from request %d's:\n%s\n---\n%s", i+2, j, i+1, m, got)
				break
			}
		}
		prev = cur
	}
}

// prefix is the part of a chat-completions request a prefix cache matches:
// the tool list and the messages, as sent.
type prefix struct {
	tools    []byte
	messages [][]byte
}

func (p prefix) size() int {
	n := len(p.tools)
	for _, m := range p.messages {
		n += len(m)
	}
	return n
}

func wirePrefix(t *testing.T, body []byte) prefix {
	t.Helper()
	var w struct {
		Tools    json.RawMessage   `json:"tools"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatal(err)
	}
	p := prefix{tools: w.Tools}
	for _, m := range w.Messages {
		p.messages = append(p.messages, m)
	}
	return p
}

// sharedPrefix is the number of bytes cur shares with prev from the start
// (tools, then messages in order), and cur's size.
func sharedPrefix(prev, cur prefix) (shared, total int) {
	total = cur.size()
	if !bytes.Equal(prev.tools, cur.tools) {
		return commonLen(prev.tools, cur.tools), total
	}
	shared = len(cur.tools)
	for j, m := range cur.messages {
		if j >= len(prev.messages) {
			break
		}
		if !bytes.Equal(m, prev.messages[j]) {
			return shared + commonLen(prev.messages[j], m), total
		}
		shared += len(m)
	}
	return shared, total
}

func commonLen(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// runWith runs the harness with args in the workspace against srv (its
// script enqueued by the caller), fails unless it exits 0 and used all of
// the script, and returns its stdout.
func (p *project) runWith(t *testing.T, srv *llmtest.Server, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, harnessBinary(t), args...)
	cmd.Dir, cmd.Env = p.dir, p.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) || err != nil {
		t.Fatalf("harness %v: %v\nstdout: %s\nstderr: %s", args, err, stdout.String(), stderr.String())
	}
	if n := srv.Remaining(); n != 0 {
		t.Fatalf("harness %v: the model's script has %d turns left\nstdout: %s\nstderr: %s", args, n, stdout.String(), stderr.String())
	}
	return stdout.String()
}
