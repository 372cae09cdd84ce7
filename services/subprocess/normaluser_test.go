//go:build unix

package subprocess

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
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

// expectIsolationEnv, when set (cgroup or pgid), makes TestKillMatrix
// require that mechanism: the runner that set up (or withheld) a delegated
// cgroup knows which one the runtime must find.
const expectIsolationEnv = "HARNESS_TEST_EXPECT_ISOLATION"

// normalUser is the unprivileged account .ci/run creates for the suites it
// runs a second time without root.
const normalUser = "harnessuser"

// TestKillMatrix: Terminate leaves no survivor of a command that starts a
// setsid daemon, double-forks, or ignores SIGTERM, whoever runs the test
// (root, or a normal user in a delegated cgroup). With process groups the
// setsid daemon is the documented escapee: it must still run after
// WaitForExit (and is then killed by the test). The mechanism is logged.
func TestKillMatrix(t *testing.T) {
	rt := newRuntime(t, Options{})
	c := rt.Containment()
	t.Logf("uid %d, containment: %s", os.Geteuid(), c)
	if want := os.Getenv(expectIsolationEnv); want != "" && string(c.Isolation) != want {
		t.Fatalf("isolation %s, want %s: %s", c.Isolation, want, c)
	}
	if c.Isolation == IsolationCgroup && os.Geteuid() != 0 && !c.Delegated {
		t.Fatalf("a normal user's cgroup not marked delegated: %+v", c)
	}
	for _, tc := range []struct {
		name, script string
		escapesPgid  bool
	}{
		{"setsid daemon", "setsid sh -c 'sleep %m' </dev/null >/dev/null 2>&1 & echo ready; wait", true},
		{"double fork", "(sh -c 'sleep %m' </dev/null >/dev/null 2>&1 &) ; echo ready; sleep %m", false},
		{"ignores SIGTERM", "trap '' TERM; echo ready; sleep %m; sleep %m", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := marker(3620)
			h, err := rt.Spawn(collectSpec(nil, strings.ReplaceAll(tc.script, "%m", m), 64, 200*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			waitText(t, h.Collected().Stdout, "ready\n")
			waitFor(t, func() bool { return len(liveSleeps(m)) > 0 })
			h.Terminate()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if ok, err := h.WaitForExit(ctx); !ok || err != nil {
				t.Fatalf("WaitForExit = %v, %v", ok, err)
			}
			if tc.escapesPgid && c.Isolation == IsolationProcessGroup {
				left := liveSleeps(m)
				killSleeps([]string{m})
				if len(left) == 0 {
					t.Fatal("the setsid daemon did not escape the process group: the documented limit no longer holds, update docs/sandbox.md")
				}
				t.Logf("process groups: the setsid daemon escaped, as documented (pid %v, killed by the test)", left)
				return
			}
			assertNoSurvivor(t, "sleep "+m, time.Second)
		})
	}
}

// TestKillMatrixAsNormalUser runs TestKillMatrix as the unprivileged user
// harnessuser: once inside a cgroup delegated to it the way systemd
// delegates one (made by root under the cgroup2 mount, the directory and
// its cgroup.procs, cgroup.subtree_control and cgroup.threads chowned to
// the user, the runner started in it), where no process may survive; once
// without, in the hierarchy's root, where the runtime must fall back to
// process groups and say why.
func TestKillMatrixAsNormalUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("sets up a delegated cgroup: root only (as harnessuser, TestKillMatrix runs directly)")
	}
	u, err := user.Lookup(normalUser)
	if err != nil {
		skipOrFailInCI(t, "no user %s (.ci/run creates it): %v", normalUser, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	mount, err := cgroup2Mount()
	if err != nil {
		skipOrFailInCI(t, "no cgroup v2: %v", err)
	}
	exe := exeForNobody(t)
	for _, tc := range []struct {
		name      string
		delegated bool
		want      string
	}{
		{"delegated cgroup", true, "containment: cgroup v2, delegated: each command in a leaf of " + mount + "/harness-test-delegated-"},
		{"no delegation", false, "containment: process groups (this process's cgroup is the root of the cgroup v2 hierarchy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cgroupFD *os.File
			var delegated string
			want := string(IsolationProcessGroup)
			if tc.delegated {
				delegated, cgroupFD = delegateCgroup(t, mount, uid, gid)
				want = string(IsolationCgroup)
			}
			home, err := os.MkdirTemp("", "subprocess-normaluser-") // t.TempDir's parent is root's alone
			must(t, err)
			t.Cleanup(func() { _ = os.RemoveAll(home) })
			must(t, os.Chown(home, uid, gid))
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, exe, "-test.run=^TestKillMatrix$", "-test.v", "-test.count=1")
			cmd.Dir = home
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + home, expectIsolationEnv + "=" + want}
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
			if cgroupFD != nil {
				startInCgroup(cmd.SysProcAttr, int(cgroupFD.Fd()))
			}
			out, err := cmd.CombinedOutput()
			t.Logf("as %s (uid %d):\n%s", normalUser, uid, out)
			if err != nil {
				t.Fatalf("TestKillMatrix as %s: %v", normalUser, err)
			}
			if !bytes.Contains(out, []byte(tc.want)) {
				t.Fatalf("the run does not say %q", tc.want)
			}
			if delegated != "" {
				left, _ := filepath.Glob(filepath.Join(delegated, "*", "cgroup.procs"))
				if len(left) > 0 {
					t.Fatalf("cgroups left in the delegated cgroup after the runtime closed: %v", left)
				}
			}
		})
	}
}

// delegateCgroup makes a cgroup under mount delegated to uid:gid as
// systemd's Delegate=yes does, and returns it and its directory opened
// for CLONE_INTO_CGROUP. Cleanup kills what is left in it and removes it.
func delegateCgroup(t *testing.T, mount string, uid, gid int) (string, *os.File) {
	t.Helper()
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	dir := filepath.Join(mount, "harness-test-delegated-"+hex.EncodeToString(rnd[:]))
	if err := os.Mkdir(dir, 0o755); err != nil {
		skipOrFailInCI(t, "cannot create a cgroup under %s: %v", mount, err)
	}
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			err := removeCgroupTree(dir)
			if err == nil || errors.Is(err, os.ErrNotExist) {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("delegated cgroup %s not removed: %v", dir, err)
				return
			}
		}
	})
	for _, name := range []string{"", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"} {
		must(t, os.Chown(filepath.Join(dir, name), uid, gid))
	}
	fd, err := os.Open(dir)
	must(t, err)
	t.Cleanup(func() { _ = fd.Close() })
	return dir, fd
}
