package cli_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/services/subprocess"
)

// runSandboxCLI runs `harness --config CFG ARGS...` in dir with only the
// subprocess-local plugin in the catalog.
func runSandboxCLI(t *testing.T, dir, manifest string, args ...string) (string, string, int) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(cfg, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := &cli.Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader("from-stdin\n"),
		Plugins:   []core.Plugin{subprocess.Plugin},
		LookupEnv: func(string) (string, bool) { return "", false },
		Getwd:     func() (string, error) { return dir, nil },
		Ctx:       context.Background()}
	code := cli.Run(append([]string{"--config", cfg}, args...), env)
	return out.String(), errb.String(), code
}

const sandboxManifest = "plugins:\n  - name: subprocess-local\n    config:\n      sandbox: {mode: workspace-write, network: off, denyRead: [\"**/.env\"]}\n"

func TestSandboxCommandAndCheckLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, errOut, code := runSandboxCLI(t, dir, sandboxManifest, "check")
	if code != 0 || !strings.HasPrefix(out, "ok: 1 plugin active\nsandbox: workspace-write, network off, via ") {
		t.Fatalf("check: %d %q %q", code, out, errOut)
	}
	if strings.Contains(out, "via none") {
		if os.Getenv("CI") != "" {
			t.Fatalf("no sandbox backend in CI: %s", out)
		}
		t.Skipf("no sandbox backend here: %s", out)
	}
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("SECRET_IN_ENV\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside, err := os.MkdirTemp(".", ".cli-sandbox-victim-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(outside) })
	outside, _ = filepath.Abs(outside)
	script := "cat; cat .env; echo ok > in.txt; echo no > " + outside + "/victim.txt; exit 7"
	out, errOut, code = runSandboxCLI(t, dir, sandboxManifest, "sandbox", "--", "bash", "-c", script)
	if code != 7 || !strings.Contains(out, "from-stdin") || strings.Contains(out, "SECRET_IN_ENV") || !strings.Contains(errOut, "harness sandbox: ") {
		t.Fatalf("sandbox: code %d out %q err %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "in.txt")); err != nil {
		t.Fatalf("workspace write: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "victim.txt")); err == nil {
		t.Fatal("sandboxed command wrote outside the workspace")
	}
	// --mode off runs it unsandboxed: the same write lands.
	_, errOut, code = runSandboxCLI(t, dir, sandboxManifest, "sandbox", "--mode", "off", "--", "bash", "-c", "echo yes > "+outside+"/victim.txt")
	if code != 0 || !strings.Contains(errOut, "none: none") {
		t.Fatalf("--mode off: %d %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(outside, "victim.txt")); err != nil {
		t.Fatalf("--mode off did not run unsandboxed: %v", err)
	}
	if _, errOut, code = runSandboxCLI(t, dir, sandboxManifest, "sandbox", "--mode", "bogus", "--", "true"); code != 2 {
		t.Fatalf("bad mode: %d %q", code, errOut)
	}
}

// requireBwrap fails (CI) or skips the test when bubblewrap is not installed:
// the exact check lines below name the backend the probe picks.
func requireBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("bwrap not installed in CI: %v", err)
		}
		t.Skipf("bwrap not installed: %v", err)
	}
}

// TestCheckSandboxOffSaysSoAndWarns: with mode off (written, or the plugin
// default) check claims no network restriction, says commands run
// unsandboxed and warns on stderr that they have the user's full access.
func TestCheckSandboxOffSaysSoAndWarns(t *testing.T) {
	t.Parallel()
	requireBwrap(t)
	for _, m := range []string{
		"plugins:\n  - name: subprocess-local\n    config:\n      sandbox: {mode: off, network: false}\n",
		"plugins:\n  - name: subprocess-local\n",
	} {
		out, errOut, code := runSandboxCLI(t, t.TempDir(), m, "check")
		wantOut := "ok: 1 plugin active\nsandbox: off: commands run unsandboxed (backend bwrap available)\ncontainment: "
		wantErr := "harness: warning: the sandbox is off (sandbox mode off in the subprocess row): commands the agent runs are not confined " +
			"and have your full access to files and network; set sandbox: {mode: workspace-write} there to confine them\n"
		if code != 0 || !strings.HasPrefix(out, wantOut) || strings.Contains(out, "network") || errOut != wantErr {
			t.Errorf("manifest %q: code %d\nstdout %q\nstderr %q", m, code, out, errOut)
		}
	}
	out, errOut, code := runSandboxCLI(t, t.TempDir(), sandboxManifest, "check")
	if code != 0 || !strings.HasPrefix(out, "ok: 1 plugin active\nsandbox: workspace-write, network off, via bwrap") || errOut != "" {
		t.Errorf("sandbox on: code %d\nstdout %q\nstderr %q", code, out, errOut)
	}
}

// TestCheckRejectsPatchedSandboxWithoutMode: a patch layer (--patch, or the
// project's harness.patch.yml) whose sandbox block has no mode replaces the
// row's whole block; check exits 2 naming the patch file, line and field
// instead of booting with the sandbox off. mode: off written there is kept.
func TestCheckRejectsPatchedSandboxWithoutMode(t *testing.T) {
	t.Parallel()
	const patch = "- id: subprocess-local\n  config:\n    sandbox: {denyRead: [\"~/.x\"]}\n"
	const msg = `: plugin "subprocess-local" (id subprocess-local): invalid config: sandbox.mode: required (off, read-only or workspace-write): ` +
		`without it this sandbox block turns the sandbox off. A patch's sandbox replaces the row's whole sandbox block, ` +
		`so write mode there too (mode: off to run commands unsandboxed)` + "\n"
	flagPatch := filepath.Join(t.TempDir(), "more.yml")
	if err := os.WriteFile(flagPatch, []byte(patch), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runSandboxCLI(t, t.TempDir(), sandboxManifest, "check", "--patch", flagPatch)
	if code != 2 || out != "" || errOut != "harness: "+flagPatch+":3:14"+msg {
		t.Errorf("--patch: code %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	dir := t.TempDir()
	project := filepath.Join(dir, "harness.patch.yml")
	if err := os.WriteFile(project, []byte(patch), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runSandboxCLI(t, dir, sandboxManifest, "check")
	if code != 2 || out != "" || errOut != "harness: "+project+":3:14"+msg {
		t.Errorf("harness.patch.yml: code %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	if err := os.WriteFile(project, []byte(strings.Replace(patch, "{denyRead", "{mode: off, denyRead", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code = runSandboxCLI(t, dir, sandboxManifest, "check")
	if code != 0 || !strings.Contains(out, "\nsandbox: off: commands run unsandboxed") {
		t.Errorf("mode off in the patch: code %d\nstdout %q", code, out)
	}
}

// TestCheckRejectsInvalidDenyReadGlob: a denyRead pattern that does not
// parse is a config error naming the entry.
func TestCheckRejectsInvalidDenyReadGlob(t *testing.T) {
	t.Parallel()
	m := "plugins:\n  - name: subprocess-local\n    config:\n      sandbox: {mode: read-only, denyRead: [\"~/.ssh\", \"**/.env\", \"[\"]}\n"
	_, errOut, code := runSandboxCLI(t, t.TempDir(), m, "check")
	want := `:4:66: plugin "subprocess-local" (id subprocess-local): invalid config: sandbox.denyRead[2]: invalid glob "[": syntax error in pattern (an unclosed [ or {, or a trailing \; write \[ for a literal [)` + "\n"
	if code != 2 || !strings.HasPrefix(errOut, "harness: ") || !strings.HasSuffix(errOut, want) {
		t.Errorf("code %d stderr %q", code, errOut)
	}
}

// `harness sandbox --report` lists the toolchain caches of the policy: the
// cache root ($XDG_CACHE_HOME/harness/sandbox) and each variable, none
// with caches off or in read-only mode; it runs no command. Serial:
// t.Setenv.
func TestSandboxReportListsCaches(t *testing.T) {
	dir := t.TempDir()
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	root := filepath.Join(cache, "harness", "sandbox")
	out, errOut, code := runSandboxCLI(t, dir, sandboxManifest, "sandbox", "--report")
	if code != 0 || !strings.Contains(out, "\ncaches: "+root+" (writable; your own caches stay read-only)\n") ||
		!strings.Contains(out, "  go: GOCACHE="+root+"/go-build\n") || !strings.Contains(out, "  npm: npm_config_cache="+root+"/npm\n") {
		t.Fatalf("sandbox --report: %d %q %q", code, out, errOut)
	}
	off := strings.Replace(sandboxManifest, "network: off,", "network: off, caches: off,", 1)
	if out, errOut, code = runSandboxCLI(t, dir, off, "sandbox", "--report"); code != 0 || !strings.Contains(out, "\ncaches: off: toolchains see your own caches, read-only\n") {
		t.Fatalf("caches off: %d %q %q", code, out, errOut)
	}
	if out, _, code = runSandboxCLI(t, dir, sandboxManifest, "sandbox", "--report", "--mode", "read-only"); code != 0 || !strings.Contains(out, "\ncaches: none in read-only mode") {
		t.Fatalf("read-only: %d %q", code, out)
	}
	bad := strings.Replace(sandboxManifest, "network: off,", "network: off, caches: [go, maven],", 1)
	if _, errOut, code = runSandboxCLI(t, dir, bad, "sandbox", "--report"); code != 2 || !strings.Contains(errOut, `sandbox.caches[1]: unknown cache "maven"`) {
		t.Fatalf("unknown cache: %d %q", code, errOut)
	}
	if _, errOut, code = runSandboxCLI(t, dir, sandboxManifest, "sandbox", "--report", "--", "true"); code != 2 || !strings.Contains(errOut, "takes no command") {
		t.Fatalf("--report with a command: %d %q", code, errOut)
	}
}

// `harness sandbox --report` prints the one policy part by part and, for
// each part, the mechanism of the backend in use and of the in-process
// checker, including what neither enforces: the default denyRead list
// ("@defaults" expanded), hard links not masked by bwrap, writes outside
// the workspace not refused by the file tools.
func TestSandboxReportSaysWhoEnforcesEachPart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, backend := range []string{"bwrap", "landlock"} {
		m := "plugins:\n  - name: subprocess-local\n    config:\n      sandboxBackend: " + backend +
			"\n      sandbox: {mode: workspace-write, network: off, denyRead: [\"@defaults\", \"/srv/secret\"]}\n"
		out, errOut, code := runSandboxCLI(t, dir, m, "sandbox", "--report")
		if strings.Contains(out, "no backend works here") {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s: no backend in CI: %s", backend, out)
			}
			t.Logf("%s: not available here: %s", backend, out)
			continue
		}
		if code != 0 {
			t.Fatalf("%s: %d %q %q", backend, code, out, errOut)
		}
		want := []string{
			"\ndenyRead:\n  ~/.ssh\n  ~/.gnupg\n  ~/.aws\n",
			"\n  **/.env{,.*}\n  /srv/secret\n",
			"\n  - in process (read, write, edit, grep, glob, the web file list): read, write and edit refuse them, grep, glob and the file list leave them out and count them;",
			"\n  - in process (read, write, edit, grep, glob, the web file list): not checked; write and edit outside the workspace are asked by the permission plugin",
			"\n  - in process (read, write, edit, grep, glob, the web file list): write and edit refuse them\n",
			"\nnetwork:\n  off\n",
		}
		if backend == "bwrap" {
			want = append(want, "\n  - bwrap: each match masked by path when a command starts", "not masked: another hard link to a denied file\n",
				"\n  - bwrap: a network namespace with only loopback\n")
		} else {
			want = append(want, "\n  - landlock: read not granted on the matches; in workspace-write mode, matches inside writable directories stay readable")
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: report lacks %q:\n%s", backend, w, out)
			}
		}
	}
}

// TestCheckAndReportSayTheContainment: `harness check` and `harness sandbox
// --report` say how each command's processes are contained, on a line of
// their own after the sandbox line: with isolation pgid, process groups,
// what escapes them and the fix; with the default (auto), the mechanism
// this process can have (cgroup v2 as root or in a delegated cgroup, else
// process groups and how to get a delegated cgroup), and nothing on
// stderr.
func TestCheckAndReportSayTheContainment(t *testing.T) {
	t.Parallel()
	requireBwrap(t)
	pgid := strings.Replace(sandboxManifest, "    config:\n", "    config:\n      isolation: pgid\n", 1)
	const pgidLine = "\ncontainment: process groups (isolation: pgid): a command's descendants that call setsid or setpgid (daemons) " +
		"escape Terminate and outlive the harness; to contain them, set isolation: auto in the subprocess row\n"
	auto := "\ncontainment: process groups ("
	if rt, err := subprocess.New(subprocess.Options{}, nil); err == nil {
		if rt.Isolation() == subprocess.IsolationCgroup {
			auto = "\ncontainment: cgroup v2"
		}
		if err := rt.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"check"}, {"sandbox", "--report"}} {
		out, errOut, code := runSandboxCLI(t, t.TempDir(), pgid, args...)
		if code != 0 || !strings.Contains(out, "sandbox: workspace-write, network off, via bwrap: full"+pgidLine) {
			t.Errorf("%s, isolation pgid: %d\nstdout %q\nstderr %q", args, code, out, errOut)
		}
		out, errOut, code = runSandboxCLI(t, t.TempDir(), sandboxManifest, args...)
		if code != 0 || !strings.Contains(out, "sandbox: workspace-write, network off, via bwrap: full"+auto) || errOut != "" {
			t.Errorf("%s, isolation auto: %d\nstdout %q\nstderr %q", args, code, out, errOut)
		}
	}
}
