package instructions_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/plugins/instructions"
	"github.com/dshgo/harness/services/systemprompt"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// tree writes files under dir: "path": "content"; content "->target" makes
// a symlink; a path ending in "/" makes a directory.
func tree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := filepath.Join(dir, k)
		if strings.HasSuffix(k, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		v := files[k]
		if target, ok := strings.CutPrefix(v, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoad(t *testing.T) {
	big := strings.Repeat("é", 100) // 200 bytes
	cases := []struct {
		name     string
		files    map[string]string
		cwd      string // relative to the temp dir
		user     string // relative user file, "" for none
		maxBytes int
		depth    int
		// want: the files loaded (paths relative to the temp dir), in order.
		want []string
		// contains / absent: substrings of the rendered section.
		contains, absent []string
	}{
		{
			name: "nested dirs in a repository: root to cwd, nearer later, nothing above the root",
			files: map[string]string{
				"AGENTS.md": "above the repository", "repo/.git/": "", "repo/AGENTS.md": "root rules",
				"repo/sub/CLAUDE.md": "sub rules", "repo/sub/AGENTS.md": "sub agents", "repo/sub/deep/": "",
			},
			cwd:      "repo/sub/deep",
			want:     []string{"repo/AGENTS.md", "repo/sub/AGENTS.md", "repo/sub/CLAUDE.md"},
			contains: []string{"root rules", "sub agents", "sub rules"},
			absent:   []string{"above the repository"},
		},
		{
			name:  "a .git file (worktree) marks the root too",
			files: map[string]string{"AGENTS.md": "above", "wt/.git": "gitdir: elsewhere", "wt/AGENTS.md": "wt rules", "wt/a/": ""},
			cwd:   "wt/a",
			want:  []string{"wt/AGENTS.md"},
		},
		{
			name:  "outside a repository every parent up to / counts",
			files: map[string]string{"AGENTS.md": "top", "x/CLAUDE.md": "x", "x/y/": ""},
			cwd:   "x/y",
			want:  []string{"AGENTS.md", "x/CLAUDE.md"},
		},
		{
			name:  "the user file comes first",
			files: map[string]string{"cfg/harness/AGENTS.md": "user prefs", "r/.git/": "", "r/AGENTS.md": "project"},
			cwd:   "r", user: "cfg/harness/AGENTS.md",
			want: []string{"cfg/harness/AGENTS.md", "r/AGENTS.md"},
		},
		{
			name:     "CLAUDE.md as a symlink to AGENTS.md is included once",
			files:    map[string]string{"r/.git/": "", "r/AGENTS.md": "once", "r/CLAUDE.md": "->AGENTS.md"},
			cwd:      "r",
			want:     []string{"r/AGENTS.md"},
			contains: []string{"once"},
		},
		{
			name:     "a symlink loop is a visible note, not a hang",
			files:    map[string]string{"r/.git/": "", "r/AGENTS.md": "->CLAUDE.md", "r/CLAUDE.md": "->AGENTS.md"},
			cwd:      "r",
			want:     []string{"r/AGENTS.md", "r/CLAUDE.md"},
			contains: []string{"AGENTS.md skipped: symlink loop", "CLAUDE.md skipped: symlink loop"},
		},
		{
			name:     "an oversized file is cut on a rune boundary with a note",
			files:    map[string]string{"r/.git/": "", "r/AGENTS.md": big},
			cwd:      "r",
			maxBytes: 101,
			want:     []string{"r/AGENTS.md"},
			contains: []string{strings.Repeat("é", 50) + "\n", "was cut after 100 of its 200 bytes (instructions maxBytes)"},
			absent:   []string{strings.Repeat("é", 51)},
		},
		{
			name:     "template braces are text",
			files:    map[string]string{"r/.git/": "", "r/AGENTS.md": "write {{cwd}} and {{ not a var"},
			cwd:      "r",
			want:     []string{"r/AGENTS.md"},
			contains: []string{"write {{cwd}} and {{ not a var"},
		},
		{
			name: "imports: relative to the importer, nested, after their importer",
			files: map[string]string{
				"r/.git/": "", "r/AGENTS.md": "see @docs/style.md and @./notes.md.", "r/docs/style.md": "style; more in @deeper/x.md",
				"r/docs/deeper/x.md": "deep rule", "r/notes.md": "notes", "r/sub/": "",
			},
			cwd:      "r/sub",
			want:     []string{"r/AGENTS.md", "r/docs/style.md", "r/docs/deeper/x.md", "r/notes.md"},
			contains: []string{"(imported by ", "deep rule"},
		},
		{
			name:  "imports stop at the depth limit",
			files: map[string]string{"r/.git/": "", "r/AGENTS.md": "@a.md", "r/a.md": "@b.md", "r/b.md": "@c.md", "r/c.md": "c"},
			cwd:   "r", depth: 2,
			want: []string{"r/AGENTS.md", "r/a.md", "r/b.md"},
		},
		{
			name:  "an import cycle includes each file once",
			files: map[string]string{"r/.git/": "", "r/AGENTS.md": "@a.md", "r/a.md": "@b.md", "r/b.md": "@a.md @AGENTS.md"},
			cwd:   "r",
			want:  []string{"r/AGENTS.md", "r/a.md", "r/b.md"},
		},
		{
			name: "imports that escape the repository are refused with a note",
			files: map[string]string{
				"secret.md": "TOP SECRET", "r/.git/": "", "r/AGENTS.md": "@../secret.md @link.md @gone.md",
				"r/link.md": "->../secret.md",
			},
			cwd:      "r",
			want:     []string{"r/AGENTS.md"},
			contains: []string{"import @../secret.md in", "import @link.md in", "outside", "import @gone.md in", "no such file"},
			absent:   []string{"TOP SECRET"},
		},
		{
			name: "code spans, fences, mentions and e-mail addresses are not imports",
			files: map[string]string{
				"r/.git/": "", "r/AGENTS.md": "mail a@b.md, ping @alice, run `@x.md`\n```\n@y.md\n```\n@z.md",
				"r/x.md": "X", "r/y.md": "Y", "r/z.md": "Z",
			},
			cwd:  "r",
			want: []string{"r/AGENTS.md", "r/z.md"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tree(t, dir, tc.files)
			o := instructions.Options{Cwd: filepath.Join(dir, tc.cwd), Files: instructions.DefaultFiles,
				MaxBytes: instructions.DefaultMaxBytes, MaxImportDepth: instructions.DefaultMaxImportDepth}
			if tc.maxBytes > 0 {
				o.MaxBytes = tc.maxBytes
			}
			if tc.depth > 0 {
				o.MaxImportDepth = tc.depth
			}
			if tc.user != "" {
				o.UserFile = filepath.Join(dir, tc.user)
			}
			files, _ := instructions.Load(o)
			var got []string
			for _, f := range files {
				rel, err := filepath.Rel(dir, f.Path)
				if err != nil || strings.HasPrefix(rel, "..") {
					continue // a file above the temp dir (outside-repository case)
				}
				got = append(got, rel)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("files = %q, want %q", got, tc.want)
			}
			text := instructions.Render(files, o.MaxBytes)
			for _, s := range tc.contains {
				if !strings.Contains(text, s) {
					t.Errorf("section lacks %q:\n%s", s, text)
				}
			}
			for _, s := range tc.absent {
				if strings.Contains(text, s) {
					t.Errorf("section has %q:\n%s", s, text)
				}
			}
			for _, f := range files {
				if rel, _ := filepath.Rel(dir, f.Path); !strings.HasPrefix(rel, "..") && !strings.Contains(text, "## "+f.Path) {
					t.Errorf("no heading names %s", f.Path)
				}
			}
		})
	}
}

func TestSourceCachesUntilAFileChanges(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{".git/": "", "AGENTS.md": "v1", "sub/": ""})
	cfg := instructions.Config{}
	cfg.SetDefaults()
	cfg.UserFile = "-"
	s := instructions.NewSource(cfg, nil)
	cwd := filepath.Join(dir, "sub")
	a, _ := s.Text(cwd)
	b, _ := s.Text(cwd)
	if !strings.Contains(a, "v1") || a != b {
		t.Fatalf("first %q, second %q", a, b)
	}
	if unsafe.StringData(a) != unsafe.StringData(b) {
		t.Error("the unchanged text was rebuilt (not the cached string)")
	}
	if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("version two"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.Text(cwd); !strings.Contains(c, "version two") {
		t.Fatalf("after the edit: %q", c)
	}
	// A file that appears nearer is picked up.
	if err := os.WriteFile(filepath.Join(cwd, "CLAUDE.md"), []byte("new near file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.Text(cwd); !strings.Contains(c, "new near file") {
		t.Fatalf("after a new file: %q", c)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  instructions.Config
		want string
	}{
		{instructions.Config{MaxBytes: 0, Files: []string{"AGENTS.md"}}, "maxBytes"},
		{instructions.Config{MaxBytes: 1, MaxImportDepth: -1}, "maxImportDepth"},
		{instructions.Config{MaxBytes: 1, Files: []string{"../AGENTS.md"}}, "files[0]"},
	} {
		err := tc.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", tc.cfg, err, tc.want)
		}
	}
}

type agentHandle struct{ cwd string }

func (a agentHandle) Cwd() string { return a.cwd }

// Booted from a manifest, the section renders for the session's directory
// with interpolation off: a {{ in a file never breaks the prompt.
func TestSectionInTheAssembledPrompt(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{".git/": "", "AGENTS.md": "Always run {{the tests}} first.", "pkg/CLAUDE.md": "pkg rule"})
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "nocfg"))
	h := harnesstest.Start(t, "plugins:\n  - name: systemprompt\n  - name: instructions\n")
	sp := harnesstest.Service(t, h, systemprompt.Key)
	a, err := sp.Assemble(context.Background(), systemprompt.AssembleContext{Agent: agentHandle{filepath.Join(dir, "pkg")}})
	if err != nil {
		t.Fatal(err)
	}
	text, err := systemprompt.Render(a)
	if err != nil {
		t.Fatal(err)
	}
	i, j := strings.Index(text, "Always run {{the tests}} first."), strings.Index(text, "pkg rule")
	if i < 0 || j < i {
		t.Fatalf("want the root file then the nearer one, verbatim:\n%s", text)
	}
	// Disabled: no section.
	h2 := harnesstest.Start(t, "plugins:\n  - name: systemprompt\n  - name: instructions\n    config: {enabled: false}\n")
	a2, err := harnesstest.Service(t, h2, systemprompt.Key).Assemble(context.Background(), systemprompt.AssembleContext{Agent: agentHandle{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := systemprompt.Render(a2); strings.Contains(text, "Always run") {
		t.Fatalf("disabled plugin still renders the file:\n%s", text)
	}
}
