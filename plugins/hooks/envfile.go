package hooks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/dshgo/harness/services/subprocess"
)

// maxEnvFileBytes bounds the CLAUDE_ENV_FILE a SessionStart hook may write.
const maxEnvFileBytes = 1 << 20

// newEnvFile creates an empty, private (0600 in the plugin's 0700
// directory) file for SessionStart hooks to write `export NAME=value` lines
// to, as Claude Code's CLAUDE_ENV_FILE.
func (h *runner) newEnvFile(session string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fallbackDir == "" {
		dir, err := os.MkdirTemp("", "harness-hooks-")
		if err != nil {
			return "", err
		}
		h.fallbackDir = dir
	}
	h.envFiles++
	name := unsafeName.ReplaceAllString(session, "_")
	if strings.Trim(name, ".") == "" {
		name = "session"
	}
	p := filepath.Join(h.fallbackDir, name+"-"+strconv.Itoa(h.envFiles)+".env")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	return p, f.Close()
}

// readEnvFile evaluates what SessionStart hooks wrote to the env file at
// path and removes it. The file is shell (`export A=b`, `export
// PATH="$PATH:/x"`): it is interpreted by mvdan/sh with the environment
// children inherit, and no command runs (a command in it is an error that
// leaves the variables set before it). The result is every exported
// variable it set or changed, without the ones children never get
// (credential-shaped names, the HARNESS_ namespace, names the deployment
// conceals); each dropped name is logged, never its value.
func (h *runner) readEnvFile(ctx context.Context, path string) map[string]string {
	defer os.Remove(path)
	f, err := os.Open(path)
	if err != nil {
		h.log.Warn("hooks: CLAUDE_ENV_FILE unreadable", "err", err)
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxEnvFileBytes+1))
	_ = f.Close()
	if err != nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if len(data) > maxEnvFileBytes {
		h.log.Warn("hooks: CLAUDE_ENV_FILE is larger than 1 MiB; ignored")
		return nil
	}
	file, err := syntax.NewParser().Parse(bytes.NewReader(data), "CLAUDE_ENV_FILE")
	if err != nil {
		h.log.Warn("hooks: CLAUDE_ENV_FILE is not valid shell; ignored", "err", err)
		return nil
	}
	base := subprocess.ScrubbedParentEnv()
	noExec := func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
		return func(_ context.Context, args []string) error {
			return fmt.Errorf("commands are not run from CLAUDE_ENV_FILE (%s)", args[0])
		}
	}
	noOpen := func(_ context.Context, p string, _ int, _ os.FileMode) (io.ReadWriteCloser, error) {
		return nil, fmt.Errorf("files are not opened from CLAUDE_ENV_FILE (%s)", p)
	}
	r, err := interp.New(interp.Env(expand.ListEnviron(base...)), interp.StdIO(nil, io.Discard, io.Discard),
		interp.ExecHandlers(noExec), interp.OpenHandler(noOpen), interp.Dir(h.cwd))
	if err != nil {
		h.log.Warn("hooks: CLAUDE_ENV_FILE", "err", err)
		return nil
	}
	runCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := r.Run(runCtx, file); err != nil {
		h.log.Warn("hooks: CLAUDE_ENV_FILE stopped early; the variables set before the error are kept", "err", err)
	}
	inherited := map[string]string{}
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		inherited[k] = v
	}
	env := map[string]string{}
	var dropped []string
	for name, v := range r.Vars {
		if !v.Exported || !v.IsSet() || v.Kind != expand.String {
			continue
		}
		if old, ok := inherited[name]; ok && old == v.Str {
			continue
		}
		if (subprocess.EnvPolicy{}).Drops(name) || name == subprocess.ControlEnv {
			dropped = append(dropped, name)
			continue
		}
		env[name] = v.Str
	}
	if len(dropped) > 0 {
		slices.Sort(dropped)
		h.log.Warn("hooks: CLAUDE_ENV_FILE variables dropped: children never get credential-shaped or HARNESS_ variables", "names", strings.Join(dropped, ","))
	}
	return env
}
