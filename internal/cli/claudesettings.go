package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/services/subprocess"
)

// Claude Code settings files, in increasing precedence (Claude Code's order:
// user, then project, then local project settings).
const (
	claudeUserSettings    = "~/.claude/settings.json"
	claudeProjectSettings = ".claude/settings.json"
	claudeLocalSettings   = ".claude/settings.local.json"
)

// claudeSettings is the part of a Claude Code settings file the harness
// reads; every other key is ignored (one debug line per file).
type claudeSettings struct {
	Hooks       map[string]json.RawMessage `json:"hooks"`
	Permissions *struct {
		Allow                 []string `json:"allow"`
		Ask                   []string `json:"ask"`
		Deny                  []string `json:"deny"`
		DefaultMode           string   `json:"defaultMode"`
		AdditionalDirectories []string `json:"additionalDirectories"`
	} `json:"permissions"`
	Env map[string]string `json:"env"`
}

// claudeKnownKeys are the top-level keys claudeSettings reads.
var claudeKnownKeys = []string{"hooks", "permissions", "env"}

// claudeSettingsFiles returns the settings files that exist, lowest
// precedence first.
func (e *Env) claudeSettingsFiles() ([]string, error) {
	wd, err := e.workDir()
	if err != nil {
		return nil, err
	}
	var cands []string
	if home, ok := e.LookupEnv("HOME"); ok && home != "" {
		cands = append(cands, filepath.Join(home, ".claude", "settings.json"))
	}
	cands = append(cands, filepath.Join(wd, claudeProjectSettings), filepath.Join(wd, claudeLocalSettings))
	var out []string
	for _, p := range cands {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("claude settings %s: %w", p, err)
		}
		if st.Mode().IsRegular() && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// claudeSettingsEnabled reports whether the Claude Code settings layer is
// on: it is unless --claude-settings=false or HARNESS_CLAUDE_SETTINGS=0.
func (e *Env) claudeSettingsEnabled() bool {
	if e.NoClaudeSettings {
		return false
	}
	if v, ok := e.LookupEnv("HARNESS_CLAUDE_SETTINGS"); ok && (v == "0" || strings.EqualFold(v, "false") || strings.EqualFold(v, "off")) {
		return false
	}
	return true
}

// readClaudeSettings parses one settings file. Malformed JSON is an error
// naming FILE:LINE:COL; unknown keys are logged at debug level once.
func (e *Env) readClaudeSettings(path string) (claudeSettings, error) {
	var s claudeSettings
	data, err := os.ReadFile(path)
	if err != nil {
		return s, fmt.Errorf("claude settings %s: %w", path, err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return s, manifest.JSONError(path, data, err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, manifest.JSONError(path, data, err)
	}
	var unknown []string
	for k := range top {
		if !slices.Contains(claudeKnownKeys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		e.Logger().Debug("claude settings: keys the harness does not use are ignored", "file", path, "keys", strings.Join(unknown, ","))
	}
	return s, nil
}

// claudeModes maps Claude Code's permissions.defaultMode to the permission
// plugin's mode.
var claudeModes = map[string]string{"default": "default", "acceptEdits": "acceptEdits", "plan": "plan", "bypassPermissions": "bypass"}

// claudeSettingsPatch turns the Claude Code settings files into one patch
// layer over m: their hooks are added to the hooks row's (every file's hooks
// run, as in Claude Code), their permission rules to the permission row's
// lists, permissions.defaultMode (highest precedence wins) becomes the
// permission mode and the hooks' permission_mode. The patch's source, shown
// by `harness config`, names the files. nil when no file has anything to
// apply.
func (e *Env) claudeSettingsPatch(m *manifest.Manifest, files []string) (*manifest.Patch, error) {
	hooksByEvent := map[string][]any{}
	var events []string
	var allow, ask, deny, dirs []string
	env := map[string]string{}
	mode := ""
	for _, f := range files {
		s, err := e.readClaudeSettings(f)
		if err != nil {
			return nil, err
		}
		for ev, raw := range s.Hooks {
			var groups []any
			if err := json.Unmarshal(raw, &groups); err != nil {
				return nil, fmt.Errorf("%s: hooks.%s: must be a list of matcher groups: %v", f, ev, err)
			}
			if _, seen := hooksByEvent[ev]; !seen {
				events = append(events, ev)
			}
			hooksByEvent[ev] = append(hooksByEvent[ev], groups...)
		}
		if p := s.Permissions; p != nil {
			allow, ask, deny = append(allow, p.Allow...), append(ask, p.Ask...), append(deny, p.Deny...)
			if p.DefaultMode != "" {
				mm, ok := claudeModes[p.DefaultMode]
				if !ok {
					return nil, fmt.Errorf("%s: permissions.defaultMode: %q is not one of default, acceptEdits, plan, bypassPermissions", f, p.DefaultMode)
				}
				mode = mm
			}
			for _, d := range p.AdditionalDirectories {
				abs, err := e.claudeDir(d)
				if err != nil {
					return nil, fmt.Errorf("%s: permissions.additionalDirectories: %w", f, err)
				}
				if !slices.Contains(dirs, abs) {
					dirs = append(dirs, abs)
				}
			}
		}
		for k, v := range s.Env {
			env[k] = v // a later (higher-precedence) file wins
		}
	}
	var rows []map[string]any
	if len(hooksByEvent) > 0 || mode != "" {
		cfg := map[string]any{}
		if len(hooksByEvent) > 0 {
			merged := existingMap(m, "hooks", "hooks")
			sort.Strings(events)
			for _, ev := range events {
				prev, _ := merged[ev].([]any)
				merged[ev] = append(prev, hooksByEvent[ev]...)
			}
			cfg["hooks"] = merged
		}
		if mode != "" {
			claude := "default"
			for k, v := range claudeModes {
				if v == mode {
					claude = k
				}
			}
			cfg["permissionMode"] = claude
		}
		rows = append(rows, e.rowFor(m, "hooks", cfg))
	}
	if len(allow)+len(ask)+len(deny)+len(dirs) > 0 || mode != "" {
		cfg := map[string]any{}
		if len(dirs) > 0 {
			cfg["additionalDirectories"] = union(existingList(m, "permission", "additionalDirectories"), dirs)
		}
		for key, add := range map[string][]string{"allow": allow, "ask": ask, "deny": deny} {
			if len(add) > 0 {
				cfg[key] = union(existingList(m, "permission", key), add)
			}
		}
		if mode != "" {
			cfg["mode"] = mode
		}
		rows = append(rows, e.rowFor(m, "permission", cfg))
	}
	if row := e.claudeSubprocessRow(m, files, env, dirs); row != nil {
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	data, err := yaml.Marshal(rows)
	if err != nil {
		return nil, err
	}
	return manifest.ParsePatch("claude settings ("+strings.Join(files, ", ")+")", data)
}

// claudeDir makes a settings directory absolute: ~/ against $HOME, a
// relative path against the working directory.
func (e *Env) claudeDir(d string) (string, error) {
	if d == "" {
		return "", errors.New("empty path")
	}
	if rest, ok := strings.CutPrefix(d, "~/"); ok || d == "~" {
		home, found := e.LookupEnv("HOME")
		if !found || home == "" {
			return "", fmt.Errorf("%s: HOME is not set", d)
		}
		d = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(d) {
		wd, err := e.workDir()
		if err != nil {
			return "", err
		}
		d = filepath.Join(wd, d)
	}
	return filepath.Clean(d), nil
}

// claudeSubprocessRow is the patch row that applies the settings' env and
// additionalDirectories to the subprocess-local row: env entries become
// env.set (children get them; a name the credential scrub drops is left
// out, with a warning naming it, never its value) and the directories
// become writable roots of a workspace-write sandbox. nil when there is
// nothing to apply or no subprocess-local row.
func (e *Env) claudeSubprocessRow(m *manifest.Manifest, files []string, env map[string]string, dirs []string) map[string]any {
	var en *manifest.Entry
	for _, x := range m.Flatten() {
		if x.Name == "subprocess-local" {
			en = &x
			break
		}
	}
	if en == nil || len(env)+len(dirs) == 0 {
		return nil
	}
	var cur map[string]any
	if en.Config != nil {
		_ = en.Config.Decode(&cur)
	}
	cfg := map[string]any{}
	if len(env) > 0 {
		envCfg, _ := cur["env"].(map[string]any)
		policy := subprocess.EnvPolicy{Deny: append(anyStrings(envCfg["deny"]), subprocess.DefaultEnvDeny...), Allow: anyStrings(envCfg["allow"])}
		set := map[string]any{}
		if old, ok := envCfg["set"].(map[string]any); ok {
			for k, v := range old {
				set[k] = v
			}
		}
		var dropped []string
		for k, v := range env {
			if policy.Drops(k) || k == subprocess.ControlEnv {
				dropped = append(dropped, k)
				continue
			}
			set[k] = v
		}
		if len(dropped) > 0 {
			sort.Strings(dropped)
			e.Logger().Warn("claude settings: env entries not passed to children (credential-shaped or HARNESS_ names)", "names", strings.Join(dropped, ","), "files", strings.Join(files, ", "))
		}
		if len(set) > 0 {
			out := map[string]any{}
			for k, v := range envCfg {
				out[k] = v
			}
			out["set"] = set
			cfg["env"] = out
		}
	}
	if sb, ok := cur["sandbox"].(map[string]any); ok && sb["mode"] == "workspace-write" && len(dirs) > 0 {
		out := map[string]any{}
		for k, v := range sb {
			out[k] = v
		}
		out["writableRoots"] = union(anyStrings(sb["writableRoots"]), dirs)
		cfg["sandbox"] = out
	}
	if len(cfg) == 0 {
		return nil
	}
	return map[string]any{"id": en.ID, "config": cfg}
}

// anyStrings returns the strings of a decoded YAML list (nil otherwise).
func anyStrings(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// rowFor is the patch row that applies cfg to row id: an override when the
// manifest has the row, else an insert of a new row of the plugin id names.
func (e *Env) rowFor(m *manifest.Manifest, id string, cfg map[string]any) map[string]any {
	if findEntry(m, id) != nil {
		return map[string]any{"id": id, "config": cfg}
	}
	return map[string]any{"insert": []any{map[string]any{"id": id, "name": id, "config": cfg}}}
}

func findEntry(m *manifest.Manifest, id string) *manifest.Entry {
	for _, en := range m.Flatten() {
		if en.ID == id {
			return &en
		}
	}
	return nil
}

// existingMap decodes key of row id's config as a mapping (empty if none).
func existingMap(m *manifest.Manifest, id, key string) map[string]any {
	out := map[string]any{}
	if en := findEntry(m, id); en != nil && en.Config != nil {
		var cfg map[string]any
		if en.Config.Decode(&cfg) == nil {
			if v, ok := cfg[key].(map[string]any); ok {
				for k, x := range v {
					out[k] = x
				}
			}
		}
	}
	return out
}

// existingList decodes key of row id's config as a string list.
func existingList(m *manifest.Manifest, id, key string) []string {
	if en := findEntry(m, id); en != nil && en.Config != nil {
		var cfg map[string]any
		if en.Config.Decode(&cfg) == nil {
			if v, ok := cfg[key].([]any); ok {
				var out []string
				for _, x := range v {
					if s, ok := x.(string); ok {
						out = append(out, s)
					}
				}
				return out
			}
		}
	}
	return nil
}

func union(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
