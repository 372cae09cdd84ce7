package subprocess

import (
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// SensitiveEnvPattern matches inherited environment variable names that are
// treated as credentials and dropped before any child starts: KEY, PASSWORD,
// SECRET, TOKEN or CREDENTIAL anywhere in the name, AUTH as a word of it
// (NPM_AUTH, ANTHROPIC_AUTH, SSH_AUTH_SOCK, the agent socket that signs as
// the user; not GIT_AUTHOR_NAME), or a name ending in _PAT (a personal access token such as GH_PAT),
// case-insensitively (the dsh SENSITIVE_ENV_PATTERN plus CREDENTIAL, bug
// cases B10, M2). Collateral names such as TOKENIZERS_PARALLELISM or
// KEYTIMEOUT are dropped too; PASSPHRASE is not caught by this pattern alone
// (the plugin's default EnvPolicy.Deny adds it). Whatever its name, a
// variable whose value is a URL with a password in it
// (scheme://user:pass@host, see [URLWithPassword]) is dropped too, and so
// are the variables the manifest reads (see [ConcealEnv]). Bash calls, hooks
// and MCP stdio servers all get this one filter.
var SensitiveEnvPattern = regexp.MustCompile(`(?i)KEY|PASSWORD|SECRET|TOKEN|CREDENTIAL|(^|_)AUTH(_|$)|_PAT$`)

// URLWithPassword matches a value that is a URL carrying a password in its
// userinfo (postgres://u:pass@db/x, https://user:tok@host): such an
// inherited variable (DATABASE_URL, a proxy with credentials) is dropped
// whatever its name, unless EnvPolicy.Allow matches the name.
var URLWithPassword = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s]*:[^/?#@\s]*@`)

// concealed is the process-wide set of variable names (upper-cased) dropped
// from every child besides the patterns; concealGen counts its changes so
// that cached scrubbed environments are rebuilt.
var (
	concealMu  sync.RWMutex
	concealed  = map[string]bool{}
	concealGen uint64
)

// ConcealEnv adds variable names that no child may inherit, whatever they
// look like: the variables a deployment reads credentials from (an LLM
// provider's apiKeyEnv, any `!env NAME` of the manifest; the harness
// boot passes manifest.CredentialEnv here). Names match case-insensitively;
// EnvPolicy.Allow does not bring them back, and a Spec.Env entry still sets
// a value explicitly. The set is process-wide, as the environment is, and
// only grows.
func ConcealEnv(names ...string) {
	concealMu.Lock()
	defer concealMu.Unlock()
	for _, n := range names {
		if u := strings.ToUpper(n); n != "" && !concealed[u] {
			concealed[u] = true
			concealGen++
		}
	}
}

// isConcealed reports whether ConcealEnv named upper.
func isConcealed(upper string) bool {
	concealMu.RLock()
	defer concealMu.RUnlock()
	return concealed[upper]
}

// concealGeneration is how many names ConcealEnv has added so far.
func concealGeneration() uint64 {
	concealMu.RLock()
	defer concealMu.RUnlock()
	return concealGen
}

// ManagedEnvPrefix is the harness-owned environment namespace. Every
// inherited variable whose upper-cased name starts with it is dropped, so a
// child only sees HARNESS_* facts that its spawner set explicitly.
const ManagedEnvPrefix = "HARNESS_"

// TelemetryEnvPrefix is OpenTelemetry's configuration namespace (OTEL_*).
// Inherited OTEL_* variables are dropped like credentials, so that a
// tool's own OpenTelemetry SDK does not export to the harness's collector
// with the harness's settings; EnvPolicy.Allow brings back the names it
// matches (e.g. "OTEL_*"), except the OTLP headers variables
// (OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TRACES_HEADERS, …),
// which hold credentials and are never inherited. A spawn's Spec.Env sets
// them explicitly (the fleet worker passes its own to a job's run).
const TelemetryEnvPrefix = "OTEL_"

// telemetrySecret reports whether upper names an OTLP headers variable.
func telemetrySecret(upper string) bool {
	return strings.HasPrefix(upper, TelemetryEnvPrefix) && strings.HasSuffix(upper, "_HEADERS")
}

// ControlEnv is set by the runtime in a child spawned with Spec.Control: its
// value is the number of the descriptor that carries the control channel
// ("3"). Callers cannot set it through Spec.Env.
const ControlEnv = "HARNESS_SUBPROCESS_CONTROL"

// EnvPolicy adds deployment choices on top of the fixed scrub. The zero value
// applies only SensitiveEnvPattern, ManagedEnvPrefix and TelemetryEnvPrefix.
type EnvPolicy struct {
	// Deny lists extra name patterns to drop, matched case-insensitively with
	// path.Match syntax against the whole name (for example "*CREDENTIAL*",
	// "*PASSPHRASE*", "DATABASE_URL").
	Deny []string `yaml:"deny" json:"deny,omitempty"`
	// Allow lists name patterns (same syntax) that survive the credential
	// scrub, the OTEL_ namespace and Deny although they match; the HARNESS_
	// namespace and the OTLP headers variables are never allowed this way.
	// Examples: "TOKENIZERS_PARALLELISM", "OTEL_*". Environment-name patterns
	// (path.Match syntax; case-insensitive) kept although they look like
	// credentials.
	Allow []string `yaml:"allow" json:"allow,omitempty"`
	// Set gives every child these variables (a Claude Code settings file's
	// env), on top of the scrubbed environment and under a spawn's own
	// Spec.Env. A name the scrub would drop (credential-shaped, HARNESS_*,
	// or concealed by the deployment) is never set this way: children do
	// not get credentials from configuration.
	Set map[string]string `yaml:"set" json:"set,omitempty"`
}

// Validate reports a malformed pattern with its field path.
func (p EnvPolicy) Validate() error {
	for k, v := range p.Set {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.Contains(v, "\x00") {
			return fmt.Errorf("set.%s: invalid variable name or value", k)
		}
		if p.Drops(k) || k == ControlEnv {
			return fmt.Errorf("set.%s: children never get credential-shaped, HARNESS_ or (unless allowed) OTEL_ variables from configuration", k)
		}
	}
	for i, pat := range p.Deny {
		if _, err := path.Match(strings.ToUpper(pat), ""); err != nil || pat == "" {
			return fmt.Errorf("deny[%d]: invalid pattern %q", i, pat)
		}
	}
	for i, pat := range p.Allow {
		if _, err := path.Match(strings.ToUpper(pat), ""); err != nil || pat == "" {
			return fmt.Errorf("allow[%d]: invalid pattern %q", i, pat)
		}
	}
	return nil
}

// sensitive is SensitiveEnvPattern on an upper-cased name, without the
// regexp engine (it runs for every inherited variable of every spawn).
func sensitive(upper string) bool {
	return strings.Contains(upper, "KEY") || strings.Contains(upper, "PASSWORD") ||
		strings.Contains(upper, "SECRET") || strings.Contains(upper, "TOKEN") ||
		strings.Contains(upper, "CREDENTIAL") || strings.HasSuffix(upper, "_PAT") ||
		upper == "AUTH" || strings.HasPrefix(upper, "AUTH_") || strings.HasSuffix(upper, "_AUTH") ||
		strings.Contains(upper, "_AUTH_")
}

// urlWithPassword is URLWithPassword without the regexp engine for the
// common value that holds no "://" at all.
func urlWithPassword(v string) bool {
	return strings.Contains(v, "://") && strings.Contains(v, "@") && URLWithPassword.MatchString(v)
}

func matchAny(patterns []string, upper string) bool {
	if len(patterns) == 0 {
		return false
	}
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ToUpper(p), upper); ok {
			return true
		}
	}
	return false
}

// Drops reports whether an inherited variable name is removed by the policy.
func (p EnvPolicy) Drops(name string) bool {
	upper := strings.ToUpper(name)
	if strings.HasPrefix(upper, ManagedEnvPrefix) || isConcealed(upper) || telemetrySecret(upper) {
		return true
	}
	if !sensitive(upper) && !strings.HasPrefix(upper, TelemetryEnvPrefix) && !matchAny(p.Deny, upper) {
		return false
	}
	return !matchAny(p.Allow, upper)
}

// Scrub returns the entries of environ ("NAME=value") that the policy keeps,
// in their original order. Entries without '=' are dropped, and so are
// values that are URLs with a password (URLWithPassword) unless Allow
// matches their name.
func (p EnvPolicy) Scrub(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || p.Drops(name) {
			continue
		}
		if urlWithPassword(value) && !matchAny(p.Allow, strings.ToUpper(name)) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// ScrubbedParentEnv returns this process's environment without credentials
// and without the HARNESS_ and OTEL_ namespaces, using the zero EnvPolicy. It is the base
// environment of every child; spawners outside this package (an MCP stdio
// client, say) use it too so that no path leaks secrets.
func ScrubbedParentEnv() []string { return EnvPolicy{}.Scrub(os.Environ()) }

// envCache holds the scrubbed parent environment for one snapshot of
// os.Environ: a spawn compares the current snapshot with the cached one
// (string headers only, in the common case that nothing changed) instead of
// scrubbing and sorting every variable again. Any change to the process
// environment (os.Setenv, t.Setenv) makes the snapshots differ, so the base
// is rebuilt: the scrub is never skipped, only not repeated.
type envCache struct {
	mu      sync.Mutex
	gen     uint64   // the ConcealEnv generation base was built with
	environ []string // the os.Environ snapshot base was built from
	base    []string // its scrubbed entries, one per name (last wins), sorted
}

// get returns the scrubbed parent environment in uniqueSorted form. The
// slice is shared: callers must not modify it (mergeEnv copies).
func (e *envCache) get(policy EnvPolicy) []string {
	environ, gen := os.Environ(), concealGeneration()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.base == nil || e.gen != gen || !slices.Equal(environ, e.environ) {
		e.environ, e.gen, e.base = environ, gen, uniqueSorted(policy.Scrub(environ))
	}
	return e.base
}

// uniqueSorted reduces an environment to one entry per name (the last one
// wins, as for execve's consumers) sorted by entry: the form mergeEnv takes.
func uniqueSorted(environ []string) []string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// mergeEnv builds a child environment from base (one entry per name, as
// uniqueSorted returns): set on top (an explicit entry always survives,
// credential-shaped or not), then unset removes names (tombstones). The
// result is a fresh slice, sorted by entry, that the caller owns.
func mergeEnv(base []string, set map[string]string, unset []string) []string {
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; ok || slices.Contains(unset, k) {
			continue
		}
		out = append(out, kv)
	}
	for k, v := range set {
		if !slices.Contains(unset, k) {
			out = append(out, k+"="+v)
		}
	}
	if len(set) > 0 {
		sort.Strings(out)
	}
	return out
}

func lookupEnv(env []string, name string) (string, bool) {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

func validateEnv(set map[string]string, unset []string) error {
	for k, v := range set {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("env: invalid variable name %q", k)
		}
		if strings.Contains(v, "\x00") {
			return fmt.Errorf("env[%s]: value contains NUL", k)
		}
		if k == ControlEnv {
			return fmt.Errorf("env[%s]: reserved for the runtime", k)
		}
	}
	for i, k := range unset {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("unsetEnv[%d]: invalid variable name %q", i, k)
		}
	}
	return nil
}
