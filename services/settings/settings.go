package settings

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/manifest"
	"github.com/invopop/jsonschema"
	"gopkg.in/yaml.v3"
)

// Errors of Update.
var (
	// ErrConflict: the settings changed since the revision the caller read.
	ErrConflict = errors.New("the settings changed since they were read: reload them")
	// ErrNotFound: no manifest row has the id.
	ErrNotFound = errors.New("no such plugin row")
)

// Host is what the service needs of the running harness: the manifest
// running now, the catalog, and the loader's transactional Reconcile
// (core/loader.Loader and fxcore.Harness provide them).
type Host interface {
	Current() *manifest.Manifest
	Reconcile(ctx context.Context, m *manifest.Manifest) error
}

// Options configure a Service.
type Options struct {
	// File is the settings patch layer (default: DefaultFile()).
	File string
	// Catalog resolves row names to plugins (required).
	Catalog *core.Catalog
	// Env reads !env variables (nil: the process environment).
	Env manifest.LookupEnv
	// RestartOnly lists the plugin names whose changes are saved but
	// applied only at the next start (default: web, workspaces).
	RestartOnly []string
	// Base returns the manifest as composed without the settings layer
	// (harness.yml, the --patch files and the host's own additions), read
	// afresh. With it, Update recomposes Base + the new settings file and
	// reconciles that, so a key set to null reverts to its harness.yml
	// value at once, exactly as at the next start. Without it, Update
	// merges the change into the running manifest, and null removes the key
	// from the running row (the plugin's default applies until a restart
	// recomposes the layers).
	Base func() (*manifest.Manifest, error)
}

// DefaultFile is $XDG_CONFIG_HOME/harness/settings.yml, else
// ~/.config/harness/settings.yml.
func DefaultFile() string {
	if v, ok := os.LookupEnv("XDG_CONFIG_HOME"); ok && filepath.IsAbs(v) {
		return filepath.Join(v, "harness", "settings.yml")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".config", "harness", "settings.yml")
	}
	return filepath.Join(os.TempDir(), "harness-settings.yml")
}

// Service reads and changes plugin settings. Safe for concurrent use;
// updates are serialized.
type Service struct {
	host Host
	o    Options

	mu sync.Mutex // serializes Update
}

// New returns the service over host.
func New(host Host, o Options) *Service {
	if o.File == "" {
		o.File = DefaultFile()
	}
	if o.RestartOnly == nil {
		o.RestartOnly = []string{"web", "workspaces"}
	}
	return &Service{host: host, o: o}
}

// File returns the settings patch layer's path.
func (s *Service) File() string { return s.o.File }

// Patch reads the settings file as a patch layer for [manifest.Compose]
// (nil when there is no file).
func (s *Service) Patch() (*manifest.Patch, error) { return LoadPatch(s.o.File) }

// LoadPatch reads the settings file at path as a patch layer (nil, nil when
// it does not exist).
func LoadPatch(path string) (*manifest.Patch, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return manifest.ReadPatchFile(path)
}

// Row is one plugin row's settings.
type Row struct {
	ID          string             `json:"id"`
	Plugin      string             `json:"plugin"`
	Description string             `json:"description,omitempty"`
	Schema      *jsonschema.Schema `json:"schema"`
	// Values are the row's effective config (defaults applied) without
	// secret fields.
	Values map[string]any `json:"values"`
	// Secrets lists the secret fields (top-level) and whether each is set.
	Secrets map[string]bool `json:"secrets,omitempty"`
	// Saved are the keys the settings file sets for this row.
	Saved []string `json:"saved,omitempty"`
	// RestartOnly: changes are saved and applied at the next start.
	RestartOnly bool `json:"restartOnly,omitempty"`
	// Error is why the row's config does not decode now (rare: the
	// running tree was validated).
	Error string `json:"error,omitempty"`
}

// Snapshot is every row with the revision to send back with a change.
type Snapshot struct {
	Revision string `json:"revision"`
	File     string `json:"file"`
	Rows     []Row  `json:"rows"`
}

// Get returns the settings of every enabled row of the running manifest.
func (s *Service) Get() (Snapshot, error) {
	raw, err := s.read()
	if err != nil {
		return Snapshot{}, err
	}
	saved, err := savedRows(raw)
	if err != nil {
		return Snapshot{}, err
	}
	snap := Snapshot{Revision: revision(raw), File: s.o.File, Rows: []Row{}}
	for _, e := range flatten(s.host.Current().Plugins) {
		p, ok := s.o.Catalog.Get(e.Name)
		if !ok {
			continue
		}
		snap.Rows = append(snap.Rows, s.rowOf(p, e, saved[e.ID]))
	}
	return snap, nil
}

func (s *Service) rowOf(p core.Plugin, e manifest.Entry, saved map[string]any) Row {
	r := Row{ID: e.ID, Plugin: p.Name(), Description: p.Description(), Schema: manifest.ConfigSchema(p),
		RestartOnly: slices.Contains(s.o.RestartOnly, p.Name()), Values: map[string]any{}}
	for k := range saved {
		r.Saved = append(r.Saved, k)
	}
	sort.Strings(r.Saved)
	cfg, err := manifest.DecodeConfig(p, e, s.o.Env)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	b, err := json.Marshal(cfg)
	if err == nil {
		_ = json.Unmarshal(b, &r.Values)
	}
	r.Secrets = stripSecrets(r.Schema, r.Values)
	return r
}

// stripSecrets removes the writeOnly properties of s from v (at any depth
// of nested objects) and reports, for the top-level ones, whether each
// had a value.
func stripSecrets(s *jsonschema.Schema, v map[string]any) map[string]bool {
	if s == nil || s.Properties == nil {
		return nil
	}
	var out map[string]bool
	for pair := s.Properties.Oldest(); pair != nil; pair = pair.Next() {
		k, ps := pair.Key, pair.Value
		if ps == nil {
			continue
		}
		if ps.WriteOnly {
			if out == nil {
				out = map[string]bool{}
			}
			val, ok := v[k]
			out[k] = ok && val != nil && val != "" && !isEmpty(val)
			delete(v, k)
			continue
		}
		switch sub := v[k].(type) {
		case map[string]any:
			stripSecrets(ps, sub)
		case []any:
			for _, it := range sub {
				if m, ok := it.(map[string]any); ok && ps.Items != nil {
					stripSecrets(ps.Items, m)
				}
			}
		}
	}
	return out
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// Result is the outcome of a successful Update.
type Result struct {
	Revision string `json:"revision"`
	// Applied is true when the change runs now; false: it applies on restart.
	Applied bool `json:"applied"`
	Row     Row  `json:"row"`
}

// FieldErrors is an Update refused by validation: field path → problem.
type FieldErrors struct {
	Fields map[string]string
	Err    error
}

func (e *FieldErrors) Error() string { return e.Err.Error() }
func (e *FieldErrors) Unwrap() error { return e.Err }

// Update changes the config of row id: each key of changes sets that field
// (a JSON value; null removes the key from the settings file, so the
// harness.yml value, else the plugin's default, applies: at once when
// Options.Base is set, see there). revision must be the one Get returned
// ([ErrConflict] otherwise). The new manifest is Base composed with the
// new settings file (or, without Base, the running manifest with the
// change merged in); the changed row is decoded and validated as at boot
// ([*FieldErrors] naming each field path), then the running tree is
// reconciled with it (all-or-nothing: on failure the previous tree keeps
// running and nothing is saved), then the settings file is written. Rows of
// RestartOnly plugins are validated and saved only.
func (s *Service) Update(ctx context.Context, id, rev string, changes map[string]any) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, err := s.read()
	if err != nil {
		return Result{}, err
	}
	if rev != revision(raw) {
		return Result{}, ErrConflict
	}
	saved, err := savedRows(raw)
	if err != nil {
		return Result{}, err
	}
	cur := s.host.Current()
	entry, ok := find(cur.Plugins, id)
	if !ok {
		return Result{}, fmt.Errorf("row %q: %w", id, ErrNotFound)
	}
	p, ok := s.o.Catalog.Get(entry.Name)
	if !ok {
		return Result{}, fmt.Errorf("row %q: plugin %q is not in the catalog", id, entry.Name)
	}
	row := saved[id]
	if row == nil {
		row = map[string]any{}
	}
	for k, v := range changes {
		if v == nil {
			delete(row, k)
		} else {
			row[k] = v
		}
	}
	saved[id] = row
	data, err := encodeRows(saved)
	if err != nil {
		return Result{}, err
	}
	next, err := s.next(cur, id, changes, data)
	if err != nil {
		return Result{}, err
	}
	e, ok := find(next.Plugins, id)
	if !ok {
		return Result{}, fmt.Errorf("row %q: %w (it is not in the manifest without the settings)", id, ErrNotFound)
	}
	if _, err := manifest.DecodeConfig(p, e, s.o.Env); err != nil {
		return Result{}, &FieldErrors{Fields: fieldErrors(err), Err: err}
	}
	applied := !slices.Contains(s.o.RestartOnly, p.Name())
	if applied {
		if err := s.host.Reconcile(ctx, next); err != nil {
			return Result{}, fmt.Errorf("the change did not apply (the running configuration stays): %w", err)
		}
	}
	if err := writePrivate(s.o.File, data); err != nil {
		if applied {
			_ = s.host.Reconcile(context.WithoutCancel(ctx), cur)
		}
		return Result{}, err
	}
	r := s.rowOf(p, e, row)
	return Result{Revision: revision(data), Applied: applied, Row: r}, nil
}

// next is the manifest to run after a change: Base composed with the new
// settings file data when Base is set (what the next start composes), else
// the running manifest cur with changes merged into row id.
func (s *Service) next(cur *manifest.Manifest, id string, changes map[string]any, data []byte) (*manifest.Manifest, error) {
	if s.o.Base == nil {
		return withChanges(cur, id, changes)
	}
	base, err := s.o.Base()
	if err != nil {
		return nil, fmt.Errorf("settings: the manifest without the settings layer: %w", err)
	}
	layer, err := manifest.ParsePatch(s.o.File, data)
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	next, err := manifest.Compose(base, layer)
	if err != nil {
		return nil, fmt.Errorf("settings do not fit the manifest: %w", err)
	}
	return next, nil
}

func (s *Service) read() ([]byte, error) {
	b, err := os.ReadFile(s.o.File)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	return b, nil
}

// revision is the digest of the settings file's bytes ("0" for none).
func revision(raw []byte) string {
	if raw == nil {
		return "0"
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

// savedRows reads the settings file's rows: id → config keys. The file is
// a patch layer whose rows carry only id and config.
func savedRows(raw []byte) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	if len(raw) == 0 {
		return out, nil
	}
	var rows []struct {
		ID     string         `yaml:"id"`
		Config map[string]any `yaml:"config"`
	}
	if err := yaml.Unmarshal(raw, &rows); err != nil {
		return nil, fmt.Errorf("settings file: %w", err)
	}
	for _, r := range rows {
		if r.ID != "" {
			out[r.ID] = r.Config
		}
	}
	return out, nil
}

func encodeRows(saved map[string]map[string]any) ([]byte, error) {
	ids := make([]string, 0, len(saved))
	for id, cfg := range saved {
		if len(cfg) > 0 {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	type row struct {
		ID     string         `yaml:"id"`
		Config map[string]any `yaml:"config"`
	}
	rows := make([]row, 0, len(ids))
	for _, id := range ids {
		rows = append(rows, row{id, saved[id]})
	}
	b, err := yaml.Marshal(rows)
	if err != nil {
		return nil, err
	}
	return append([]byte("# harness settings saved by the web app (a --patch layer); edit with care\n"), b...), nil
}

// withChanges returns a copy of m whose row id has changes merged into its
// config (null removes a key).
func withChanges(m *manifest.Manifest, id string, changes map[string]any) (*manifest.Manifest, error) {
	next := m.Clone()
	e := findPtr(next.Plugins, id)
	if e == nil {
		return nil, fmt.Errorf("row %q: %w", id, ErrNotFound)
	}
	var cfg yaml.Node
	if e.Config != nil {
		cfg = *cloneNode(e.Config)
	}
	if cfg.Kind != yaml.MappingNode {
		cfg = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	keys := make([]string, 0, len(changes))
	for k := range changes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := changes[k]
		i := -1
		for j := 0; j+1 < len(cfg.Content); j += 2 {
			if cfg.Content[j].Value == k {
				i = j
			}
		}
		if v == nil {
			if i >= 0 {
				cfg.Content = slices.Delete(cfg.Content, i, i+2)
			}
			continue
		}
		var val yaml.Node
		if err := val.Encode(v); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		if i >= 0 {
			cfg.Content[i+1] = &val
		} else {
			cfg.Content = append(cfg.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, &val)
		}
	}
	e.Config = &cfg
	return next, nil
}

func cloneNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = cloneNode(x)
	}
	return &c
}

func flatten(rows []manifest.Entry) []manifest.Entry {
	var out []manifest.Entry
	for _, e := range rows {
		if e.Disabled {
			continue
		}
		if e.Group {
			out = append(out, flatten(e.Children)...)
			continue
		}
		out = append(out, e)
	}
	return out
}

func find(rows []manifest.Entry, id string) (manifest.Entry, bool) {
	for _, e := range flatten(rows) {
		if e.ID == id {
			return e, true
		}
	}
	return manifest.Entry{}, false
}

func findPtr(rows []manifest.Entry, id string) *manifest.Entry {
	for i := range rows {
		if rows[i].ID == id && !rows[i].Group {
			return &rows[i]
		}
		if rows[i].Group {
			if e := findPtr(rows[i].Children, id); e != nil {
				return e
			}
		}
	}
	return nil
}

// fieldRE finds "invalid config: PATH: MESSAGE" in a decode error line.
var fieldRE = regexp.MustCompile(`invalid config: ([A-Za-z0-9_.\[\]-]+): (.*)$`)

// unknownRE finds "invalid config: [PATH: ]unknown key "KEY" (allowed: …)":
// the problem is at PATH.KEY, the key itself.
var unknownRE = regexp.MustCompile(`invalid config: (?:([A-Za-z0-9_.\[\]-]+): )?(unknown key "([^"]+)".*)$`)

// fieldErrors maps each problem of a DecodeConfig error to its field path
// ("" for a problem without one); an unknown key is reported at its own
// path.
func fieldErrors(err error) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(err.Error(), "\n") {
		if m := unknownRE.FindStringSubmatch(line); m != nil {
			path := m[3]
			if m[1] != "" {
				path = m[1] + "." + m[3]
			}
			out[path] = m[2]
		} else if m := fieldRE.FindStringSubmatch(line); m != nil {
			out[m[1]] = m[2]
		} else if i := strings.Index(line, "): "); i >= 0 {
			out[""] = strings.TrimPrefix(line[i+3:], "invalid config: ")
		}
	}
	return out
}

// writePrivate writes data to path atomically, 0600 in a 0700 directory.
func writePrivate(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".settings-*.yml")
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("settings: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	return nil
}
