// Package streamtool is a harness tool that runs a subprocess and streams
// its output while it runs: each stdout line is emitted as an [Output]
// event to the call's scope as soon as the child writes it (a front end or
// a log listens with core.On), and the model gets the exit status and a
// bounded tail when the process ends.
//
// The command comes from the deployment (the row's config), never from the
// model; the child runs through the subprocess service (the harness's
// sandbox policy, a scrubbed environment, the session's working
// directory), and memory stays bounded whatever it prints.
//
//	plugins:
//	  - id: checks
//	    name: tool-run-checks
//	    config: {command: [go, test, ./...], timeout: 10m}
package streamtool

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/tools/workdir"
)

// Line is one line of output, as it arrives.
type Line struct {
	// CallID is the tool call that produced it.
	CallID string
	// Text is the line without its newline; a line longer than MaxLineBytes
	// arrives in pieces of at most MaxLineBytes bytes.
	Text string
}

// Output is emitted for every stdout line of a run_checks call, to the
// call's scope, while the process runs.
var Output = core.NewEmitEvent[Line]("run-checks/output")

// MaxLineBytes bounds one emitted line (bytes).
const MaxLineBytes = 4096

// Config is the row's config.
type Config struct {
	Command   []string          `yaml:"command" jsonschema:"description=Program and arguments run by every call (not shell-interpreted)"`
	Timeout   manifest.Duration `yaml:"timeout" jsonschema:"description=Longest run; the process is terminated after it"`
	TailBytes int               `yaml:"tailBytes" jsonschema:"minimum=1,description=Bytes of the end of stdout and of stderr returned to the model"`
}

// SetDefaults: a 10-minute timeout and an 8000-byte tail.
func (c *Config) SetDefaults() {
	c.Timeout, c.TailBytes = manifest.Duration(10*time.Minute), 8000
}

// Validate requires a command, a positive timeout and tail.
func (c Config) Validate() error {
	var errs []error
	if len(c.Command) == 0 || c.Command[0] == "" {
		errs = append(errs, errors.New("command: required (a program and its arguments)"))
	}
	if c.Timeout <= 0 {
		errs = append(errs, errors.New("timeout: must be positive"))
	}
	if c.TailBytes < 1 {
		errs = append(errs, errors.New("tailBytes: must be at least 1"))
	}
	return errors.Join(errs...)
}

// Result is what a call returns.
type Result struct {
	// Exit is "exit N" or "signal NAME".
	Exit string `json:"exit"`
	// Lines counts the stdout lines streamed.
	Lines int `json:"lines"`
	// Stdout and Stderr are the last TailBytes bytes of each stream.
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
}

// Plugin is `name: tool-run-checks`. It needs the subprocess service and
// the tool registry.
var Plugin = core.Define("tool-run-checks", apply,
	core.WithInject(subprocess.Key.Name(), tools.Key.Name()),
	core.WithDescription("run_checks: runs the configured command and streams its output"))

func init() { core.Register(Plugin) }

func apply(c *core.Context, cfg Config) error {
	rt := core.Use(c, subprocess.Key)
	tool := tools.Define("run_checks", fmt.Sprintf("Run the project's checks (%s) and report the result.", strings.Join(cfg.Command, " ")),
		func(ctx context.Context, e *tools.Execution, _ struct{}) (Result, error) {
			return run(ctx, c, rt, cfg, e)
		},
		tools.WithRender(func(_ struct{}, r Result) []tools.Content {
			return []tools.Content{tools.Text(fmt.Sprintf("%s (%d lines)\n%s%s", r.Exit, r.Lines, r.Stdout, r.Stderr))}
		}))
	return tools.Register(c, tool)
}

func run(ctx context.Context, c *core.Context, rt *subprocess.Runtime, cfg Config, e *tools.Execution) (Result, error) {
	dir, err := filepath.Abs(workdir.Or(ctx, "."))
	if err != nil {
		return Result{}, err
	}
	var sb *subprocess.SandboxPolicy
	if policy, _ := rt.Sandbox(); policy.Enabled() {
		sb = &policy
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout.D())
	defer cancel()
	h, err := rt.Spawn(subprocess.Spec{
		Context: ctx, Argv: cfg.Command, Dir: dir, Sandbox: sb,
		Stdin:  subprocess.IgnoreStdin(),
		Stdout: subprocess.PipeOutput(),
		Stderr: subprocess.Collect(int64(cfg.TailBytes)),
		Grace:  2 * time.Second,
	})
	if err != nil {
		return Result{}, tools.Errorf("SPAWN", "cannot start %s: %v", cfg.Command[0], err)
	}
	// A descendant that keeps stdout open must not block the read past
	// the call: closing our end on cancellation ends it.
	stop := context.AfterFunc(ctx, func() { h.Stdout().Close() })
	defer stop()

	res := Result{}
	tail := newTail(cfg.TailBytes)
	to := c.To(e.Scope())
	r := bufio.NewReaderSize(h.Stdout(), MaxLineBytes)
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 {
			tail.Write(line)
			res.Lines++
			Output.Emit(ctx, to, Line{CallID: e.CallID(), Text: strings.TrimSuffix(string(line), "\n")})
		}
		if err == bufio.ErrBufferFull {
			res.Lines-- // the rest of this line follows
			continue
		}
		if err != nil {
			if err != io.EOF && ctx.Err() == nil {
				h.Terminate()
			}
			break
		}
	}
	h.Stdout().Close()
	out, err := h.Wait(context.WithoutCancel(ctx)) // bounded by Grace once terminated
	if err != nil {
		return Result{}, err
	}
	res.Exit, res.Stdout = out.String(), tail.String()
	if s := h.Collected().Stderr; s != nil {
		res.Stderr = s.Text()
	}
	if ctx.Err() != nil && context.Cause(ctx) == context.DeadlineExceeded {
		res.Exit += fmt.Sprintf(" (timed out after %s)", cfg.Timeout.D())
	}
	return res, nil
}

// tail keeps the last n bytes written.
type tail struct {
	n   int
	buf []byte
}

func newTail(n int) *tail { return &tail{n: n} }

func (t *tail) Write(p []byte) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.n {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.n:]...)
	}
}

func (t *tail) String() string {
	if len(t.buf) > t.n {
		return string(t.buf[len(t.buf)-t.n:])
	}
	return string(t.buf)
}
