package toolbash

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dshgo/harness/services/spill"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/tools/workdir"
)

// Executor defaults (A14).
const (
	DefaultTimeout        = 120 * time.Second
	DefaultMaxTimeout     = 600 * time.Second
	DefaultMaxOutputBytes = 64_000
	DefaultMaxSpillBytes  = 64 << 20
	DefaultGrace          = 3 * time.Second
)

// envOverrides make tools behave in a non-terminal: no colours, no pagers.
var envOverrides = map[string]string{"NO_COLOR": "1", "TERM": "dumb", "PAGER": "cat", "GIT_PAGER": "cat"}

// commandEnv is the explicit environment of a command: the session's
// variables carried by ctx (workdir.EnvFrom), then envOverrides.
func commandEnv(ctx context.Context) map[string]string {
	session := workdir.EnvFrom(ctx)
	if len(session) == 0 {
		return envOverrides
	}
	env := make(map[string]string, len(session)+len(envOverrides))
	for k, v := range session {
		env[k] = v
	}
	for k, v := range envOverrides {
		env[k] = v
	}
	return env
}

// ErrNoBackground is the error of a run_in_background call that no plugin
// took over (tool-terminal is not mounted).
var ErrNoBackground = errors.New("run_in_background is not available: this harness does not mount the tool-terminal plugin; run the command in the foreground (with timeoutMs if it is long)")

// errTimeout is the cause of a bash call's own deadline.
var errTimeout = errors.New("bash timeout")

// Executor runs foreground bash commands over the subprocess service.
type Executor struct {
	// Runtime is the subprocess service.
	Runtime *subprocess.Runtime
	// Cwd is the default working directory.
	Cwd string
	// Timeout is the default deadline; MaxTimeout caps per-call overrides.
	Timeout, MaxTimeout time.Duration
	// MaxOutputBytes is the per-stream in-memory tail; MaxSpillBytes the per-stream spill cap.
	MaxOutputBytes, MaxSpillBytes int64
	// Grace is the SIGTERM→SIGKILL grace.
	Grace time.Duration
	// Spills, when set, returns the spill store that takes over a call's
	// complete-stream files (bug case B25): a store implementing
	// spill.FileAdopter moves them into the call's session directory, so
	// they are private, per session, and deleted at exit like every spill
	// unless the store keeps them. Without one, the subprocess service's
	// file stays where it is.
	Spills func() (spill.Store, bool)
}

// adoptSpills hands the complete-stream files of v to the spill store, if
// one that can adopt files is mounted, and points v at their new paths. A
// failure keeps the original path (logged by the caller's store, not fatal).
func (x *Executor) adoptSpills(ctx context.Context, e *tools.Execution, v *Value) {
	if x.Spills == nil {
		return
	}
	store, ok := x.Spills()
	if !ok {
		return
	}
	adopter, ok := store.(spill.FileAdopter)
	if !ok {
		return
	}
	for _, st := range []struct {
		s     *Stream
		label string
	}{{&v.Stdout, "stdout"}, {&v.Stderr, "stderr"}} {
		if st.s.SpillPath == "" {
			continue
		}
		ref, err := adopter.AdoptFile(context.WithoutCancel(ctx), spill.SaveRequest{
			Owner:         spill.Owner{SessionID: spill.OwnerOf(e.Scope())},
			Source:        spill.Source{Kind: spill.SourceTool, ToolName: e.Name(), CallID: e.CallID(), Label: st.label},
			SuggestedName: e.Name() + "-" + st.label + ".log",
		}, st.s.SpillPath)
		if err == nil {
			st.s.SpillPath = string(ref.Locator)
		}
	}
}

// Args are the bash tool's arguments (B1).
type Args struct {
	Command string `json:"command" jsonschema_description:"The command to run with bash -c."`
	// Description is optional (as in Claude Code): a front end shows the
	// command either way.
	Description string   `json:"description,omitempty" jsonschema_description:"What the command does, in 5-10 words of active voice."`
	TimeoutMs   *float64 `json:"timeoutMs,omitempty" jsonschema_description:"Optional deadline in milliseconds (default 120000, at most 600000)."`
	Workdir     *string  `json:"workdir,omitempty" jsonschema_description:"Optional working directory; a relative path resolves against the session working directory."`
	// Sandbox "off" asks to run this call outside the OS sandbox (codex's
	// escalation); the permission plugin asks the user about such a call.
	Sandbox *string `json:"sandbox,omitempty" jsonschema:"enum=off" jsonschema_description:"Only when a command cannot work inside the sandbox (it needs the network or must write outside the working directory): \"off\" to run it unsandboxed, which asks the user. Requires justification."`
	// Justification says why the call needs to run unsandboxed (required
	// with sandbox "off").
	Justification *string `json:"justification,omitempty" jsonschema_description:"With sandbox \"off\": one sentence, shown to the user, saying why the command must run outside the sandbox."`
	// RunInBackground starts the command as a background shell and returns
	// its id at once (Claude Code's run_in_background). The bash tool does
	// not run it itself: the tool-terminal plugin takes such calls over
	// (after the same permission checks) and answers with a Value of kind
	// "background"; without that plugin the call fails with a clear error.
	RunInBackground bool `json:"run_in_background,omitempty" jsonschema_description:"Start the command in the background (a dev server, a watcher, a long build) and return a shell id at once; read its output later with bash_output and stop it with kill_shell. Not with timeoutMs."`
}

// Unsandboxed reports whether the call asks to run outside the sandbox
// (sandbox "off").
func (a Args) Unsandboxed() bool { return a.Sandbox != nil && *a.Sandbox == "off" }

// Validate applies the body-level checks of B1 (exact dsh wording).
func (a Args) Validate() error {
	switch {
	case strings.TrimSpace(a.Command) == "":
		return errors.New("invalid command: expected a non-empty string")
	case a.TimeoutMs != nil && !(*a.TimeoutMs > 0) || a.TimeoutMs != nil && *a.TimeoutMs > 1e15:
		return fmt.Errorf("invalid timeoutMs: expected a positive number, got %v", *a.TimeoutMs)
	case a.Sandbox != nil && *a.Sandbox != "off":
		return fmt.Errorf("invalid sandbox: the only accepted value is \"off\", got %q", *a.Sandbox)
	case a.Unsandboxed() && (a.Justification == nil || strings.TrimSpace(*a.Justification) == ""):
		return errors.New("invalid justification: sandbox \"off\" requires a non-empty justification")
	case a.RunInBackground && a.TimeoutMs != nil:
		return errors.New("invalid timeoutMs: a background shell has no deadline (it runs until it exits or kill_shell stops it); leave timeoutMs out")
	}
	return nil
}

// Run executes one foreground command in args.Workdir, resolved against the
// working directory carried by ctx (package workdir), else x.Cwd. It returns
// an error only when the command could not be started (or its process group
// could not be emptied); a non-zero exit, a signal and a timeout are results.
func (x *Executor) Run(ctx context.Context, args Args) (Value, error) {
	return x.run(ctx, args, nil)
}

// run is Run reporting the output's tail to progress (nil: no reports)
// while the command runs: see watch.
func (x *Executor) run(ctx context.Context, args Args, progress *tools.ProgressReporter) (Value, error) {
	if err := args.Validate(); err != nil {
		return Value{}, err
	}
	if args.RunInBackground {
		return Value{}, ErrNoBackground
	}
	timeout := x.Timeout
	if args.TimeoutMs != nil {
		timeout = time.Duration(*args.TimeoutMs * float64(time.Millisecond))
	}
	timeout = min(timeout, x.MaxTimeout)
	base := workdir.Or(ctx, x.Cwd)
	dir := base
	if args.Workdir != nil && *args.Workdir != "" {
		dir = *args.Workdir
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(base, dir)
		}
	}
	// Every call runs under the deployment's default sandbox policy with
	// its workdir as the workspace (the session working directory stays
	// writable too), unless it asked for sandbox "off", which the
	// permission plugin has approved by the time the body runs.
	var sb *subprocess.SandboxPolicy
	if policy := x.Runtime.SandboxPolicy(); policy.Enabled() && !args.Unsandboxed() {
		if policy.Mode == subprocess.SandboxWorkspaceWrite && base != dir {
			policy.WritableRoots = append(policy.WritableRoots, base)
		}
		sb = &policy
	}
	runCtx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	defer cancel()
	var started func(subprocess.Collected)
	if progress != nil {
		stop := make(chan struct{})
		var watching sync.WaitGroup
		defer func() { close(stop); watching.Wait() }() // no report after Run returns
		started = func(c subprocess.Collected) {
			watching.Add(1)
			go func() {
				defer watching.Done()
				watch(c, progress, stop)
			}()
		}
	}
	res, err := x.Runtime.Run(subprocess.Spec{
		Started: started,
		Sandbox: sb,
		Context: runCtx,
		Argv:    []string{"bash", "-c", args.Command},
		Dir:     dir,
		Env:     commandEnv(ctx),
		Stdin:   subprocess.IgnoreStdin(),
		Stdout:  subprocess.CollectSpill(x.MaxOutputBytes, x.MaxSpillBytes),
		Stderr:  subprocess.CollectSpill(x.MaxOutputBytes, x.MaxSpillBytes),
		Grace:   x.Grace,
	})
	if err != nil {
		return Value{}, fmt.Errorf("bash could not run the command: %w", err)
	}
	timedOut := errors.Is(context.Cause(runCtx), errTimeout)
	v := Value{
		Kind:      "foreground",
		ExitCode:  res.Outcome.ExitCode,
		TimedOut:  timedOut,
		Aborted:   runCtx.Err() != nil && !timedOut,
		TimeoutMs: timeout.Milliseconds(),
		Stdout:    streamOf(res.Stdout, x.MaxOutputBytes),
		Stderr:    streamOf(res.Stderr, x.MaxOutputBytes),
		Sandbox:   &res.Sandbox,
	}
	if res.Outcome.Signal != "" {
		sig := res.Outcome.Signal
		v.Signal = &sig
	}
	for _, c := range res.Protected {
		v.Protected = append(v.Protected, c.String())
	}
	v.NetworkRefused = res.NetworkRefused
	v.SandboxHint = sandboxWriteHint(v, sb, dir)
	return v, nil
}

// watch reports the output of a running command to progress every
// tools.ProgressInterval until stop closes: the tail of the stream that
// grew last (stdout when both did) and the bytes of both. Each look reads
// at most tools.MaxProgressTail bytes of a stream, whatever it holds.
func watch(c subprocess.Collected, progress *tools.ProgressReporter, stop <-chan struct{}) {
	t := time.NewTicker(tools.ProgressInterval)
	defer t.Stop()
	var seenOut, seenErr int64
	var current *subprocess.CollectedOutput
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		out, errs := c.Stdout.Total(), c.Stderr.Total()
		switch {
		case out > seenOut:
			current = c.Stdout
		case errs > seenErr:
			current = c.Stderr
		default:
			continue // nothing new
		}
		n := current.Total()
		if progress.Report(current.ReadFrom(max(0, n-tools.MaxProgressTail)).Text, out+errs) {
			seenOut, seenErr = out, errs // a dropped report (the rate limit) is tried again
		}
	}
}

// streamOf reads a collected stream. An untruncated stream is returned whole.
// A truncated one keeps at most budget bytes: when the spill file holds the
// complete stream, its first quarter (cut after a newline) is read back as the
// head and the rest of the budget is the tail (starting after a newline);
// otherwise the tail alone. The omitted bytes and lines are counted.
func streamOf(c *subprocess.CollectedOutput, budget int64) Stream {
	if c == nil {
		return Stream{}
	}
	r := c.ReadFrom(0)
	s := Stream{Text: r.Text, Truncated: r.Lossy, SpillPath: r.SpillPath, SpillCapped: c.SpillCapped()}
	if !r.Lossy {
		return s
	}
	total := r.NextOffset
	if r.SpillPath == "" {
		s.OmittedBytes, s.OmittedLines = total-int64(len(r.Text)), -1
		return s
	}
	s.Head = readHead(r.SpillPath, budget/4)
	s.Text = alignTail(r.Text, budget-int64(len(s.Head)))
	from, to := int64(len(s.Head)), total-int64(len(s.Text))
	s.OmittedBytes = to - from
	s.OmittedLines = countNewlines(r.SpillPath, from, to)
	return s
}

// readHead returns up to n leading bytes of the file at path, cut after the
// last newline (or at a character boundary when there is none).
func readHead(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, n)
	k, _ := io.ReadFull(f, buf)
	buf = buf[:k]
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		return string(buf[:i+1])
	}
	for len(buf) > 0 && !utf8.Valid(buf) {
		buf = buf[:len(buf)-1]
	}
	return string(buf)
}

// alignTail keeps at most n trailing bytes of tail, starting after its first
// newline when that leaves something (a cut line is dropped whole), else at a
// character boundary.
func alignTail(tail string, n int64) string {
	if n < 0 {
		n = 0
	}
	if int64(len(tail)) > n {
		tail = tail[int64(len(tail))-n:]
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < len(tail)-1 {
		return tail[i+1:]
	}
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	return tail
}

// countNewlines counts the newlines in bytes [from, to) of the file at path,
// or returns -1 when it cannot be read.
func countNewlines(path string, from, to int64) int64 {
	f, err := os.Open(path)
	if err != nil || to < from {
		return -1
	}
	defer f.Close()
	var lines int64
	buf := make([]byte, 256<<10)
	r := io.NewSectionReader(f, from, to-from)
	for {
		k, err := r.Read(buf)
		lines += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if err != nil {
			return lines
		}
	}
}
