// Package hello is a third-party harness plugin in its own Go module. It
// provides a "greeter" service and listens to the Greeted event; importing
// the package registers the plugin, so harness.yml can mount it by name.
package hello

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/dshgo/harness/core"
)

// Config is the plugin's harness.yml config.
type Config struct {
	// Greeting starts every greeting.
	Greeting string `yaml:"greeting" jsonschema:"description=Word that starts every greeting"`
}

// SetDefaults fills in the default greeting.
func (c *Config) SetDefaults() { c.Greeting = "Hello" }

// Validate rejects an empty greeting.
func (c Config) Validate() error {
	if c.Greeting == "" {
		return &core.ConfigError{Issues: []core.Issue{{Path: "greeting", Message: "must not be empty"}}}
	}
	return nil
}

// Greeter is the service the plugin provides.
type Greeter struct {
	greeting string
	count    atomic.Int64
}

// Greet returns a greeting for name and counts it.
func (g *Greeter) Greet(name string) string {
	g.count.Add(1)
	return fmt.Sprintf("%s, %s!", g.greeting, name)
}

// Count returns how many greetings were made.
func (g *Greeter) Count() int64 { return g.count.Load() }

// Key is the greeter service's typed key.
var Key = core.NewKey[*Greeter]("greeter")

// Greeted is emitted with the name of everyone greeted.
var Greeted = core.NewEmitEvent[string]("hello/greeted")

// Plugin is the plugin definition.
var Plugin = core.Define("hello", apply,
	core.WithProvides("greeter"),
	core.WithDescription("Provides a greeter service and logs every greeting"))

func apply(ctx *core.Context, cfg Config) error {
	g := &Greeter{greeting: cfg.Greeting}
	if err := core.Provide(ctx, Key, g); err != nil {
		return err
	}
	log := ctx.Logger()
	return core.On(ctx, Greeted, func(_ context.Context, name string) error {
		log.Info("greeted", "name", name)
		return nil
	})
}

func init() { core.Register(Plugin) }
