package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dshgo/harness/services/subprocess/sandbox/netproxy"
	"golang.org/x/sys/unix"
)

// bwrap is the bubblewrap backend: namespaces and bind mounts.
type bwrap struct {
	path string

	zygotes *zygotePool
	proxies proxies

	emptyOnce sync.Once
	emptyDir  string
	empty     string // an empty read-only file: what a denied file shows
	emptyErr  error
}

// emptyFile is the mask of denied files: /dev/null cannot serve (binds are
// nodev), so an empty 0400 file in a private directory is bound instead.
func (b *bwrap) emptyFile() (string, error) {
	b.emptyOnce.Do(func() {
		b.emptyDir, b.emptyErr = os.MkdirTemp("", "harness-sandbox-")
		if b.emptyErr == nil {
			b.empty = filepath.Join(b.emptyDir, "empty")
			b.emptyErr = os.WriteFile(b.empty, nil, 0o400)
		}
	})
	return b.empty, b.emptyErr
}

// Close stops the zygotes (and every command still in them) and removes
// the mask file.
func (b *bwrap) Close() error {
	b.zygotes.close()
	b.proxies.close()
	if b.emptyDir == "" {
		return nil
	}
	return os.RemoveAll(b.emptyDir)
}

// probeBwrap finds bwrap on PATH and runs it once with the namespaces every
// spawn uses (mount, PID with its own /proc, network), so a kernel or
// container that forbids them is found by the probe, not by a command.
func probeBwrap(ctx context.Context) (Backend, error) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, fmt.Errorf("bwrap: not installed (%v)", err)
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		return nil, fmt.Errorf("bwrap: probe: %w", err)
	}
	if err := runProbe(ctx, path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
		"--unshare-pid", "--unshare-net", "--unshare-ipc", "--die-with-parent", "--new-session", "--", truePath); err != nil {
		return nil, fmt.Errorf("bwrap: %s does not work here (user namespaces unavailable?): %w", path, err)
	}
	return &bwrap{path: path, zygotes: newZygotePool(path)}, nil
}

func (b *bwrap) Name() string { return BackendBwrap }

// Check: bwrap enforces every part of a policy.
func (b *bwrap) Check(p Policy) Report {
	return Report{Backend: BackendBwrap, Enforcement: EnforcementFull}
}

// Wrap builds the bwrap command line. Order matters: later mounts cover
// earlier ones, so / goes read-only first, then /dev, /proc and /tmp, then
// the writable binds, then the masks over denied paths (which therefore win
// even inside the workspace).
func (b *bwrap) Wrap(req Request) (Command, Report, error) {
	rep := Report{Backend: BackendBwrap, Enforcement: EnforcementFull}
	caches, err := applyCaches(&req)
	if err != nil {
		return Command{}, rep, err
	}
	args := make([]string, 0, 32)
	// --cap-drop ALL: run as root, bwrap would otherwise keep
	// CAP_SYS_ADMIN, and `mount -o remount,bind,rw /` would make the host
	// file system writable again.
	args = append(args, b.path, "--die-with-parent", "--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc", "--unshare-uts")
	shared := req.Shareable && len(req.ExtraWritable) == 0
	if !req.Terminal || shared {
		// A terminal's program must keep the PTY as its controlling
		// terminal; every other spawn already has none (Setsid), and a new
		// session closes TIOCSTI injection into anything outside.
		args = append(args, "--new-session")
	}
	if !req.Policy.Network.On() {
		args = append(args, "--unshare-net")
	}
	var proxy *proxyInst
	var netLog *NetworkLog
	if req.Policy.Network.Proxied() {
		var err error
		var ask netproxy.Asker
		if req.Policy.Network.Ask {
			ask = req.NetworkAsk
		}
		if proxy, err = b.proxies.get(req.Policy.Network.Rules(), req.NetworkHosts, ask); err != nil {
			return Command{}, rep, err
		}
		req.Env = proxyEnv(req.Env, proxy.port)
		netLog = &NetworkLog{srv: proxy.srv, after: proxy.srv.Seq()}
	}
	// / read-only; writable binds; then fresh /dev, /proc and a private
	// /tmp over whatever those binds brought in (a workspace of / or /home
	// would otherwise re-expose the host's); then what lives under /tmp
	// (the working directory must exist inside even in read-only mode).
	args = append(args, "--ro-bind", "/", "/")
	writable := writableDirs(req)
	if caches != "" && !slices.Contains(writable, caches) {
		writable = append(writable, caches)
	}
	// A denied directory that holds a Visible path (a fleet's work root)
	// is an empty tmpfs mounted before the binds it holds, read-only once
	// they are in: only the visible paths show in it.
	denied, incomplete := deniedPaths(req)
	holders, denied, kept := splitHolders(denied, req.Policy)
	if err := checkHeld(req, writable, holders, kept); err != nil {
		return Command{}, rep, err
	}
	inWritable := func(p string) bool { return slices.ContainsFunc(writable, func(w string) bool { return within(p, w) }) }
	showKept := func(tmp bool) {
		for _, k := range kept {
			if within(k, "/tmp") == tmp && !inWritable(k) && slices.ContainsFunc(holders, func(h string) bool { return within(k, h) }) {
				args = append(args, "--ro-bind", k, k)
			}
		}
	}
	for _, h := range holders {
		if !within(h, "/tmp") {
			args = append(args, "--tmpfs", h)
		}
	}
	showKept(false)
	var underTmp []string
	for _, w := range writable {
		if within(w, "/tmp") {
			underTmp = append(underTmp, w)
			continue
		}
		args = append(args, "--bind", w, w)
	}
	args = append(args, "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")
	for _, h := range holders {
		if within(h, "/tmp") {
			args = append(args, "--tmpfs", h)
		}
	}
	showKept(true)
	if within(req.Dir, "/tmp") && !slices.ContainsFunc(underTmp, func(w string) bool { return within(req.Dir, w) }) {
		args = append(args, "--ro-bind", req.Dir, req.Dir)
	}
	for _, w := range underTmp {
		args = append(args, "--bind", w, w)
	}
	var fwdExe string
	if proxy != nil {
		// The proxy's directory, read-only even under a writable /tmp
		// workspace; the forwarder executable over its mount point.
		exe, err := os.Executable()
		if err != nil {
			return Command{}, rep, fmt.Errorf("network proxy forwarder: %w", err)
		}
		args = append(args, "--ro-bind", proxy.dir, proxy.dir, "--ro-bind", exe, proxy.exe)
		fwdExe = proxy.exe
	}
	for _, h := range holders {
		args = append(args, "--remount-ro", h)
	}
	// The git directories bound writable onto themselves (a mount point
	// cannot be renamed or removed: mv .git .gitY fails with EBUSY), then
	// the protected paths that exist (ProtectedPaths and the git-dir
	// entries in the workspace and each writable root) bound read-only
	// over the writable binds. The Guard covers those created later.
	prot := protectedIn(req)
	for _, g := range prot.GitDirs {
		args = append(args, "--bind", g, g)
	}
	protected := append(slices.Clip(prot.GitDirs), roBindable(prot)...)
	for _, p := range protected[len(prot.GitDirs):] {
		args = append(args, "--ro-bind", p, p)
	}
	// What a shared sandbox checks before each command: every bind still
	// shows the host directory it bound, every mask still covers its path
	// (a host file or directory deleted and re-created detaches the mount
	// in the zygote's namespace).
	var checks []zyCheck
	if shared {
		for _, w := range writable {
			checks = append(checks, identity(w, w))
		}
		if within(req.Dir, "/tmp") && !slices.Contains(writable, req.Dir) {
			checks = append(checks, identity(req.Dir, req.Dir))
		}
		for _, p := range protected {
			checks = append(checks, identity(p, p))
		}
		for _, h := range holders {
			checks = append(checks, zyCheck{Path: h, ROTmpfs: true})
		}
	}
	if err := visible(req, underTmp, denied, holders, kept); err != nil {
		return Command{}, rep, err
	}
	for _, d := range denied {
		st, err := os.Stat(d)
		switch {
		case err != nil:
			continue
		case st.IsDir():
			args = append(args, "--tmpfs", d, "--remount-ro", d)
			checks = append(checks, zyCheck{Path: d, ROTmpfs: true})
		default:
			empty, err := b.emptyFile()
			if err != nil {
				return Command{}, rep, fmt.Errorf("mask for denied files: %w", err)
			}
			args = append(args, "--ro-bind", empty, d)
			checks = append(checks, identity(d, empty))
		}
	}
	if len(incomplete) > 0 {
		rep.Enforcement = EnforcementPartial
		rep.Reasons = append(rep.Reasons, fmt.Sprintf("denyRead patterns matched more than %d paths and were masked only in part: %s", maxDenyMatches, strings.Join(incomplete, ", ")))
	}
	if shared {
		// One zygote per distinct command line and identity of every path
		// it binds or masks: a denied file replaced on the host (new
		// inode) or a workspace recreated gets a new zygote, whose mounts
		// see the new one.
		rep.Shared = true
		// One zygote per distinct command line; the checks restart it
		// when the host paths it mounted were replaced since.
		key := strings.Join(args, "\x00")
		zl := &ZygoteLaunch{pool: b.zygotes, key: key,
			args: args, checks: checks, dir: req.Dir, path: req.Path, argv: req.Argv, env: req.Env}
		if proxy != nil {
			zl.netfwd = strconv.Itoa(proxy.port) + " " + proxy.sock
		}
		return Command{Path: req.Path, Args: req.Argv, Env: req.Env, ReadOnly: protected, Zygote: zl, Network: netLog}, rep, nil
	}
	args = append(args, "--chdir", req.Dir, "--")
	env := req.Env
	if proxy != nil {
		args = append(args, fwdExe, netfwdArg, strconv.Itoa(proxy.port), proxy.sock, req.Path)
		argv := req.Argv
		if len(argv) == 0 {
			argv = []string{req.Path}
		}
		args = append(args, argv...)
		env = append(slices.Clip(env), netfwdEnv+"=1")
	} else {
		args = append(args, req.Path)
		if len(req.Argv) > 1 {
			args = append(args, req.Argv[1:]...)
		}
	}
	return Command{Path: b.path, Args: args, Env: env, ReadOnly: protected, Network: netLog}, rep, nil
}

// visible reports a program or working directory that exists on the host
// but that the sandbox's mounts hide: a path under /tmp outside the
// working directory and the writable binds (the sandbox's /tmp is a
// private tmpfs), or one under a denyRead mask (in a denied directory
// that holds Visible paths: outside those, kept). Without it the spawn
// fails with a bare "no such file or directory" for a file that plainly
// exists.
func visible(req Request, underTmp, denied, holders, kept []string) error {
	check := func(what, p string) error {
		paths := []string{p}
		if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
			paths = append(paths, r)
		}
		for _, q := range paths {
			if within(q, "/tmp") && !within(q, req.Dir) && !slices.ContainsFunc(underTmp, func(w string) bool { return within(q, w) }) {
				return fmt.Errorf("%s %s exists but is not visible inside the sandbox: %s is under /tmp, which the sandbox replaces with a private, empty tmpfs (only the working directory and writable roots under /tmp are mounted); install it outside /tmp, run it with a cwd that contains it, or (mode workspace-write) list %s in sandbox.writableRoots", what, p, q, filepath.Dir(q))
			}
			for _, d := range denied {
				if within(q, d) {
					return fmt.Errorf("%s %s exists but is not visible inside the sandbox: %s is masked by sandbox.denyRead (%s); remove it from denyRead or move it", what, p, q, d)
				}
			}
			if heldOut(q, holders, kept) {
				return fmt.Errorf("%s %s exists but is not visible inside the sandbox: %s is in sandbox.denyRead, which shows only %s there; remove it from denyRead or move it", what, p, q, strings.Join(kept, ", "))
			}
		}
		return nil
	}
	if _, err := os.Stat(req.Path); err == nil {
		if err := check("program", req.Path); err != nil {
			return err
		}
	}
	return check("working directory", req.Dir)
}

// identity is the check that path shows the file or directory src is on
// the host (a bind keeps device and inode numbers).
func identity(path, src string) zyCheck {
	c := zyCheck{Path: path}
	var st unix.Stat_t
	if unix.Stat(src, &st) == nil {
		c.Dev, c.Ino = st.Dev, st.Ino
	}
	return c
}
