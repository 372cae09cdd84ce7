package cli_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// B25 end to end: under umask 000 a large bash output is spilled to a
// private file the model is shown; files are 0600 in 0700 directories and
// are deleted when harness exits normally.
func TestB25SpillFilesPrivateAndDeleted(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	spillRoot := filepath.Join(t.TempDir(), "spill")
	run := func(keep bool) (string, string) {
		srv := llmtest.New(t, []llmtest.Turn{toolCall("c1", "bash", `{"command":"seq 1 500000","description":"count"}`), text("counted")})
		extra := "  - name: spill-local\n    config: {root: " + spillRoot + ", keep: " + map[bool]string{true: "true", false: "false"}[keep] + "}\n" +
			"  - name: spill-policy\n    config: {maxInlineBytes: 16384}\n"
		m := strings.Replace(agentManifest(srv.URL, t.TempDir(), extra), "  - name: tool-bash\n", "  - name: tool-bash\n    config: {maxOutputBytes: 16384}\n", 1)
		cfg := filepath.Join(t.TempDir(), "harness.yml")
		if err := os.WriteFile(cfg, []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", "-c", `umask 000; exec "$0" "$@"`, harnessBinary(t), "--config", cfg, "run", "count")
		cmd.Dir = repo
		cmd.Env = baseEnv()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		w, _ := srv.Requests()[1].Wire()
		return w.Messages[len(w.Messages)-1].Text(), stderr.String()
	}
	shown, _ := run(true)
	paths := regexp.MustCompile(`/[^\s"']+`).FindAllString(shown, -1)
	var spilled []string
	for _, p := range paths {
		if strings.HasPrefix(p, spillRoot) || strings.Contains(p, "spill") {
			spilled = append(spilled, strings.TrimRight(p, ".,;:)"))
		}
	}
	if len(spilled) == 0 {
		t.Fatalf("no spill path shown to the model:\n%s", shown)
	}
	n := 0
	_ = filepath.WalkDir(spillRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		info, _ := d.Info()
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		} else {
			n++
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, info.Mode().Perm(), want)
		}
		return nil
	})
	if n == 0 {
		t.Fatalf("no spill file under %s (shown: %v)", spillRoot, spilled)
	}
	// Without keep, this run's files are gone after a normal exit.
	before := countFiles(spillRoot)
	shown2, _ := run(false)
	if !strings.Contains(shown2, spillRoot) {
		t.Logf("second result does not name the spill root:\n%.300s", shown2)
	}
	if after := countFiles(spillRoot); after != before {
		t.Fatalf("spill files after a normal exit: %d, before the run %d", after, before)
	}
}

func countFiles(root string) int {
	n := 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}
