package permission_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/internal/policytest"
	"github.com/dshgo/harness/internal/sandboxtest"
	"github.com/dshgo/harness/plugins/permission"
	toolfs "github.com/dshgo/harness/plugins/tool-fs"
	"github.com/dshgo/harness/services/tools"
)

// TestHostExecutedFilesRefusedToFileTools performs each host-executed-file
// attack of issue 32 that the write tool can perform (a git commondir, a
// config.worktree, a hook, info/attributes, a submodule's config, a
// linked worktree's commondir, an included config file, a .git created
// where none was, .envrc, .vscode/tasks.json, mise.toml) through the real
// write tool with allow rules covering every write, headless: the
// protected write is denied, and the real git the user runs next outside
// the sandbox runs nothing. In bypass mode (the control) the same writes
// go through and every git attack runs: the test can fail.
func TestHostExecutedFilesRefusedToFileTools(t *testing.T) {
	for _, mode := range []permission.Mode{permission.ModeBypass, permission.ModeDefault, permission.ModeAcceptEdits} {
		t.Run(string(mode), func(t *testing.T) {
			for _, a := range sandboxtest.HostExecAttacks() {
				if a.Writes == nil {
					continue
				}
				t.Run(a.Name, func(t *testing.T) {
					e := sandboxtest.NewHostEnv(t, a)
					cfg := config(e.WS, []string{"write", "write(**)"}, nil, nil)
					cfg.Mode = mode
					var fsCfg toolfs.Config
					fsCfg.SetDefaults()
					fsCfg.Cwd = e.WS
					fsCfg.RequireRead = false
					reg := policytest.Harness(t, policytest.Mount{Plugin: toolfs.Plugin, Config: fsCfg},
						policytest.Mount{Plugin: permission.Plugin, Config: cfg}, headless)
					var denied []string
					for _, w := range a.AttackWrites(e) {
						args, _ := json.Marshal(map[string]string{"file_path": filepath.Join(e.WS, w.Path), "content": w.Content})
						o := reg.Execute(t.Context(), tools.Call{ID: "w", Name: "write", Arguments: string(args)})
						if text := policytest.Text(o); o.IsError {
							if !strings.Contains(text, "a protected path") {
								t.Fatalf("write %s: %q (want a protected-path denial or success)", w.Path, text)
							}
							denied = append(denied, w.Path)
						}
					}
					if a.Host != nil {
						a.Host(t, e)
					}
					if mode == permission.ModeBypass {
						if len(denied) != 0 || a.Host != nil && !e.Ran() {
							t.Fatalf("control: denied %q, ran %v: the attack did not work with every write allowed", denied, e.Ran())
						}
						return
					}
					if last := a.Writes[len(a.Writes)-1].Path; len(denied) == 0 || denied[len(denied)-1] != last {
						t.Fatalf("denied %q, want %s denied", denied, last)
					}
					if e.Ran() {
						t.Fatal("the planted command ran on the host")
					}
				})
			}
		})
	}
}

// TestHostExecutedFilesRefusedToEdit: the edit tool, with allow rules
// covering every edit, headless, cannot change a host-executed file that
// exists (a repository's config, a hook, a submodule's config, an included
// config file): the edit is denied naming the protected path, and the real
// git the user runs next runs nothing. In bypass mode (the control) each
// edit goes through and git runs the planted command.
func TestHostExecutedFilesRefusedToEdit(t *testing.T) {
	edits := map[string]struct{ path, old, new string }{
		"git-config":         {".git/config", "[core]", "[core]\n\tfsmonitor = \"touch MARK; false\""},
		"git-hooks":          {".git/hooks/pre-commit", "true", "touch MARK"},
		"git-modules-config": {".git/modules/sub/config", "[core]", "[core]\n\tfsmonitor = \"touch MARK; false\""},
		"git-include":        {"shared.gitconfig", "[color]", "[core]\n\tfsmonitor = \"touch MARK; false\"\n[color]"},
	}
	for _, mode := range []permission.Mode{permission.ModeBypass, permission.ModeDefault, permission.ModeAcceptEdits} {
		t.Run(string(mode), func(t *testing.T) {
			n := 0
			for _, a := range sandboxtest.HostExecAttacks() {
				ed, ok := edits[a.Name]
				if !ok {
					continue
				}
				n++
				t.Run(a.Name, func(t *testing.T) {
					e := sandboxtest.NewHostEnv(t, a)
					cfg := config(e.WS, []string{"edit", "edit(**)"}, nil, nil)
					cfg.Mode = mode
					var fsCfg toolfs.Config
					fsCfg.SetDefaults()
					fsCfg.Cwd = e.WS
					fsCfg.RequireRead = false
					reg := policytest.Harness(t, policytest.Mount{Plugin: toolfs.Plugin, Config: fsCfg},
						policytest.Mount{Plugin: permission.Plugin, Config: cfg}, headless)
					args, _ := json.Marshal(map[string]string{"file_path": filepath.Join(e.WS, ed.path), "old_string": ed.old,
						"new_string": strings.ReplaceAll(ed.new, "MARK", e.Marker)})
					o := reg.Execute(t.Context(), tools.Call{ID: "e", Name: "edit", Arguments: string(args)})
					text := policytest.Text(o)
					a.Host(t, e)
					if mode == permission.ModeBypass {
						if o.IsError || !e.Ran() {
							t.Fatalf("control: edit %q (error %v), ran %v: the attack did not work with every edit allowed", text, o.IsError, e.Ran())
						}
						return
					}
					if !o.IsError || !strings.Contains(text, "a protected path") {
						t.Fatalf("edit %s: %q (error %v), want a protected-path denial", ed.path, text, o.IsError)
					}
					if e.Ran() {
						t.Fatal("the planted command ran on the host")
					}
				})
			}
			if n != len(edits) {
				t.Fatalf("%d of %d edit attacks found", n, len(edits))
			}
		})
	}
}
