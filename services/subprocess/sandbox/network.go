package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dshgo/harness/services/subprocess/sandbox/netproxy"
	"github.com/invopop/jsonschema"
	"gopkg.in/yaml.v3"
)

// NetworkMode is how a sandboxed command reaches the network.
type NetworkMode string

const (
	// NetworkOff: no network (a network namespace with only loopback).
	NetworkOff NetworkMode = "off"
	// NetworkOn: the host's network, unfiltered.
	NetworkOn NetworkMode = "on"
	// NetworkProxy: no network of its own; the listed domains through the
	// harness's proxy (package netproxy).
	NetworkProxy NetworkMode = "proxy"
)

// PackageRegistries are the public package registries' hosts that
// Network.PackageRegistries allows: Go's module proxy and checksum
// database, npm, PyPI, crates.io, RubyGems and Maven Central.
var PackageRegistries = []string{
	"proxy.golang.org", "sum.golang.org",
	"registry.npmjs.org", "registry.yarnpkg.com",
	"pypi.org", "files.pythonhosted.org",
	"crates.io", "index.crates.io", "static.crates.io",
	"rubygems.org", "index.rubygems.org",
	"repo.maven.apache.org", "repo1.maven.org",
}

// Network is a policy's network access. In harness.yml it is off (or
// false; the default), on (or true: the host's network, unfiltered), or a
// mapping: no network of its own, and the hosts it lists reachable through
// the harness's HTTP/SOCKS5 proxy (HTTP_PROXY, HTTPS_PROXY and ALL_PROXY
// point there), e.g. `network: {packageRegistries: true, allowedDomains:
// ["*.example.com"]}`. The names follow Claude Code's sandbox settings.
type Network struct {
	// Mode is set by the YAML and JSON forms: off, on, or proxy (the
	// mapping form). The zero value is off.
	Mode NetworkMode `yaml:"-" json:"-"`
	// AllowedDomains are the hosts reachable through the proxy: exact
	// names ("proxy.golang.org"), "*." globs ("*.example.com": its
	// subdomains, not example.com itself) or IP addresses. Any port.
	AllowedDomains []string `yaml:"allowedDomains" json:"allowedDomains,omitempty"`
	// DeniedDomains are refused even when allowedDomains or
	// packageRegistries match (deny wins); same forms.
	DeniedDomains []string `yaml:"deniedDomains" json:"deniedDomains,omitempty"`
	// PackageRegistries also allows the public package registries
	// (sandbox.PackageRegistries: proxy.golang.org, sum.golang.org,
	// registry.npmjs.org, registry.yarnpkg.com, pypi.org,
	// files.pythonhosted.org, crates.io, index.crates.io,
	// static.crates.io, rubygems.org, index.rubygems.org,
	// repo.maven.apache.org, repo1.maven.org).
	PackageRegistries bool `yaml:"packageRegistries" json:"packageRegistries,omitempty"`
	// Ask asks the person at the terminal or TUI about a host no entry
	// allows or denies, once per host: allow once, allow for the rest of
	// the harness process, or deny (the sandbox-network-ask plugin puts the
	// question through the approval service). Headless, or with no one to
	// ask, the host is refused as without ask. Default false.
	Ask bool `yaml:"ask" json:"ask,omitempty"`
}

// On reports whether the command gets the host's network.
func (n Network) On() bool { return n.Mode == NetworkOn }

// Proxied reports whether the command reaches the network through the
// proxy only.
func (n Network) Proxied() bool { return n.Mode == NetworkProxy }

// Rules are the proxy's rules for n: allowedDomains plus, with
// packageRegistries, PackageRegistries; deniedDomains.
func (n Network) Rules() netproxy.Rules {
	allow := slices.Clone(n.AllowedDomains)
	if n.PackageRegistries {
		allow = append(allow, PackageRegistries...)
	}
	return netproxy.Rules{Allow: allow, Deny: slices.Clone(n.DeniedDomains)}
}

// Clone returns a deep copy.
func (n Network) Clone() Network {
	n.AllowedDomains = slices.Clone(n.AllowedDomains)
	n.DeniedDomains = slices.Clone(n.DeniedDomains)
	return n
}

// String is "off", "on", or "proxy (N domains allowed[, M denied])".
func (n Network) String() string {
	switch n.Mode {
	case "", NetworkOff:
		return "off"
	case NetworkOn:
		return "on"
	}
	r := n.Rules()
	s := fmt.Sprintf("proxy (%d domains allowed", len(r.Allow))
	if len(r.Deny) > 0 {
		s += fmt.Sprintf(", %d denied", len(r.Deny))
	}
	if n.Ask {
		s += ", ask for others"
	}
	return s + ")"
}

// Validate reports a bad mode or a malformed domain as allowedDomains[i]
// or deniedDomains[i].
func (n Network) Validate() error {
	switch n.Mode {
	case "", NetworkOff, NetworkOn:
		if len(n.AllowedDomains) > 0 || len(n.DeniedDomains) > 0 || n.PackageRegistries || n.Ask {
			return fmt.Errorf("allowedDomains, deniedDomains, packageRegistries and ask need the mapping form (network is %s)", n.String())
		}
	case NetworkProxy:
	default:
		return fmt.Errorf("mode %q: must be off, on or proxy", n.Mode)
	}
	for i, d := range n.AllowedDomains {
		if err := netproxy.ValidatePattern(d); err != nil {
			return fmt.Errorf("allowedDomains[%d]: %w", i, err)
		}
	}
	for i, d := range n.DeniedDomains {
		if err := netproxy.ValidatePattern(d); err != nil {
			return fmt.Errorf("deniedDomains[%d]: %w", i, err)
		}
	}
	return nil
}

// networkFields is the mapping form, decoded strictly.
type networkFields struct {
	AllowedDomains    []string `yaml:"allowedDomains" json:"allowedDomains"`
	DeniedDomains     []string `yaml:"deniedDomains" json:"deniedDomains"`
	PackageRegistries bool     `yaml:"packageRegistries" json:"packageRegistries"`
	Ask               bool     `yaml:"ask" json:"ask,omitempty"`
}

var networkKeys = []string{"allowedDomains", "deniedDomains", "packageRegistries", "ask"}

// errNetworkForm says what network accepts.
var errNetworkForm = errors.New("want off, on, true, false, or a mapping {allowedDomains: [...], deniedDomains: [...], packageRegistries: true, ask: true}")

// scalar decodes the scalar forms.
func (n *Network) scalar(v string) error {
	switch strings.ToLower(v) {
	case "off", "false", "no", "":
		*n = Network{Mode: NetworkOff}
	case "on", "true", "yes":
		*n = Network{Mode: NetworkOn}
	default:
		return fmt.Errorf("%q: %w", v, errNetworkForm)
	}
	return nil
}

// UnmarshalYAML decodes off | on | true | false | {allowedDomains,
// deniedDomains, packageRegistries}; an unknown key is an error.
func (n *Network) UnmarshalYAML(node *yaml.Node) error {
	switch node.Kind {
	case yaml.ScalarNode:
		if node.Tag == "!!null" {
			*n = Network{Mode: NetworkOff}
			return nil
		}
		return n.scalar(node.Value)
	case yaml.MappingNode:
		for i := 0; i+1 < len(node.Content); i += 2 {
			if k := node.Content[i].Value; !slices.Contains(networkKeys, k) {
				return fmt.Errorf("line %d: unknown key %q (allowed: %s)", node.Content[i].Line, k, strings.Join(networkKeys, ", "))
			}
		}
		var f networkFields
		if err := node.Decode(&f); err != nil {
			return err
		}
		*n = Network{Mode: NetworkProxy, AllowedDomains: f.AllowedDomains, DeniedDomains: f.DeniedDomains, PackageRegistries: f.PackageRegistries, Ask: f.Ask}
		return nil
	}
	return errNetworkForm
}

// MarshalYAML renders the form UnmarshalYAML reads.
func (n Network) MarshalYAML() (any, error) {
	if n.Mode != NetworkProxy {
		return n.String(), nil
	}
	return networkFields{AllowedDomains: n.AllowedDomains, DeniedDomains: n.DeniedDomains, PackageRegistries: n.PackageRegistries, Ask: n.Ask}, nil
}

// UnmarshalJSON decodes a boolean, "off"/"on", or the mapping form.
func (n *Network) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case nil:
		*n = Network{Mode: NetworkOff}
	case bool:
		*n = Network{Mode: NetworkOff}
		if v {
			n.Mode = NetworkOn
		}
	case string:
		return n.scalar(v)
	case map[string]any:
		for k := range v {
			if !slices.Contains(networkKeys, k) {
				return fmt.Errorf("unknown key %q (allowed: %s)", k, strings.Join(networkKeys, ", "))
			}
		}
		var f networkFields
		if err := json.Unmarshal(b, &f); err != nil {
			return err
		}
		*n = Network{Mode: NetworkProxy, AllowedDomains: f.AllowedDomains, DeniedDomains: f.DeniedDomains, PackageRegistries: f.PackageRegistries, Ask: f.Ask}
	default:
		return errNetworkForm
	}
	return nil
}

// MarshalJSON renders false, true or the mapping form.
func (n Network) MarshalJSON() ([]byte, error) {
	switch n.Mode {
	case NetworkProxy:
		return json.Marshal(networkFields{AllowedDomains: n.AllowedDomains, DeniedDomains: n.DeniedDomains, PackageRegistries: n.PackageRegistries, Ask: n.Ask})
	case NetworkOn:
		return []byte("true"), nil
	}
	return []byte("false"), nil
}

// JSONSchemaExtend turns the reflected mapping schema into "a boolean,
// off/on, or the mapping".
func (Network) JSONSchemaExtend(s *jsonschema.Schema) {
	obj := *s
	obj.Title, obj.Description = "", ""
	*s = jsonschema.Schema{
		Title:       s.Title,
		Description: s.Description,
		OneOf: []*jsonschema.Schema{
			{Type: "boolean"},
			{Type: "string", Enum: []any{"off", "on"}},
			&obj,
		},
	}
}
