package permission_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/internal/policytest"
	"github.com/dshgo/harness/plugins/permission"
	toolbash "github.com/dshgo/harness/plugins/tool-bash"
	toolfs "github.com/dshgo/harness/plugins/tool-fs"
	"github.com/dshgo/harness/services/tools"
)

// attack is one row of the attack suite: a call, the rules and mode it
// meets, and what must happen. {V} in the command, workdir and rules is
// the victim directory (outside the workspace), {W} the workspace.
type attack struct {
	name     string
	command  string // the bash command
	workdir  string
	allow    []string
	ask      []string
	deny     []string
	mode     permission.Mode
	want     string // allow | ask | deny
	removed  string // allow rows: this victim path is gone afterwards ("" = victim untouched)
	contains string // allow rows: the output contains this
}

const rmDeny = "bash(rm -rf *)"

// attacks is the issue 14 list, and more of each kind.
var attacks = []attack{
	// Wrappers: the wrapper itself is the denied program.
	{name: "sudo by path", command: "/usr/bin/sudo true", deny: []string{"bash(sudo *)"}, mode: permission.ModeBypass, want: "deny"},
	{name: "sudo under env", command: "env sudo true", deny: []string{"bash(sudo *)"}, mode: permission.ModeBypass, want: "deny"},
	{name: "sudo under nice under timeout", command: "timeout 5 nice -n 3 sudo true", deny: []string{"bash(sudo *)"}, mode: permission.ModeBypass, want: "deny"},
	{name: "denied timeout", command: "timeout -s KILL 5 true", deny: []string{"bash(timeout *)"}, mode: permission.ModeBypass, want: "deny"},
	// Wrappers with options.
	{name: "timeout -s KILL", command: "timeout -s KILL 5 rm -rf {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "timeout --signal=KILL -k 1", command: "timeout --signal=KILL -k 1 5 rm -rf {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "exec -a", command: "exec -a foo rm -rf {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "nice -n", command: "nice -n 5 rm -rf {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "env -u with assignment", command: "env -u HOME A=1 rm -rf {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "env -S", command: "env -S 'rm -rf {V}'", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "stdbuf nohup setsid", command: "stdbuf -oL nohup setsid rm -rf {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "xargs", command: "echo {V} | xargs -n 1 rm -rf", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "find -exec", command: "find {V} -maxdepth 0 -exec rm -rf {} +", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "command builtin", command: "command rm -rf {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "unknown wrapper option", command: "timeout --frobnicate X 5 rm -rf {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	// Nested shells.
	{name: "bash --norc -c", command: "bash --norc -c 'rm -rf {V}'", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "bash -c --", command: "bash -c -- 'rm -rf {V}'", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "bash -o errexit -c", command: "bash -o errexit -c 'rm -rf {V}'", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "sh -ec double quotes", command: `sh -ec "rm -rf {V}"`, deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "bash heredoc", command: "bash <<EOF\nrm -rf {V}\nEOF", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "bash quoted heredoc", command: "bash <<'EOF'\nrm -rf {V}\nEOF", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "bash here-string", command: "bash <<< 'rm -rf {V}'", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "echo piped to bash", command: "echo 'rm -rf {V}' | bash", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "printf piped to sh -s", command: "printf 'rm -rf %s\\n' {V} | sh -s", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "file piped to bash", command: "cat {V}/keep | bash", mode: permission.ModeBypass, want: "ask"},
	{name: "curl-style pipe", command: "cat {V}/keep | sh", allow: []string{"bash(cat *)", "bash(sh *)"}, want: "ask"},
	{name: "source process substitution", command: "source <(echo 'rm -rf {V}')", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "dot process substitution not literal", command: ". <(cat {V}/keep)", mode: permission.ModeBypass, want: "ask"},
	{name: "trap body", command: "trap 'rm -rf {V}' EXIT", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "eval literal", command: "eval 'rm -rf {V}'", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "alias body", command: "alias x='rm -rf {V}'", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "function body", command: "f() { rm -rf {V}; }; f", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "arithmetic substitution", command: "echo $(( $(rm -rf {V}) 0 ))", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "arithmetic substitution valid", command: "echo $(( $(rm -rf {V}) + 0 ))", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "prompt expansion", command: "x='$(rm -rf {V})'; echo ${x@P}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "ansi-c program", command: "$'rm' -rf {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "ansi-c hex program", command: `$'\x72m' -rf {V}`, deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "ansi-c octal option", command: `rm $'-\162f' {V}`, deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "backslash program", command: `r\m -rf {V}`, deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	// Variables whose value runs as a command.
	{name: "GIT_SSH_COMMAND", command: "GIT_SSH_COMMAND='rm -rf {V}' git fetch", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "export PAGER", command: "export PAGER='rm -rf {V}'; git log", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "BASH_ENV process substitution", command: "BASH_ENV=<(echo 'rm -rf {V}') bash -c true", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "env BASH_ENV", command: "env BASH_ENV=<(cat {V}/keep) bash -c true", mode: permission.ModeBypass, want: "ask"},
	{name: "heredoc body substitution", command: "cat <<EOF\n$(rm -rf {V})\nEOF", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "coproc", command: "coproc rm -rf {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "nested three deep", command: `sh -c 'bash -c "sh -c \"rm -rf {V}\""'`, deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	// Arguments that are not static, against a deny rule naming options: asked.
	{name: "dynamic options", command: "opt=-rf; rm $opt {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "ask"},
	{name: "dynamic operand of another program", command: "f={V}/keep; cat \"$f\"", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "allow", contains: "keep-me"},
	// Non-static program names: unknown, asked in every mode.
	{name: "variable program", command: "x=rm; $x -rf {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "ask"},
	{name: "default-value program", command: "${x:-rm} -rf {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "ask"},
	{name: "substituted program", command: "$(echo rm) -rf {V}", allow: []string{"bash(echo *)"}, mode: permission.ModeBypass, want: "ask"},
	{name: "eval of a variable", command: `c='rm -rf {V}'; eval "$c"`, mode: permission.ModeBypass, want: "ask"},
	{name: "brace program denied", command: "{rm,-rf,{V}}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "brace program", command: "{rm,-rf,{V}}", mode: permission.ModeBypass, want: "ask"},
	{name: "glob program", command: "/bin/r? -rf {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "ask"},
	{name: "bash -c of a variable", command: `c='rm -rf {V}'; bash -c "$c"`, allow: []string{"bash"}, want: "ask"},
	{name: "unknown never covered by a bare allow", command: "$(printf rm) -rf {V}", allow: []string{"bash"}, want: "ask"},
	// Option spellings.
	{name: "-r -f", command: "rm -r -f {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "-fr", command: "rm -fr {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "-Rf", command: "rm -Rf {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "--recursive --force", command: "rm --recursive --force {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "-rfv", command: "rm -rfv {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "-f -- -R", command: "rm -f -R -- {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "braced options", command: "rm -{r,f} {V}", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "deny"},
	{name: "git push -f", command: "git push -f origin main", deny: []string{"bash(git push --force *)"}, mode: permission.ModeBypass, want: "deny"},
	{name: "git -C push --force", command: "git -C {W} push --force origin main", deny: []string{"bash(git push --force *)"}, mode: permission.ModeBypass, want: "deny"},
	{name: "git branch --delete --force", command: "git branch --delete --force main", deny: []string{"bash(git branch -D *)"}, mode: permission.ModeBypass, want: "deny"},
	// Not over-broad: rm -r alone is not rm -rf, and runs.
	{name: "rm -r is not rm -rf", command: "rm -r {V}/sub", deny: []string{rmDeny}, mode: permission.ModeBypass, want: "allow", removed: "sub"},
	{name: "allowed compound runs", command: "echo one && echo two", allow: []string{"bash(echo *)"}, want: "allow", contains: "one\ntwo"},
	// Read redirections.
	{name: "read redirection denied by read rule", command: `echo "$(< {V}/secret)"`, allow: []string{"bash(echo *)"}, deny: []string{"read({V}/secret)"}, mode: permission.ModeBypass, want: "deny"},
	{name: "input redirection denied by read rule", command: "cat < {V}/secret", deny: []string{"read({V}/**)"}, mode: permission.ModeBypass, want: "deny"},
	{name: "read redirection not covered by echo", command: `echo "$(< {V}/secret)"`, allow: []string{"bash(echo *)"}, want: "ask"},
	{name: "parent environ", command: `echo "$(</proc/$PPID/environ)"`, allow: []string{"bash(echo *)"}, want: "ask"},
	{name: "read redirection named by the rule", command: "cat < {V}/keep", allow: []string{"bash(cat < {V}/keep)"}, want: "allow", contains: "keep-me"},
	{name: "write redirection denied by write rule", command: "echo x > {V}/keep", deny: []string{"write({V}/**)"}, mode: permission.ModeBypass, want: "deny"},
	// The workdir argument.
	{name: "workdir ssh relative cat", command: "cat id_rsa", workdir: "{V}/.ssh", deny: []string{"bash(*.ssh/*)"}, mode: permission.ModeBypass, want: "deny"},
	{name: "workdir ssh read redirection", command: `echo "$(<id_rsa)"`, workdir: "{V}/.ssh", allow: []string{"bash(echo *)"}, want: "ask"},
	{name: "workdir outside the workspace", command: "ls", workdir: "{V}", allow: []string{"bash(ls *)"}, want: "ask"},
	{name: "workdir read-denied", command: "ls", workdir: "{V}/.ssh", allow: []string{"bash(ls *)"}, deny: []string{"read({V}/.ssh/**)"}, want: "deny"},
	{name: "cd then relative cat", command: "cd {V}/.ssh && cat id_rsa", deny: []string{"bash(*.ssh/*)"}, mode: permission.ModeBypass, want: "deny"},
	{name: "cd into a read-denied directory", command: "cd {V}/.ssh; ls", allow: []string{"bash(cd *)", "bash(ls *)"}, deny: []string{"read({V}/.ssh/**)"}, want: "deny"},
	{name: "cd then read redirection", command: `cd {V} && echo "$(< secret)"`, deny: []string{"read({V}/secret)"}, mode: permission.ModeBypass, want: "deny"},
	{name: "workdir inside the workspace", command: "pwd", workdir: "sub", allow: []string{"bash(pwd)"}, want: "allow", contains: "/sub"},
}

// victims lays out a victim directory: keep, secret, sub/file, .ssh/id_rsa.
func victims(t *testing.T) (work, victim string) {
	t.Helper()
	work, victim = t.TempDir(), t.TempDir()
	for name, body := range map[string]string{"keep": "keep-me\n", "secret": "s3cret\n", "sub/file": "f\n", ".ssh/id_rsa": "PRIVATE KEY\n"} {
		p := filepath.Join(victim, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(work, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	return work, victim
}

// snapshot lists every path under dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel] = "dir"
		} else {
			b, _ := os.ReadFile(p)
			out[rel] = string(b)
		}
		return nil
	})
	return out
}

// TestAttackSuite runs every row through the tool registry with the real
// bash tool, the permission plugin and a headless approval service, then
// checks the outcome and the victim directory on disk.
func TestAttackSuite(t *testing.T) {
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			work, victim := victims(t)
			sub := func(s string) string {
				return strings.NewReplacer("{V}", victim, "{W}", work).Replace(s)
			}
			subAll := func(in []string) []string {
				out := make([]string, len(in))
				for i, s := range in {
					out[i] = sub(s)
				}
				return out
			}
			cfg := config(work, subAll(a.allow), subAll(a.ask), subAll(a.deny))
			if a.mode != "" {
				cfg.Mode = a.mode
			}
			var bashCfg toolbash.Config
			bashCfg.SetDefaults()
			bashCfg.Cwd = work
			reg := policytest.HarnessWith(t, policytest.Mount{Plugin: toolbash.Plugin, Config: bashCfg},
				policytest.Mount{Plugin: permission.Plugin, Config: cfg}, headless)
			args := map[string]string{"command": sub(a.command), "description": "attack"}
			if a.workdir != "" {
				args["workdir"] = sub(a.workdir)
			}
			raw, _ := json.Marshal(args)
			before := snapshot(t, victim)
			o := reg.Execute(t.Context(), tools.Call{ID: "a", Name: "bash", Arguments: string(raw)})
			text := policytest.Text(o)
			after := snapshot(t, victim)
			switch a.want {
			case "deny":
				if !o.IsError || !strings.Contains(text, "permission denied: rule") {
					t.Fatalf("want a deny rule's denial, got %q", text)
				}
			case "ask":
				if !o.IsError || !strings.Contains(text, "requires approval") || !strings.Contains(text, "headless") {
					t.Fatalf("want an ask (headless: denied), got %q", text)
				}
			case "allow":
				if strings.Contains(text, "requires approval") || strings.Contains(text, "permission denied") {
					t.Fatalf("want the call to run, got %q", text)
				}
				if a.contains != "" && !strings.Contains(text, a.contains) {
					t.Fatalf("output %q lacks %q", text, a.contains)
				}
			}
			if a.want == "allow" && a.removed != "" {
				if _, err := os.Stat(filepath.Join(victim, a.removed)); !os.IsNotExist(err) {
					t.Fatalf("the allowed command did not remove %s (err %v): %q", a.removed, err, text)
				}
				return
			}
			if len(before) != len(after) {
				t.Fatalf("victim changed: before %v after %v", before, after)
			}
			for k, v := range before {
				if after[k] != v {
					t.Fatalf("victim %s changed: %q → %q", k, v, after[k])
				}
			}
		})
	}
}

// fileAttack is a file-tool row: tool, path (with {V} and {W}), mode,
// rules, expected verdict, and the file that must (allow) or must not
// (otherwise) exist afterwards.
type fileAttack struct {
	name    string
	tool    string
	path    string
	mode    permission.Mode
	deny    []string
	want    string
	created string
}

// TestFileToolAttacks: acceptEdits writes without asking only inside the
// workspace (symlinks resolved), and deny rules catch hard links. The real
// tool-fs plugin runs the allowed calls.
func TestFileToolAttacks(t *testing.T) {
	rows := []fileAttack{
		{name: "inside", tool: "write", path: "new.txt", mode: permission.ModeAcceptEdits, want: "allow", created: "{W}/new.txt"},
		{name: "inside absolute", tool: "write", path: "{W}/sub/new.txt", mode: permission.ModeAcceptEdits, want: "allow", created: "{W}/sub/new.txt"},
		{name: "absolute outside", tool: "write", path: "{V}/evil.txt", mode: permission.ModeAcceptEdits, want: "ask", created: "{V}/evil.txt"},
		{name: "dot-dot", tool: "write", path: "../{VB}/evil.txt", mode: permission.ModeAcceptEdits, want: "ask", created: "{V}/evil.txt"},
		{name: "in-tree symlink", tool: "write", path: "link/evil.txt", mode: permission.ModeAcceptEdits, want: "ask", created: "{V}/evil.txt"},
		{name: "dangling symlink", tool: "write", path: "dangling", mode: permission.ModeAcceptEdits, want: "ask", created: "{V}/made-by-link"},
		{name: "hard link to a denied file", tool: "read", path: "innocent.txt", deny: []string{"read(**/.env)"}, want: "deny"},
		{name: "hard link read in bypass", tool: "read", path: "innocent.txt", mode: permission.ModeBypass, deny: []string{"read(**/.env)"}, want: "deny"},
		{name: "hard link outside the workspace", tool: "read", path: "innocent.txt", deny: []string{"read({V}/**)"}, want: "deny"},
		{name: "unrelated file reads", tool: "read", path: "plain.txt", deny: []string{"read(**/.env)"}, want: "allow"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			work, victim := victims(t)
			sub := strings.NewReplacer("{V}", victim, "{W}", work, "{VB}", filepath.Base(victim)).Replace
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(os.Symlink(victim, filepath.Join(work, "link")))
			must(os.Symlink(filepath.Join(victim, "made-by-link"), filepath.Join(work, "dangling")))
			must(os.WriteFile(filepath.Join(work, ".env"), []byte("TOKEN=1\n"), 0o600))
			must(os.WriteFile(filepath.Join(work, "plain.txt"), []byte("plain\n"), 0o600))
			must(os.Link(filepath.Join(work, ".env"), filepath.Join(work, "innocent.txt")))
			if strings.Contains(r.name, "outside") {
				must(os.Remove(filepath.Join(work, "innocent.txt")))
				must(os.Link(filepath.Join(victim, "secret"), filepath.Join(work, "innocent.txt")))
			}
			var deny []string
			for _, d := range r.deny {
				deny = append(deny, sub(d))
			}
			cfg := config(work, nil, nil, deny)
			if r.mode != "" {
				cfg.Mode = r.mode
			}
			var fsCfg toolfs.Config
			fsCfg.SetDefaults()
			fsCfg.Cwd = work
			reg := policytest.Harness(t, policytest.Mount{Plugin: toolfs.Plugin, Config: fsCfg},
				policytest.Mount{Plugin: permission.Plugin, Config: cfg}, headless)
			fields := map[string]string{"file_path": sub(r.path)}
			if r.tool == "write" {
				fields["content"] = "written\n"
			}
			args, _ := json.Marshal(fields)
			o := reg.Execute(t.Context(), tools.Call{ID: "f", Name: r.tool, Arguments: string(args)})
			text := policytest.Text(o)
			switch r.want {
			case "allow":
				if o.IsError {
					t.Fatalf("want the call to run, got %q", text)
				}
			case "ask":
				if !o.IsError || !strings.Contains(text, "requires approval") {
					t.Fatalf("want an ask (headless: denied), got %q", text)
				}
			case "deny":
				if !o.IsError || !strings.Contains(text, "permission denied: rule") || strings.Contains(text, "TOKEN") || strings.Contains(text, "s3cret") {
					t.Fatalf("want a deny rule's denial, got %q", text)
				}
			}
			if r.created != "" {
				_, err := os.Stat(sub(r.created))
				if exists := err == nil; exists != (r.want == "allow") {
					t.Fatalf("%s exists = %v after a %s verdict", sub(r.created), exists, r.want)
				}
			}
		})
	}
}
