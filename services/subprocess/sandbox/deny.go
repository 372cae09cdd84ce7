package sandbox

import (
	"encoding/json"
	"slices"

	"gopkg.in/yaml.v3"
)

// DefaultsEntry is the denyRead entry that stands for [DefaultDenyRead]:
// `denyRead: ["@defaults", "~/.my-token"]` hides the default credential
// locations and one more. The default harness.yml writes it, so the list
// lives here only. Decoding a policy from YAML or JSON replaces the entry
// by the list; a policy built in Go may carry it and is expanded when a
// command starts or a path is checked ([Policy.DenyReadPaths]).
const DefaultsEntry = "@defaults"

// DefaultDenyRead returns the default credential locations, the list
// docs/sandbox.md promises: keys and agents (~/.ssh, ~/.gnupg), cloud and
// CLI logins (~/.aws, ~/.config/gcloud, ~/.azure, ~/.kube, ~/.config/gh,
// ~/.docker/config.json), tokens of git, package registries and build
// tools (~/.netrc, ~/.git-credentials, ~/.npmrc, ~/.pypirc, ~/.pgpass,
// ~/.cargo/credentials*, ~/.terraform.d/credentials*), and .env / .env.*
// files in the workspace and the writable roots (.env.example included).
// Each call returns a new slice.
func DefaultDenyRead() []string {
	return []string{
		"~/.ssh",
		"~/.gnupg",
		"~/.aws",
		"~/.config/gcloud",
		"~/.azure",
		"~/.kube",
		"~/.config/gh",
		"~/.docker/config.json",
		"~/.netrc",
		"~/.git-credentials",
		"~/.npmrc",
		"~/.pypirc",
		"~/.pgpass",
		"~/.cargo/credentials*",
		"~/.terraform.d/credentials*",
		"**/.env{,.*}",
	}
}

// expandDefaults replaces each DefaultsEntry in list by DefaultDenyRead,
// keeping the order and dropping repeats. A list without the entry is
// returned as is.
func expandDefaults(list []string) []string {
	if !slices.Contains(list, DefaultsEntry) {
		return list
	}
	var out []string
	for _, d := range list {
		add := []string{d}
		if d == DefaultsEntry {
			add = DefaultDenyRead()
		}
		for _, a := range add {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// DenyReadPaths is the policy's denyRead with DefaultsEntry expanded: what
// the backends hide and the [Checker] refuses.
func (p Policy) DenyReadPaths() []string {
	return expandDefaults(slices.Clone([]string(p.DenyRead)))
}

// DenyList is a policy's denyRead list. Decoded from YAML or JSON, its
// DefaultsEntry is replaced by [DefaultDenyRead].
type DenyList []string

// UnmarshalYAML decodes a list of strings and expands DefaultsEntry.
func (l *DenyList) UnmarshalYAML(n *yaml.Node) error {
	var s []string
	if err := n.Decode(&s); err != nil {
		return err
	}
	*l = expandDefaults(s)
	return nil
}

// UnmarshalJSON decodes a list of strings and expands DefaultsEntry.
func (l *DenyList) UnmarshalJSON(b []byte) error {
	var s []string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*l = expandDefaults(s)
	return nil
}
