package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshgo/harness/internal/pgtest"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// Two jobs run at once on one worker with the default sandbox block (and
// a work root outside /tmp, as the default $XDG_STATE_HOME/harness/jobs
// is): job B's bash call looks for job A's files while A is still
// running. It must not see A's work dir or secret file, A's private patch
// file, the PostgreSQL socket (by path or by TCP) or a credential of the
// run's environment, and must still read and write its own work dir.
// (On the old worker B printed A's secret, the patch and the socket.)
func TestFleetJobsAreIsolated(t *testing.T) {
	t.Parallel()
	mark := uniqueMark()
	secretA, patchSecret, envSecret := "SECRET_A_"+mark, "PATCH_"+mark, "ENVCRED_"+mark
	workRoot, err := os.MkdirTemp("/var/tmp", "harness-fleet-iso-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(workRoot) })

	aWaiting := make(chan struct{}) // A's second model request arrived
	bDone := make(chan struct{})    // B's probe result arrived
	var once sync.Once
	var mu sync.Mutex
	var probe string
	probeCmd := strings.Join([]string{
		"ls -A " + workRoot,
		"cat " + workRoot + "/*/secret.txt " + workRoot + "/.patch-*",
		"ls -A /run/postgresql /var/run/postgresql",
		`python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect("/run/postgresql/.s.PGSQL.5432"); print("PGSOCKET-OPEN")'`,
		"(exec 3<>/dev/tcp/127.0.0.1/5432) && echo PGTCP-OPEN",
		`cat /proc/*/environ | tr '\0' '\n' | grep ENVCRED`,
		"echo own-" + mark + " > mine.txt && cat mine.txt",
	}, "; ") + "; true"
	check := func(_ llmtest.Request, w llmtest.WireRequest) *llmtest.Turn {
		prompt, tools := promptOf(w)
		var tt llmtest.Turn
		switch {
		case prompt == "iso A" && tools == 0:
			args, _ := json.Marshal(map[string]string{"command": "echo " + secretA + " > secret.txt && echo stored", "description": "store"})
			tt = toolCall("call-a", "bash", string(args))
		case prompt == "iso A":
			once.Do(func() { close(aWaiting) })
			select { // A stays running (its patch file in place) until B has looked
			case <-bDone:
			case <-time.After(2 * time.Minute):
			}
			tt = text("done A")
		case prompt == "iso B" && tools == 0:
			args, _ := json.Marshal(map[string]string{"command": probeCmd, "description": "probe"})
			tt = toolCall("call-b", "bash", string(args))
		case prompt == "iso B":
			for _, m := range w.Messages {
				if m.Role == "tool" {
					mu.Lock()
					probe = m.Text()
					mu.Unlock()
				}
			}
			close(bDone)
			tt = text("done B")
		default:
			tt = llmtest.Error(400, "unexpected prompt "+prompt)
		}
		return &tt
	}
	srv := llmtest.New(t, nil, llmtest.WithCheck(check))
	f := &fleet{srv: srv, dir: t.TempDir(), workRoot: workRoot, cfg: filepath.Join(t.TempDir(), "harness.yml")}
	f.dsn, f.schema = pgtest.Schema(t, "iso")
	f.m = fleetManifest(f.srv.URL, f.dsn, f.schema, f.workRoot, "      passEnv: [ISO_API_KEY]\n")
	// The default manifest's sandbox block (network through the proxy).
	f.m = strings.Replace(f.m, "sandbox: {mode: workspace-write, network: off}",
		`sandbox: {mode: workspace-write, network: {packageRegistries: true}, denyRead: ["~/.ssh", "**/.env{,.*}"]}`, 1)
	if err := os.WriteFile(f.cfg, []byte(f.m), 0o600); err != nil {
		t.Fatal(err)
	}
	startWorker(t, f.dir, f.cfg, append(baseEnv(), "ISO_API_KEY="+envSecret), "worker", "--concurrency", "2")

	patch := filepath.Join(t.TempDir(), "patch.yml")
	if err := os.WriteFile(patch, []byte(fmt.Sprintf("- {id: systemprompt, config: {personaSuffix: %q}}\n", "apiKey "+patchSecret)), 0o600); err != nil {
		t.Fatal(err)
	}
	idA := submit(t, f.dir, f.m, "--job-patch", patch, "iso A")
	select {
	case <-aWaiting:
	case <-time.After(90 * time.Second):
		t.Fatal("job A never reached its second model call")
	}
	idB := submit(t, f.dir, f.m, "iso B")
	waitFor(t, 2*time.Minute, "both jobs completed", func() bool {
		rows := jobRows(t, f.dsn, f.schema)
		return rows[idA].State == "completed" && rows[idB].State == "completed"
	})
	mu.Lock()
	out := probe
	mu.Unlock()
	sidA := sessionOf(t, f.dir, f.m, idA)
	for what, s := range map[string]string{
		"job A's secret file": secretA, "job A's patch file": patchSecret, "job A's work dir": sidA,
		"the patch file's name": ".patch-" + sidA, "the PostgreSQL socket": ".s.PGSQL", "a connection to the socket": "PGSOCKET-OPEN",
		"a TCP connection to PostgreSQL": "PGTCP-OPEN", "the run's credential": envSecret,
	} {
		if strings.Contains(out, s) {
			t.Errorf("job B's command saw %s (%q):\n%s", what, s, out)
		}
	}
	if !strings.Contains(out, "own-"+mark) {
		t.Errorf("job B could not write and read its own work dir:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(workRoot, sidA, "secret.txt")); err != nil || !strings.Contains(string(b), secretA) {
		t.Errorf("job A's secret file on the host: %q, %v", b, err)
	}
}
