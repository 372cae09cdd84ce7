package discovery

import (
	"bytes"
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
	"github.com/dshgo/harness/plugins/hooks"
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
// reads. Every other key is reported once with its position (a warning,
// never an error): see claudeTopKeys and claudePermissionKeys.
type claudeSettings struct {
	Hooks       map[string]json.RawMessage `json:"hooks"`
	Permissions *struct {
		Allow                 []string `json:"allow"`
		Ask                   []string `json:"ask"`
		Deny                  []string `json:"deny"`
		DefaultMode           string   `json:"defaultMode"`
		AdditionalDirectories []string `json:"additionalDirectories"`
	} `json:"permissions"`
	Env   map[string]string `json:"env"`
	Model string            `json:"model"`

	path string             // the file
	pos  map[string]jsonPos // where its keys are
}

// claudeTopKeys are the top-level keys the harness reads ($schema only
// names the file's schema).
var claudeTopKeys = []string{"hooks", "permissions", "env", "model", "$schema"}

// claudePermissionKeys are the keys of `permissions` the harness reads.
var claudePermissionKeys = []string{"allow", "ask", "deny", "defaultMode", "additionalDirectories"}

// claudeHookKeys are the keys of one hook (a matcher group's `hooks`
// entry) the hooks plugin takes.
var claudeHookKeys = []string{"type", "command", "timeout"}

// claudeSettingsFiles returns the settings files that exist, lowest
// precedence first.
func (ld *loader) claudeSettingsFiles() ([]string, error) {
	wd, err := ld.workDir()
	if err != nil {
		return nil, err
	}
	var cands []string
	if home, ok := ld.LookupEnv("HOME"); ok && home != "" {
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

// readClaudeSettings parses one settings file. Malformed JSON is an error
// naming FILE:LINE:COL; what the harness does not implement (a key, a
// hook event, a hook type) is a warning naming it and its FILE:LINE:COL,
// printed once, and left out.
func (ld *loader) readClaudeSettings(path string) (claudeSettings, error) {
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
	pos := jsonKeyPositions(data)
	s.path, s.pos = path, pos
	warn := func(key, what string) { ld.claudeWarn(path, pos, key, what) }
	for _, k := range sortedKeys(top) {
		if !slices.Contains(claudeTopKeys, k) {
			warn(k, "the harness does not implement this setting; ignored")
		}
	}
	if raw, ok := top["permissions"]; ok {
		var perms map[string]json.RawMessage
		if json.Unmarshal(raw, &perms) == nil {
			for _, k := range sortedKeys(perms) {
				if !slices.Contains(claudePermissionKeys, k) {
					warn("permissions."+k, "the harness does not implement this permissions setting; ignored")
				}
			}
		}
		if p := s.Permissions; p != nil && p.DefaultMode != "" {
			if _, ok := claudeModes[p.DefaultMode]; !ok {
				warn("permissions.defaultMode", fmt.Sprintf("%q is not a permission mode the harness knows (default, acceptEdits, plan, bypassPermissions, dontAsk); ignored", p.DefaultMode))
				p.DefaultMode = ""
			}
		}
	}
	hooksByEvent := map[string]json.RawMessage{}
	for _, ev := range sortedKeys(s.Hooks) {
		key := "hooks." + ev
		if !slices.Contains(hooks.EventNames(), ev) {
			warn(key, "the harness does not fire this hook event; its hooks are ignored (events it fires: "+strings.Join(hooks.EventNames(), ", ")+")")
			continue
		}
		groups, err := ld.claudeHookGroups(path, data, pos, key, s.Hooks[ev])
		if err != nil {
			return s, err
		}
		if groups != nil {
			hooksByEvent[ev] = groups
		}
	}
	s.Hooks = hooksByEvent
	return s, nil
}

// claudeHookGroups checks the matcher groups of one hook event and returns
// them with what the hooks plugin does not run left out, each with a
// warning: a hook whose type is not "command" (prompt, agent, http hooks),
// a key of a hook other than type, command and timeout (async, once, …).
// nil when no command hook is left. A value of the wrong shape is an error
// naming its FILE:LINE:COL.
func (ld *loader) claudeHookGroups(path string, data []byte, pos map[string]jsonPos, key string, raw json.RawMessage) (json.RawMessage, error) {
	fail := func(at, what string) error {
		p := pos[at]
		return fmt.Errorf("%s:%d:%d: %s: %s", path, p.line, p.col, at, what)
	}
	var groups []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &groups); err != nil {
		return nil, fail(key, "must be a list of matcher groups ({\"matcher\": …, \"hooks\": [ … ]})")
	}
	var kept []map[string]any
	for i, g := range groups {
		gk := fmt.Sprintf("%s[%d]", key, i)
		var list []map[string]json.RawMessage
		if err := json.Unmarshal(g["hooks"], &list); err != nil || g["hooks"] == nil {
			return nil, fail(gk, "needs a \"hooks\" list")
		}
		out := map[string]any{}
		if m, ok := g["matcher"]; ok {
			var matcher string
			if json.Unmarshal(m, &matcher) != nil {
				return nil, fail(gk+".matcher", "must be a string")
			}
			out["matcher"] = matcher
		}
		for _, k := range sortedKeys(g) {
			if k != "matcher" && k != "hooks" {
				ld.claudeWarn(path, pos, gk+"."+k, "the harness does not implement this key of a matcher group; ignored")
			}
		}
		var hooksOut []any
		for j, h := range list {
			hk := fmt.Sprintf("%s.hooks[%d]", gk, j)
			var typ string
			_ = json.Unmarshal(h["type"], &typ)
			if typ != "" && typ != "command" {
				ld.claudeWarn(path, pos, hk+".type", fmt.Sprintf("the harness runs only command hooks; this %q hook is ignored", typ))
				continue
			}
			one := map[string]any{}
			for _, k := range sortedKeys(h) {
				if !slices.Contains(claudeHookKeys, k) {
					ld.claudeWarn(path, pos, hk+"."+k, "the harness does not implement this key of a hook; ignored")
					continue
				}
				var v any
				if err := json.Unmarshal(h[k], &v); err != nil {
					return nil, manifest.JSONError(path, data, err)
				}
				one[k] = v
			}
			hooksOut = append(hooksOut, one)
		}
		if len(hooksOut) > 0 {
			out["hooks"] = hooksOut
			kept = append(kept, out)
		}
	}
	if len(kept) == 0 {
		return nil, nil
	}
	return json.Marshal(kept)
}

// claudeWarn reports through Options.Warn that key of settings file path
// is not implemented: "claude settings FILE:LINE:COL: KEY: WHAT".
func (ld *loader) claudeWarn(path string, pos map[string]jsonPos, key, what string) {
	at := path
	if p, ok := pos[key]; ok {
		at = fmt.Sprintf("%s:%d:%d", path, p.line, p.col)
	}
	if ld.Warn != nil {
		ld.Warn("claude settings " + fmt.Sprintf("%s: %s: %s", at, key, what))
	}
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// jsonPos is a 1-based line and byte column.
type jsonPos struct{ line, col int }

// maxJSONKeys bounds how many key positions jsonKeyPositions records.
const maxJSONKeys = 1 << 14

// jsonKeyPositions returns where each object key of data starts (its
// opening quote) and where each array element starts, by path: "hooks",
// "hooks.Stop", "hooks.Stop[0]", "hooks.Stop[0].hooks[1].type".
// A duplicated key keeps its first position. data must be valid JSON (a
// decoding error stops the walk; what was found is returned).
func jsonKeyPositions(data []byte) map[string]jsonPos {
	out := map[string]jsonPos{}
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return nil
		}
		if d == '[' {
			for i := 0; dec.More(); i++ {
				p := fmt.Sprintf("%s[%d]", path, i)
				if _, seen := out[p]; !seen && len(out) < maxJSONKeys {
					line, col := manifest.JSONPosition(data, valueStart(data, dec.InputOffset())+1)
					out[p] = jsonPos{line, col}
				}
				if err := walk(p); err != nil {
					return err
				}
			}
			_, err := dec.Token()
			return err
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := tok.(string)
			p := key
			if path != "" {
				p = path + "." + key
			}
			if _, seen := out[p]; !seen && len(out) < maxJSONKeys {
				line, col := manifest.JSONPosition(data, keyStart(data, dec.InputOffset())+1)
				out[p] = jsonPos{line, col}
			}
			if err := walk(p); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	_ = walk("")
	return out
}

// valueStart returns the offset of the first byte of the array element
// that follows offset from (after white space and a comma).
func valueStart(data []byte, from int64) int64 {
	i := min(max(from, 0), int64(len(data)))
	for i < int64(len(data)) && strings.IndexByte(" \t\r\n,", data[i]) >= 0 {
		i++
	}
	return i
}

// keyStart returns the offset of the opening quote of the JSON string that
// ends just before end.
func keyStart(data []byte, end int64) int64 {
	i := min(end, int64(len(data))) - 2 // the byte before the closing quote
	for ; i >= 0; i-- {
		if data[i] != '"' {
			continue
		}
		n := 0
		for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return i
		}
	}
	return 0
}

// claudeRuleTools maps Claude Code's names of the tools that have a
// harness counterpart under another name to the harness's (rule tool names
// match case-insensitively, so Bash, Read, Write, Edit, Grep and Glob need
// no entry).
var claudeRuleTools = map[string]string{"todowrite": "todo_write", "agent": "task", "bashoutput": "bash_output", "killshell": "kill_shell", "webfetch": "web_fetch", "websearch": "web_search", "exitplanmode": "exit_plan_mode"}

// claudeMissingTools are Claude Code's built-in tools the harness does not
// have: a rule naming one governs nothing, which a warning says.
var claudeMissingTools = []string{"notebookedit", "notebookread", "multiedit", "ls", "slashcommand"}

// claudePathTools are the tools whose rules take a path pattern in Claude
// Code (Read and Edit; the others are read for rules written with them).
var claudePathTools = []string{"read", "edit", "write", "grep", "glob", "multiedit", "notebookedit", "ls"}

// claudeRule rewrites one permission rule of a settings file whose project
// root (the directory holding .claude) is root into the permission plugin's
// syntax, with Claude Code's meaning: a path pattern `/p` is relative to
// root (the plugin reads `/p` as absolute, so it becomes root/p), `//p` is
// absolute, `~/p` is in the home directory, `./p` and `p` are relative to
// the working directory; Claude's tool names are mapped to the harness's
// (TodoWrite is todo_write). why is set when the rule names a tool the
// harness lacks (NotebookEdit, …): the rule is kept, and governs nothing.
func claudeRule(rule, root string) (out, why string) {
	src := strings.TrimSpace(rule)
	name, arg, hasArg := src, "", false
	if open := strings.IndexByte(src, '('); open > 0 && strings.HasSuffix(src, ")") {
		name, arg, hasArg = strings.TrimSpace(src[:open]), src[open+1:len(src)-1], true
	}
	lower := strings.ToLower(name)
	if slices.Contains(claudeMissingTools, lower) {
		why = fmt.Sprintf("names Claude Code's %s tool, which the harness does not have; the rule governs nothing", name)
	}
	if h, ok := claudeRuleTools[lower]; ok {
		name = h
	}
	if !hasArg {
		return name, why
	}
	if slices.Contains(claudePathTools, lower) && strings.HasPrefix(arg, "/") && !strings.HasPrefix(arg, "//") {
		arg = globEscape(filepath.ToSlash(root)) + arg
	}
	return name + "(" + arg + ")", why
}

// globEscape quotes the doublestar metacharacters of a literal path.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]{}\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// claudeModes maps Claude Code's permissions.defaultMode to the permission
// plugin's mode.
var claudeModes = map[string]string{"default": "default", "acceptEdits": "acceptEdits", "plan": "plan", "bypassPermissions": "bypass", "dontAsk": "dontAsk"}

// claudeSettingsPatch turns the Claude Code settings files into one patch
// layer over m: their hooks are added to the hooks row's (every file's hooks
// run, as in Claude Code), their permission rules to the permission row's
// lists, permissions.defaultMode (highest precedence wins) becomes the
// permission mode and the hooks' permission_mode. The patch's source, shown
// by `harness config`, names the files. nil when no file has anything to
// apply.
func (ld *loader) claudeSettingsPatch(m *manifest.Manifest, files []string) (*manifest.Patch, error) {
	hooksByEvent := map[string][]any{}
	var events []string
	var allow, ask, deny, dirs []string
	env := map[string]string{}
	mode, model := "", ""
	for _, f := range files {
		s, err := ld.readClaudeSettings(f)
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
			root := filepath.Dir(filepath.Dir(f)) // the directory holding .claude
			for _, l := range []struct {
				key  string
				list []string
				out  *[]string
			}{{"allow", p.Allow, &allow}, {"ask", p.Ask, &ask}, {"deny", p.Deny, &deny}} {
				for i, r := range l.list {
					rule, why := claudeRule(r, root)
					if why != "" {
						ld.claudeWarn(s.path, s.pos, fmt.Sprintf("permissions.%s[%d]", l.key, i), fmt.Sprintf("rule %q %s", r, why))
					}
					*l.out = append(*l.out, rule)
				}
			}
			if p.DefaultMode != "" {
				mode = claudeModes[p.DefaultMode] // readClaudeSettings dropped unknown modes
			}
			for _, d := range p.AdditionalDirectories {
				abs, err := ld.claudeDir(d)
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
		if s.Model != "" {
			if route, ok := claudeModelRoute(m, s.Model); ok {
				model = route
			} else {
				ld.claudeWarn(s.path, s.pos, "model", fmt.Sprintf("%q names no model route of the manifest (a provider, provider/model, or a model name or alias of one); the agent's model is unchanged", s.Model))
			}
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
		rows = append(rows, ld.rowFor(m, "hooks", cfg))
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
		rows = append(rows, ld.rowFor(m, "permission", cfg))
	}
	if model != "" && findEntry(m, "agent") != nil {
		rows = append(rows, map[string]any{"id": "agent", "config": map[string]any{"model": model}})
	}
	if row := ld.claudeSubprocessRow(m, files, env, dirs); row != nil {
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

// claudeModelRoute resolves a settings file's `model` against the model
// routes the manifest configures (rows with a `provider` and `models`, as
// llm-openai's): a provider name, "provider/model" of one of its models or
// aliases (any model when it sets anyModel), or a bare model name or alias
// that exactly one provider has. Claude's own names (opus, sonnet, …) name
// a route only when a row configures them.
func claudeModelRoute(m *manifest.Manifest, model string) (string, bool) {
	type route struct {
		provider string
		names    []string
		any      bool
	}
	var routes []route
	for _, en := range m.Flatten() {
		if en.Config == nil || en.Disabled {
			continue
		}
		var cfg struct {
			Provider string `yaml:"provider"`
			AnyModel bool   `yaml:"anyModel"`
			Models   []struct {
				Name    string `yaml:"name"`
				Aliases []struct {
					Name string `yaml:"name"`
				} `yaml:"aliases"`
			} `yaml:"models"`
		}
		if en.Config.Decode(&cfg) != nil || cfg.Provider == "" {
			continue
		}
		r := route{provider: cfg.Provider, any: cfg.AnyModel}
		for _, md := range cfg.Models {
			r.names = append(r.names, md.Name)
			for _, a := range md.Aliases {
				r.names = append(r.names, a.Name)
			}
		}
		routes = append(routes, r)
	}
	prov, name, hasName := strings.Cut(model, "/")
	var found []string
	for _, r := range routes {
		switch {
		case !hasName && r.provider == model:
			return model, true
		case hasName && r.provider == prov && name != "" && (r.any || slices.Contains(r.names, name)):
			return model, true
		case !hasName && slices.Contains(r.names, model):
			found = append(found, r.provider+"/"+model)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return "", false
}

// claudeDir makes a settings directory absolute: ~/ against $HOME, a
// relative path against the working directory.
func (ld *loader) claudeDir(d string) (string, error) {
	if d == "" {
		return "", errors.New("empty path")
	}
	if rest, ok := strings.CutPrefix(d, "~/"); ok || d == "~" {
		home, found := ld.LookupEnv("HOME")
		if !found || home == "" {
			return "", fmt.Errorf("%s: HOME is not set", d)
		}
		d = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(d) {
		wd, err := ld.workDir()
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
func (ld *loader) claudeSubprocessRow(m *manifest.Manifest, files []string, env map[string]string, dirs []string) map[string]any {
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
			ld.Logger().Warn("claude settings: env entries not passed to children (credential-shaped or HARNESS_ names)", "names", strings.Join(dropped, ","), "files", strings.Join(files, ", "))
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
func (ld *loader) rowFor(m *manifest.Manifest, id string, cfg map[string]any) map[string]any {
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
