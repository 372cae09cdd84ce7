package subprocess

import (
	"context"
	"slices"
	"time"

	"github.com/dshgo/harness/core"
)

// Key is the "subprocess" service: the concrete *Runtime (one per realm; a
// second provider fails with core.ErrDuplicateService).
var Key = core.NewKey[*Runtime]("subprocess")

// DisposeTimeout bounds the plugin's disposal: Close gets this long for
// TERM → grace → KILL of every live child, after which everything left is
// SIGKILLed and the failure logged.
const DisposeTimeout = 30 * time.Second

// DefaultEnvDeny is the plugin's default EnvPolicy.Deny: credential names
// the fixed pattern misses. Setting env.deny in harness.yml replaces it.
var DefaultEnvDeny = []string{"*CREDENTIAL*", "*PASSPHRASE*"}

// SetDefaults fills the plugin config's defaults: isolation auto,
// env.deny DefaultEnvDeny, sandbox mode off and sandboxBackend auto.
func (o *Options) SetDefaults() {
	o.Isolation = IsolationAuto
	o.Sandbox.Mode = SandboxOff
	o.SandboxBackend = "auto"
	o.Env.Deny = slices.Clone(DefaultEnvDeny)
}

// Plugin is "subprocess-local": it provides Key backed by a local Runtime
// configured by Options, and closes the runtime (terminating and awaiting
// every child and terminal) when unloaded.
var Plugin = core.Define("subprocess-local", apply,
	core.WithProvides(Key.Name()),
	core.WithDescription("Local subprocess service: explicit spawns, bounded capture with spill files, tree termination, PTY terminals, credential-scrubbed environments."))

func apply(c *core.Context, cfg Options) error {
	rt, err := New(cfg, c.Logger())
	if err != nil {
		return err
	}
	log := c.Logger()
	if err := c.Effect("subprocess runtime", func() (func(), error) {
		return func() {
			ctx, cancel := context.WithTimeout(context.Background(), DisposeTimeout)
			defer cancel()
			if err := rt.Close(ctx); err != nil {
				log.Error("subprocess-local: teardown", "err", err)
			}
		}, nil
	}); err != nil {
		_ = rt.Close(context.Background())
		return err
	}
	return core.Provide(c, Key, rt)
}
