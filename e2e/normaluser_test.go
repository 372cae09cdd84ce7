//go:build unix

package e2e

import (
	"context"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// normalUser is the unprivileged account .ci/run creates.
const normalUser = "harnessuser"

// TestNormalUserWithoutDelegationSaysItOnce: a normal user whose cgroup is
// not delegated (here: the hierarchy's root, as on this machine) gets the
// default manifest's commands bounded by process groups. `harness tool
// bash` runs the command and prints nothing on stderr (it used to warn on
// every call); `harness check` and `harness sandbox --report` name the
// mechanism, what it costs and the fix. Run as root, the binaries run as
// harnessuser; run as a normal user, as that user.
func TestNormalUserWithoutDelegationSaysItOnce(t *testing.T) {
	needTools(t, "bwrap", "bash")
	bin, cred, home := asNormalUser(t)
	project := filepath.Join(home, "project")
	state := filepath.Join(home, "state")
	for _, d := range []string{project, state} {
		mkdirOwned(t, d, cred)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", "TERM=dumb",
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_STATE_HOME=" + state,
		"DEEPSEEK_API_KEY=sk-e2e-not-a-real-key"}
	run := func(args ...string) (string, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir, cmd.Env = project, env
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("harness %s: %v\nstdout %q\nstderr %q", strings.Join(args, " "), err, out.String(), errb.String())
		}
		return out.String(), errb.String()
	}
	for i := range 2 {
		out, errOut := run("tool", "bash", `{"command":"echo normal-user-`+strconv.Itoa(i)+`; id -u","description":"as a normal user"}`)
		if !strings.Contains(out, "normal-user-"+strconv.Itoa(i)) || errOut != "" {
			t.Fatalf("harness tool bash, call %d: stdout %q, stderr %q: want the command's output and nothing on stderr", i, out, errOut)
		}
	}
	const want = "\ncontainment: process groups (this process's cgroup is the root of the cgroup v2 hierarchy"
	const fix = "run the harness in a delegated cgroup, e.g. systemd-run --user --scope -p Delegate=yes harness ...\n"
	own, _ := os.ReadFile("/proc/self/cgroup")
	if !strings.Contains(string(own), "\n0::/\n") && !strings.HasPrefix(string(own), "0::/\n") {
		t.Logf("this process is not in the hierarchy's root (%q): the containment lines are not checked", own)
		return
	}
	for _, args := range [][]string{{"check"}, {"sandbox", "--report"}} {
		out, _ := run(args...)
		if !strings.Contains(out, want) || !strings.Contains(out, fix) {
			t.Fatalf("harness %s does not say the fallback, its cost and fix:\n%s", strings.Join(args, " "), out)
		}
		t.Logf("harness %s:\n%s", strings.Join(args, " "), out)
	}
}

// asNormalUser returns the harness binary, the credential to run it with
// (nil: as this process) and a fresh home owned by that user. Run as root,
// the user is harnessuser and the binary a copy it may execute.
func asNormalUser(t *testing.T) (string, *syscall.Credential, string) {
	t.Helper()
	bin := harnessBinary(t)
	home, err := os.MkdirTemp("/var/tmp", "harness-e2e-normaluser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(home) })
	if os.Geteuid() != 0 {
		return bin, nil, home
	}
	u, err := user.Lookup(normalUser)
	if err != nil {
		missing(t, "no user "+normalUser+" (.ci/run creates it): "+err.Error())
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	if err := os.Chown(home, uid, gid); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, "bin")
	mkdirOwned(t, dir, cred)
	src, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst := filepath.Join(dir, "harness")
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, src); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return dst, cred, home
}

// mkdirOwned creates dir, owned by cred's user when cred is set.
func mkdirOwned(t *testing.T, dir string, cred *syscall.Credential) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
}
