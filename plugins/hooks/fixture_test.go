package hooks_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dshgo/harness/internal/policytest"
	"github.com/dshgo/harness/plugins/approval"
	"github.com/dshgo/harness/plugins/hooks"
	"github.com/dshgo/harness/services/tools"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type mount = policytest.Mount

func harness(t *testing.T, extra ...mount) *tools.Registry { return policytest.Harness(t, extra...) }

func run(t *testing.T, reg *tools.Registry, id, command string) *tools.Outcome {
	t.Helper()
	return policytest.Run(reg, id, command)
}

func text(o *tools.Outcome) string { return policytest.Text(o) }

// headless is the approval service with nobody to answer.
var headless = mount{Plugin: approval.Plugin, Config: approval.Config{Answerer: approval.AnswererHeadless, Policy: approval.PolicyAsk}}

// script writes an executable bash hook script into dir and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/usr/bin/env bash\n"+body), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// examples returns the path of a hook script under examples/hooks.
func examples(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "examples", "hooks", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func hooksConfig(cwd string, pre, post []hooks.MatcherGroup) hooks.Config {
	return hooks.Config{Cwd: cwd, Hooks: hooks.Events{PreToolUse: pre, PostToolUse: post}}
}

func group(matcher string, commands ...string) hooks.MatcherGroup {
	g := hooks.MatcherGroup{Matcher: matcher}
	for _, c := range commands {
		g.Hooks = append(g.Hooks, hooks.CommandHook{Type: "command", Command: c})
	}
	return g
}
