// Package discovery finds and composes a harness's manifest the one way
// both the `harness` command and [harness.New] (with WithDiscovery) do: the
// manifest (--config, $HARNESS_CONFIG, the nearest harness.yml from the
// working directory up to the repository root, else the embedded default
// with a binary's embedded patches), then the project's harness.patch.yml,
// the user's patch file ($XDG_CONFIG_HOME/harness/harness.yml), every
// explicit patch file, and last the Claude Code settings layer
// (~/.claude/settings.json, .claude/settings.json,
// .claude/settings.local.json) translated into a patch.
//
// [harness.New]: https://pkg.go.dev/github.com/dshgo/harness#New
package discovery

import (
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshgo/harness/core/manifest"
)

// Names of the files discovery looks for.
const (
	// ProjectManifest is the project's manifest, found from the working
	// directory up to the repository root; it replaces the default.
	ProjectManifest = "harness.yml"
	// ProjectPatch is the project's patch layer, found the same way; it
	// patches whichever manifest is used.
	ProjectPatch = "harness.patch.yml"
)

// Options say where discovery starts and what the caller adds. The zero
// value discovers from the process's working directory with os.LookupEnv
// and an empty default manifest (callers pass theirs).
type Options struct {
	// Dir is where discovery starts ("" for the process's working
	// directory).
	Dir string
	// ConfigPath is an explicit manifest file (--config); it wins over
	// $HARNESS_CONFIG and the project's harness.yml.
	ConfigPath string
	// Patches are explicit patch files (--patch), applied after the
	// project and user layers.
	Patches []string
	// DefaultManifest is the manifest used when no file is found.
	DefaultManifest []byte
	// DefaultPatches are a binary's embedded patch layers, composed over
	// DefaultManifest only.
	DefaultPatches []*manifest.Patch
	// NoClaudeSettings turns the Claude Code settings layer off (as does
	// HARNESS_CLAUDE_SETTINGS=0).
	NoClaudeSettings bool
	// LookupEnv reads HOME, XDG_CONFIG_HOME, HARNESS_CONFIG and
	// HARNESS_CLAUDE_SETTINGS (default os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Warn receives each warning about a settings file (a key, hook event
	// or hook type the harness does not implement), already placed
	// (FILE:LINE:COL); nil drops them. The caller decides how often to
	// show one.
	Warn func(msg string)
	// Logger receives what is logged rather than warned (default
	// slog.Default()).
	Logger *slog.Logger
	// ShortPath rewrites a discovered file's path for messages and
	// layers (the CLI shows it relative to the working directory); nil
	// keeps it as found.
	ShortPath func(string) string
}

// Layer is one file (or the embedded default) the manifest was composed
// from, in order, as `harness check` reports it.
type Layer struct {
	// Kind is "manifest" or "patch".
	Kind string
	// Path is the file ("" for the built-in default).
	Path string
	// Source says how it was chosen: "--config", "$HARNESS_CONFIG",
	// "project", "built-in default", "built-in" (a binary's embedded
	// patch), "project patch", "user", "--patch".
	Source string
}

// Result is a composed manifest and what it was composed from.
type Result struct {
	// Manifest is the composed manifest.
	Manifest *manifest.Manifest
	// Layers are the manifest and patch files, in order (the Claude Code
	// settings layer is ClaudeSettings).
	Layers []Layer
	// ClaudeSettings are the Claude Code settings files read, lowest
	// precedence first.
	ClaudeSettings []string
}

// loader is one discovery: the options with their defaults filled in.
type loader struct {
	Options
	dir string
}

func newLoader(o Options) (*loader, error) {
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	d := &loader{Options: o, dir: o.Dir}
	if d.dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		d.dir = wd
	}
	return d, nil
}

// workDir is where discovery starts.
func (d *loader) workDir() (string, error) { return d.dir, nil }

// Logger is the logger of Options, or slog.Default().
func (d *loader) Logger() *slog.Logger {
	if d.Options.Logger != nil {
		return d.Options.Logger
	}
	return slog.Default()
}

func (d *loader) short(p string) string {
	if p == "" || d.ShortPath == nil {
		return p
	}
	return d.ShortPath(p)
}

// RepoRoot returns the nearest of dir and its parents that holds .git (a
// directory, or a file in a worktree), or "".
func RepoRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// findUp returns the nearest regular file name in dir and its parents up
// to the repository root (dir alone outside a repository), or "".
func findUp(dir, name string) string {
	root := RepoRoot(dir)
	for d := dir; ; {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
		parent := filepath.Dir(d)
		if root == "" || d == root || parent == d {
			return ""
		}
		d = parent
	}
}

// manifestPath is the manifest file to read ("" for the default).
func (d *loader) manifestPath() string {
	if d.ConfigPath != "" {
		return d.ConfigPath
	}
	if v, ok := d.LookupEnv("HARNESS_CONFIG"); ok && v != "" {
		return v
	}
	return d.short(findUp(d.dir, ProjectManifest))
}

// ManifestPath returns the manifest file discovery reads ("" for the
// default manifest): ConfigPath, $HARNESS_CONFIG, or the nearest
// harness.yml from Dir up to the repository root.
func ManifestPath(o Options) string {
	d, err := newLoader(o)
	if err != nil {
		return ""
	}
	return d.manifestPath()
}

// UserPatchPath returns the user's patch layer,
// $XDG_CONFIG_HOME/harness/harness.yml (else ~/.config/harness/harness.yml),
// when that file exists; else "".
func UserPatchPath(lookupEnv func(string) (string, bool)) string {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	var dir string
	if x, ok := lookupEnv("XDG_CONFIG_HOME"); ok && filepath.IsAbs(x) {
		dir = x
	} else if h, ok := lookupEnv("HOME"); ok && filepath.IsAbs(h) {
		dir = filepath.Join(h, ".config")
	} else {
		return ""
	}
	p := filepath.Join(dir, "harness", "harness.yml")
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return p
}

// Files lists the files the manifest is read from: the manifest itself
// (unless it is the default), the project and user patch files, every
// explicit patch, the Claude Code settings files. It is what a
// long-running mode watches.
func Files(o Options) []string {
	d, err := newLoader(o)
	if err != nil {
		return nil
	}
	var files []string
	if p := d.manifestPath(); p != "" {
		files = append(files, p)
	}
	if p := d.short(findUp(d.dir, ProjectPatch)); p != "" {
		files = append(files, p)
	}
	if p := UserPatchPath(d.LookupEnv); p != "" {
		files = append(files, p)
	}
	files = append(files, d.Patches...)
	if d.claudeSettingsEnabled() {
		if cs, err := d.claudeSettingsFiles(); err == nil {
			files = append(files, cs...)
		}
	}
	return files
}

// Load discovers, parses and composes the manifest with its layers, in
// the order of the package doc. Errors name FILE:LINE:COL, or the file and
// what failed.
func Load(o Options) (*Result, error) {
	d, err := newLoader(o)
	if err != nil {
		return nil, err
	}
	path := d.manifestPath()
	var m *manifest.Manifest
	var layers []Layer
	if path == "" {
		m, err = manifest.Parse("<embedded harness.yml>", d.DefaultManifest)
		layers = append(layers, Layer{Kind: "manifest", Source: "built-in default"})
	} else {
		m, err = manifest.ReadFile(path)
		what, source := "manifest "+path, "--config"
		if path != d.ConfigPath {
			source = "project"
			if v, _ := d.LookupEnv("HARNESS_CONFIG"); v == path {
				what += " (from $HARNESS_CONFIG)"
				source = "$HARNESS_CONFIG"
			}
		}
		err = fileError(what, err)
		layers = append(layers, Layer{Kind: "manifest", Path: path, Source: source})
	}
	if err != nil {
		return nil, err
	}
	var patches []*manifest.Patch
	if path == "" {
		patches = append(patches, d.DefaultPatches...)
		for range d.DefaultPatches {
			layers = append(layers, Layer{Kind: "patch", Source: "built-in"})
		}
	}
	type patchFile struct{ path, source string }
	var files []patchFile
	if p := d.short(findUp(d.dir, ProjectPatch)); p != "" {
		files = append(files, patchFile{p, "project patch"})
	}
	if p := UserPatchPath(d.LookupEnv); p != "" {
		files = append(files, patchFile{p, "user"})
	}
	for _, p := range d.Patches {
		files = append(files, patchFile{p, "--patch"})
	}
	for _, f := range files {
		pt, err := manifest.ReadPatchFile(f.path)
		if err != nil {
			what := "patch " + f.path
			if f.source != "--patch" {
				what += " (" + f.source + " patch layer)"
			}
			return nil, fileError(what, err)
		}
		patches = append(patches, pt)
		layers = append(layers, Layer{Kind: "patch", Path: f.path, Source: f.source})
	}
	if m, err = manifest.Compose(m, patches...); err != nil {
		return nil, err
	}
	res := &Result{Layers: layers}
	// The Claude Code settings layer goes last: its hooks and rules are
	// added to what the manifest and the patches configured.
	if d.claudeSettingsEnabled() {
		files, err := d.claudeSettingsFiles()
		if err != nil {
			return nil, err
		}
		pt, err := d.claudeSettingsPatch(m, files)
		if err != nil {
			return nil, err
		}
		if pt != nil {
			if m, err = manifest.Compose(m, pt); err != nil {
				return nil, err
			}
		}
		res.ClaudeSettings = files
	}
	res.Manifest = m
	return res, nil
}

// fileError names the file a read failed on ("manifest nope.yml: no such
// file or directory" rather than "stat nope.yml: ..."); errors that already
// name their place (FILE:LINE:COL) pass unchanged.
func fileError(what string, err error) error {
	if pe, ok := err.(*fs.PathError); ok { // not errors.As: a wrapped one is already placed
		return fmt.Errorf("%s: %w", what, pe.Err)
	}
	return err
}

// claudeSettingsEnabled reports whether the Claude Code settings layer is
// on: it is unless NoClaudeSettings or HARNESS_CLAUDE_SETTINGS=0.
func (d *loader) claudeSettingsEnabled() bool {
	if d.NoClaudeSettings {
		return false
	}
	if v, ok := d.LookupEnv("HARNESS_CLAUDE_SETTINGS"); ok && (v == "0" || strings.EqualFold(v, "false") || strings.EqualFold(v, "off")) {
		return false
	}
	return true
}
