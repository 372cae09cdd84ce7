package subprocess

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"gopkg.in/yaml.v3"

	"github.com/dshgo/harness/services/subprocess/sandbox"
)

// ErrClosed is returned by Spawn and SpawnTerminal after Close started.
var ErrClosed = errors.New("subprocess: runtime is closed")

// Isolation names how a runtime bounds the processes a handle owns.
type Isolation string

const (
	// IsolationAuto uses a cgroup v2 leaf per child when this process can
	// create one (as root, or in a cgroup delegated to its user), else the
	// process group; the fallback is logged once per process at debug
	// level and reported by Runtime.Containment.
	IsolationAuto Isolation = "auto"
	// IsolationCgroup requires cgroup v2; New fails without it.
	IsolationCgroup Isolation = "cgroup"
	// IsolationProcessGroup uses only the child's process group / session:
	// descendants that call setsid or setpgid escape it.
	IsolationProcessGroup Isolation = "pgid"
)

// Options configures a Runtime (the subprocess-local plugin's config).
type Options struct {
	// SpillDir holds collect-mode spill files. Empty: a private directory
	// created on first use with os.MkdirTemp("", "harness-subprocess-")
	// (mode 0700). A configured directory is created 0700 if missing and
	// must not be group- or world-accessible: New (the plugin's start)
	// fails otherwise, naming the directory and the mode expected.
	SpillDir string `yaml:"spillDir" json:"spillDir,omitempty"`
	// Env adds deny and allow patterns to the fixed credential scrub.
	Env EnvPolicy `yaml:"env" json:"env,omitempty"`
	// Isolation is how the processes of one spawn are bounded: a cgroup v2
	// leaf when one can be made (auto, the default), a cgroup required
	// (cgroup), or the process group only (pgid).
	Isolation Isolation `yaml:"isolation" json:"isolation,omitempty" jsonschema:"enum=auto,enum=cgroup,enum=pgid"`
	// Sandbox is the deployment's default policy for agent commands: the
	// bash tool, its terminals and the search tools spawn under it (see
	// Runtime.Sandbox). Without it (the plugin default) commands run
	// unsandboxed; the default harness.yml sets workspace-write. A sandbox block must give
	// its mode: one without (a patch that sets only denyRead replaces the
	// whole block) is a config error rather than a sandbox silently off.
	Sandbox SandboxPolicy `yaml:"sandbox" json:"sandbox,omitempty"`
	// SandboxBackend forces a backend: auto (default: on Linux bwrap, else
	// landlock; on macOS seatbelt), or one backend of the platform: bwrap
	// or landlock (Linux), seatbelt (macOS).
	SandboxBackend string `yaml:"sandboxBackend" json:"sandboxBackend,omitempty" jsonschema:"enum=auto,enum=bwrap,enum=landlock,enum=seatbelt"`
	// SandboxPerCommand runs every bwrap-sandboxed command in a bwrap of
	// its own. By default (false), commands of the same policy and
	// workspace share one long-lived bwrap sandbox (a zygote) when the
	// runtime bounds each command by a cgroup leaf; see docs/sandbox.md
	// for what they then share.
	SandboxPerCommand bool `yaml:"sandboxPerCommand" json:"sandboxPerCommand,omitempty"`
	// Dumpable keeps the harness process dumpable, so debuggers of the same
	// user can attach, and so can every command it runs outside the sandbox.
	// By default (false) New calls prctl(PR_SET_DUMPABLE, 0): processes of
	// the same user (children outside the sandbox, hooks) can then neither
	// read /proc/<harness>/environ or mem nor ptrace it; root still can.
	Dumpable bool `yaml:"dumpable" json:"dumpable,omitempty"`

	// NetworkHosts maps host names to IP addresses for the sandbox's
	// network proxy (a proxied sandbox.network), ahead of DNS, like curl's
	// --resolve. Go only, not read from harness.yml: for tests and
	// embedders that point names at local servers (its addresses may be
	// loopback, which names resolved by DNS may not).
	NetworkHosts map[string]string `yaml:"-" json:"-"`

	// sandboxNoMode is set by UnmarshalYAML when the sandbox mapping has
	// no mode key; Validate rejects it.
	sandboxNoMode bool
}

// UnmarshalYAML decodes the plugin config as usual and notes a sandbox
// mapping without a mode key: such a block (say `sandbox: {denyRead:
// [...]}` in a patch, which replaces the whole sandbox key of the row)
// would otherwise leave the sandbox off without a word. Validate reports
// it.
func (o *Options) UnmarshalYAML(n *yaml.Node) error {
	type plain Options
	if err := n.Decode((*plain)(o)); err != nil {
		return err
	}
	o.sandboxNoMode = false
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if v := n.Content[i+1]; n.Content[i].Value == "sandbox" && v.Kind == yaml.MappingNode {
			o.sandboxNoMode = !hasKey(v, "mode")
		}
	}
	return nil
}

// hasKey reports whether mapping node m has the key k.
func hasKey(m *yaml.Node, k string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == k {
			return true
		}
	}
	return false
}

// Validate reports a bad option with its field path.
func (o Options) Validate() error {
	switch o.Isolation {
	case "", IsolationAuto, IsolationCgroup, IsolationProcessGroup:
	default:
		return fmt.Errorf("isolation: must be auto, cgroup or pgid, got %q", o.Isolation)
	}
	if err := o.Env.Validate(); err != nil {
		return fmt.Errorf("env.%w", err)
	}
	if err := o.validateSandbox(); err != nil {
		return fmt.Errorf("sandbox.%w", err)
	}
	if b := o.SandboxBackend; b != "" && b != sandbox.BackendAuto && !slices.Contains(sandbox.BackendNames(), b) {
		return fmt.Errorf("sandboxBackend: must be %s, got %q", sandbox.BackendChoices(), b)
	}
	if o.SpillDir != "" && !filepath.IsAbs(o.SpillDir) {
		return fmt.Errorf("spillDir: must be an absolute path, got %q", o.SpillDir)
	}
	return nil
}

// errNoMode is the sandbox block without a mode: the sandbox would stay
// off whatever else the block says.
var errNoMode = errors.New("mode: required (off, read-only or workspace-write): without it this sandbox block turns the sandbox off. " +
	"A patch's sandbox replaces the row's whole sandbox block, so write mode there too (mode: off to run commands unsandboxed)")

// validateSandbox checks the sandbox block: one that says anything must
// say its mode (the zero policy is the plugin default, off).
func (o Options) validateSandbox() error {
	switch {
	case o.sandboxNoMode:
		return errNoMode
	case o.Sandbox.Mode != "":
		return o.Sandbox.Validate()
	case o.Sandbox.Network.On() || o.Sandbox.Network.Proxied() || len(o.Sandbox.DenyRead) > 0 || len(o.Sandbox.WritableRoots) > 0:
		return errNoMode
	}
	return nil
}

// Runtime is the local subprocess service: it spawns children and PTY
// terminals, owns their lifetime, and on Close terminates and awaits all of
// them. Safe for concurrent use.
type Runtime struct {
	log    *slog.Logger
	policy EnvPolicy
	cg     *cgroupParent // nil: process-group fallback
	// pgidReason says why cg is nil (Containment.Reason).
	pgidReason string
	seq        atomic.Uint64
	// devNull is StdinIgnore's fd 0, opened once: every child shares it.
	devNull *os.File
	env     envCache

	// wd kills the runtime's ranges if this process dies without Close
	// (see watchdog); started before the first child, nil if that failed.
	wdOnce sync.Once
	wd     *watchdog

	sandboxPolicy SandboxPolicy
	sandbox       sandboxState
	netHosts      map[string]string // Options.NetworkHosts
	netAsker      atomic.Pointer[NetworkAsker]
	noZygote      bool // Options.SandboxPerCommand

	spillOnce sync.Once
	spillCfg  string
	spillDir  string
	spillTemp bool
	spillErr  error

	mu      sync.Mutex
	closed  bool
	handles map[*Handle]struct{}
	terms   map[*Terminal]struct{}
	wg      sync.WaitGroup // settlement goroutines
}

// New starts a runtime. logger may be nil (discard).
func New(opts Options, logger *slog.Logger) (*Runtime, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("subprocess-local: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// Descriptors this process inherited without close-on-exec (from its own
	// parent) would otherwise reach every child: mark them all close-on-exec
	// so a child sees only fds 0-2 and, when requested, the control fd 3.
	markInheritedCloexec()
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, fmt.Errorf("subprocess-local: %w", err)
	}
	if !opts.Dumpable {
		// Same-user processes (commands outside the sandbox, hooks) must not
		// read this process's environment or memory through /proc or ptrace.
		if err := setNotDumpable(); err != nil {
			logger.Warn("subprocess-local: "+notDumpableCall+" failed; same-user processes can read the harness environment", "err", err)
		}
	}
	r := &Runtime{log: logger, policy: opts.Env, spillCfg: opts.SpillDir, devNull: devNull,
		handles: map[*Handle]struct{}{}, terms: map[*Terminal]struct{}{},
		sandboxPolicy: opts.Sandbox.Clone(), sandbox: sandboxState{prefer: opts.SandboxBackend}, noZygote: opts.SandboxPerCommand, netHosts: maps.Clone(opts.NetworkHosts)}
	if r.sandboxPolicy.Mode == "" {
		r.sandboxPolicy.Mode = SandboxOff
	}
	if opts.SpillDir != "" {
		// A configured directory is checked now: one that others can read
		// is refused at start, rather than turning spilling off at the
		// first spawn that needs it.
		r.spillOnce.Do(r.prepareSpillDir)
		if r.spillErr != nil {
			_ = devNull.Close()
			return nil, fmt.Errorf("subprocess-local: %w", r.spillErr)
		}
	}
	if err := r.chooseIsolation(opts.Isolation); err != nil {
		_ = devNull.Close()
		return nil, err
	}
	return r, nil
}

// chooseIsolation sets the runtime's cgroup parent, or the reason it has
// none. Only isolation cgroup makes a missing cgroup an error; the auto
// fallback is logged once per process at debug level (`harness check`
// and `harness sandbox --report` are where a user reads it).
func (r *Runtime) chooseIsolation(want Isolation) error {
	if want == IsolationProcessGroup {
		r.pgidReason = reasonConfigured
		return nil
	}
	cg, err := probeCgroup()
	var cu *cgroupUnavailableError
	switch {
	case err == nil:
		r.cg = cg
		return nil
	case want == IsolationCgroup:
		return fmt.Errorf("subprocess-local: isolation cgroup: %w", err)
	case errors.As(err, &cu):
		r.pgidReason = cu.Reason
	default:
		r.pgidReason = err.Error()
	}
	logFallback(r.log, err.Error())
	return nil
}

// Isolation reports the mechanism in use: IsolationCgroup or
// IsolationProcessGroup.
func (r *Runtime) Isolation() Isolation {
	if r.cg != nil {
		return IsolationCgroup
	}
	return IsolationProcessGroup
}

// Policy returns the environment policy applied to every child.
func (r *Runtime) Policy() EnvPolicy { return r.policy }

// prepare is what Spawn and SpawnTerminal check before starting anything:
// the runtime is open and the spec's context (nil means Background) is not
// done. It returns that context and the child's environment.
func (r *Runtime) prepare(ctx context.Context, set map[string]string, unset []string) (context.Context, []string, error) {
	if r.isClosed() {
		return nil, nil, ErrClosed
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if ctx.Err() != nil {
		return nil, nil, fmt.Errorf("aborted before spawn: %w", context.Cause(ctx))
	}
	return ctx, r.childEnv(set, unset), nil
}

// childEnv is the scrubbed parent environment with the explicit entries on
// top, in a slice the caller owns.
func (r *Runtime) childEnv(set map[string]string, unset []string) []string {
	if len(r.policy.Set) > 0 {
		all := make(map[string]string, len(r.policy.Set)+len(set))
		for k, v := range r.policy.Set {
			if !r.policy.Drops(k) { // a name concealed after validation
				all[k] = v
			}
		}
		for k, v := range set {
			all[k] = v
		}
		set = all
	}
	return mergeEnv(r.env.get(r.policy), set, unset)
}

var spillCounter atomic.Uint64

// openSpill creates a spill file: 0600, O_EXCL|O_NOFOLLOW, named
// harness-subprocess-<pid>-<counter>-<12 hex>-<label>.log in the spill dir.
func (r *Runtime) openSpill(label string) (*os.File, string, error) {
	r.spillOnce.Do(r.prepareSpillDir)
	if r.spillErr != nil {
		return nil, "", r.spillErr
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	name := "harness-subprocess-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(spillCounter.Add(1), 10) +
		"-" + hex.EncodeToString(rnd[:]) + "-" + label + ".log"
	p := filepath.Join(r.spillDir, name)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|spillOpenFlags, 0o600)
	if err != nil {
		return nil, "", fmt.Errorf("subprocess: spill file: %w", err)
	}
	return f, p, nil
}

func (r *Runtime) prepareSpillDir() {
	if r.spillCfg == "" {
		r.spillDir, r.spillErr = os.MkdirTemp("", "harness-subprocess-")
		r.spillTemp = r.spillErr == nil
		return
	}
	if err := os.MkdirAll(r.spillCfg, 0o700); err != nil {
		r.spillErr = fmt.Errorf("spillDir: %w", err)
		return
	}
	st, err := os.Lstat(r.spillCfg)
	switch {
	case err != nil:
		r.spillErr = fmt.Errorf("spillDir: %w", err)
	case !st.IsDir():
		r.spillErr = fmt.Errorf("spillDir %s: not a directory", r.spillCfg)
	case st.Mode().Perm()&0o077 != 0:
		r.spillErr = fmt.Errorf("spillDir %s: mode %04o lets other users in; want 0700 (chmod 700 %s)", r.spillCfg, st.Mode().Perm(), r.spillCfg)
	default:
		r.spillDir = r.spillCfg
	}
}

// ensureWatchdog starts the runtime's watchdog once, before its first child;
// it returns nil (logged) when the watchdog could not start.
func (r *Runtime) ensureWatchdog() *watchdog {
	r.wdOnce.Do(func() {
		dir := ""
		if r.cg != nil {
			dir = r.cg.dir
		}
		wd, err := startWatchdog(dir, r.log)
		if err != nil {
			r.log.Warn("subprocess-local: no watchdog; children outlive a harness killed with SIGKILL", "err", err)
			return
		}
		r.wd = wd
	})
	return r.wd
}

func (r *Runtime) track(h *Handle) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	r.handles[h] = struct{}{}
	r.wg.Add(1)
	return nil
}

func (r *Runtime) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

func (r *Runtime) untrack(h *Handle) {
	r.mu.Lock()
	delete(r.handles, h)
	r.mu.Unlock()
}

// Close terminates every live child and terminal and waits until each
// managed range is empty and every handle settled (the dsh disposal). If ctx
// ends first, everything left is SIGKILLed at once and an error returned.
// Completed spill files stay; a private spill directory is removed only when
// empty. Close is idempotent.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	hs := make([]*Handle, 0, len(r.handles))
	for h := range r.handles {
		hs = append(hs, h)
	}
	ts := make([]*Terminal, 0, len(r.terms))
	for t := range r.terms {
		ts = append(ts, t)
	}
	r.mu.Unlock()

	var errs []error
	for _, h := range hs {
		h.Terminate()
	}
	for _, t := range ts {
		if err := t.Terminate(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	for _, h := range hs {
		select {
		case <-h.done:
		case <-ctx.Done():
		}
		if ok, err := h.WaitForExit(ctx); err != nil || !ok {
			errs = append(errs, fmt.Errorf("pid %d: %w", h.pid, errors.Join(err, context.Cause(ctx))))
			h.kill()
		}
		h.closeControl()
	}
	if len(errs) > 0 {
		for _, t := range ts {
			t.kill()
		}
	}
	r.wg.Wait()
	// Every Spawn that passed track has settled, so no watchdog start is
	// under way; Do waits for one that still were.
	r.wdOnce.Do(func() {})
	defer r.wd.stop(ctx) // after the cgroup directory is gone: nothing left to kill
	// Every Spawn that passed track has settled: none can still be starting
	// a child on /dev/null.
	_ = r.devNull.Close()
	if r.cg != nil {
		_ = r.cg.remove()
	}
	r.sandbox.close()
	if r.spillTemp {
		_ = os.Remove(r.spillDir) // only succeeds when no spill file is left
	}
	if len(errs) > 0 {
		return fmt.Errorf("local subprocess teardown failed: %w", errors.Join(errs...))
	}
	return nil
}

// KillNow sends SIGKILL to every live child's range and every terminal at
// once, without waiting (dsh terminateForHostExit): for a host that is about
// to exit and cannot afford the grace. It does not close the runtime; Close
// afterwards still reaps and cleans up.
func (r *Runtime) KillNow() {
	r.mu.Lock()
	hs := make([]*Handle, 0, len(r.handles))
	for h := range r.handles {
		hs = append(hs, h)
	}
	ts := make([]*Terminal, 0, len(r.terms))
	for t := range r.terms {
		ts = append(ts, t)
	}
	r.mu.Unlock()
	for _, h := range hs {
		h.kill()
	}
	for _, t := range ts {
		t.kill()
	}
}

func closeAll(cs ...io.Closer) {
	for _, c := range cs {
		if c != nil {
			_ = c.Close()
		}
	}
}
