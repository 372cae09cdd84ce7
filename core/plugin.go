package core

import (
	"errors"
	"fmt"
	"reflect"
)

// Plugin is one plugin definition: a name, the services it injects, a typed
// config and its Apply function. Create plugins with [Define]; the interface
// is sealed so that a plugin is always one value (dsh postmortem 0001: a
// loader that could separate a plugin from its metadata ran it without its
// dependencies).
type Plugin interface {
	// Name is the catalog key used by harness.yml's `name` field.
	Name() string
	// Inject lists the services the plugin requires. The fiber stays pending
	// until every one is provided by an active fiber.
	Inject() []string
	// Provides lists the services the plugin declares it provides
	// (informational: shown by `harness plugins`).
	Provides() []string
	// Description is one line for `harness plugins` and the schema.
	Description() string
	// ConfigType is the Go type of the plugin's config (a struct type, or
	// struct{} for none).
	ConfigType() reflect.Type
	// NewConfig returns a pointer to a fresh config value with defaults
	// applied (see [Define]).
	NewConfig() any

	apply(c *Context, cfg any) error
}

// DefineOption configures a plugin definition. The interface is sealed: the
// options are [WithInject], [WithProvides] and [WithDescription].
type DefineOption interface{ applyDefine(*def) }

type defineOptionFunc func(*def)

func (f defineOptionFunc) applyDefine(d *def) { f(d) }

type def struct {
	name        string
	inject      []string
	provides    []string
	description string
}

// WithInject declares the services a plugin requires (Cordis `inject`). The
// plugin is applied only when all are available and is unloaded when one
// goes away. Use [Use] to read them.
func WithInject(names ...string) DefineOption {
	return defineOptionFunc(func(d *def) { d.inject = append(d.inject, names...) })
}

// WithProvides declares the services a plugin provides, for diagnostics.
func WithProvides(names ...string) DefineOption {
	return defineOptionFunc(func(d *def) { d.provides = append(d.provides, names...) })
}

// WithDescription sets the plugin's one-line description.
func WithDescription(text string) DefineOption {
	return defineOptionFunc(func(d *def) { d.description = text })
}

// Defaulter is implemented by config types (on the pointer receiver) that
// fill in defaults. SetDefaults runs on a zero value before the manifest's
// config is decoded over it, so explicit values win.
type Defaulter interface{ SetDefaults() }

// Validator is implemented by config types that check themselves after
// decoding. A returned *ConfigError keeps its field paths; any other error
// becomes a single issue.
type Validator interface{ Validate() error }

// Define creates a plugin named name whose config type is C. apply runs on
// activation with the resolved config: the manifest's value decoded over a
// zero C on which (*C).SetDefaults ran, then checked with Validate if C has
// it. A nil config passed to [Context.Plugin] means "all defaults".
//
// apply must be bounded: it runs on the lifecycle queue. Long-running work
// goes into [Go]. Returning an error (or panicking) fails the fiber and rolls
// back every effect registered so far.
//
// C must not be a pointer type: declare apply as func(*Context, Cfg), not
// func(*Context, *Cfg) (SetDefaults is found on *Cfg either way). A pointer
// config would silently skip SetDefaults (nil without config, zero values
// with `config: {}`), so such a plugin is rejected wherever it is used:
// [Register] panics at init naming it, [NewCatalog] and [Catalog.Add]
// return an error wrapping [ErrPointerConfig], and mounting it fails the
// fiber with that error.
func Define[C any](name string, apply func(c *Context, cfg C) error, opts ...DefineOption) Plugin {
	d := def{name: name}
	for _, o := range opts {
		o.applyDefine(&d)
	}
	p := &typedPlugin[C]{def: d, fn: apply}
	if t := reflect.TypeFor[C](); t.Kind() == reflect.Pointer {
		p.err = fmt.Errorf("plugin %q: config type %v: %w (declare apply as func(*core.Context, %v))", name, t, ErrPointerConfig, t.Elem())
	}
	return p
}

// ErrPointerConfig is wrapped by the error reported for a plugin whose
// config type is a pointer (see [Define]).
var ErrPointerConfig = errors.New("a plugin config type must not be a pointer")

type typedPlugin[C any] struct {
	def
	fn  func(*Context, C) error
	err error // a definition error (pointer config), reported on use
}

func (p *typedPlugin[C]) definitionError() error { return p.err }

// definitionError returns the error of an ill-defined plugin (nil if fine).
func definitionError(p Plugin) error {
	if d, ok := p.(interface{ definitionError() error }); ok {
		return d.definitionError()
	}
	return nil
}

func (p *typedPlugin[C]) Name() string             { return p.name }
func (p *typedPlugin[C]) Inject() []string         { return p.inject }
func (p *typedPlugin[C]) Provides() []string       { return p.provides }
func (p *typedPlugin[C]) Description() string      { return p.description }
func (p *typedPlugin[C]) ConfigType() reflect.Type { return reflect.TypeFor[C]() }

func (p *typedPlugin[C]) NewConfig() any {
	v := new(C)
	if d, ok := any(v).(Defaulter); ok {
		d.SetDefaults()
	}
	return v
}

func (p *typedPlugin[C]) apply(c *Context, cfg any) error {
	if p.err != nil {
		return p.err
	}
	v, err := p.config(cfg)
	if err != nil {
		return err
	}
	return p.fn(c, v)
}

func (p *typedPlugin[C]) validate(cfg any) error {
	if p.err != nil {
		return p.err
	}
	_, err := p.config(cfg)
	return err
}

// config converts what the caller passed (nil, C or *C) into a validated C.
func (p *typedPlugin[C]) config(cfg any) (C, error) {
	var v C
	switch x := cfg.(type) {
	case nil:
		v = *p.NewConfig().(*C)
	case *C:
		if x == nil {
			v = *p.NewConfig().(*C)
		} else {
			v = *x
		}
	case C:
		v = x
	default:
		return v, fmt.Errorf("plugin %q: config has type %T, want %v", p.name, cfg, p.ConfigType())
	}
	if err := ValidateConfig(p.name, &v); err != nil {
		return v, err
	}
	return v, nil
}

// ValidateConfig runs the config's Validate method (on the value or the
// pointer receiver) if it has one, and wraps a failure in a *ConfigError:
// one Issue per error of an errors.Join, else one for the error.
// cfg must be a pointer to the config value.
func ValidateConfig(plugin string, cfg any) error {
	var err error
	if v, ok := cfg.(Validator); ok {
		err = v.Validate()
	} else if rv := reflect.ValueOf(cfg); rv.Kind() == reflect.Pointer && !rv.IsNil() {
		if v, ok := rv.Elem().Interface().(Validator); ok {
			err = v.Validate()
		}
	}
	if err == nil {
		return nil
	}
	if ce, ok := err.(*ConfigError); ok {
		if ce.Plugin == "" {
			ce.Plugin = plugin
		}
		return ce
	}
	return &ConfigError{Plugin: plugin, Issues: issuesOf(err)}
}

// issuesOf makes each error an errors.Join holds (at any depth) an issue
// of its own, and any other error one issue.
func issuesOf(err error) []Issue {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []Issue{{Message: err.Error()}}
	}
	var out []Issue
	for _, e := range j.Unwrap() {
		if e != nil {
			out = append(out, issuesOf(e)...)
		}
	}
	return out
}
