package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sync"
	"time"
)

// ReservedName is the tool name reserved for the programmatic-tool-calling
// transport (dsh PTC mode). No tool may register under it.
const ReservedName = "run_code"

// Compiled on first use: package init runs at every harness start.
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })

// Tool is one registrable tool: the model-facing schema {name, description,
// parameters}, the compiled argument validator, the body, and the output
// contract (render, presentation meta, finalize). Build it with Define (typed)
// or DefineRaw (a JSON Schema document from elsewhere: MCP, hooks).
//
// A Tool is immutable once defined (a WithLazySchema tool compiles its
// schema once, at its first call) and may be registered in several layers. A
// definition error (bad name, bad timeout, a schema that does not compile, an
// option of the wrong type) does not panic: it is kept in the Tool, returned by
// Err, and makes Registry.Register fail.
type Tool struct {
	name        string
	description string
	params      json.RawMessage // model-facing parameter schema (compact JSON)
	output      json.RawMessage // output schema; model-invisible
	args        *validator
	lazy        *lazySchema // WithLazySchema: args is compiled at the first call, here
	outCheck    *validator  // raw tools with an output schema
	argsType    reflect.Type
	outType     reflect.Type

	decode   func(normalized string) (any, error)
	zeroArgs any // decoded "{}" (typed tools whose schema admits {})
	run      func(ctx context.Context, e *Execution, args any) (any, error)
	render   func(args, out any) ([]Content, error)
	meta     func(args, out any) (any, error)
	finalize func(e *Execution, o *Outcome) []Content
	present  func(c PresentCall) (Presentation, bool) // WithPresent; false: arguments that do not decode
	convert  func(v any) (any, error)                 // a replacement value into the canonical type
	safe     func(args any) bool
	timeout  time.Duration
	readOnly bool
	internal bool
	err      error
}

// Name returns the tool's model-facing name.
func (t *Tool) Name() string { return t.name }

// Description returns the model-facing description.
func (t *Tool) Description() string { return t.description }

// Parameters returns a copy of the model-facing parameter schema.
func (t *Tool) Parameters() json.RawMessage { return append(json.RawMessage(nil), t.params...) }

// OutputSchema returns a copy of the output schema (nil when none is declared).
// It is never shown to the model.
func (t *Tool) OutputSchema() json.RawMessage { return append(json.RawMessage(nil), t.output...) }

// Timeout returns the declared timeout (0: none). It is declarative only: the
// tool-timeout plugin enforces it as an Execute listener.
func (t *Tool) Timeout() time.Duration { return t.timeout }

// ReadOnly reports whether the tool declared that it changes nothing
// (WithReadOnly). Permission modes treat such a tool like a configured
// read-only tool.
func (t *Tool) ReadOnly() bool { return t.readOnly }

// Internal reports whether the tool declared that it changes only the
// agent's own state (WithInternal).
func (t *Tool) Internal() bool { return t.internal }

// Presents reports whether the tool presents its own calls (WithPresent).
// A tool that does not gets the generic presentation of [Present]: its
// name, its first string argument and the start of its result's text.
func (t *Tool) Presents() bool { return t.present != nil }

// Err returns the definition error, or nil.
func (t *Tool) Err() error { return t.err }

// Option configures a tool at definition time. Options whose functions take the
// tool's Args and Out types are checked against the tool they are given to; a
// mismatch is a definition error.
type Option interface{ apply(t *Tool) error }

type optionFunc func(t *Tool) error

func (f optionFunc) apply(t *Tool) error { return f(t) }

func typeCheck[A, O any](t *Tool, what string) error {
	a, o := reflect.TypeFor[A](), reflect.TypeFor[O]()
	if a != t.argsType || (o != t.outType && t.outType != nil) {
		return fmt.Errorf("%s takes (%v, %v) but the tool has (%v, %v)", what, a, o, t.argsType, t.outType)
	}
	return nil
}

// WithRender sets the render function: canonical value → model-facing content.
// It must be pure. Without it, a string value renders as one text block, a
// []Content value as itself, anything else as its compact JSON text.
func WithRender[A, O any](render func(args A, out O) []Content) Option {
	return optionFunc(func(t *Tool) error {
		if err := typeCheck[A, O](t, "WithRender"); err != nil {
			return err
		}
		t.render = func(a, o any) ([]Content, error) { return render(a.(A), asType[O](o)), nil }
		return nil
	})
}

// WithMeta sets the presentation-meta function: canonical value → JSON metadata
// persisted with the result for UIs (never shown to the model). It runs only
// for top-level calls (no Parent). Its result must marshal to JSON.
func WithMeta[A, O any](meta func(args A, out O) any) Option {
	return optionFunc(func(t *Tool) error {
		if err := typeCheck[A, O](t, "WithMeta"); err != nil {
			return err
		}
		t.meta = func(a, o any) (any, error) { return meta(a.(A), asType[O](o)), nil }
		return nil
	})
}

// WithConcurrencySafe sets the classifier that decides, per call, whether the
// body may overlap other calls' bodies. Only a true result means parallel; a
// missing classifier, a panic, or invalid arguments mean exclusive.
func WithConcurrencySafe[A any](safe func(args A) bool) Option {
	return optionFunc(func(t *Tool) error {
		if a := reflect.TypeFor[A](); a != t.argsType {
			return fmt.Errorf("WithConcurrencySafe takes %v but the tool has %v", a, t.argsType)
		}
		t.safe = func(a any) bool { return safe(a.(A)) }
		return nil
	})
}

// WithFinalize sets a hook that runs exactly once on every outcome of this tool
// (including failures that bypass PostExecute) just before the Result event. A
// non-nil return replaces the content; nil keeps it. It must be quick and total.
func WithFinalize(finalize func(e *Execution, o *Outcome) []Content) Option {
	return optionFunc(func(t *Tool) error { t.finalize = finalize; return nil })
}

// WithTimeout declares the tool's timeout (positive). It is enforced by the
// tool-timeout plugin, not by the registry.
func WithTimeout(d time.Duration) Option {
	return optionFunc(func(t *Tool) error {
		if d <= 0 {
			return fmt.Errorf("tool %q timeout must be a positive duration", t.name)
		}
		t.timeout = d
		return nil
	})
}

// WithReadOnly declares that the tool changes nothing (an MCP tool's
// readOnlyHint). It is advisory metadata for policy: the permission plugin
// runs such a tool without asking in its default mode and allows it in plan
// mode; deny and ask rules still apply.
func WithReadOnly() Option {
	return optionFunc(func(t *Tool) error { t.readOnly = true; return nil })
}

// WithInternal declares that the tool changes only the agent's own state
// (its task list, the subagents it runs) and nothing in the workspace or
// outside it, as todo_write and task do. Like Claude Code's TodoWrite and
// Task, the permission plugin runs such a tool without asking in every mode
// but plan; deny and ask rules still apply, and whatever the tool starts
// (a subagent's tool calls) is decided and sandboxed as any other call.
func WithInternal() Option {
	return optionFunc(func(t *Tool) error { t.internal = true; return nil })
}

// WithLazySchema defers compiling a raw tool's parameter schema from
// DefineRaw to the tool's first call (for tool sets defined in bulk, such as
// an MCP server's, most of whose tools may never be called). At definition
// the schema is only checked to be JSON, so a document that is JSON but does
// not compile is no definition error: every call of the tool then fails
// with INVALID_ARGS saying why the schema does not compile. The compiled
// schema is kept; later calls validate exactly as an eagerly compiled tool
// does. Typed tools (Define) ignore it.
func WithLazySchema() Option {
	return optionFunc(func(t *Tool) error {
		if t.outType == nil { // raw
			t.lazy = &lazySchema{}
		}
		return nil
	})
}

// lazySchema is a parameter schema compiled at first use.
type lazySchema struct {
	once sync.Once
	v    *validator
	err  error
}

// validator returns the compiled parameter schema, compiling it now for a
// WithLazySchema tool that has not been called yet.
func (t *Tool) validator() (*validator, error) {
	if t.lazy == nil {
		return t.args, nil
	}
	t.lazy.once.Do(func() { t.lazy.v, t.lazy.err = compileSchema(t.params) })
	return t.lazy.v, t.lazy.err
}

// WithOutputSchema declares the output schema of a raw tool; its values are
// validated against it (INVALID_TOOL_OUTPUT on violation). For typed tools the
// output schema is generated from Out and this option replaces the published
// document only.
func WithOutputSchema(schema json.RawMessage) Option {
	return optionFunc(func(t *Tool) error {
		v, err := compileSchema(schema)
		if err != nil {
			return fmt.Errorf("output schema: %w", err)
		}
		t.output = compact(schema)
		if t.outType == nil {
			t.outCheck = v
		}
		return nil
	})
}

// asType converts a canonical value to O; nil becomes O's zero value.
func asType[O any](v any) O {
	if o, ok := v.(O); ok {
		return o
	}
	var zero O
	return zero
}

func compact(doc json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, doc); err != nil {
		return append(json.RawMessage(nil), doc...)
	}
	return json.RawMessage(b.Bytes())
}

// Define defines a typed tool. The parameter schema is generated from Args with
// invopop/jsonschema (json tags name the keys; fields are required unless
// omitempty/omitzero; `jsonschema:"description=...,enum=a,enum=b,minimum=1"`
// tags add rules; nested structs are inlined and closed), and the output schema
// from Out. Arguments are validated against the schema before any policy runs,
// then decoded into Args; execute runs only on valid arguments and must honour
// ctx. Args must be a struct (struct{} for none).
//
// Define never panics; see Tool.Err.
func Define[Args, Out any](name, description string, execute func(ctx context.Context, e *Execution, args Args) (Out, error), opts ...Option) *Tool {
	t := &Tool{name: name, description: description, argsType: reflect.TypeFor[Args](), outType: reflect.TypeFor[Out]()}
	if t.argsType.Kind() != reflect.Struct {
		t.err = fmt.Errorf("tool %q: Args must be a struct, not %v", name, t.argsType)
		return t
	}
	params := emptyObjectSchema
	if t.argsType.NumField() > 0 {
		var err error
		if params, err = schemaOf(t.argsType); err != nil {
			t.err = fmt.Errorf("tool %q: parameter schema: %w", name, err)
			return t
		}
	}
	if out, err := schemaOf(t.outType); err == nil {
		t.output = out
	}
	t.decode = func(s string) (any, error) {
		var a Args
		if err := json.Unmarshal([]byte(s), &a); err != nil {
			return nil, err
		}
		return a, nil
	}
	t.run = func(ctx context.Context, e *Execution, args any) (any, error) {
		return execute(ctx, e, args.(Args))
	}
	t.convert = func(v any) (any, error) {
		if o, ok := v.(Out); ok {
			return o, nil
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		var o Out
		if err := json.Unmarshal(b, &o); err != nil {
			return nil, err
		}
		return o, nil
	}
	t.finish(params, opts)
	if t.err == nil && t.args.emptyOK {
		t.zeroArgs = *new(Args)
	}
	return t
}

// DefineRaw defines a tool from a JSON Schema parameter document (any draft;
// 2020-12 when the document does not say). Arguments are validated against it
// like a typed tool's and handed to execute as normalized JSON text. The body
// returns a JSON-marshalable value (or json.RawMessage); when WithOutputSchema
// is given the value is validated against it. For render options the types
// are (json.RawMessage, any).
func DefineRaw(name, description string, parameters json.RawMessage, execute func(ctx context.Context, e *Execution, args json.RawMessage) (any, error), opts ...Option) *Tool {
	t := &Tool{name: name, description: description, argsType: reflect.TypeFor[json.RawMessage]()}
	t.decode = func(s string) (any, error) { return json.RawMessage(s), nil }
	t.run = func(ctx context.Context, e *Execution, args any) (any, error) {
		return execute(ctx, e, args.(json.RawMessage))
	}
	t.convert = func(v any) (any, error) { return v, nil }
	t.finish(parameters, opts)
	if t.err == nil && t.lazy == nil && t.args.emptyOK {
		t.zeroArgs = json.RawMessage("{}")
	}
	return t
}

// finish checks the common rules and applies options; the first error sticks.
func (t *Tool) finish(params json.RawMessage, opts []Option) {
	errs := []error{}
	switch {
	case !nameRE().MatchString(t.name):
		errs = append(errs, fmt.Errorf("tool name %q must be 1-64 characters of A-Z a-z 0-9 _ -", t.name))
	case t.name == ReservedName:
		errs = append(errs, fmt.Errorf("tool name %q is reserved", ReservedName))
	}
	var optErrs []error
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o.apply(t); err != nil {
			optErrs = append(optErrs, fmt.Errorf("tool %q: %w", t.name, err))
		}
	}
	switch {
	case t.lazy != nil && !json.Valid(params):
		errs = append(errs, fmt.Errorf("tool %q: parameter schema: schema is not valid JSON", t.name))
	case t.lazy != nil:
		t.params = compact(params)
	default:
		v, err := compileSchema(params)
		if err != nil {
			errs = append(errs, fmt.Errorf("tool %q: parameter schema: %w", t.name, err))
		} else {
			t.args, t.params = v, compact(params)
		}
	}
	t.err = errors.Join(append(errs, optErrs...)...)
}
