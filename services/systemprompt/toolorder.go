package systemprompt

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// ToolOrderRest is the reserved toolOrder entry marking where tools not
// listed by name are inserted (sorted by name). A tool provider must never
// return a schema with this name.
const ToolOrderRest = "<unlisted-tools>"

// validateToolOrder checks the load-time shape of a toolOrder list (C7): no
// duplicates and exactly one ToolOrderRest entry. A nil list (option
// absent) is valid; an empty list lacks the rest entry.
func validateToolOrder(order []string) error {
	if order == nil {
		return nil
	}
	seen := make(map[string]bool, len(order))
	for _, name := range order {
		if seen[name] {
			return fmt.Errorf("toolOrder lists \"%s\" more than once", name)
		}
		seen[name] = true
	}
	if !seen[ToolOrderRest] {
		return fmt.Errorf("toolOrder must contain the \"%s\" rest entry (where unlisted tools are inserted)", ToolOrderRest)
	}
	return nil
}

// orderTools applies toolOrder to the collected schemas (C7). Without an
// order, tools are sorted by code-unit name (stable). With one, every listed
// name must be in known (the providers' pre-restriction universe); listed
// tools appear at their positions and unlisted ones, sorted, at the rest
// entry. A listed name that is known but not visible is simply absent.
// tools is reordered in place and may be returned.
func orderTools(tools []ToolSchema, order []string, known map[string]struct{}) ([]ToolSchema, error) {
	for _, t := range tools {
		if t.Name == ToolOrderRest {
			return nil, fmt.Errorf("tool provider returned reserved tool name \"%s\" (reserved for toolOrder's rest entry)", ToolOrderRest)
		}
	}
	if order == nil {
		return sortTools(tools), nil
	}
	var unknown []string
	for _, name := range order {
		if _, ok := known[name]; !ok && name != ToolOrderRest {
			unknown = append(unknown, "\""+name+"\"")
		}
	}
	if len(unknown) > 0 {
		names := make([]string, 0, len(known))
		for name := range known {
			names = append(names, name)
		}
		plural := ""
		if len(unknown) > 1 {
			plural = "s"
		}
		return nil, fmt.Errorf("toolOrder lists unregistered tool%s %s; known tools: %s",
			plural, strings.Join(unknown, ", "), nameList(names))
	}
	listed := make(map[string]struct{}, len(order))
	for _, name := range order {
		listed[name] = struct{}{}
	}
	var rest []ToolSchema
	for _, t := range tools {
		if _, ok := listed[t.Name]; !ok {
			rest = append(rest, t)
		}
	}
	rest = sortTools(rest)
	out := make([]ToolSchema, 0, len(tools))
	for _, name := range order {
		if name == ToolOrderRest {
			out = append(out, rest...)
			continue
		}
		for _, t := range tools {
			if t.Name == name {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// sortTools returns tools stably sorted by code-unit name. It sorts a
// permutation instead of moving the schemas (cheaper: no struct copies with
// write barriers), and returns tools itself when already sorted.
func sortTools(tools []ToolSchema) []ToolSchema {
	sorted := true
	for i := 1; i < len(tools) && sorted; i++ {
		sorted = compareCodeUnits(tools[i-1].Name, tools[i].Name) <= 0
	}
	if sorted {
		return tools
	}
	perm := make([]int32, len(tools))
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortFunc(perm, func(a, b int32) int {
		if c := compareCodeUnits(tools[a].Name, tools[b].Name); c != 0 {
			return c
		}
		return int(a - b) // stable: same names keep collection order
	})
	out := make([]ToolSchema, len(tools))
	for i, j := range perm {
		out[i] = tools[j]
	}
	return out
}

// compareCodeUnits orders strings by their UTF-16 code units, the order dsh
// (JavaScript) uses for names, so ties break identically on every machine.
// It equals byte order except when a supplementary character meets one in
// U+E000–U+FFFF. Invalid UTF-8 bytes compare as U+FFFD.
func compareCodeUnits(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return len(a) - len(b) // one is a prefix of the other (or equal)
	}
	if a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf {
		return int(a[i]) - int(b[i])
	}
	// Back up to the start of the differing character.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	ua, ub := firstUnit(ra), firstUnit(rb)
	if ua != ub {
		return ua - ub
	}
	return int(ra) - int(rb) // same high surrogate: low units order like runes
}

// firstUnit returns the first UTF-16 code unit of r.
func firstUnit(r rune) int {
	if r >= 0x10000 {
		return 0xD800 + int((r-0x10000)>>10)
	}
	return int(r)
}
