package toolterminal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/commands"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/subprocess/sandbox"
	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/tools/workdir"
)

// Shell statuses (bash_output's status).
const (
	StatusRunning = "running"
	StatusExited  = "exited"
	StatusKilled  = "killed"
)

// envOverrides are the bash tool's: no colours, no pagers.
var envOverrides = map[string]string{"NO_COLOR": "1", "TERM": "dumb", "PAGER": "cat", "GIT_PAGER": "cat"}

// startArgs are the arguments of a run_in_background call of the shell
// tool, read from its validated JSON (the bash tool's argument names).
type startArgs struct {
	Command         string  `json:"command"`
	Description     string  `json:"description"`
	Workdir         *string `json:"workdir"`
	Sandbox         *string `json:"sandbox"`
	RunInBackground bool    `json:"run_in_background"`
}

// startValue is the value a background start answers with, in the shape
// of the bash tool's Value of kind "background" (the registry converts it
// through JSON and renders it with the bash tool's renderer).
type startValue struct {
	Kind    string                    `json:"kind"`
	ShellID string                    `json:"shellId"`
	Note    string                    `json:"note"`
	Sandbox *subprocess.SandboxReport `json:"sandbox,omitempty"`
}

// manager owns every background shell of the plugin: started by
// run_in_background calls, read, written and killed by the tools, killed
// when their session ends and when the plugin unloads.
type manager struct {
	c   *core.Context
	rt  *subprocess.Runtime
	cfg Config
	cwd string

	mu     sync.Mutex
	seq    int
	shells map[string]*shell
	closed bool
}

// shell is one background shell: a `bash -c` under the subprocess
// service, with its stdout and stderr collected (a bounded tail in memory,
// the complete stream in a spill file up to its cap) and read by cursor.
type shell struct {
	id          string
	owner       *core.ScopeID // the scope of the call that started it (the session's)
	command     string
	description string
	started     time.Time
	h           *subprocess.Handle
	// gone is closed once the shell's processes are all gone and its final
	// status is set.
	gone chan struct{}

	mu            sync.Mutex
	stdin         io.WriteCloser // nil once closed
	readOut       int64          // bytes of stdout already returned
	readErr       int64
	status        string
	outcome       subprocess.Outcome
	killRequested bool
	notified      bool // the model was told of the exit (or read it)
	protected     []string
	refused       []string
	ended         time.Time
}

// errClosed is the error of a start after the plugin began unloading.
var errClosed = errors.New("background shells are shutting down")

// start runs a run_in_background call: the same command, working
// directory, environment and sandbox request as the bash tool makes for a
// foreground call, with stdin a pipe (write_stdin) and no deadline.
func (m *manager) start(ctx context.Context, e *tools.Execution, a startArgs) (startValue, error) {
	if v, ok := e.Args().(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return startValue{}, err
		}
	}
	if strings.TrimSpace(a.Command) == "" {
		return startValue{}, errors.New("invalid command: expected a non-empty string")
	}
	base := workdir.Of(ctx, e.Context(), m.cwd)
	dir := base
	if a.Workdir != nil && *a.Workdir != "" {
		dir = *a.Workdir
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(base, dir)
		}
	}
	// The bash tool's sandbox request: the deployment's default policy with
	// the workdir as the workspace (the session working directory stays
	// writable too), unless the call asked for sandbox "off", which the
	// permission plugin has approved by the time this runs.
	unsandboxed := a.Sandbox != nil && *a.Sandbox == "off"
	var sb *subprocess.SandboxPolicy
	if policy := m.rt.SandboxPolicy(); policy.Enabled() && !unsandboxed {
		if policy.Mode == subprocess.SandboxWorkspaceWrite && base != dir {
			policy.WritableRoots = append(policy.WritableRoots, base)
		}
		sb = &policy
	}
	env := workdir.EnvFrom(ctx)
	if env == nil && e.Context() != nil {
		env = workdir.EnvFrom(e.Context())
	}
	merged := make(map[string]string, len(env)+len(envOverrides))
	for k, v := range env {
		merged[k] = v
	}
	for k, v := range envOverrides {
		merged[k] = v
	}

	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return startValue{}, errClosed
	}
	running := 0
	for _, s := range m.shells {
		if s.owner == e.Scope() && s.currentStatus() == StatusRunning {
			running++
		}
	}
	if running >= m.cfg.MaxShells {
		m.mu.Unlock()
		return startValue{}, fmt.Errorf("this session already runs %d background shells (the most it may): stop one with kill_shell first", running)
	}
	m.seq++
	id := "shell-" + strconv.Itoa(m.seq)
	m.mu.Unlock()

	h, err := m.rt.Spawn(subprocess.Spec{
		Sandbox: sb,
		Argv:    []string{"bash", "-c", a.Command},
		Dir:     dir,
		Env:     merged,
		Stdin:   subprocess.PipeStdin(),
		Stdout:  subprocess.CollectSpill(m.cfg.MaxOutputBytes, m.cfg.MaxSpillBytes),
		Stderr:  subprocess.CollectSpill(m.cfg.MaxOutputBytes, m.cfg.MaxSpillBytes),
		Grace:   m.cfg.Grace.D(),
	})
	if err != nil {
		return startValue{}, fmt.Errorf("bash could not start the command: %w", err)
	}
	s := &shell{id: id, owner: e.Scope(), command: a.Command, description: a.Description, started: time.Now(),
		h: h, stdin: h.Stdin(), status: StatusRunning, gone: make(chan struct{})}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		m.stop(s)
		return startValue{}, errClosed
	}
	m.shells[id] = s
	m.evictLocked(s.owner)
	m.mu.Unlock()
	if err := core.Go(m.c, func(ctx context.Context) error { m.watch(ctx, s); return nil }); err != nil {
		m.stop(s)
		return startValue{}, errClosed
	}
	rep := h.Sandbox()
	note := "It runs until it exits or you stop it. Read what it printed with bash_output(shell_id: \"" + id +
		"\"); stop it with kill_shell(shell_id: \"" + id + "\"); you are told when it exits. It is stopped when the session ends."
	if sb != nil && rep.Backend == sandbox.BackendBwrap && !rep.Shared && !sb.Network.On() {
		// Without a shared sandbox every command has a network namespace
		// of its own.
		note += " Its sandbox has a network namespace of its own here (one sandbox per command): a server it runs is not reachable from other bash calls; test it from within the same command."
	}
	return startValue{Kind: "background", ShellID: id, Sandbox: &rep, Note: note}, nil
}

// evictLocked drops the oldest finished shells of owner beyond
// cfg.MaxFinished (their spill files with them). Callers hold m.mu.
func (m *manager) evictLocked(owner *core.ScopeID) {
	var done []*shell
	for _, s := range m.shells {
		if s.owner == owner && s.currentStatus() != StatusRunning {
			done = append(done, s)
		}
	}
	if len(done) <= m.cfg.MaxFinished {
		return
	}
	slices.SortFunc(done, func(a, b *shell) int { return a.started.Compare(b.started) })
	for _, s := range done[:len(done)-m.cfg.MaxFinished] {
		delete(m.shells, s.id)
		s.removeSpills()
	}
}

// watch waits for the shell's command to end (or for the plugin to
// unload, which kills it), then empties its process range as a
// foreground call does, and records the final status.
func (m *manager) watch(ctx context.Context, s *shell) {
	select {
	case <-s.h.Done():
	case <-ctx.Done():
		s.requestKill()
		s.h.Terminate()
		<-s.h.Done()
	}
	outcome, _ := s.h.Outcome()
	// What the command left running (a `server &` inside it) goes with it.
	if gone, _ := s.h.WaitForExit(immediateCtx()); !gone {
		s.h.Terminate()
		wctx, cancel := context.WithTimeout(context.Background(), 2*m.cfg.Grace.D()+time.Second)
		_, _ = s.h.WaitForExit(wctx)
		cancel()
	}
	s.mu.Lock()
	s.outcome = outcome
	s.status = StatusExited
	if s.killRequested {
		s.status = StatusKilled
	}
	s.ended = time.Now()
	for _, p := range s.h.Protected() {
		s.protected = append(s.protected, p.String())
	}
	s.refused = s.h.NetworkRefused()
	if s.stdin != nil {
		_ = s.stdin.Close()
		s.stdin = nil
	}
	s.mu.Unlock()
	close(s.gone)
}

// immediateCtx is an already-cancelled context: WaitForExit(immediateCtx())
// is a single probe.
func immediateCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// get returns the shell id of scope, or an error naming the known ones.
func (m *manager) get(scope *core.ScopeID, id string) (*shell, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.shells[id]; ok && s.owner == scope {
		return s, nil
	}
	var ids []string
	for _, s := range m.shells {
		if s.owner == scope {
			ids = append(ids, s.id)
		}
	}
	slices.Sort(ids)
	if len(ids) == 0 {
		return nil, fmt.Errorf("no background shell %q: this session has none (start one with bash and run_in_background: true)", id)
	}
	return nil, fmt.Errorf("no background shell %q: this session's shells are %s", id, strings.Join(ids, ", "))
}

// kill stops s (SIGTERM to its whole process range, SIGKILL after the
// grace) and waits until it is gone or ctx ends.
func (m *manager) kill(ctx context.Context, s *shell) error {
	if s.currentStatus() == StatusRunning {
		s.requestKill()
		s.h.Terminate()
	}
	select {
	case <-s.gone:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// stop kills a shell no watcher will see, and waits for it (bounded).
func (m *manager) stop(s *shell) {
	s.h.Terminate()
	ctx, cancel := context.WithTimeout(context.Background(), 2*m.cfg.Grace.D()+time.Second)
	defer cancel()
	_, _ = s.h.WaitForExit(ctx)
	s.removeSpills()
}

// endScope kills every shell started within scope (a session and its
// subagents) and forgets them, removing their spill files.
func (m *manager) endScope(scope *core.ScopeID) {
	m.mu.Lock()
	var mine []*shell
	for id, s := range m.shells {
		if s.owner != nil && s.owner.Within(scope) {
			mine = append(mine, s)
			delete(m.shells, id)
		}
	}
	m.mu.Unlock()
	m.killAll(mine)
}

// close kills every shell (the plugin unloads) and refuses new ones.
func (m *manager) close() {
	m.mu.Lock()
	m.closed = true
	all := make([]*shell, 0, len(m.shells))
	for id, s := range m.shells {
		all = append(all, s)
		delete(m.shells, id)
	}
	m.mu.Unlock()
	m.killAll(all)
}

// killAll terminates shells together and waits for each, at most twice
// the grace plus a second.
func (m *manager) killAll(shells []*shell) {
	for _, s := range shells {
		if s.currentStatus() == StatusRunning {
			s.requestKill()
			s.h.Terminate()
		}
	}
	deadline := time.NewTimer(2*m.cfg.Grace.D() + time.Second)
	defer deadline.Stop()
	for _, s := range shells {
		select {
		case <-s.gone:
		case <-deadline.C:
			m.c.Logger().Warn("background shell still running after kill", "shell", s.id, "pid", s.h.Pid())
			return
		}
		s.removeSpills()
	}
}

// exitNotices returns the notices of the shells of scope that ended since
// the model last heard of them, and marks them told.
func (m *manager) exitNotices(scope *core.ScopeID) []string {
	m.mu.Lock()
	var mine []*shell
	for _, s := range m.shells {
		if s.owner == scope {
			mine = append(mine, s)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(mine, func(a, b *shell) int { return a.started.Compare(b.started) })
	var out []string
	for _, s := range mine {
		s.mu.Lock()
		if s.status != StatusRunning && !s.notified && !s.killRequested {
			s.notified = true
			out = append(out, "[background shell "+s.id+" ("+oneLine(s.command)+") "+s.statusTextLocked()+
				"; read the rest of its output with bash_output(shell_id: \""+s.id+"\")]")
		}
		s.mu.Unlock()
	}
	return out
}

func (s *shell) requestKill() {
	s.mu.Lock()
	s.killRequested = true
	s.mu.Unlock()
}

func (s *shell) currentStatus() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// statusTextLocked is "is running", "exited with code 3", "was killed by
// SIGTERM". Callers hold s.mu.
func (s *shell) statusTextLocked() string {
	switch {
	case s.status == StatusRunning:
		return "is running"
	case s.status == StatusKilled:
		return "was killed (" + s.outcome.String() + ")"
	case s.outcome.ExitCode != nil:
		return "exited with code " + strconv.Itoa(*s.outcome.ExitCode)
	default:
		return "was killed by " + s.outcome.Signal
	}
}

// removeSpills deletes the shell's complete-stream files.
func (s *shell) removeSpills() {
	c := s.h.Collected()
	for _, o := range []*subprocess.CollectedOutput{c.Stdout, c.Stderr} {
		if o != nil {
			if p := o.SpillPath(); p != "" {
				_ = os.Remove(p)
			}
		}
	}
}

// oneLine is a command's first line, cut to 80 bytes.
func oneLine(cmd string) string {
	first, _, more := strings.Cut(strings.TrimSpace(cmd), "\n")
	if len(first) > 80 {
		first = tools.HeadBytes(first, 80)
		more = true
	}
	if more {
		first = strings.TrimSuffix(first, "\n…") + " …"
	}
	return first
}

// marshalArgs is the validated arguments of e decoded into v.
func decodeArgs(e *tools.Execution, v any) error {
	return json.Unmarshal([]byte(e.Arguments()), v)
}

// tasksCommand is /tasks: the background shells of the front end's session
// (every shell when it has none), as a Markdown table.
func (m *manager) tasksCommand(_ context.Context, inv commands.Invocation) (commands.Reply, error) {
	var scope *core.ScopeID
	if inv.Session != nil {
		scope = inv.Session.Scope()
	}
	m.mu.Lock()
	var list []*shell
	for _, s := range m.shells {
		if scope == nil || s.owner == scope {
			list = append(list, s)
		}
	}
	m.mu.Unlock()
	if len(list) == 0 {
		return commands.Reply{Text: "No background shells."}, nil
	}
	slices.SortFunc(list, func(a, b *shell) int { return a.started.Compare(b.started) })
	var b strings.Builder
	b.WriteString("| shell | status | for | command |\n|---|---|---|---|\n")
	now := time.Now()
	for _, s := range list {
		s.mu.Lock()
		end := now
		if s.status != StatusRunning {
			end = s.ended
		}
		status := strings.TrimPrefix(s.statusTextLocked(), "is ")
		s.mu.Unlock()
		cmd := strings.ReplaceAll(oneLine(s.command), "|", `\|`)
		fmt.Fprintf(&b, "| %s | %s | %s | `%s` |\n", s.id, status, end.Sub(s.started).Round(time.Second), strings.ReplaceAll(cmd, "`", "'"))
	}
	return commands.Reply{Text: b.String()}, nil
}
