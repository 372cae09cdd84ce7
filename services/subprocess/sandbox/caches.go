package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"
	"gopkg.in/yaml.v3"
)

// The toolchain caches a workspace-write sandbox can get (Policy.Caches).
// Each is a directory of the harness's cache root ([CacheRoot]) that the
// command's environment points the toolchain at, instead of the user's own
// cache, which stays read-only: a sandboxed command that could write
// ~/.cache/go-build could plant objects that the user's next build outside
// the sandbox links.
const (
	// CacheGo: GOCACHE (the build cache), GOMODCACHE (the module cache)
	// and GOPATH (where the go command keeps the checksum database's
	// state, pkg/sumdb, without which no new module verifies, and where
	// go install puts binaries).
	// Modules the user has downloaded already are copied in on demand: the
	// user's module cache download directory is put first in GOPROXY (a
	// file:// proxy, read-only), so the go command verifies each copy
	// against go.sum and the checksum database as for any download.
	CacheGo = "go"
	// CacheNpm: npm_config_cache (npm's content-addressed cache, ~/.npm).
	CacheNpm = "npm"
	// CacheYarn: YARN_CACHE_FOLDER (yarn 1).
	CacheYarn = "yarn"
	// CachePip: PIP_CACHE_DIR.
	CachePip = "pip"
	// CacheCargo: CARGO_HOME (the registry index and crate sources; the
	// user's ~/.cargo/config.toml and credentials are not read there).
	CacheCargo = "cargo"
	// CacheXDG: XDG_CACHE_HOME, for every other tool that keeps its cache
	// under the XDG cache directory (pnpm's metadata cache, yarn 2+,
	// ccache, node-gyp, pre-commit, …).
	CacheXDG = "xdg"
)

// cacheVar is one environment variable of a cache and the directory of the
// cache root it points to.
type cacheVar struct{ env, dir string }

// cacheKinds lists every cache in [CacheNames] order with its variables.
var cacheKinds = []struct {
	name string
	vars []cacheVar
}{
	{CacheGo, []cacheVar{{"GOCACHE", "go-build"}, {"GOMODCACHE", "go-mod"}, {"GOPATH", "go-path"}}},
	{CacheNpm, []cacheVar{{"npm_config_cache", "npm"}}},
	{CacheYarn, []cacheVar{{"YARN_CACHE_FOLDER", "yarn"}}},
	{CachePip, []cacheVar{{"PIP_CACHE_DIR", "pip"}}},
	{CacheCargo, []cacheVar{{"CARGO_HOME", "cargo"}}},
	{CacheXDG, []cacheVar{{"XDG_CACHE_HOME", "xdg"}}},
}

// CacheNames are the caches Policy.Caches can name, in order.
func CacheNames() []string {
	out := make([]string, len(cacheKinds))
	for i, k := range cacheKinds {
		out[i] = k.name
	}
	return out
}

// Caches selects the toolchain caches of a workspace-write sandbox. The
// zero value is every cache (the default); in YAML and JSON it is written
// as a boolean (true/on: every cache; false/off: none, so toolchains see
// the user's own caches read-only) or a list of cache names.
type Caches struct {
	off  bool
	only []string // nil: every cache
}

// CachesOff is the Caches of no cache at all.
func CachesOff() Caches { return Caches{off: true} }

// CachesOnly is the Caches of the named caches only (none when names is
// empty).
func CachesOnly(names ...string) Caches {
	if len(names) == 0 {
		return CachesOff()
	}
	return Caches{only: slices.Clone(names)}
}

// Names are the caches selected, in CacheNames order (unknown names are
// left out; Validate reports them).
func (c Caches) Names() []string {
	if c.off {
		return nil
	}
	var out []string
	for _, k := range cacheKinds {
		if c.only == nil || slices.Contains(c.only, k.name) {
			out = append(out, k.name)
		}
	}
	return out
}

// IsZero reports the default (every cache), for omitempty.
func (c Caches) IsZero() bool { return !c.off && c.only == nil }

// clone returns a deep copy.
func (c Caches) clone() Caches {
	c.only = slices.Clone(c.only)
	return c
}

// Validate reports a name that is no cache, by its index.
func (c Caches) Validate() error {
	for i, n := range c.only {
		if !slices.Contains(CacheNames(), n) {
			return fmt.Errorf("[%d]: unknown cache %q (want %s, or true/false)", i, n, strings.Join(CacheNames(), ", "))
		}
	}
	return nil
}

// UnmarshalYAML accepts a boolean (true/false, on/off, yes/no) or a list of
// cache names.
func (c *Caches) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		switch strings.ToLower(n.Value) {
		case "true", "on", "yes":
			*c = Caches{}
		case "false", "off", "no":
			*c = CachesOff()
		default:
			return fmt.Errorf("caches: want true/false (on/off) or a list of %s, got %q", strings.Join(CacheNames(), ", "), n.Value)
		}
		return nil
	case yaml.SequenceNode:
		var names []string
		if err := n.Decode(&names); err != nil {
			return fmt.Errorf("caches: %w", err)
		}
		*c = CachesOnly(names...)
		return nil
	}
	return fmt.Errorf("caches: want true/false (on/off) or a list of %s", strings.Join(CacheNames(), ", "))
}

// MarshalYAML writes true, false or the list.
func (c Caches) MarshalYAML() (any, error) { return c.value(), nil }

// UnmarshalJSON accepts a boolean or a list of cache names.
func (c *Caches) UnmarshalJSON(b []byte) error {
	var on bool
	if err := json.Unmarshal(b, &on); err == nil {
		*c = Caches{}
		if !on {
			*c = CachesOff()
		}
		return nil
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return fmt.Errorf("caches: want a boolean or a list of %s", strings.Join(CacheNames(), ", "))
	}
	*c = CachesOnly(names...)
	return nil
}

// MarshalJSON writes true, false or the list.
func (c Caches) MarshalJSON() ([]byte, error) { return json.Marshal(c.value()) }

func (c Caches) value() any {
	switch {
	case c.off:
		return false
	case c.only == nil:
		return true
	}
	return c.only
}

// JSONSchema describes Caches: a boolean or a list of cache names.
func (Caches) JSONSchema() *jsonschema.Schema {
	enum := make([]any, 0, len(cacheKinds))
	for _, n := range CacheNames() {
		enum = append(enum, n)
	}
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "boolean"},
		{Type: "array", Items: &jsonschema.Schema{Type: "string", Enum: enum}},
	}, Description: "true (every cache), false, or a list of " + strings.Join(CacheNames(), ", ")}
}

// CacheRoot is the harness-owned directory of the sandbox's toolchain
// caches: $XDG_CACHE_HOME/harness/sandbox (of the harness process), else
// ~/.cache/harness/sandbox. It is created 0700 when a command first needs
// it.
func CacheRoot() (string, error) {
	if x := os.Getenv("XDG_CACHE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "harness", "sandbox"), nil
	}
	if home() == "" {
		return "", errors.New("no cache root: neither XDG_CACHE_HOME nor the home directory is known")
	}
	return filepath.Join(home(), ".cache", "harness", "sandbox"), nil
}

// CacheDir is one environment variable a sandboxed command gets for a cache.
type CacheDir struct {
	// Cache is the cache's name (CacheGo, …).
	Cache string `json:"cache"`
	// Env is the variable and Dir its value.
	Env string `json:"env"`
	Dir string `json:"dir"`
}

// CacheDirs lists the cache variables a command under p gets (none unless
// p is workspace-write with caches on), without creating anything.
func (p Policy) CacheDirs() ([]CacheDir, error) {
	names := p.Caches.Names()
	if p.Mode != ModeWorkspaceWrite || len(names) == 0 {
		return nil, nil
	}
	root, err := CacheRoot()
	if err != nil {
		return nil, err
	}
	var out []CacheDir
	for _, k := range cacheKinds {
		if slices.Contains(names, k.name) {
			for _, v := range k.vars {
				out = append(out, CacheDir{Cache: k.name, Env: v.env, Dir: filepath.Join(root, v.dir)})
			}
		}
	}
	return out, nil
}

// applyCaches points req's environment at the cache root's directories
// (created 0700 if missing) and returns the cache root, which the backend
// makes writable; "" when the request gets no cache.
func applyCaches(req *Request) (string, error) {
	dirs, err := req.Policy.CacheDirs()
	if err != nil || len(dirs) == 0 {
		return "", err
	}
	root := filepath.Dir(dirs[0].Dir)
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", fmt.Errorf("sandbox cache root: %w", err)
	}
	if err := os.Chmod(root, 0o700); err != nil {
		return "", fmt.Errorf("sandbox cache root: %w", err)
	}
	set := map[string]string{}
	for _, d := range dirs {
		if err := os.Mkdir(d.Dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("sandbox cache %s: %w", d.Cache, err)
		}
		set[d.Env] = d.Dir
		if d.Env == "GOMODCACHE" {
			if proxy := goProxyFromUserCache(req.Env, d.Dir); proxy != "" {
				set["GOPROXY"] = proxy
			}
		}
	}
	env := make([]string, 0, len(req.Env)+len(set))
	for _, kv := range req.Env {
		if k, _, _ := strings.Cut(kv, "="); set[k] == "" {
			env = append(env, kv)
		}
	}
	for _, d := range dirs {
		env = append(env, d.Env+"="+set[d.Env])
	}
	if p := set["GOPROXY"]; p != "" {
		env = append(env, "GOPROXY="+p)
	}
	req.Env = env
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	return root, nil
}

// defaultGoProxy is the go command's GOPROXY when nothing sets it.
const defaultGoProxy = "https://proxy.golang.org,direct"

// goProxyFromUserCache is the GOPROXY that serves the modules of the
// user's own module cache (as the child's environment, else the go env
// file, else GOPATH names it) before the user's GOPROXY: "" when that
// cache has no download directory or is the sandbox's own.
func goProxyFromUserCache(env []string, sandboxModCache string) string {
	get := func(name string) string {
		if v, ok := lookup(env, name); ok {
			return v
		}
		return goEnvFile(env)[name]
	}
	mod := get("GOMODCACHE")
	if mod == "" {
		gopath, _, _ := strings.Cut(get("GOPATH"), string(filepath.ListSeparator))
		if gopath == "" && home() != "" {
			gopath = filepath.Join(home(), "go")
		}
		if gopath != "" {
			mod = filepath.Join(gopath, "pkg", "mod")
		}
	}
	if !filepath.IsAbs(mod) || filepath.Clean(mod) == sandboxModCache {
		return ""
	}
	download := filepath.Join(mod, "cache", "download")
	if st, err := os.Stat(download); err != nil || !st.IsDir() {
		return ""
	}
	proxy := get("GOPROXY")
	if proxy == "" {
		proxy = defaultGoProxy
	}
	return "file://" + filepath.ToSlash(download) + "," + proxy
}

// goEnvFile reads the go command's environment file ($GOENV, else
// os.UserConfigDir()/go/env): the settings `go env -w` wrote, which the
// variables of the environment override.
func goEnvFile(env []string) map[string]string {
	file, ok := lookup(env, "GOENV")
	if !ok || file == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return nil
		}
		file = filepath.Join(dir, "go", "env")
	}
	if file == "off" {
		return nil
	}
	b, err := os.ReadFile(file)
	if err != nil || len(b) > 1<<16 {
		return nil
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "="); ok && k != "" && !strings.HasPrefix(k, "#") {
			out[k] = v
		}
	}
	return out
}

// lookup is the value of name in an environment list.
func lookup(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}
