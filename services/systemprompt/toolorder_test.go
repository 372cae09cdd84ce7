package systemprompt

import (
	"encoding/json"
	"slices"
	"testing"
)

func schemas(names ...string) []ToolSchema {
	out := make([]ToolSchema, len(names))
	for i, n := range names {
		out[i] = ToolSchema{Name: n, Parameters: json.RawMessage(`{}`)}
	}
	return out
}

func toolNames(ts []ToolSchema) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

func knownSet(names ...string) map[string]struct{} {
	m := map[string]struct{}{}
	for _, n := range names {
		m[n] = struct{}{}
	}
	return m
}

func TestValidateToolOrder(t *testing.T) {
	cases := []struct {
		order []string
		msg   string
	}{
		{order: nil},
		{order: []string{ToolOrderRest}},
		{order: []string{"bash", ToolOrderRest, "read"}},
		{order: []string{}, msg: `toolOrder must contain the "<unlisted-tools>" rest entry (where unlisted tools are inserted)`},
		{order: []string{"bash"}, msg: `toolOrder must contain the "<unlisted-tools>" rest entry (where unlisted tools are inserted)`},
		{order: []string{"bash", ToolOrderRest, "bash"}, msg: `toolOrder lists "bash" more than once`},
		{order: []string{ToolOrderRest, ToolOrderRest}, msg: `toolOrder lists "<unlisted-tools>" more than once`},
	}
	for _, tc := range cases {
		err := validateToolOrder(tc.order)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.msg {
			t.Errorf("validateToolOrder(%q) = %q, want %q", tc.order, got, tc.msg)
		}
	}
}

func TestOrderTools(t *testing.T) {
	cases := []struct {
		name  string
		tools []string
		order []string
		known []string // nil: the tool names
		want  []string
		msg   string
	}{
		{name: "no order sorts by name", tools: []string{"read", "bash", "Z", "edit"}, want: []string{"Z", "bash", "edit", "read"}},
		{name: "listed first, rest sorted", tools: []string{"read", "grep", "bash", "edit"}, order: []string{"bash", ToolOrderRest},
			want: []string{"bash", "edit", "grep", "read"}},
		{name: "rest in the middle", tools: []string{"read", "grep", "bash", "edit"}, order: []string{"read", ToolOrderRest, "bash"},
			want: []string{"read", "edit", "grep", "bash"}},
		{name: "known but hidden is absent", tools: []string{"read"}, known: []string{"read", "bash"}, order: []string{"bash", ToolOrderRest},
			want: []string{"read"}},
		{name: "one unknown", tools: []string{"read", "bash"}, order: []string{"nope", ToolOrderRest},
			msg: `toolOrder lists unregistered tool "nope"; known tools: bash, read`},
		{name: "two unknown, none known", order: []string{"b", ToolOrderRest, "a"},
			msg: `toolOrder lists unregistered tools "b", "a"; known tools: (none)`},
		{name: "reserved name", tools: []string{"bash", ToolOrderRest},
			msg: `tool provider returned reserved tool name "<unlisted-tools>" (reserved for toolOrder's rest entry)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			known := tc.known
			if known == nil {
				known = tc.tools
			}
			got, err := orderTools(schemas(tc.tools...), tc.order, knownSet(known...))
			if tc.msg != "" {
				if err == nil || err.Error() != tc.msg {
					t.Fatalf("err = %v, want %s", err, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if names := toolNames(got); !slices.Equal(names, tc.want) {
				t.Fatalf("got %q, want %q", names, tc.want)
			}
		})
	}
}

func TestCompareCodeUnitsMatchesUTF16(t *testing.T) {
	// U+1F600 (surrogates D83D DE00) sorts before U+FF5E in UTF-16 but after it in UTF-8.
	cases := []struct {
		a, b string
		sign int
	}{
		{"a", "b", -1}, {"b", "a", 1}, {"a", "a", 0}, {"a", "ab", -1}, {"ab", "a", 1},
		{"B", "a", -1}, {"x\U0001F600", "x\uFF5E", -1}, {"\uFF5E", "\U0001F600", 1},
		{"é", "z", 1}, {"\U0001F600", "\U0001F601", -1},
	}
	for _, tc := range cases {
		got := compareCodeUnits(tc.a, tc.b)
		if sign(got) != tc.sign {
			t.Errorf("compareCodeUnits(%q, %q) = %d, want sign %d", tc.a, tc.b, got, tc.sign)
		}
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}
