package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockBackend confines a spawn with Landlock without ever restricting
// the harness: the rules are applied to a dedicated OS thread (locked to
// one goroutine, never unlocked), which sets no_new_privs, drops every
// capability and forks the child, which inherits all three through exec.
// The Go runtime never runs another goroutine on a locked thread, creates
// new threads from a clean template thread while the current one is
// locked (so no other thread inherits the restrictions), and ends the
// thread when its goroutine returns. This is go-landlock's documented
// "enforce then exec" recipe with the exec done by a fork, and it costs
// microseconds where re-executing the harness binary cost the whole
// binary's start-up (package inits included).
type landlockBackend struct {
	abi int

	tmpOnce sync.Once
	tmp     string
	tmpErr  error
}

func probeLandlock(context.Context) (Backend, error) {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return nil, fmt.Errorf("landlock: not supported by this kernel or not enabled at boot (%v)", err)
	}
	return &landlockBackend{abi: abi}, nil
}

func (b *landlockBackend) Name() string { return BackendLandlock }

// Check lists what Landlock cannot enforce for p.
func (b *landlockBackend) Check(p Policy) Report {
	rep := Report{Backend: BackendLandlock, Enforcement: EnforcementPartial}
	rep.Reasons = append(rep.Reasons,
		"no private PID namespace: other processes and their command lines are visible in /proc; the environment and memory of processes of the same user are readable unless they are non-dumpable (the harness is, and the sandbox drops every capability, so even root gets no override)",
		"no private /tmp: /tmp is read-only and TMPDIR points to a private writable directory",
		"denied directories can be listed (names are visible, contents are not)")
	if p.Mode == ModeWorkspaceWrite && len(p.DenyRead) > 0 {
		rep.Reasons = append(rep.Reasons, "denyRead paths inside writable directories stay readable (Landlock cannot take a path out of an allowed directory)")
	}
	if p.Network.Proxied() {
		rep.Reasons = append(rep.Reasons, "network: the domain allowlist needs bwrap (a network namespace for the proxy's forwarder); under Landlock the proxy is not reachable and the network is restricted as with network off")
	}
	if !p.Network.On() {
		switch {
		case b.abi < 4:
			rep.Reasons = append(rep.Reasons, fmt.Sprintf("network is not restricted (Landlock ABI %d < 4)", b.abi))
		case b.abi < 10:
			rep.Reasons = append(rep.Reasons, fmt.Sprintf("network: TCP connect and bind are blocked, UDP and pathname unix sockets are not (Landlock ABI %d)", b.abi))
		}
	}
	if b.abi < 6 {
		rep.Reasons = append(rep.Reasons, fmt.Sprintf("signals to processes outside the sandbox are not blocked (Landlock ABI %d < 6)", b.abi))
	}
	return rep
}

// privateTmp is the backend's writable TMPDIR (0700, one per runtime).
func (b *landlockBackend) privateTmp() (string, error) {
	b.tmpOnce.Do(func() { b.tmp, b.tmpErr = os.MkdirTemp("", "harness-sandbox-tmp-") })
	return b.tmp, b.tmpErr
}

// Close removes the private TMPDIR.
func (b *landlockBackend) Close() error {
	if b.tmp == "" {
		return nil
	}
	return os.RemoveAll(b.tmp)
}

// devices every command may use read-write.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

func (b *landlockBackend) Wrap(req Request) (Command, Report, error) {
	rep := b.Check(req.Policy)
	tmp, err := b.privateTmp()
	if err != nil {
		return Command{}, rep, fmt.Errorf("private TMPDIR: %w", err)
	}
	caches, err := applyCaches(&req)
	if err != nil {
		return Command{}, rep, err
	}
	writable := append(writableDirs(req), tmp)
	if caches != "" {
		writable = append(writable, caches)
	}
	denied, incomplete := deniedPaths(req)
	// A denied path inside a writable directory cannot be taken out of it.
	denied = slices.DeleteFunc(denied, func(d string) bool {
		return slices.ContainsFunc(writable, func(w string) bool { return within(d, w) })
	})
	if len(incomplete) > 0 {
		rep.Reasons = append(rep.Reasons, fmt.Sprintf("denyRead patterns matched more than %d paths and were applied only in part: %s", maxDenyMatches, strings.Join(incomplete, ", ")))
	}
	rules := appendReadTree(nil, "/", denied)
	// A denied directory that holds Visible paths (a fleet's work root)
	// hides the rest of itself: those get read (and list) rules; a command
	// whose working directory it hides is refused.
	holders, _, kept := splitHolders(denied, req.Policy)
	if err := checkHeld(req, writable, holders, kept); err != nil {
		return Command{}, rep, err
	}
	for _, k := range kept {
		if slices.ContainsFunc(holders, func(h string) bool { return within(k, h) }) {
			rules = append(rules, landlock.PathAccess(accessRead, k).IgnoreIfMissing())
		}
	}
	for _, w := range writable {
		rules = append(rules, landlock.PathAccess(accessWrite, w).IgnoreIfMissing())
	}
	for _, d := range devices {
		rules = append(rules, landlock.PathAccess(accessDevice, d).IgnoreIfMissing())
	}
	rules = append(rules, landlock.PathAccess(accessDevice|accessList, "/dev/pts").IgnoreIfMissing())
	cfg := landlock.V7.BestEffort()
	if req.Policy.Network.On() {
		cfg.HandledAccessNet = 0
	}
	argv := slices.Clip(req.Argv)
	if len(argv) == 0 {
		argv = []string{req.Path}
	}
	env := append(slices.Clip(req.Env), "TMPDIR="+tmp)
	return Command{Path: req.Path, Args: argv, Env: env, Start: func(start func() error) error {
		return startConfined(cfg, rules, start)
	}}, rep, nil
}

// startConfined builds the ruleset (on the caller's thread: adding a path
// rule opens the path) and runs start on a fresh locked thread that is
// restricted first. No net rules: with network off (net access handled),
// TCP bind and connect are denied.
func startConfined(cfg landlock.Config, rules []landlock.Rule, start func() error) error {
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("landlock ruleset: %w", err)
	}
	if fd < 0 {
		return errors.New("landlock: the kernel enforces none of the policy's rules")
	}
	defer unix.Close(fd) // close-on-exec: the child does not inherit it
	return onFreshThread(func() error { return restrictThreadAndStart(fd, flags, start) })
}

// onFreshThread runs fn on an OS thread locked to it and then discarded:
// the goroutine never unlocks, so the runtime ends the thread when fn
// returns. The main thread is never used: the runtime cannot end it and
// would keep it, tainted, for the life of the process (as the process's
// leader, it is also what signals to the harness are checked against).
func onFreshThread(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			// Holding the main thread keeps the inner goroutine off it;
			// it is unlocked again untouched.
			defer runtime.UnlockOSThread()
			errc <- onFreshThread(fn)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// restrictThreadAndStart confines the calling (locked) thread — ruleset,
// no_new_privs, every capability dropped — and calls start there.
func restrictThreadAndStart(fd int, flags uint32, start func() error) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("landlock: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock: restrict: %w", err)
	}
	// Capabilities are per thread: root inside keeps its uid but loses
	// CAP_SYS_PTRACE and the other overrides, so a non-dumpable harness
	// stays unreadable, and no_new_privs keeps setuid binaries from giving
	// any back.
	dropCapabilities()
	return start()
}

// appendReadTree grants read beneath dir except the denied paths: a dir
// with no denied path beneath is one read rule; an ancestor of a denied
// path is listable only, and each of its entries is granted in turn (files
// one by one, symlinks not at all: their targets are judged where they
// live).
func appendReadTree(rules []landlock.Rule, dir string, denied []string) []landlock.Rule {
	if slices.Contains(denied, dir) {
		return rules
	}
	if !slices.ContainsFunc(denied, func(d string) bool { return within(d, dir) }) {
		return append(rules, landlock.PathAccess(accessRead, dir).IgnoreIfMissing())
	}
	rules = append(rules, landlock.PathAccess(accessList, dir).IgnoreIfMissing())
	ents, err := os.ReadDir(dir)
	if err != nil {
		return rules
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.Type()&os.ModeSymlink != 0:
		case e.IsDir():
			rules = appendReadTree(rules, p, denied)
		case !slices.Contains(denied, p):
			rules = append(rules, landlock.PathAccess(accessFile, p).IgnoreIfMissing())
		}
	}
	return rules
}

const (
	accessRead  = landlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir)
	accessFile  = landlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSReadFile)
	accessList  = landlock.AccessFSSet(ll.AccessFSReadDir)
	accessWrite = landlock.AccessFSSet(ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
		ll.AccessFSMakeChar | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
		ll.AccessFSMakeBlock | ll.AccessFSMakeSym | ll.AccessFSTruncate | ll.AccessFSRefer)
	accessDevice = landlock.AccessFSSet(ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev)
)

// dropCapabilities empties the bounding, ambient, inheritable, permitted
// and effective sets of the calling thread (errors ignored: an
// unprivileged process has nothing to drop).
func dropCapabilities() {
	for c := 0; c <= 63; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); errors.Is(err, unix.EINVAL) {
			break
		}
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	var data [2]unix.CapUserData
	_ = unix.Capset(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &data[0])
}
