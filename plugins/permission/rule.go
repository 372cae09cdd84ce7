package permission

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Rule is one parsed permission rule: `tool` (every call of the tool) or
// `tool(argument-pattern)`. The tool part is matched case-insensitively and
// may be a glob (`mcp__*`), so Claude Code's `Bash(git status)` and ours
// `bash(git status)` are the same rule. What the argument pattern is matched
// against depends on the kind of tool (see [Policy]):
//   - shell tools: the command, split into its simple commands; a text glob
//     where `*` also matches `/` and spaces;
//   - file tools: the path argument, a doublestar glob relative to the working
//     directory unless it starts with `/` (or Claude Code's `//`) or `~/`;
//   - other tools: a text glob over the arguments as compact JSON with sorted keys.
type Rule struct {
	source  string
	tool    textGlob
	hasArg  bool
	arg     string
	argText textGlob
	// redirText is argText with spaces around redirection operators removed;
	// set only when the pattern names a redirection (contains `>` or `<`).
	redirText *textGlob
	// options is the option-aware reading of a shell pattern that names
	// options (deny and ask rules only; nil otherwise).
	options *optionPattern
	// unsandboxed is set for an allow rule written with the `unsandboxed`
	// suffix (`bash(make deploy) unsandboxed`): only such a rule covers a
	// shell call that asks to run outside the sandbox.
	unsandboxed bool
}

// unsandboxedSuffix is the word after a rule's closing parenthesis that
// lets an allow rule cover a call that asks to leave the sandbox.
const unsandboxedSuffix = "unsandboxed"

// redirSpacing matches a redirection operator with the spaces around it.
var redirSpacing = regexp.MustCompile(`\s*([0-9]*(?:&>>?|>[>|&]?|<<<|<<-?|<[&>]?))\s*`)

// squeezeRedirections removes the spaces around redirection operators, so
// `go test > out.log` and the parser's `go test >out.log` compare equal.
func squeezeRedirections(s string) string {
	return strings.TrimSpace(redirSpacing.ReplaceAllString(s, " $1"))
}

// ParseRule parses one rule. Errors name the problem: an empty rule, an empty
// tool name, unbalanced parentheses, an empty argument pattern, or an invalid
// doublestar pattern.
func ParseRule(s string) (Rule, error) {
	src := strings.TrimSpace(s)
	if src == "" {
		return Rule{}, fmt.Errorf("empty rule")
	}
	body, unsandboxed := src, false
	if head, ok := strings.CutSuffix(src, unsandboxedSuffix); ok {
		// `bash(make deploy) unsandboxed` or `bash unsandboxed`; a tool
		// whose name ends in the word is no suffix.
		if trimmed := strings.TrimRight(head, " \t"); trimmed != head && trimmed != "" {
			body, unsandboxed = trimmed, true
		}
	}
	r, err := parseRuleBody(body)
	if err != nil {
		return Rule{}, err
	}
	r.source, r.unsandboxed = src, unsandboxed
	return r, nil
}

// parseRuleBody parses a rule without its `unsandboxed` suffix.
func parseRuleBody(src string) (Rule, error) {
	name, arg, hasArg := src, "", false
	if open := strings.IndexByte(src, '('); open >= 0 {
		if !strings.HasSuffix(src, ")") {
			return Rule{}, fmt.Errorf("rule %q: missing closing parenthesis", src)
		}
		name, arg, hasArg = strings.TrimSpace(src[:open]), src[open+1:len(src)-1], true
		if strings.TrimSpace(arg) == "" {
			return Rule{}, fmt.Errorf("rule %q: empty argument pattern (write %q for every call)", src, name)
		}
	} else if strings.ContainsAny(src, ")") {
		return Rule{}, fmt.Errorf("rule %q: unbalanced parenthesis", src)
	}
	if name == "" || strings.ContainsAny(name, " \t") {
		return Rule{}, fmt.Errorf("rule %q: tool name must be one word", src)
	}
	r := Rule{source: src, tool: compileTextGlob(strings.ToLower(name)), hasArg: hasArg, arg: arg}
	if hasArg {
		r.argText = compileTextGlob(arg)
		if strings.ContainsAny(arg, "<>") {
			g := compileTextGlob(squeezeRedirections(arg))
			r.redirText = &g
		}
		r.options = parseOptionPattern(arg)
		if pat := filePattern(arg, ""); !doublestar.ValidatePattern(pat) {
			return Rule{}, fmt.Errorf("rule %q: invalid path pattern %q", src, arg)
		}
	}
	return r, nil
}

// String returns the rule as written.
func (r Rule) String() string { return r.source }

// matchesTool reports whether the rule names tool: by its name (a
// case-insensitive glob), or, for a rule that names an MCP server without a
// tool (`mcp__github`, Claude Code's server-level rule), any tool of that
// server (`mcp__github__create_issue`), as `mcp__github__*` does.
func (r Rule) matchesTool(tool string) bool {
	t := strings.ToLower(tool)
	if r.tool.match(t) {
		return true
	}
	server, ok := r.mcpServer()
	return ok && strings.HasPrefix(t, server+"__") && len(t) > len(server)+2
}

// mcpServer returns the rule's tool part when it names a whole MCP server:
// `mcp__NAME` with no argument pattern, no glob metacharacter and no `__`
// after the server name.
func (r Rule) mcpServer() (string, bool) {
	name := r.tool.source
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok || r.hasArg || rest == "" || strings.Contains(rest, "__") || strings.ContainsAny(rest, `*?\`) {
		return "", false
	}
	return name, true
}

// matchText matches the argument pattern against free text (shell command
// forms, argument JSON). A rule without an argument pattern matches anything.
func (r Rule) matchText(s string) bool { return !r.hasArg || r.argText.match(s) }

// matchPath matches the argument pattern against one absolute, cleaned path.
// A relative pattern (optionally `./`-prefixed) matches only paths inside cwd,
// compared relative to it; `/…` patterns match the absolute path; `~/…`
// patterns are expanded against home.
func (r Rule) matchPath(abs, cwd, home string) bool {
	if !r.hasArg {
		return true
	}
	pat := filePattern(r.arg, home)
	if filepath.IsAbs(pat) {
		ok, _ := doublestar.Match(filepath.ToSlash(pat), filepath.ToSlash(abs))
		return ok
	}
	rel, err := filepath.Rel(cwd, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return false
	}
	ok, _ := doublestar.Match(pat, filepath.ToSlash(rel))
	return ok
}

// filePattern normalizes a path pattern: `//` starts an absolute path (as
// in Claude Code's rules: `//etc/**` is `/etc/**`), `~/` expands against
// home (when known), and a leading `./` is dropped.
func filePattern(arg, home string) string {
	switch {
	case strings.HasPrefix(arg, "//"):
		return "/" + strings.TrimLeft(arg, "/")
	case strings.HasPrefix(arg, "~/") && home != "":
		return filepath.Join(home, arg[2:])
	case strings.HasPrefix(arg, "./"):
		return strings.TrimPrefix(arg, "./")
	}
	return arg
}

// parseRules parses a list of rules; the error names the list and the index.
func parseRules(list string, srcs []string) ([]Rule, error) {
	rules := make([]Rule, 0, len(srcs))
	for i, s := range srcs {
		r, err := ParseRule(s)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", list, i, err)
		}
		if r.unsandboxed && list != "allow" {
			return nil, fmt.Errorf("%s[%d]: rule %q: %q belongs only to allow rules (it lets an allow rule cover a call that asks to run outside the sandbox)", list, i, s, unsandboxedSuffix)
		}
		rules = append(rules, r)
	}
	return rules, nil
}
