package subagenttools_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// An agent definition gives the child its persona (shadowing the
// deployment's for that child alone), its model and its tool allow-list;
// the task tool's description lists it.
func TestAgentDefinitionSetsPersonaModelAndTools(t *testing.T) {
	r := newRouter(map[string][]llmtest.Turn{
		"":   {llmtest.Calls(call("t1", "task", `{"description":"review","prompt":"#A review it","subagent_type":"reviewer"}`)), llmtest.Reply("reviewed")},
		"#A": {llmtest.Reply("looks fine")},
	})
	defs := t.TempDir()
	if err := os.WriteFile(filepath.Join(defs, "reviewer.md"), []byte("---\nname: reviewer\ndescription: Reviews code for bugs\ntools: Read_File\nmodel: test/m2\n---\nYOU ARE A REVIEWER.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFixtureDefs(t, r, defs)
	ss := f.open(agent.Options{Model: "test/m1"})
	if _, err := ss.Run(context.Background(), "review"); err != nil {
		t.Fatal(err)
	}
	for _, req := range f.srv.Requests() {
		w, _ := req.Wire()
		system := w.Messages[0].Text()
		switch conversation(w) {
		case "":
			var desc string
			for _, tl := range w.Tools {
				if tl.Function.Name == "task" {
					desc = tl.Function.Description
				}
			}
			if !strings.Contains(desc, "- reviewer: Reviews code for bugs (tools: Read_File)") || !strings.Contains(system, "DEPLOYMENT PERSONA") || w.Model != "m1" {
				t.Fatalf("parent request: model %s, system %q, task description %q", w.Model, system, desc)
			}
		case "#A":
			if len(w.Tools) != 1 || w.Tools[0].Function.Name != "read_file" || w.Model != "m2" ||
				!strings.Contains(system, "YOU ARE A REVIEWER.") || strings.Contains(system, "DEPLOYMENT PERSONA") {
				t.Fatalf("child request: model %s, tools %+v, system %q", w.Model, w.Tools, system)
			}
		}
	}
	// The parent keeps the deployment persona after the child is gone.
	r.add("", llmtest.Reply("again"))
	if _, err := ss.Run(context.Background(), "again"); err != nil {
		t.Fatal(err)
	}
	reqs := f.srv.Requests()
	if w, _ := reqs[len(reqs)-1].Wire(); !strings.Contains(w.Messages[0].Text(), "DEPLOYMENT PERSONA") {
		t.Fatal("the parent lost its persona")
	}
}

// fork:true starts the child from a copy of the parent's conversation; the
// call that started it reads as still running in the copy.
func TestForkStartsFromTheParentsHistory(t *testing.T) {
	f := newFixture(t, map[string][]llmtest.Turn{
		"":   {llmtest.Reply("the secret word is plum"), llmtest.Calls(call("t1", "task", `{"description":"fork","prompt":"#F what was the word?","fork":true}`)), llmtest.Reply("ok")},
		"#F": {llmtest.Reply("plum")},
	}, fixtureOpts{})
	ss := f.open(agent.Options{Model: "test/m1"})
	if _, err := ss.Run(context.Background(), "remember plum"); err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Run(context.Background(), "ask a fork"); err != nil {
		t.Fatal(err)
	}
	var hist string
	for _, req := range f.srv.Requests() {
		if w, _ := req.Wire(); conversation(w) == "#F" {
			hist = w.History()
		}
	}
	want := "user:remember plum|assistant:the secret word is plum|user:ask a fork|assistant:|tool:" + agent.ForkPendingResult + "|user:#F what was the word?"
	if hist != want {
		t.Fatalf("fork history =\n%s\nwant\n%s", hist, want)
	}
	if got := lastToolResult(f.records(ss.ID())); got != "plum" {
		t.Fatalf("result = %q", got)
	}
}
