package toolfs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/tools/workdir"
)

type mounted struct {
	reg  *tools.Registry
	root *core.Root
}

func mount(t *testing.T, cfg Config, withPrompt bool) mounted {
	t.Helper()
	root := core.NewRoot()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		root.Dispose(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fibers := []*core.Fiber{root.Context().Plugin(tools.Plugin, nil)}
	if withPrompt {
		fibers = append(fibers, root.Context().Plugin(systemprompt.Plugin, nil))
	}
	for _, f := range fibers {
		if err := f.Await(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := root.Context().Plugin(Plugin, &cfg).Await(ctx); err != nil {
		t.Fatal(err)
	}
	reg, ok := core.Lookup(root.Context(), tools.Key)
	if !ok {
		t.Fatal("no tool registry")
	}
	return mounted{reg: reg, root: root}
}

func testConfig(dir string) Config {
	var c Config
	c.SetDefaults()
	c.Cwd = dir
	return c
}

func call(m mounted, scope *core.ScopeID, name, args string) *tools.Outcome {
	return m.reg.Execute(context.Background(), tools.Call{ID: "c1", Name: name, Arguments: args, Scope: scope})
}

func TestPluginToolsThroughRegistry(t *testing.T) {
	dir := t.TempDir()
	m := mount(t, testConfig(dir), true)
	session := core.NewScopeID("session-1", nil)

	o := call(m, session, "write", `{"file_path":"notes.txt","content":"alpha\nbeta\n"}`)
	if o.IsError || tools.TextOf(o.Content) != "<path>"+filepath.Join(dir, "notes.txt")+"</path>\n<type>file</type>\n<content>\nCreated file\n</content>" {
		t.Fatalf("write: %+v", o)
	}
	o = call(m, session, "read", `{"file_path":"notes.txt","offset":2}`)
	if o.IsError || !strings.Contains(tools.TextOf(o.Content), "\n2: beta\n\n(End of file - total 2 lines)\n</content>") {
		t.Fatalf("read: %+v", o)
	}
	o = call(m, session, "edit", `{"file_path":"notes.txt","old_string":"beta","new_string":"gamma"}`)
	if o.IsError || tools.TextOf(o.Content) != "The file "+filepath.Join(dir, "notes.txt")+" has been updated successfully." {
		t.Fatalf("edit: %+v", o)
	}
	// Another session never read it: refused with the policy code.
	o = call(m, core.NewScopeID("session-2", nil), "edit", `{"file_path":"notes.txt","old_string":"gamma","new_string":"delta"}`)
	if !o.IsError || o.Error == nil || o.Error.Code != "FS_NOT_OBSERVED" || o.Error.Name != "FsError" ||
		tools.TextOf(o.Content) != `Error: edit requires reading "`+filepath.Join(dir, "notes.txt")+`" first — read the file, then retry` {
		t.Fatalf("unobserved edit: %+v", o)
	}
	o = call(m, session, "read", `{"file_path":"missing.txt"}`)
	if !o.IsError || o.Error.Code != "FS_NOT_FOUND" {
		t.Fatalf("missing: %+v", o)
	}
	o = call(m, session, "read", `{"file_path":"notes.txt","limit":2001}`)
	if !o.IsError || tools.TextOf(o.Content) != "Error: limit must be less than or equal to 2000" {
		t.Fatalf("limit: %+v", o)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "alpha\ngamma\n" {
		t.Fatalf("file: %q", b)
	}
	for name, parallel := range map[string]bool{"read": true, "write": false, "edit": false} {
		args := `{"file_path":"notes.txt","content":"x","old_string":"a","new_string":"b"}`
		if name == "read" {
			args = `{"file_path":"notes.txt"}`
		}
		mode := m.reg.ExecutionMode(tools.Call{Name: name, Arguments: args})
		if (mode == tools.Parallel) != parallel {
			t.Errorf("%s: mode %v", name, mode)
		}
	}
	sp, _ := core.Lookup(m.root.Context(), systemprompt.Key)
	a, err := sp.Assemble(context.Background(), systemprompt.AssembleContext{})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, s := range a.Sections {
		found[s.Name] = strings.Contains(s.Text, "tool")
	}
	for _, n := range []string{"tool:read", "tool:write", "tool:edit"} {
		if !found[n] {
			t.Errorf("guidance section %s missing: %v", n, found)
		}
	}
}

func TestPluginWithoutPolicy(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(p, []byte("one\r\ntwo\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(dir)
	cfg.RequireRead = false
	m := mount(t, cfg, false)
	o := call(m, nil, "edit", `{"file_path":"a.txt","old_string":"two","new_string":"three","replace_all":true}`)
	if o.IsError || tools.TextOf(o.Content) != "The file "+p+" has been updated. All occurrences were successfully replaced." {
		t.Fatalf("%+v", o)
	}
	if b, _ := os.ReadFile(p); string(b) != "one\r\nthree\r\n" {
		t.Fatalf("%q", b)
	}
}

func TestConfigValidation(t *testing.T) {
	c := testConfig("")
	c.ReadLimit = 0
	if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), "readLimit:") {
		t.Fatal(err)
	}
}

func TestPluginCallWorkdir(t *testing.T) {
	m := mount(t, testConfig(t.TempDir()), false)
	other := t.TempDir()
	ctx := workdir.With(context.Background(), other)
	o := m.reg.Execute(ctx, tools.Call{ID: "1", Name: "write", Arguments: `{"file_path":"here.txt","content":"x"}`})
	if o.IsError {
		t.Fatal(tools.TextOf(o.Content))
	}
	if _, err := os.Stat(filepath.Join(other, "here.txt")); err != nil {
		t.Fatalf("relative path did not resolve against the call's workdir: %v", err)
	}
}
