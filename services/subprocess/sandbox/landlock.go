package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// LandlockMarkerEnv is set (to "1") in the environment of the re-exec that
// restricts itself: Init sees it, applies the rules given on its command
// line, removes the marker and execs the command.
const LandlockMarkerEnv = "HARNESS_SANDBOX_LANDLOCK"

// landlockBackend applies Landlock in the child: the spawn runs the current
// executable with LandlockMarkerEnv, whose Init restricts itself (rules,
// no_new_privs) and execs the command. The harness process is never
// restricted.
type landlockBackend struct {
	exe string
	abi int

	tmpOnce sync.Once
	tmp     string
	tmpErr  error
}

func probeLandlock() (Backend, error) {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return nil, fmt.Errorf("landlock: not supported by this kernel or not enabled at boot (%v)", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("landlock: cannot find the current executable to re-exec: %w", err)
	}
	return &landlockBackend{exe: exe, abi: abi}, nil
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
	if !p.Network {
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

// Rule kinds on the helper's command line, one argument each: kind, ':',
// absolute path.
const (
	ruleReadDir   = "R" // read, list and execute beneath
	ruleReadFile  = "F" // read and execute one file
	ruleListOnly  = "L" // list beneath (an ancestor of a denied path)
	ruleWriteDir  = "W" // create, remove, write, truncate, refer beneath
	ruleDevice    = "D" // read, write and ioctl one device file
	ruleDeviceDir = "E" // read, write and ioctl beneath (/dev/pts)
)

// devices every command may use read-write.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

func (b *landlockBackend) Wrap(req Request) (Command, Report, error) {
	rep := b.Check(req.Policy)
	tmp, err := b.privateTmp()
	if err != nil {
		return Command{}, rep, fmt.Errorf("private TMPDIR: %w", err)
	}
	writable := append(writableDirs(req), tmp)
	denied, incomplete := deniedPaths(req)
	// A denied path inside a writable directory cannot be taken out of it.
	denied = slices.DeleteFunc(denied, func(d string) bool {
		return slices.ContainsFunc(writable, func(w string) bool { return within(d, w) })
	})
	if len(incomplete) > 0 {
		rep.Reasons = append(rep.Reasons, fmt.Sprintf("denyRead patterns matched more than %d paths and were applied only in part: %s", maxDenyMatches, strings.Join(incomplete, ", ")))
	}
	args := []string{b.exe, "net=" + strconv.FormatBool(req.Policy.Network)}
	args = appendReadTree(args, "/", denied)
	for _, w := range writable {
		args = append(args, ruleWriteDir+":"+w)
	}
	for _, d := range devices {
		if _, err := os.Stat(d); err == nil {
			args = append(args, ruleDevice+":"+d)
		}
	}
	args = append(args, ruleDeviceDir+":/dev/pts", "--", req.Path)
	args = append(args, req.Argv...)
	env := append(slices.Clip(req.Env), LandlockMarkerEnv+"=1", "TMPDIR="+tmp)
	return Command{Path: b.exe, Args: args, Env: env}, rep, nil
}

// within reports whether p is dir or beneath it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// appendReadTree grants read beneath dir except the denied paths: a dir
// with no denied path beneath is one read rule; an ancestor of a denied
// path is listable only, and each of its entries is granted in turn (files
// one by one, symlinks not at all: their targets are judged where they
// live).
func appendReadTree(args []string, dir string, denied []string) []string {
	if slices.Contains(denied, dir) {
		return args
	}
	if !slices.ContainsFunc(denied, func(d string) bool { return within(d, dir) }) {
		return append(args, ruleReadDir+":"+dir)
	}
	args = append(args, ruleListOnly+":"+dir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return args
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.Type()&os.ModeSymlink != 0:
		case e.IsDir():
			args = appendReadTree(args, p, denied)
		case !slices.Contains(denied, p):
			args = append(args, ruleReadFile+":"+p)
		}
	}
	return args
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

// Init runs the Landlock re-exec when this process is one (LandlockMarkerEnv
// is set): it restricts itself, sets no_new_privs and execs the command; it
// never returns then (on failure it prints why and exits 126). Otherwise
// it returns at once. The package calls it from init, so every binary that
// links the subprocess service (the harness, test binaries) can serve as
// the re-exec.
func Init() {
	if os.Getenv(LandlockMarkerEnv) != "1" {
		return
	}
	if err := landlockExec(os.Args); err != nil {
		fmt.Fprintf(os.Stderr, "harness sandbox (landlock): %v\n", err)
		os.Exit(126)
	}
}

func init() { Init() }

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

func landlockExec(argv []string) error {
	if len(argv) < 4 {
		return errors.New("re-exec: missing arguments")
	}
	network := argv[1] == "net=true"
	var rules []landlock.Rule
	i := 2
	for ; i < len(argv) && argv[i] != "--"; i++ {
		kind, path, ok := strings.Cut(argv[i], ":")
		if !ok {
			return fmt.Errorf("re-exec: bad rule %q", argv[i])
		}
		var r landlock.FSRule
		switch kind {
		case ruleReadDir:
			r = landlock.PathAccess(accessRead, path)
		case ruleReadFile:
			r = landlock.PathAccess(accessFile, path)
		case ruleListOnly:
			r = landlock.PathAccess(accessList, path)
		case ruleWriteDir:
			r = landlock.PathAccess(accessWrite, path)
		case ruleDevice:
			r = landlock.PathAccess(accessDevice, path)
		case ruleDeviceDir:
			r = landlock.PathAccess(accessDevice|accessList, path)
		default:
			return fmt.Errorf("re-exec: bad rule kind %q", kind)
		}
		rules = append(rules, r.IgnoreIfMissing())
	}
	if i+1 >= len(argv) {
		return errors.New("re-exec: no command")
	}
	path, cmdArgv := argv[i+1], argv[i+2:]
	if len(cmdArgv) == 0 {
		cmdArgv = []string{path}
	}
	cfg := landlock.V7.BestEffort()
	if network {
		cfg.HandledAccessNet = 0
	}
	// Restrict covers every thread and sets no_new_privs; no net rules
	// means TCP bind and connect are denied when network is off.
	if err := cfg.Restrict(rules...); err != nil {
		return fmt.Errorf("restrict: %w", err)
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, LandlockMarkerEnv+"=") })
	// Drop every capability on the thread that execs (capabilities are
	// per thread): root inside keeps its uid but loses CAP_SYS_PTRACE and
	// the other overrides, so a non-dumpable harness stays unreadable, and
	// no_new_privs keeps setuid binaries from giving any back.
	runtime.LockOSThread()
	dropCapabilities()
	if err := syscall.Exec(path, cmdArgv, env); err != nil {
		return fmt.Errorf("exec %s: %w", path, err)
	}
	return nil
}
