//go:build unix

package subprocess

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/core/manifest"
)

// subprocessManifest is a harness.yml whose subprocess row turns the
// sandbox on, as the default one does.
const subprocessManifest = `plugins:
  - id: subprocess
    name: subprocess-local
    config:
      sandbox:
        mode: workspace-write
        denyRead: ["~/.ssh"]
`

// decodeWithPatch composes subprocessManifest with a patch file holding
// patch and decodes the subprocess row's config as the loader does. It
// returns the config, the patch file's path and the error.
func decodeWithPatch(t *testing.T, patch string) (*Options, string, error) {
	t.Helper()
	dir := t.TempDir()
	mf, pf := filepath.Join(dir, "harness.yml"), filepath.Join(dir, "harness.patch.yml")
	for f, s := range map[string]string{mf: subprocessManifest, pf: patch} {
		if err := os.WriteFile(f, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m, err := manifest.ReadFile(mf)
	if err != nil {
		t.Fatal(err)
	}
	p, err := manifest.ReadPatchFile(pf)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = manifest.Compose(m, p); err != nil {
		t.Fatal(err)
	}
	cfg, err := manifest.DecodeConfig(Plugin, m.Flatten()[0], nil)
	if err != nil {
		return nil, pf, err
	}
	return cfg.(*Options), pf, nil
}

const noModeMessage = `plugin "subprocess-local" (id subprocess): invalid config: sandbox.mode: required (off, read-only or workspace-write): ` +
	`without it this sandbox block turns the sandbox off. A patch's sandbox replaces the row's whole sandbox block, ` +
	`so write mode there too (mode: off to run commands unsandboxed)`

// TestPatchedSandboxWithoutModeIsAConfigError: a patch layer whose sandbox
// block has no mode (it replaces the row's whole block, mode included) is
// rejected at the sandbox block of the patch file, instead of leaving the
// sandbox off.
func TestPatchedSandboxWithoutModeIsAConfigError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ patch, at string }{
		{"- id: subprocess\n  config:\n    sandbox: {denyRead: [\"~/.x\"]}\n", ":3:14: "},
		{"- id: subprocess\n  config:\n    sandbox:\n      network: false\n", ":4:7: "},
		{"- id: subprocess\n  config:\n    sandbox: {}\n", ":3:14: "},
	} {
		_, pf, err := decodeWithPatch(t, tc.patch)
		if want := pf + tc.at + noModeMessage; err == nil || err.Error() != want {
			t.Errorf("patch %q:\n got %v\nwant %s", tc.patch, err, want)
		}
	}
}

// TestPatchedSandboxWithModeDecodes: an explicit mode (off included) in the
// patch's block decodes, and a patch that leaves the sandbox key alone keeps
// the manifest's block.
func TestPatchedSandboxWithModeDecodes(t *testing.T) {
	t.Parallel()
	cfg, _, err := decodeWithPatch(t, "- id: subprocess\n  config:\n    sandbox: {mode: off, denyRead: [\"~/.x\"]}\n")
	if err != nil || cfg.Sandbox.Mode != SandboxOff || strings.Join(cfg.Sandbox.DenyRead, ",") != "~/.x" {
		t.Fatalf("mode off: %+v %v", cfg, err)
	}
	cfg, _, err = decodeWithPatch(t, "- id: subprocess\n  config:\n    sandbox: {mode: read-only}\n")
	if err != nil || cfg.Sandbox.Mode != SandboxReadOnly || len(cfg.Sandbox.DenyRead) != 0 {
		t.Fatalf("mode read-only: %+v %v", cfg, err)
	}
	cfg, _, err = decodeWithPatch(t, "- id: subprocess\n  config:\n    dumpable: true\n")
	if err != nil || cfg.Sandbox.Mode != SandboxWorkspaceWrite || strings.Join(cfg.Sandbox.DenyRead, ",") != "~/.ssh" || !cfg.Dumpable {
		t.Fatalf("other key patched: %+v %v", cfg, err)
	}
}

// TestOptionsSandboxWithoutModeIsInvalid: in Go, a policy that sets
// anything but no mode is refused too; the zero policy is the default (off).
func TestOptionsSandboxWithoutModeIsInvalid(t *testing.T) {
	t.Parallel()
	want := "sandbox." + errNoMode.Error()
	for _, p := range []SandboxPolicy{{DenyRead: []string{"~/.x"}}, {Network: SandboxNetwork{Mode: SandboxNetworkOn}}, {WritableRoots: []string{"/tmp"}}} {
		if err := (Options{Sandbox: p}).Validate(); err == nil || err.Error() != want {
			t.Errorf("%+v: Validate = %v", p, err)
		}
	}
	if err := (Options{}).Validate(); err != nil {
		t.Errorf("zero Options: %v", err)
	}
}

// TestSandboxDenyReadInvalidGlob: a denyRead pattern that does not parse is
// refused with its index (it would hide nothing when a command starts);
// literal paths and valid patterns pass.
func TestSandboxDenyReadInvalidGlob(t *testing.T) {
	t.Parallel()
	deny := []string{"~/.ssh", "**/.env{,.*}", "[", "/a/b"}
	err := (Options{Sandbox: SandboxPolicy{Mode: SandboxWorkspaceWrite, DenyRead: deny}}).Validate()
	want := `sandbox.denyRead[2]: invalid glob "[": syntax error in pattern (an unclosed [ or {, or a trailing \; write \[ for a literal [)`
	if err == nil || err.Error() != want {
		t.Fatalf("Validate = %v\nwant %s", err, want)
	}
	for _, bad := range []string{"~/x{a,b", "**/.env\\", "/etc/[a-"} {
		if err := (SandboxPolicy{Mode: SandboxReadOnly, DenyRead: []string{bad}}).Validate(); err == nil || !strings.HasPrefix(err.Error(), "denyRead[0]: invalid glob ") {
			t.Errorf("%q: Validate = %v", bad, err)
		}
	}
	ok := []string{"~/.ssh", "**/.env{,.*}", "/a/[ab]c", "~/x\\[1\\]", "*.pem"}
	if err := (SandboxPolicy{Mode: SandboxReadOnly, DenyRead: ok}).Validate(); err != nil {
		t.Fatalf("valid patterns: %v", err)
	}
	// A spawn's own policy is checked the same way.
	rt := newRuntime(t, Options{})
	spec := collectSpec(nil, "true", 64, time.Second)
	spec.Sandbox = &SandboxPolicy{Mode: SandboxReadOnly, DenyRead: []string{"x", "a{"}}
	if _, err = rt.Spawn(spec); err == nil || !strings.Contains(err.Error(), `sandbox.denyRead[1]: invalid glob "a{"`) {
		t.Fatalf("Spawn = %v", err)
	}
}

// TestSandboxNetworkConfig: sandbox.network decodes off, on, true, false
// and the mapping form (allowedDomains, deniedDomains,
// packageRegistries, ask); an unknown key, a malformed domain or another
// scalar is an error naming the field, at the patch file's line.
func TestSandboxNetworkConfig(t *testing.T) {
	for _, c := range []struct {
		network string
		want    SandboxNetwork
		err     string
	}{
		{"off", SandboxNetwork{Mode: SandboxNetworkOff}, ""},
		{"false", SandboxNetwork{Mode: SandboxNetworkOff}, ""},
		{"on", SandboxNetwork{Mode: SandboxNetworkOn}, ""},
		{"true", SandboxNetwork{Mode: SandboxNetworkOn}, ""},
		{"{}", SandboxNetwork{Mode: SandboxNetworkProxy}, ""},
		{`{allowedDomains: [a.org, "*.b.org"], deniedDomains: [x.b.org], packageRegistries: true}`,
			SandboxNetwork{Mode: SandboxNetworkProxy, AllowedDomains: []string{"a.org", "*.b.org"}, DeniedDomains: []string{"x.b.org"}, PackageRegistries: true}, ""},
		{"maybe", SandboxNetwork{}, `"maybe": want off, on, true, false, or a mapping`},
		{"{allowed: [a.org]}", SandboxNetwork{}, `unknown key "allowed" (allowed: allowedDomains, deniedDomains, packageRegistries, ask)`},
		{"{packageRegistries: true, ask: true}", SandboxNetwork{Mode: SandboxNetworkProxy, PackageRegistries: true, Ask: true}, ""},
		{"{ask: yes please}", SandboxNetwork{}, "sandbox.network"},
		{"{allowedDomains: [https://a.org]}", SandboxNetwork{}, `sandbox.network.allowedDomains[0]: "https://a.org": a host name only, without a scheme (write "a.org")`},
		{"{deniedDomains: [ok.org, \"a.*.org\"]}", SandboxNetwork{}, `sandbox.network.deniedDomains[1]: "a.*.org": the only wildcard is a leading "*."`},
	} {
		cfg, pf, err := decodeWithPatch(t, "- id: subprocess\n  config:\n    sandbox:\n      mode: workspace-write\n      network: "+c.network+"\n")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), pf+":") {
				t.Errorf("network: %s: error %v, want %q at %s", c.network, err, c.err, pf)
			}
			continue
		}
		if err != nil {
			t.Errorf("network: %s: %v", c.network, err)
			continue
		}
		got := cfg.Sandbox.Network
		if got.Mode != c.want.Mode || strings.Join(got.AllowedDomains, ",") != strings.Join(c.want.AllowedDomains, ",") ||
			strings.Join(got.DeniedDomains, ",") != strings.Join(c.want.DeniedDomains, ",") || got.PackageRegistries != c.want.PackageRegistries || got.Ask != c.want.Ask {
			t.Errorf("network: %s: %+v, want %+v", c.network, got, c.want)
		}
	}
}
