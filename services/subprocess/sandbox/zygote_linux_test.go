package sandbox

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// tagged lists the live processes whose command line carries tag (a
// pool's zygotes: bwrap and the servers inside).
func tagged(tag string) []int {
	return procsWhere(func(args []string) bool { return slices.Contains(args, tag) })
}

// procsWhere lists the live processes (zombies excluded) whose command
// line's arguments satisfy match.
func procsWhere(match func(args []string) bool) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(b) == 0 {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && strings.HasPrefix(string(stat[i:]), ") Z") {
			continue // a zombie about to be reaped
		}
		if match(strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestZygoteFailedSpawnsReleaseTheirZygote: spawns that fail inside a
// running zygote (here: clone3 into a directory that is not a cgroup)
// release it, so the pool still evicts idle zygotes and holds at most
// maxZygotes; Close leaves no zygote process. A failed spawn that kept
// its lease would pin its zygote: more than maxZygotes would remain.
func TestZygoteFailedSpawnsReleaseTheirZygote(t *testing.T) {
	b, errs := Probe(BackendBwrap)
	if errs != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("bwrap unavailable in CI: %v", errs)
		}
		t.Skipf("bwrap unavailable: %v", errs)
	}
	bw := b.(*bwrap)
	tag := ZygoteTag(b)
	defer func() {
		_ = bw.Close()
		if pids := tagged(tag); len(pids) != 0 {
			t.Errorf("zygote processes survived Close: %v", pids)
		}
	}()
	notCgroup, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer notCgroup.Close()
	files := []*os.File{os.Stdin, os.Stdout, os.Stderr}
	for i := range maxZygotes + 3 {
		cmd, _, err := b.Wrap(Request{Policy: Policy{Mode: ModeWorkspaceWrite}, Dir: t.TempDir(),
			Path: "/bin/true", Argv: []string{"true"}, Env: []string{}, Shareable: true})
		if err != nil {
			t.Fatal(err)
		}
		if cmd.Zygote == nil {
			t.Fatal("no shared sandbox offered")
		}
		if p, err := cmd.Zygote.Spawn(ZygoteSpawn{Files: files, CgroupFD: int(notCgroup.Fd())}); err == nil {
			_, _ = p.Wait()
			t.Fatalf("spawn %d into a directory that is no cgroup succeeded", i)
		} else if strings.Contains(err.Error(), "zygote died") || strings.Contains(err.Error(), "send request") {
			t.Fatalf("spawn %d: %v (want the server's clone3 error)", i, err)
		}
	}
	bw.zygotes.mu.Lock()
	n := len(bw.zygotes.zs)
	bw.zygotes.mu.Unlock()
	if n > maxZygotes {
		t.Fatalf("%d zygotes in the pool after failed spawns, want at most %d", n, maxZygotes)
	}
}
