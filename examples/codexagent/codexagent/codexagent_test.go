package codexagent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	_ "example.com/codexagent/codexagent"
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/services/subagent"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start boots subprocess-local, subagents and subagent-codex whose command
// is script (a stand-in for codex: a real process with its CLI shape).
func start(t *testing.T, script string) (*subagent.Service, string) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "fake-codex")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script), 0o700); err != nil {
		t.Fatal(err)
	}
	h := harnesstest.Start(t, `plugins:
  - name: subprocess-local
    config: {sandbox: {mode: off}}
  - name: subagents
  - name: subagent-codex
    config: {command: `+bin+`, args: [exec]}
`)
	return harnesstest.Service(t, h, subagent.Key), dir
}

func TestTurnRunsTheCommandWithThePrompt(t *testing.T) {
	svc, dir := start(t, `echo "answer to: $*"; pwd >&2`)
	run, err := svc.Start(context.Background(), "codex", subagent.Request{
		Parent: subagent.Parent{SessionID: "p1", Cwd: dir}, Prompt: "fix the test", Model: "o4"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := run.Wait(context.Background())
	if err != nil || out.Status != subagent.StatusCompleted || out.Text != "answer to: exec --model o4 fix the test" {
		t.Fatalf("%+v %v", out, err)
	}
}

func TestFailureAndRefusedCapability(t *testing.T) {
	svc, dir := start(t, `echo "no credentials" >&2; exit 3`)
	run, err := svc.Start(context.Background(), "codex", subagent.Request{Parent: subagent.Parent{SessionID: "p1", Cwd: dir}, Prompt: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := run.Wait(context.Background()); out.Status != subagent.StatusFailed || !strings.Contains(out.Error, "exit 3: no credentials") {
		t.Fatalf("%+v", out)
	}
	_, err = svc.Start(context.Background(), "codex", subagent.Request{Parent: subagent.Parent{SessionID: "p1", Cwd: dir}, Prompt: "x", Continuable: true})
	if subagent.CodeOf(err) != subagent.CodeUnsupportedCapability {
		t.Fatalf("continuable: %v", err)
	}
}

func TestCancellationTerminatesTheProcess(t *testing.T) {
	svc, dir := start(t, `echo $$ > "$PWD/pid"; exec sleep 60`)
	ctx, cancel := context.WithCancel(context.Background())
	run, err := svc.Start(ctx, "codex", subagent.Request{Parent: subagent.Parent{SessionID: "p1", Cwd: dir}, Prompt: "x"})
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "pid")
	for i := 0; i < 500; i++ {
		if b, _ := os.ReadFile(pidFile); len(b) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	out, _ := run.Wait(context.Background())
	b, _ := os.ReadFile(pidFile)
	if out.Status != subagent.StatusAborted || len(b) == 0 {
		t.Fatalf("%+v (pid %q)", out, b)
	}
	if _, err := os.Stat("/proc/" + strings.TrimSpace(string(b))); err == nil {
		t.Fatalf("process %s survived", b)
	}
}
