//go:build unix

package subprocess

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// B04: the tail keeps the error at the end; the spill file keeps the error
// at the start and everything between. stdout and stderr are collected and
// truncated separately (never merged).
func TestB04TailAndCompleteSpill(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, Options{})
	s := collectSpec(nil, "echo 'FIRST-ERROR: config missing' >&2; seq 1 200000; echo 'LAST-ERROR: 3 tests failed' >&2; echo 'STDOUT-END'; exit 3", 16384, time.Second)
	s.Stdout = CollectSpill(16384, 64<<20)
	s.Stderr = CollectSpill(16384, 64<<20)
	res, err := rt.Run(s)
	if err != nil {
		t.Fatal(err)
	}
	if exitCode(t, res.Outcome) != 3 {
		t.Fatalf("outcome %v", res.Outcome)
	}
	out := res.Stdout.ReadFrom(0)
	if len(out.Text) > 16384 || !out.Lossy || !strings.HasSuffix(out.Text, "200000\nSTDOUT-END\n") {
		t.Fatalf("stdout tail: %d bytes lossy=%v end %q", len(out.Text), out.Lossy, out.Text[max(0, len(out.Text)-30):])
	}
	if got := res.Stderr.Text(); got != "FIRST-ERROR: config missing\nLAST-ERROR: 3 tests failed\n" || res.Stderr.Truncated() {
		t.Fatalf("stderr %q", got)
	}
	f, err := os.Open(out.SpillPath)
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(out.SpillPath)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		if n <= 200000 && sc.Text() != strconv.Itoa(n) {
			t.Fatalf("spill line %d = %q", n, sc.Text())
		}
	}
	if n != 200001 || res.Stdout.Total() != int64(len(seqText(200000)))+int64(len("STDOUT-END\n")) {
		t.Fatalf("spill has %d lines; total %d", n, res.Stdout.Total())
	}
}

// Both collected streams writing at once past handoffBytes are handed off
// to reader goroutines mid-stream; the tails, totals and spill files stay
// byte-exact across the handoff while a reader follows the stream live.
func TestBulkStreamsHandedOffStayExact(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, Options{})
	s := collectSpec(nil, "seq 1 400000 & seq 1 400000 >&2; wait", 4096, time.Second)
	s.Stdout = CollectSpill(4096, 64<<20)
	s.Stderr = CollectSpill(4096, 64<<20)
	h, err := rt.Spawn(s)
	if err != nil {
		t.Fatal(err)
	}
	var offset int64
	var polls int
	for done := false; !done; polls++ {
		select {
		case <-h.Done():
			done = true
		default:
		}
		r := h.Collected().Stdout.ReadFrom(offset)
		if r.NextOffset < offset {
			t.Fatalf("offset went back from %d to %d", offset, r.NextOffset)
		}
		offset = r.NextOffset
	}
	want := seqText(400000)
	for i, c := range []*CollectedOutput{h.Collected().Stdout, h.Collected().Stderr} {
		if h.pump.streams[i].file == nil {
			t.Fatalf("%s was not handed off", c.label)
		}
		if c.Total() != int64(len(want)) || !strings.HasSuffix(want, c.Text()) || len(c.Text()) != 4096 {
			t.Fatalf("%s: total %d, tail %d bytes", c.label, c.Total(), len(c.Text()))
		}
		b, err := os.ReadFile(c.SpillPath())
		if err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(c.SpillPath())
		if string(b) != want {
			t.Fatalf("%s spill: %d bytes, want %d, byte-exact", c.label, len(b), len(want))
		}
	}
	t.Logf("%d live reads; stdout ended at offset %d", polls, offset)
}

func seqText(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// B05: a chatty child cannot grow memory, and its timeout fires with the
// pipe full; a 1 GiB single line stays a bounded tail and its spill stops
// at the cap (the incomplete file is removed and SpillCapped says so).
func TestB05UnboundedOutputKeepsMemoryFlat(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, Options{})
	before := vmHWM(t)
	t.Run("yes until timeout", func(t *testing.T) {
		ctx, cancel := context.WithTimeoutCause(context.Background(), 5*time.Second, errTimeout)
		defer cancel()
		s := collectSpec(ctx, "yes 0123456789abcdef0123456789abcdef", 65536, time.Second)
		s.Stdout = CollectSpill(65536, 64<<20)
		start := time.Now()
		res, err := rt.Run(s)
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 7*time.Second {
			t.Fatalf("returned after %v", d)
		}
		if !errors.Is(context.Cause(ctx), errTimeout) || res.Outcome.Signal == "" {
			t.Fatalf("outcome %v cause %v", res.Outcome, context.Cause(ctx))
		}
		if txt := res.Stdout.Text(); len(txt) > 65536 || !res.Stdout.Truncated() || !res.Stdout.SpillCapped() || res.Stdout.SpillPath() != "" {
			t.Fatalf("tail %d bytes truncated=%v capped=%v path=%q", len(txt), res.Stdout.Truncated(), res.Stdout.SpillCapped(), res.Stdout.SpillPath())
		}
	})
	t.Run("1 GiB single line", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		s := collectSpec(ctx, `head -c 1073741824 /dev/zero | tr '\0' x`, 65536, time.Second)
		s.Stdout = CollectSpill(65536, 64<<20)
		res, err := rt.Run(s)
		if err != nil || exitCode(t, res.Outcome) != 0 {
			t.Fatalf("%v, %v", res.Outcome, err)
		}
		txt := res.Stdout.Text()
		if len(txt) != 65536 || strings.Trim(txt, "x") != "" || res.Stdout.Total() != 1<<30 || !res.Stdout.SpillCapped() {
			t.Fatalf("tail %d bytes, total %d, capped %v", len(txt), res.Stdout.Total(), res.Stdout.SpillCapped())
		}
		if ents, _ := os.ReadDir(rt.spillDir); len(ents) != 0 {
			t.Fatalf("spill dir keeps %d files after capped streams", len(ents))
		}
	})
	if grew := vmHWM(t) - before; grew > 64<<20 {
		t.Fatalf("peak RSS grew by %d bytes", grew)
	} else {
		t.Logf("peak RSS grew by %d KiB", grew>>10)
	}
}

// vmHWM is this process's peak resident set size in bytes.
func vmHWM(t testing.TB) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// B10: credentials never reach a child; explicit entries survive; the
// HARNESS_ namespace is managed; tombstones remove inherited entries.
func TestB10CredentialsAbsentFromChildren(t *testing.T) {
	for k, v := range map[string]string{
		"DEEPSEEK_API_KEY": "sk-b10-fake-0001", "OPENAI_API_KEY": "sk-b10-fake-0002",
		"AWS_SECRET_ACCESS_KEY": "b10fake", "GITHUB_TOKEN": "ghp_b10fake", "MY_DB_PASSWORD": "b10fake",
		"lower_secret_thing": "b10fake", "HARNESS_STALE": "b10fake", "harness_lower": "b10fake",
		"SAFE_VALUE": "keepme", "SUBPROCESS_TOMBSTONE_PROBE": "present", "LANG": "C.UTF-8",
		"MY_PASSPHRASE": "b10fake-deny", "TOKENIZERS_PARALLELISM": "false",
	} {
		t.Setenv(k, v)
	}
	rt := newRuntime(t, Options{Env: EnvPolicy{Deny: []string{"*passphrase*"}, Allow: []string{"TOKENIZERS_*"}}})
	s := collectSpec(nil, "env | sort", 1<<20, time.Second)
	s.Env = map[string]string{"EXPLICIT_OVERRIDE_PASSWORD": "explicit-wins", "HARNESS_SESSION_ID": "current", "TERM": "dumb"}
	s.UnsetEnv = []string{"SUBPROCESS_TOMBSTONE_PROBE"}
	res, err := rt.Run(s)
	if err != nil {
		t.Fatal(err)
	}
	env := res.Stdout.Text()
	for _, bad := range []string{"b10fake", "sk-b10", "SUBPROCESS_TOMBSTONE_PROBE", "HARNESS_STALE", "harness_lower"} {
		if strings.Contains(env, bad) {
			t.Errorf("child env contains %q:\n%s", bad, env)
		}
	}
	for _, good := range []string{"PATH=", "HOME=", "LANG=C.UTF-8", "TERM=dumb", "SAFE_VALUE=keepme",
		"EXPLICIT_OVERRIDE_PASSWORD=explicit-wins", "HARNESS_SESSION_ID=current", "TOKENIZERS_PARALLELISM=false"} {
		if !strings.Contains(env, "\n"+good) && !strings.HasPrefix(env, good) {
			t.Errorf("child env lacks %q:\n%s", good, env)
		}
	}
	scrubbed := strings.Join(ScrubbedParentEnv(), "\n")
	if strings.Contains(scrubbed, "b10fake-0") || strings.Contains(scrubbed, "HARNESS_STALE") || !strings.Contains(scrubbed, "SAFE_VALUE=keepme") {
		t.Errorf("ScrubbedParentEnv leaks or drops:\n%s", scrubbed)
	}
}

func TestEnvPolicyDrops(t *testing.T) {
	p := EnvPolicy{Deny: []string{"*CREDENTIAL*", "DATABASE_URL"}, Allow: []string{"KEYTIMEOUT"}}
	tests := []struct {
		name string
		drop bool
	}{
		{"AWS_SECRET_ACCESS_KEY", true}, {"DEEPSEEK_API_KEY", true}, {"NPM_TOKEN", true}, {"PGPASSWORD", true},
		{"SSH_KEY_PATH", true}, {"monkey_business", true}, {"HARNESS_HOME", true}, {"harness_x", true},
		{"GOOGLE_CREDENTIALS", true}, {"database_url", true}, {"KEYTIMEOUT", false},
		{"PATH", false}, {"HOME", false}, {"LANG", false}, {"LC_ALL", false}, {"HTTPS_PROXY", false}, {"TERM", false},
		{"GH_PAT", true}, {"gh_pat", true}, {"NPM_AUTH", true}, {"ANTHROPIC_AUTH", true}, {"SSH_AUTH_SOCK", true},
		{"PATH_PATTERN", false}, {"AUTHOR", false}, {"GIT_AUTHOR_NAME", false}, {"AUTH_HEADER", true},
		{"npm_config__auth", true}, {"AUTH", true}, {"OAUTH_CLIENT", false},
	}
	for _, tt := range tests {
		if got := p.Drops(tt.name); got != tt.drop {
			t.Errorf("Drops(%q) = %v, want %v", tt.name, got, tt.drop)
		}
		if SensitiveEnvPattern.MatchString(tt.name) != sensitive(strings.ToUpper(tt.name)) {
			t.Errorf("SensitiveEnvPattern and the fast path disagree on %q", tt.name)
		}
	}
	if err := (EnvPolicy{Deny: []string{"[x"}}).Validate(); err == nil || err.Error() != `deny[0]: invalid pattern "[x"` {
		t.Errorf("Validate = %v", err)
	}
}

func TestResolveExecutable(t *testing.T) {
	rt := newRuntime(t, Options{})
	dir := t.TempDir()
	exe := filepath.Join(dir, "tool")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plain"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cwd, _ := os.Getwd()
	rel, err := filepath.Rel(cwd, dir)
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("stop"))
	tests := []struct {
		name    string
		ctx     context.Context
		command string
		env     map[string]string
		want    string
		err     string
		is      error
	}{
		{"empty", nil, "", nil, "", "subprocess-local: executable must be non-empty", nil},
		{"relative dot", nil, "./bin/tsserver", nil, "", `subprocess-local: command "./bin/tsserver" is a relative path; use an absolute path or a bare PATH name`, ErrRelativeCommand},
		{"relative nested", nil, "node_modules/.bin/server", nil, "", `subprocess-local: command "node_modules/.bin/server" is a relative path; use an absolute path or a bare PATH name`, ErrRelativeCommand},
		{"absolute", nil, exe, nil, exe, "", nil},
		{"absolute directory", nil, dir, nil, "", `subprocess-local: command "` + dir + `" is not an executable file`, ErrExecutableNotFound},
		{"absolute not executable", nil, filepath.Join(dir, "plain"), nil, "", "is not an executable file", ErrExecutableNotFound},
		{"bare via PATH override", nil, "tool", map[string]string{"PATH": "/nonexistent:" + dir}, exe, "", nil},
		{"relative PATH entry against host cwd", nil, "tool", map[string]string{"PATH": rel}, exe, "", nil},
		{"skips non-executable", nil, "plain", map[string]string{"PATH": dir}, "", `subprocess-local: command "plain" was not found on PATH`, ErrExecutableNotFound},
		{"empty PATH", nil, "sh", map[string]string{"PATH": ""}, "", "was not found on PATH", ErrExecutableNotFound},
		{"bare from scrubbed env", nil, "sh", nil, "", "", nil},
		{"cancelled", cancelled, "sh", nil, "", "stop", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			got, err := rt.ResolveExecutable(ctx, tt.command, tt.env)
			if tt.err != "" || tt.is != nil {
				if err == nil || !strings.Contains(err.Error(), tt.err) || (tt.is != nil && !errors.Is(err, tt.is)) {
					t.Fatalf("got %q, %v; want error %q", got, err, tt.err)
				}
				return
			}
			if err != nil || (tt.want != "" && got != tt.want) || !filepath.IsAbs(got) {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// The scrubbed parent environment is cached per os.Environ snapshot: a
// variable set or unset after earlier spawns reaches (or leaves) the next
// child, and a credential set later is still scrubbed.
func TestParentEnvChangesReachTheNextSpawn(t *testing.T) {
	rt := newRuntime(t, Options{})
	run := func() string {
		t.Helper()
		res, err := rt.Run(collectSpec(nil, "env | sort", 1<<20, time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return res.Stdout.Text()
	}
	t.Setenv("SUBPROCESS_ENV_CACHE_PROBE", "one")
	if env := run(); !strings.Contains(env, "SUBPROCESS_ENV_CACHE_PROBE=one\n") {
		t.Fatalf("first spawn lacks the probe:\n%s", env)
	}
	t.Setenv("SUBPROCESS_ENV_CACHE_PROBE", "two")
	t.Setenv("LATE_API_KEY", "late-fake-secret")
	env := run()
	if !strings.Contains(env, "SUBPROCESS_ENV_CACHE_PROBE=two\n") || strings.Contains(env, "late-fake-secret") {
		t.Fatalf("second spawn saw a stale or unscrubbed environment:\n%s", env)
	}
	os.Unsetenv("SUBPROCESS_ENV_CACHE_PROBE")
	if env := run(); strings.Contains(env, "SUBPROCESS_ENV_CACHE_PROBE") {
		t.Fatalf("third spawn still has the unset probe:\n%s", env)
	}
}

// concealRun numbers the runs of TestConcealEnvDropsNamedVariables (-count).
var concealRun atomic.Int64

// ConcealEnv drops a variable whatever its name, from the next spawn on
// (the cached scrubbed environment is rebuilt), and Allow cannot keep it.
func TestConcealEnvDropsNamedVariables(t *testing.T) {
	// ConcealEnv is process-wide and only grows: a fresh name per run.
	name := fmt.Sprintf("B10_PLAIN_NAME_%d", concealRun.Add(1))
	t.Setenv(name, "b10fake-conceal")
	rt := newRuntime(t, Options{Env: EnvPolicy{Allow: []string{"B10_*"}}})
	env := func() string {
		t.Helper()
		res, err := rt.Run(collectSpec(nil, "env", 1<<20, time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return res.Stdout.Text()
	}
	if !strings.Contains(env(), name+"=b10fake-conceal") {
		t.Fatal("the variable is not inherited before ConcealEnv")
	}
	ConcealEnv(strings.ToLower(name))
	if got := env(); strings.Contains(got, "b10fake-conceal") {
		t.Errorf("concealed variable still inherited:\n%s", got)
	}
	if base := ScrubbedParentEnv(); slices.ContainsFunc(base, func(kv string) bool { return strings.HasPrefix(kv, name+"=") }) {
		t.Error("ScrubbedParentEnv keeps the concealed variable")
	}
}

// EnvPolicy.Set gives every child its variables under a spawn's own
// Spec.Env; a credential-shaped or HARNESS_ name is refused at validation,
// and a name concealed later is not set.
func TestEnvPolicySetReachesEveryChild(t *testing.T) {
	for _, bad := range []string{"MY_API_KEY", "HARNESS_X", "DB_CREDENTIAL"} {
		if err := (EnvPolicy{Set: map[string]string{bad: "v"}}).Validate(); err == nil || !strings.Contains(err.Error(), "set."+bad) {
			t.Errorf("Set %s: %v", bad, err)
		}
	}
	name := fmt.Sprintf("SET_LATER_CONCEALED_%d", concealRun.Add(1))
	rt := newRuntime(t, Options{Env: EnvPolicy{Set: map[string]string{"SET_PROBE": "from-policy", "SET_OVERRIDDEN": "policy", name: "plain"}}})
	spec := collectSpec(nil, "env", 1<<20, time.Second)
	spec.Env = map[string]string{"SET_OVERRIDDEN": "spec"}
	res, err := rt.Run(spec)
	if err != nil {
		t.Fatal(err)
	}
	env := res.Stdout.Text()
	if !strings.Contains(env, "SET_PROBE=from-policy\n") || !strings.Contains(env, "SET_OVERRIDDEN=spec\n") || !strings.Contains(env, name+"=plain\n") {
		t.Fatalf("child env:\n%s", env)
	}
	ConcealEnv(name)
	spec = collectSpec(nil, "env", 1<<20, time.Second)
	if res, err = rt.Run(spec); err != nil || strings.Contains(res.Stdout.Text(), name+"=") {
		t.Fatalf("a concealed name is still set: %v\n%s", err, res.Stdout.Text())
	}
}

// The credential filter a real child gets (M2): *_PAT, *_AUTH*,
// SSH_AUTH_SOCK and any variable whose value is a URL with a password are
// dropped; a URL without a password and a plain variable are kept; Allow
// brings back a URL-valued name.
func TestCredentialShapesKeptFromChildren(t *testing.T) {
	for k, v := range map[string]string{
		"M2_GH_PAT": "ghpat_m2fake", "M2_NPM_AUTH": "npmauth-m2fake", "ANTHROPIC_AUTH": "auth-m2fake",
		"SSH_AUTH_SOCK": "/tmp/m2fake-sock", "M2_DATABASE_URL": "postgres://u:m2fake-dbpass@h/db",
		"M2_PROXY": "http://user:m2fake-proxy@proxy:3128", "M2_ALLOWED_URL": "https://u:m2fake-allowed@h/",
		"M2_PLAIN_URL": "https://example.com/a@b", "M2_GIT_URL": "ssh://git@example.com/r.git", "M2_PLAIN": "m2-plain",
	} {
		t.Setenv(k, v)
	}
	rt := newRuntime(t, Options{Env: EnvPolicy{Allow: []string{"M2_ALLOWED_URL"}}})
	res, err := rt.Run(collectSpec(nil, "env", 1<<20, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	env := res.Stdout.Text()
	for _, kv := range strings.Split(env, "\n") {
		if strings.Contains(kv, "m2fake") && kv != "M2_ALLOWED_URL=https://u:m2fake-allowed@h/" {
			t.Errorf("a credential-shaped variable reached the child: %s", kv)
		}
	}
	for _, want := range []string{"M2_ALLOWED_URL=https://u:m2fake-allowed@h/", "M2_PLAIN_URL=https://example.com/a@b",
		"M2_GIT_URL=ssh://git@example.com/r.git", "M2_PLAIN=m2-plain"} {
		if !strings.Contains(env, want+"\n") {
			t.Errorf("child lacks %s", want)
		}
	}
	if got := ScrubbedParentEnv(); slices.ContainsFunc(got, func(kv string) bool { return strings.Contains(kv, "m2fake") }) {
		t.Errorf("ScrubbedParentEnv keeps a credential: %q", got)
	}
}
