package permission

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/subprocess/sandbox"
)

// defaultSpec is the tool classification the plugin's Config defaults to.
func defaultSpec(cwd string) Spec {
	return Spec{
		Cwd:                 cwd,
		ShellTools:          map[string]string{"bash": "command"},
		FileTools:           map[string]string{"read": "file_path", "write": "file_path", "edit": "file_path", "grep": "path", "glob": "path"},
		FileToolDefaultPath: map[string]string{"grep": ".", "glob": "."},
		ReadOnly:            []string{"read", "grep", "glob"},
		EditTools:           []string{"write", "edit"},
	}
}

func bashArgs(cmd string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"command": cmd, "description": "x"})
	return b
}

func fileArgs(p string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"file_path": p})
	return b
}

func TestSplitCommandParts(t *testing.T) {
	tests := []struct {
		line string
		want []string // first form of every part
	}{
		{"echo ok", []string{"echo ok"}},
		{"git add . && git commit -m 'a && b'", []string{"git add .", "git commit -m 'a && b'"}},
		{"a || b; c | d", []string{"a", "b", "c", "d"}},
		{"(cd x && make) & wait", []string{"cd x", "make", "wait"}},
		{"echo $(rm -rf /)", []string{"echo $(rm -rf /)", "rm -rf /"}},
		{"if true; then rm -rf x; fi", []string{"true", "rm -rf x"}},
		{"bash -c 'go test ./... && rm -rf /'", []string{"bash -c 'go test ./... && rm -rf /'", "go test ./...", "rm -rf /"}},
		{"sh -lc \"echo hi\"", []string{`sh -lc "echo hi"`, "echo hi"}},
		{"eval rm -rf /", []string{"eval rm -rf /", "rm -rf /"}},
		{"FOO=1 go test ./...", []string{"FOO=1 go test ./..."}},
		{"echo  'a;b'   >  out.txt", []string{"echo 'a;b'"}},
	}
	for _, tt := range tests {
		parts, ok := splitCommand(tt.line)
		if !ok {
			t.Errorf("splitCommand(%q) did not parse", tt.line)
			continue
		}
		var got []string
		for _, p := range parts {
			got = append(got, p.Forms[0])
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitCommand(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestSplitCommandFormsPeelQuotesAndWrappers(t *testing.T) {
	parts, ok := splitCommand(`sudo -n timeout 5 "r"m -rf /tmp/x`)
	if !ok || len(parts) != 1 {
		t.Fatalf("parts = %v, ok = %v", parts, ok)
	}
	want := []string{`sudo -n timeout 5 "r"m -rf /tmp/x`, "sudo -n timeout 5 rm -rf /tmp/x", "timeout 5 rm -rf /tmp/x", "rm -rf /tmp/x"}
	if !reflect.DeepEqual(parts[0].Forms, want) {
		t.Fatalf("forms = %q, want %q", parts[0].Forms, want)
	}
}

func TestSplitCommandKeepsRedirectionsInWritten(t *testing.T) {
	parts, ok := splitCommand("echo  'a;b'   >  out.txt 2>&1")
	if !ok || len(parts) != 1 || parts[0].Written != "echo 'a;b' >out.txt 2>&1" || !parts[0].Writes {
		t.Fatalf("parts = %+v", parts)
	}
	parts, _ = splitCommand("ls 2>/dev/null >&2")
	if parts[0].Writes {
		t.Fatalf("/dev/null and fd duplication are not writes: %+v", parts)
	}
}

func TestSplitCommandUnparsable(t *testing.T) {
	if _, ok := splitCommand("echo 'unterminated"); ok {
		t.Fatal("an unterminated quote must not parse")
	}
}

func TestTextGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"rm -rf *", "rm -rf /tmp/b17-target", true},
		{"rm -rf *", "rm -rf", true},
		{"rm -rf *", "rm -rfx", false},
		{"git *", "git", true},
		{"git *", "gitk", false},
		{"git push:*", "git push origin main", true},
		{"git push:*", "git push", true},
		{"git push:*", "git pushx", false},
		{"go test ./...", "go test ./...", true},
		{"go test ./...", "go test ./... -run X", false},
		{"echo ?", "echo a", true},
		{`echo \*`, "echo *", true},
		{`echo \*`, "echo a", false},
		{"*example.com*", `{"url":"https://example.com/x"}`, true},
	}
	for _, tt := range tests {
		if got := compileTextGlob(tt.pattern).match(tt.s); got != tt.want {
			t.Errorf("glob %q match %q = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestParseRuleErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "empty rule"},
		{"bash(", `rule "bash(": missing closing parenthesis`},
		{"bash()", `rule "bash()": empty argument pattern (write "bash" for every call)`},
		{"bash)", `rule "bash)": unbalanced parenthesis`},
		{"(x)", `rule "(x)": tool name must be one word`},
		{"read([a)", `rule "read([a)": invalid path pattern "[a"`},
	}
	for _, tt := range tests {
		_, err := ParseRule(tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseRule(%q) error = %v, want %q", tt.in, err, tt.want)
		}
	}
	if _, err := New(Spec{Deny: []string{"ok", "bad("}}); err == nil || err.Error() != `deny[1]: rule "bad(": missing closing parenthesis` {
		t.Errorf("New error = %v", err)
	}
	if _, err := New(Spec{Mode: "yolo"}); err == nil || err.Error() != `mode: "yolo" is not one of default, acceptEdits, plan, bypass, dontAsk` {
		t.Errorf("New error = %v", err)
	}
}

// TestEvaluateIssueRuleSet is the issue's "done when" rule set: allow git and
// go test, ask for edits, deny rm -rf.
func TestEvaluateIssueRuleSet(t *testing.T) {
	cwd := t.TempDir()
	spec := defaultSpec(cwd)
	spec.Allow = []string{"bash(git *)", "bash(go test *)"}
	spec.Ask = []string{"edit", "write"}
	spec.Deny = []string{"bash(rm -rf *)"}
	p, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool string
		args json.RawMessage
		want Decision
		rule string
	}{
		{"bash", bashArgs("git status"), Allow, ""},
		{"bash", bashArgs("go test ./..."), Allow, ""},
		{"bash", bashArgs("git add . && go test ./... | tee log"), Ask, ""}, // tee is not allowed
		{"bash", bashArgs("git add . && go test ./..."), Allow, ""},
		{"bash", bashArgs("git status; rm -rf /tmp/x"), Deny, "bash(rm -rf *)"},
		{"bash", bashArgs("echo hi || rm -rf ~"), Deny, "bash(rm -rf *)"},
		{"bash", bashArgs("ls | xargs rm -rf"), Deny, "bash(rm -rf *)"},
		{"bash", bashArgs("bash -c 'rm -rf /'"), Deny, "bash(rm -rf *)"},
		{"bash", bashArgs(`"rm" -rf /`), Deny, "bash(rm -rf *)"},
		{"bash", bashArgs("sudo rm -rf /"), Deny, "bash(rm -rf *)"},
		{"bash", bashArgs("git log $(rm -rf /)"), Deny, "bash(rm -rf *)"},
		// A program named by its path is still that program for deny rules,
		// but an allow rule for the bare name does not cover a path.
		{"bash", bashArgs("/bin/rm -rf /tmp/b17-target"), Deny, "bash(rm -rf *)"},
		{"bash", bashArgs("sudo /usr/bin/rm -rf /"), Deny, "bash(rm -rf *)"},
		{"bash", bashArgs("/tmp/evil/git status"), Ask, ""},
		{"bash", bashArgs("git status && echo 'unterminated"), Ask, ""},
		{"bash", bashArgs("FOO=1 git status"), Ask, ""},
		{"Bash", bashArgs("git status"), Allow, ""},
		{"bash", bashArgs("git log > ~/.bashrc"), Ask, ""},
		{"bash", bashArgs("git log >> notes"), Ask, ""},
		{"bash", bashArgs("git log &> notes"), Ask, ""},
		{"bash", bashArgs("git log 2>&1 >/dev/null"), Allow, ""},
		{"bash", bashArgs("git log 2>/dev/null | go test ./..."), Allow, ""},
		{"bash", bashArgs("git log >&notes"), Ask, ""},
		{"edit", fileArgs("main.go"), Ask, "edit"},
		{"write", fileArgs("main.go"), Ask, "edit"}, // an edit rule governs every edit tool
		{"read", fileArgs("main.go"), Allow, ""},
		{"webfetch", json.RawMessage(`{"url":"https://x"}`), Ask, ""},
	}
	for _, tt := range tests {
		v := p.Evaluate(Call{Tool: tt.tool, Args: tt.args})
		if v.Decision != tt.want || v.Rule != tt.rule {
			t.Errorf("%s %s: got %v rule %q (%s), want %v rule %q", tt.tool, tt.args, v.Decision, v.Rule, v.Reason, tt.want, tt.rule)
		}
	}
}

func TestEvaluateReasonsAndSuggestions(t *testing.T) {
	spec := defaultSpec(t.TempDir())
	spec.Deny = []string{"bash(rm -rf *)"}
	p, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	v := p.Evaluate(Call{Tool: "bash", Args: bashArgs("rm -rf /tmp/b17-target")})
	if v.Reason != `permission denied: rule "bash(rm -rf *)" in the deny list matches this call` {
		t.Errorf("deny reason = %q", v.Reason)
	}
	v = p.Evaluate(Call{Tool: "bash", Args: bashArgs("go build ./... && go vet")})
	if v.Decision != Ask || !reflect.DeepEqual(v.Suggestions, []string{"bash(go build *)", "bash(go vet *)"}) ||
		v.Reason != `tool "bash" requires approval: no allow rule covers this call (permission mode default)` {
		t.Errorf("ask verdict = %+v", v)
	}
	v = p.Evaluate(Call{Tool: "write", Args: fileArgs("src/a.go")})
	if !reflect.DeepEqual(v.Suggestions, []string{"write(src/a.go)"}) {
		t.Errorf("file suggestion = %q", v.Suggestions)
	}
}

func TestEvaluateModes(t *testing.T) {
	cwd := t.TempDir()
	tests := []struct {
		mode  Mode
		tool  string
		args  json.RawMessage
		allow []string
		ask   []string
		want  Decision
	}{
		{ModeDefault, "read", fileArgs("a"), nil, nil, Allow},
		{ModeDefault, "write", fileArgs("a"), nil, nil, Ask},
		{ModeDefault, "write", fileArgs("a"), []string{"write(a)"}, nil, Allow},
		{ModeAcceptEdits, "write", fileArgs("a"), nil, nil, Allow},
		{ModeAcceptEdits, "edit", fileArgs("a"), nil, nil, Allow},
		{ModeAcceptEdits, "bash", bashArgs("ls"), nil, nil, Ask},
		{ModeAcceptEdits, "write", fileArgs("a"), nil, []string{"write"}, Ask},
		{ModePlan, "read", fileArgs("a"), nil, nil, Allow},
		{ModePlan, "bash", bashArgs("ls"), []string{"bash"}, nil, Deny},
		{ModePlan, "write", fileArgs("a"), []string{"write"}, nil, Deny},
		{ModeBypass, "bash", bashArgs("ls"), nil, nil, Allow},
		{ModeBypass, "bash", bashArgs("ls"), nil, []string{"bash"}, Allow},
	}
	for _, tt := range tests {
		spec := defaultSpec(cwd)
		spec.Mode, spec.Allow, spec.Ask = tt.mode, tt.allow, tt.ask
		p, err := New(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Evaluate(Call{Tool: tt.tool, Args: tt.args}); got.Decision != tt.want {
			t.Errorf("mode %s %s %s allow=%v ask=%v: got %v (%s), want %v", tt.mode, tt.tool, tt.args, tt.allow, tt.ask, got.Decision, got.Reason, tt.want)
		}
	}
}

func TestEvaluateDenyBeatsAskBeatsAllowWhateverTheOrder(t *testing.T) {
	spec := defaultSpec(t.TempDir())
	spec.Allow = []string{"bash", "bash(git *)"}
	spec.Ask = []string{"bash(git push *)"}
	spec.Deny = []string{"bash(git push --force *)"}
	p, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	for cmd, want := range map[string]Decision{
		"git status":                   Allow,
		"git push origin main":         Ask,
		"git push --force origin main": Deny,
		"git status && git push":       Ask,
	} {
		if got := p.Evaluate(Call{Tool: "bash", Args: bashArgs(cmd)}).Decision; got != want {
			t.Errorf("%q: got %v, want %v", cmd, got, want)
		}
	}
}

func TestEvaluateFilePaths(t *testing.T) {
	cwd := t.TempDir()
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cwd, "src", "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A symlink inside the project pointing outside it.
	if err := os.Symlink(outside, filepath.Join(cwd, "src", "escape")); err != nil {
		t.Fatal(err)
	}
	spec := defaultSpec(cwd)
	spec.Allow = []string{"write(src/**)", "edit(./docs/*.md)"}
	spec.Deny = []string{"read(**/.env)", "read(" + filepath.ToSlash(outside) + "/**)"}
	p, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool, path string
		want       Decision
	}{
		{"write", "src/pkg/a.go", Allow},
		{"write", filepath.Join(cwd, "src/pkg/a.go"), Allow},
		{"write", "src/../main.go", Ask},
		{"write", "../elsewhere/src/a.go", Ask},
		{"write", "src/escape/a.go", Ask}, // resolves outside the project
		{"edit", "docs/guide.md", Allow},
		{"edit", "docs/sub/guide.md", Ask},
		{"read", ".env", Deny},
		{"read", "config/.env", Deny},
		{"read", "src/escape/secret", Deny}, // symlink target is denied
		{"read", filepath.Join(outside, "x"), Deny},
		{"read", "README.md", Allow},
	}
	for _, tt := range tests {
		if got := p.Evaluate(Call{Tool: tt.tool, Args: fileArgs(tt.path)}); got.Decision != tt.want {
			t.Errorf("%s %s: got %v (%s), want %v", tt.tool, tt.path, got.Decision, got.Reason, tt.want)
		}
	}
	// grep without a path searches the working directory.
	spec.Deny = []string{"grep(" + filepath.ToSlash(cwd) + ")"}
	p, err = New(spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Evaluate(Call{Tool: "grep", Args: json.RawMessage(`{"pattern":"x"}`)}); got.Decision != Deny {
		t.Errorf("grep without path: got %v", got.Decision)
	}
}

func TestEvaluateOtherToolsGlobOverJSON(t *testing.T) {
	spec := defaultSpec(t.TempDir())
	spec.Allow = []string{`webfetch(*"url":"https://docs.example.com/*)`}
	spec.Deny = []string{"mcp__*", `webfetch(*&&*)`}
	p, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool, args string
		want       Decision
	}{
		{"webfetch", `{"url": "https://docs.example.com/a", "format": "md"}`, Allow},
		{"webfetch", `{"url":"https://evil.example/a"}`, Ask},
		{"webfetch", `{"url":"https://docs.example.com/?a&&b"}`, Deny},
		{"mcp__github__delete_repo", `{}`, Deny},
	}
	for _, tt := range tests {
		if got := p.Evaluate(Call{Tool: tt.tool, Args: json.RawMessage(tt.args)}); got.Decision != tt.want {
			t.Errorf("%s %s: got %v (%s), want %v", tt.tool, tt.args, got.Decision, got.Reason, tt.want)
		}
	}
	if got := canonicalJSON(json.RawMessage(`{"b": 1, "a": "<&>"}`)); got != `{"a":"<&>","b":1}` {
		t.Errorf("canonicalJSON = %s", got)
	}
	if !strings.Contains(p.Evaluate(Call{Tool: "mcp__x"}).Reason, `"mcp__*"`) {
		t.Error("deny reason must name the rule")
	}
}

func TestAllowRuleMustNameARedirection(t *testing.T) {
	spec := defaultSpec(t.TempDir())
	spec.Allow = []string{"bash(echo *)", "bash(go test * > *.log)"}
	p, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	for cmd, want := range map[string]Decision{
		"echo hi":                    Allow,
		"echo hi > ~/.bashrc":        Ask,
		"go test ./... > test.log":   Allow,
		"go test ./... > /etc/x.log": Allow, // the rule said "> *.log"
		"go test ./... >> test.txt":  Ask,
	} {
		if got := p.Evaluate(Call{Tool: "bash", Args: bashArgs(cmd)}).Decision; got != want {
			t.Errorf("%q: got %v, want %v", cmd, got, want)
		}
	}
}

// B17 kind: a read deny (or ask) must hold on every tool that reads files by
// path. `grep` of `.env` or of `~/.ssh` would otherwise print what
// `read(**/.env)` / `read(~/.ssh/**)` refuse.
func TestReadRulesGovernGrepAndGlob(t *testing.T) {
	cwd := t.TempDir()
	home, _ := os.UserHomeDir()
	s := defaultSpec(cwd)
	s.Deny = []string{"read(**/.env)", "read(~/.ssh/**)"}
	s.Ask = []string{"read(secrets/**)"}
	p, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	args := func(m map[string]string) json.RawMessage { b, _ := json.Marshal(m); return b }
	for _, tt := range []struct {
		tool string
		args json.RawMessage
		want Decision
	}{
		{"grep", args(map[string]string{"pattern": ".", "path": ".env"}), Deny},
		{"grep", args(map[string]string{"pattern": ".", "path": "cfg/.env"}), Deny},
		{"grep", args(map[string]string{"pattern": ".", "path": filepath.Join(home, ".ssh")}), Deny},
		{"glob", args(map[string]string{"pattern": "*", "path": "~/.ssh"}), Deny},
		{"grep", args(map[string]string{"pattern": ".", "path": "secrets/db"}), Ask},
		{"grep", args(map[string]string{"pattern": "."}), Allow},
		{"grep", args(map[string]string{"pattern": ".", "path": "src"}), Allow},
		{"write", args(map[string]string{"file_path": ".env", "content": "x"}), Ask}, // read rules do not govern edits
	} {
		if v := p.Evaluate(Call{Tool: tt.tool, Args: tt.args}); v.Decision != tt.want {
			t.Errorf("%s %s: %v (%s), want %v", tt.tool, tt.args, v.Decision, v.Reason, tt.want)
		}
	}
}

func TestReadDenied(t *testing.T) {
	cwd := t.TempDir()
	home, _ := os.UserHomeDir()
	spec := defaultSpec(cwd)
	spec.Deny = []string{"bash(rm *)", "read(.env)", "Read(secrets/**)", "read(~/.ssh/**)", "grep(logs/**)"}
	spec.Ask = []string{"read(notes/**)"}
	p, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path, rule string
	}{
		{filepath.Join(cwd, ".env"), "read(.env)"},
		{filepath.Join(cwd, "sub", ".env"), ""}, // the pattern is relative to the working directory
		{filepath.Join(cwd, "secrets", "a", "key.pem"), "Read(secrets/**)"},
		{filepath.Join(home, ".ssh", "id_ed25519"), "read(~/.ssh/**)"},
		{filepath.Join(cwd, "notes", "todo.md"), ""}, // ask is not a denial
		{filepath.Join(cwd, "logs", "app.log"), ""},  // a grep rule is about grep's path argument
		{filepath.Join(cwd, "src", "main.go"), ""},
	}
	for _, tt := range tests {
		rule, denied := p.ReadDenied(tt.path)
		if rule != tt.rule || denied != (tt.rule != "") {
			t.Errorf("ReadDenied(%s) = %q, %v; want %q", tt.path, rule, denied, tt.rule)
		}
	}
	spec.FileTools = map[string]string{"cat": "file"}
	noRead, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	if rule, denied := noRead.ReadDenied(filepath.Join(cwd, ".env")); denied {
		t.Errorf("without a read tool: denied by %q", rule)
	}
}

// TestAcceptEditsWorkspaceRoots: acceptEdits writes without asking inside
// the working directory and the call's roots (the sandbox's writable
// roots), also through a symlinked root, and asks elsewhere.
func TestAcceptEditsWorkspaceRoots(t *testing.T) {
	cwd, root, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	linkedRoot := filepath.Join(t.TempDir(), "linked")
	if err := os.Symlink(root, linkedRoot); err != nil {
		t.Fatal(err)
	}
	spec := defaultSpec(cwd)
	spec.Mode = ModeAcceptEdits
	p, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path  string
		roots []string
		want  Decision
	}{
		{filepath.Join(cwd, "a.go"), nil, Allow},
		{filepath.Join(root, "a.go"), nil, Ask},
		{filepath.Join(root, "a.go"), []string{root}, Allow},
		{filepath.Join(root, "a.go"), []string{linkedRoot}, Allow},
		{filepath.Join(linkedRoot, "a.go"), []string{root}, Allow},
		{filepath.Join(elsewhere, "a.go"), []string{root}, Ask},
		{filepath.Join(root, "..", filepath.Base(elsewhere), "a.go"), []string{root}, Ask},
	} {
		if got := p.Evaluate(Call{Tool: "write", Args: fileArgs(tc.path), Roots: tc.roots}); got.Decision != tc.want {
			t.Errorf("write %s with roots %v: %+v, want %v", tc.path, tc.roots, got, tc.want)
		}
	}
}

// TestOptionPatternSpellings: a deny rule's options match however they are
// written, and only when all of them are present.
func TestOptionPatternSpellings(t *testing.T) {
	for _, tc := range []struct {
		rule, command string
		want          bool
	}{
		{"rm -rf *", "rm -fr x", true},
		{"rm -rf *", "rm -r -f x", true},
		{"rm -rf *", "rm -Rf x", true},
		{"rm -rf *", "rm --recursive --force x", true},
		{"rm -rf *", "rm -r x", false},
		{"rm -rf *", "rm -f x", false},
		{"rm -rf /", "rm -fr /", true},
		{"rm -rf /", "rm -fr /tmp", false},
		{"git push --force *", "git push -f origin main", true},
		{"git push --force *", "git push origin main", false},
		{"git push --force-with-lease *", "git push --force-with-lease=origin/main origin", true},
		{"git branch -D *", "git branch -d -f x", true},
		{"git branch -D *", "git branch -d x", false},
		{"find -delete *", "find . -name x -delete", true},
		{"find -delete *", "find . -name x", false},
		{"chmod -R *", "chmod --recursive 777 /", true},
	} {
		op := parseOptionPattern(tc.rule)
		if op == nil {
			t.Errorf("%q: no option pattern", tc.rule)
			continue
		}
		if got := op.match(strings.Fields(tc.command)); got != tc.want {
			t.Errorf("%q vs %q = %v, want %v", tc.rule, tc.command, got, tc.want)
		}
	}
}

// TestUnknownParts: what makes a part unknown, and what does not.
func TestUnknownParts(t *testing.T) {
	for _, tc := range []struct {
		line    string
		unknown bool
	}{
		{"$x -rf v", true},
		{"${x:-rm} v", true},
		{"$(echo rm) v", true},
		{"`echo rm` v", true},
		{"/bin/r? v", true},
		{"{rm,-rf,v}", true},
		{`eval "$c"`, true},
		{`bash -c "$c"`, true},
		{"cat x.sh | bash", true},
		{"bash < x.sh", true},
		{"sudo $cmd", true},
		{"echo $x", false},
		{"echo 'rm' | cat", false},
		{`bash -c 'echo "$HOME"'`, false},
		{"bash script.sh", false},
		{"echo hi | bash", false},
		{"bash <<'EOF'\necho $x\nEOF", false},
		{"bash <<EOF\necho $(date)\nEOF", true},
	} {
		parts, _ := splitCommand(tc.line)
		got := false
		for _, p := range parts {
			got = got || p.Unknown != ""
		}
		if got != tc.unknown {
			t.Errorf("%q: unknown = %v, want %v (parts %+v)", tc.line, got, tc.unknown, parts)
		}
	}
}

// TestProtectedWritesAreTheSharedList: the paths a file tool's write is
// asked for are exactly sandbox.ProtectedPaths (the list the sandbox guards):
// each entry and everything in a directory entry, and none of the paths
// beside them.
func TestProtectedWritesAreTheSharedList(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var rels []string
	for _, p := range sandbox.ProtectedPaths() {
		d := strings.TrimSuffix(p, "/")
		rels = append(rels, d, d+"x", d+".bak", "sub/"+d, d+"/x", d+"/x/y", filepath.Dir(d))
	}
	rels = append(rels, ".git/HEAD", ".git/info/exclude", ".env", "Makefile", "go.mod", "harness.yaml")
	for _, rel := range rels {
		want := sandbox.IsProtectedPath(rel)
		for _, p := range sandbox.ProtectedPaths() {
			if rel == strings.TrimSuffix(p, "/") {
				want = true // each entry itself, whatever IsProtectedPath says
			}
		}
		if got := protectedUnder(filepath.Join(root, rel), root, []string{root}); got != want {
			t.Errorf("protectedUnder(%q) = %v, want %v", rel, got, want)
		}
	}
}

// TestEvaluateEscalationAndInternalTools: a shell call that asks to leave
// the sandbox is asked in every mode but bypass whatever the allow rules
// say, unless a rule written with `unsandboxed` covers it; an internal tool
// (todo_write, task) runs without asking in every mode but plan, and deny
// and ask rules still hold for it.
func TestEvaluateEscalationAndInternalTools(t *testing.T) {
	cwd := t.TempDir()
	off := func(cmd string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"command": cmd, "sandbox": "off", "justification": "j"})
		return b
	}
	tests := []struct {
		mode     Mode
		call     Call
		allow    []string
		ask      []string
		deny     []string
		want     Decision
		suggests string
	}{
		{ModeAcceptEdits, Call{Tool: "bash", Args: off("git status"), Escalated: true}, []string{"bash(git status *)", "bash(git status)"}, nil, nil, Ask, "bash(git status *) unsandboxed"},
		{ModeDefault, Call{Tool: "bash", Args: off("go test ./..."), Escalated: true}, []string{"bash"}, nil, nil, Ask, "bash(go test *) unsandboxed"},
		{ModeDefault, Call{Tool: "bash", Args: off("go test ./..."), Escalated: true}, []string{"bash(go test *) unsandboxed"}, nil, nil, Allow, ""},
		{ModeDefault, Call{Tool: "bash", Args: off("go test ./... && curl x"), Escalated: true}, []string{"bash(go test *) unsandboxed", "bash(curl *)"}, nil, nil, Ask, ""},
		{ModeBypass, Call{Tool: "bash", Args: off("go test ./..."), Escalated: true}, nil, nil, nil, Allow, ""},
		{ModeBypass, Call{Tool: "bash", Args: off("rm -rf x"), Escalated: true}, nil, nil, []string{"bash(rm -rf *)"}, Deny, ""},
		{ModePlan, Call{Tool: "bash", Args: off("ls"), Escalated: true}, []string{"bash unsandboxed"}, nil, nil, Deny, ""},
		{ModeDefault, Call{Tool: "bash", Args: off("ls"), Escalated: true}, []string{"bash unsandboxed"}, nil, nil, Allow, ""},
		{ModeDefault, Call{Tool: "bash", Args: bashArgs("ls")}, []string{"bash(ls) unsandboxed"}, nil, nil, Allow, ""},
		{ModeDefault, Call{Tool: "todo_write", Args: json.RawMessage(`{}`), Internal: true}, nil, nil, nil, Allow, ""},
		{ModeAcceptEdits, Call{Tool: "task", Args: json.RawMessage(`{}`), Internal: true}, nil, nil, nil, Allow, ""},
		{ModePlan, Call{Tool: "todo_write", Args: json.RawMessage(`{}`), Internal: true}, nil, nil, nil, Deny, ""},
		{ModeDefault, Call{Tool: "task", Args: json.RawMessage(`{}`), Internal: true}, nil, []string{"task"}, nil, Ask, ""},
		{ModeDefault, Call{Tool: "task", Args: json.RawMessage(`{}`), Internal: true}, nil, nil, []string{"task"}, Deny, ""},
		{ModeDefault, Call{Tool: "task", Args: json.RawMessage(`{}`)}, nil, nil, nil, Ask, ""},
	}
	for i, tt := range tests {
		spec := defaultSpec(cwd)
		spec.Mode, spec.Allow, spec.Ask, spec.Deny = tt.mode, tt.allow, tt.ask, tt.deny
		p, err := New(spec)
		if err != nil {
			t.Fatal(err)
		}
		got := p.Evaluate(tt.call)
		if got.Decision != tt.want {
			t.Errorf("%d: mode %s %s %s allow=%v: got %v (%s), want %v", i, tt.mode, tt.call.Tool, tt.call.Args, tt.allow, got.Decision, got.Reason, tt.want)
		}
		if tt.suggests != "" && (len(got.Suggestions) != 1 || got.Suggestions[0] != tt.suggests || !got.Escalated) {
			t.Errorf("%d: suggestions %q escalated=%v, want [%q]", i, got.Suggestions, got.Escalated, tt.suggests)
		}
	}
	if _, err := New(Spec{Deny: []string{"bash(ls) unsandboxed"}}); err == nil || !strings.Contains(err.Error(), `deny[0]: rule "bash(ls) unsandboxed": "unsandboxed" belongs only to allow rules`) {
		t.Errorf("unsandboxed deny rule: %v", err)
	}
	if r, err := ParseRule("mcp__x__unsandboxed"); err != nil || r.unsandboxed {
		t.Errorf("a tool named ...unsandboxed: %+v %v", r, err)
	}
}

// TestDenySeesArithmeticAndPromptExpansions: bash runs the command
// substitution in `$(( $(cmd) 0 ))` (a line the parser rejects) and the
// ones in a value `${x@P}` prompt-expands; a deny rule sees both, also in
// the sandbox (issue 32, attack 7). A prompt expansion of a variable the
// line does not assign literally is unknown.
func TestDenySeesArithmeticAndPromptExpansions(t *testing.T) {
	spec := defaultSpec(t.TempDir())
	spec.Deny = []string{"bash(rm -rf *)"}
	spec.AutoAllowSandboxed = true
	p, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		"echo $(( $(rm -rf V) 0 ))",
		"echo $(( 1 + `rm -rf V` 0 ))",
		"x='$(rm -rf V)'; echo ${x@P}",
		"declare x='$(rm -rf V)'; printf '%s' \"${x@P}\"",
		"x='\\u@\\h $(rm -rf V)'; echo \"${x@P}\"",
	} {
		if v := p.Evaluate(Call{Tool: "bash", Args: bashArgs(cmd), Sandboxed: true}); v.Decision != Deny {
			t.Errorf("%q: %v (%s), want deny", cmd, v.Decision, v.Reason)
		}
	}
	if v := p.Evaluate(Call{Tool: "bash", Args: bashArgs("echo ${PS1@P}")}); v.Decision != Ask || !v.Unknown {
		t.Errorf("prompt expansion of an unknown value: %v unknown=%v (%s)", v.Decision, v.Unknown, v.Reason)
	}
}
