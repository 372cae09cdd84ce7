package toolfs

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/subprocess/sandbox"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/tools/workdir"
)

var (
	//go:embed read.md
	readDescription string
	//go:embed write.md
	writeDescription string
	//go:embed edit.md
	editDescription string
	//go:embed read_prompt.md
	readGuidance string
	//go:embed write_prompt.md
	writeGuidance string
	//go:embed edit_prompt.md
	editGuidance string
)

// Config is the tool-fs configuration (harness.yml row `name: tool-fs`).
type Config struct {
	// Cwd is the session working directory relative paths resolve against;
	// empty means the process working directory when the plugin is applied.
	Cwd string `yaml:"cwd" json:"cwd,omitempty"`
	// ReadLimit is the default and maximum number of lines per read (2000).
	ReadLimit int `yaml:"readLimit" json:"readLimit,omitempty" jsonschema:"minimum=1,default=2000"`
	// ReadMaxLineLength is the longest line read returns, in characters (2000).
	ReadMaxLineLength int `yaml:"readMaxLineLength" json:"readMaxLineLength,omitempty" jsonschema:"minimum=1,default=2000"`
	// ReadMaxBytes caps one read's output, in bytes (51200).
	// Maximum bytes of file text returned by one read.
	ReadMaxBytes int `yaml:"readMaxBytes" json:"readMaxBytes,omitempty" jsonschema:"minimum=1,default=51200"`
	// RequireRead enables the read-before-write policy (true): overwriting or
	// editing a file needs a read of its current version by the same scope.
	// Refuse to overwrite or edit files this session has not read at their
	// current version.
	RequireRead bool `yaml:"requireRead" json:"requireRead" jsonschema:"default=true"`
}

// SetDefaults applies dsh's defaults.
func (c *Config) SetDefaults() {
	c.ReadLimit, c.ReadMaxLineLength, c.ReadMaxBytes = DefaultReadLimit, DefaultMaxLineLength, DefaultMaxBytes
	c.RequireRead = true
}

// Validate rejects non-positive caps, naming the field.
func (c Config) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"readLimit", c.ReadLimit}, {"readMaxLineLength", c.ReadMaxLineLength}, {"readMaxBytes", c.ReadMaxBytes}} {
		if f.v < 1 {
			return fmt.Errorf("%s: must be a positive number of %s", f.name, map[bool]string{true: "bytes", false: "lines or characters"}[f.name == "readMaxBytes"])
		}
	}
	return nil
}

// Plugin registers read, write and edit in the tool registry and, when a
// system-prompt service is mounted, their guidance sections tool:read,
// tool:write and tool:edit.
var Plugin = core.Define("tool-fs", apply,
	core.WithInject(tools.Key.Name()),
	core.WithDescription("read, write and edit tools over the local filesystem"))

func configuredDir(cfg string) (string, error) {
	if cfg == "" {
		return os.Getwd()
	}
	return filepath.Abs(cfg)
}

func apply(c *core.Context, cfg Config) error {
	cwd, err := configuredDir(cfg.Cwd)
	if err != nil {
		return fmt.Errorf("cwd: %w", err)
	}
	var policy *Observations
	if cfg.RequireRead {
		policy = NewObservations()
	}
	f := New(Caps{Limit: cfg.ReadLimit, MaxLineLength: cfg.ReadMaxLineLength, MaxBytes: cfg.ReadMaxBytes}, policy)
	if rt, ok := core.Lookup(c, subprocess.Key); ok {
		f.SetContainment(func(dir string) *sandbox.Checker { return sandbox.NewChecker(rt.SandboxPolicy(), dir, cwd) })
	}
	if err := tools.Register(c, Tools(f, cwd)...); err != nil {
		return err
	}
	return addGuidance(c)
}

// Tools defines the read, write and edit tools over f, resolving relative
// paths against the call's working directory (package workdir), else cwd. The read-before-write owner of a call is its scope.
func Tools(f *FS, cwd string) []*tools.Tool {
	read := tools.Define("read", readDescription,
		func(ctx context.Context, e *tools.Execution, args ReadArgs) (ReadValue, error) {
			v, err := f.Read(ctx, owner(e), workdir.Of(ctx, e.Context(), cwd), args)
			return v, toolError(err)
		},
		tools.WithRender(func(args ReadArgs, v ReadValue) []tools.Content {
			limit := f.Caps().Limit
			if args.Limit != nil {
				limit = *args.Limit
			}
			return []tools.Content{tools.Text(FormatRead(v, limit))}
		}),
		tools.WithPresent(PresentRead),
		tools.WithConcurrencySafe(func(ReadArgs) bool { return true }))
	write := tools.Define("write", writeDescription,
		func(ctx context.Context, e *tools.Execution, args WriteArgs) (WriteValue, error) {
			v, err := f.Write(ctx, owner(e), workdir.Of(ctx, e.Context(), cwd), args)
			return v, toolError(err)
		},
		tools.WithRender(func(_ WriteArgs, v WriteValue) []tools.Content {
			return []tools.Content{tools.Text(FormatWrite(v.Path, v.Operation))}
		}),
		tools.WithPresent(PresentWrite))
	edit := tools.Define("edit", editDescription,
		func(ctx context.Context, e *tools.Execution, args EditArgs) (EditValue, error) {
			v, err := f.Edit(ctx, owner(e), workdir.Of(ctx, e.Context(), cwd), args)
			return v, toolError(err)
		},
		tools.WithRender(func(args EditArgs, v EditValue) []tools.Content {
			return []tools.Content{tools.Text(FormatEdit(v.Path, args.ReplaceAll))}
		}),
		tools.WithPresent(PresentEdit))
	return []*tools.Tool{read, write, edit}
}

// owner keys read-before-write observations: the call's scope (one agent
// session), or nil for unscoped calls (`harness tool`, ad-hoc calls), to which
// the policy does not apply: it guards what a model does in a session.
func owner(e *tools.Execution) any {
	if s := e.Scope(); s != nil {
		return s
	}
	return nil
}

// toolError turns an *Error into the registry's coded error so the result
// carries {name: "FsError", code}.
func toolError(err error) error {
	var fe *Error
	if errors.As(err, &fe) {
		return &tools.Error{Name: fe.ErrorName(), Code: fe.ErrorCode(), Message: fe.Message}
	}
	return err
}

func addGuidance(c *core.Context) error {
	sp, ok := core.Lookup(c, systemprompt.Key)
	if !ok {
		return nil
	}
	for _, s := range []systemprompt.Section{
		{Name: "tool:read", Order: systemprompt.SectionOrder(systemprompt.OrderToolRead), Text: strings.TrimSpace(readGuidance), Interpolate: systemprompt.InterpolateOff},
		{Name: "tool:write", Order: systemprompt.SectionOrder(systemprompt.OrderToolWrite), Text: strings.TrimSpace(writeGuidance), Interpolate: systemprompt.InterpolateOff},
		{Name: "tool:edit", Order: systemprompt.SectionOrder(systemprompt.OrderToolEdit), Text: strings.TrimSpace(editGuidance), Interpolate: systemprompt.InterpolateOff},
	} {
		if _, err := sp.Section(c, s); err != nil {
			return err
		}
	}
	return nil
}
