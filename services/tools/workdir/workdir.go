// Package workdir carries the working directory of a tool call in its
// context.Context, so that one harness can serve sessions rooted in different
// directories.
//
// The agent loop (or any caller of the tool registry) wraps the context it
// passes to Registry.Execute or the Scheduler with With(ctx, session cwd); the
// coding tools (tool-bash, tool-fs, tool-search) resolve relative paths and
// their default directory with Or(ctx, configured), falling back to their
// configured directory (default: the process working directory) when the
// context carries none.
package workdir

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

type key struct{}

// With returns a copy of ctx that carries dir (made absolute and cleaned) as
// the working directory of the tool calls run under it. An empty dir leaves
// ctx unchanged.
func With(ctx context.Context, dir string) context.Context {
	if dir == "" {
		return ctx
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return context.WithValue(ctx, key{}, filepath.Clean(dir))
}

// From returns the working directory carried by ctx, if any.
func From(ctx context.Context) (string, bool) {
	dir, ok := ctx.Value(key{}).(string)
	return dir, ok
}

// Or returns the working directory carried by ctx, or fallback.
func Or(ctx context.Context, fallback string) string {
	if dir, ok := From(ctx); ok {
		return dir
	}
	return fallback
}

// Of returns the working directory of a tool call: the one carried by the
// body's ctx, else by the caller's context (callerCtx, may be nil), else
// fallback.
func Of(ctx, callerCtx context.Context, fallback string) string {
	if dir, ok := From(ctx); ok {
		return dir
	}
	if callerCtx != nil {
		if dir, ok := From(callerCtx); ok {
			return dir
		}
	}
	return fallback
}

// Default returns the working directory a plugin uses when a call carries
// none: configured made absolute, or the process's working directory when
// configured is empty.
func Default(configured string) (string, error) {
	if configured == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("cwd: %w", err)
		}
		return wd, nil
	}
	if abs, err := filepath.Abs(configured); err == nil {
		return abs, nil
	}
	return configured, nil
}

type envKey struct{}

// WithEnv returns a copy of ctx that carries env: variables the shell
// commands of the calls run under it get on top of the deployment's
// environment (a session's variables, such as those a SessionStart hook
// wrote to CLAUDE_ENV_FILE). The caller has already dropped what children
// must never get (credentials); the map is not copied and must not be
// changed afterwards. An empty env leaves ctx unchanged.
func WithEnv(ctx context.Context, env map[string]string) context.Context {
	if len(env) == 0 {
		return ctx
	}
	return context.WithValue(ctx, envKey{}, env)
}

// EnvFrom returns the variables carried by ctx (nil: none). The map is
// shared: read it only.
func EnvFrom(ctx context.Context) map[string]string {
	env, _ := ctx.Value(envKey{}).(map[string]string)
	return env
}
