package permission

import (
	"path/filepath"
	"testing"

	"github.com/dshgo/harness/core/manifest"
)

// shippedPolicy is the permission row of the repository's harness.yml as a
// policy, evaluated as if no sandbox were available (the allow rules are
// then all that stands between a call and the host).
func shippedPolicy(t *testing.T) *Policy {
	t.Helper()
	m, err := manifest.ReadFile(filepath.Join("..", "..", "harness.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range m.Plugins {
		if e.Name != "permission" {
			continue
		}
		v, err := manifest.DecodeConfig(Plugin, e, nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg := *v.(*Config)
		cfg.Cwd = t.TempDir()
		p, err := New(cfg.spec())
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Fatal("no permission row in harness.yml")
	return nil
}

// TestShippedAllowRulesDoNotCoverOptionsThatWriteOrRun: the default
// manifest's read-only allow rules (`git diff *`, `go test *`, …) cover the
// commands they name, but not the options that make those commands write a
// file or run a program; one case per option. None of the shipped rules
// covers a call that asks to leave the sandbox.
func TestShippedAllowRulesDoNotCoverOptionsThatWriteOrRun(t *testing.T) {
	p := shippedPolicy(t)
	call := func(cmd string, off bool) Verdict {
		args := `{"command":` + quoteJSON(cmd) + `,"description":"d"}`
		if off {
			args = `{"command":` + quoteJSON(cmd) + `,"description":"d","sandbox":"off","justification":"j"}`
		}
		return p.Evaluate(Call{Tool: "bash", Args: []byte(args), Escalated: off})
	}
	for _, cmd := range []string{"git status", "git diff HEAD~1 -- a.go", "git log --oneline -5", "git show HEAD",
		"go test ./...", "go test -run TestX -count=1 ./pkg", "go build ./...", "go vet ./...", "ls -la", "echo hi", "git diff --stat"} {
		if v := call(cmd, false); v.Decision != Allow {
			t.Errorf("%q: %v (%s), want allow", cmd, v.Decision, v.Reason)
		}
		if v := call(cmd, true); v.Decision != Ask {
			t.Errorf("%q with sandbox off: %v (%s), want ask", cmd, v.Decision, v.Reason)
		}
	}
	for _, cmd := range []string{
		"git diff --output=/tmp/x", "git diff --output /tmp/x", "git diff --outp=/tmp/x", "git log --output=/tmp/x",
		"git show --output=/tmp/x HEAD", "git diff --ext-diff", "git diff --no-index /dev/null /root/.aws/credentials",
		"git -c core.pager=evil log", "git -c core.fsmonitor=evil status", "git -C /elsewhere status",
		"git --git-dir=/tmp/evil/.git status", "git --work-tree=/tmp status", "git --exec-path=/tmp/x status",
		"git --config-env=core.pager=X log", "git log --exec=x",
		"go test -exec ./evil ./...", "go test -toolexec ./evil ./...", "go vet -vettool=./evil ./...",
		"go build -o /tmp/bin ./...", "go build -overlay=o.json ./...", "go test -modfile=/tmp/go.mod ./...",
		"go test -C /elsewhere ./...", "go test -coverprofile=/tmp/c.out ./...", "go test ./... -test.outputdir=/tmp",
		"go build -ldflags=-extld=./evil ./...", "go build -ldflags '-extld=./evil' ./...", "go test -cpuprofile /tmp/p ./...",
		"go test --exec=./evil ./...",
	} {
		if v := call(cmd, false); v.Decision == Allow {
			t.Errorf("%q: allowed by a shipped rule, want ask", cmd)
		}
	}
}

// TestEffectOptionNamedByTheRuleIsCovered: a rule that names the option
// itself covers it.
func TestEffectOptionNamedByTheRuleIsCovered(t *testing.T) {
	spec := defaultSpec(t.TempDir())
	spec.Allow = []string{"bash(go test -exec ./runner *)", "bash(git diff --output=* *)"}
	p, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"go test -exec ./runner ./...", "git diff --output=o.patch HEAD"} {
		if v := p.Evaluate(Call{Tool: "bash", Args: []byte(`{"command":` + quoteJSON(cmd) + `}`)}); v.Decision != Allow {
			t.Errorf("%q: %v (%s), want allow", cmd, v.Decision, v.Reason)
		}
	}
}
