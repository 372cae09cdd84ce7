package tools

import (
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// quote writes s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// gen draws choices from fuzz bytes (0 once they run out).
type gen struct {
	b []byte
	i int
}

func (g *gen) next(n int) int {
	if g.i >= len(g.b) || n <= 0 {
		return 0
	}
	g.i++
	return int(g.b[g.i-1]) % n
}

func (g *gen) pick(pool []string) string { return pool[g.next(len(pool))] }

var (
	genNumbers = []string{"0", "1", "-1", "2", "3", "2.5", "1.0", "1e2", "1E0", "-0", "0.1", "100", "0.30000000000000004",
		"9007199254740992", "9007199254740993", "12345678901234567890", "-12345678901234567890", "1e-400", "1e400",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "5"}
	genBounds = []string{"0", "1", "-1", "2", "2.5", "1.0", "1e2", "-0", "0.1", "100", "9007199254740993",
		"12345678901234567890", "9223372036854775807", "-9223372036854775808", "5", "0.30000000000000004"}
	genStrings = []string{"", "a", "ab", "abc", "héllo", "é", "😀😀", "5", "-3", "1.5", "007", "x\u0000", "content", "files", "1e2", "9223372036854775808"}
	genKeys    = []string{"a", "b", "c", "é", "limit"}
	genTypes   = []string{"null", "boolean", "number", "integer", "string", "array", "object"}
)

// genSchema writes a random schema from the fast path's keyword subset.
func (g *gen) genSchema(depth int) string {
	switch g.next(12) {
	case 0:
		return "true"
	case 1:
		if depth > 0 {
			return "false"
		}
	}
	var kw []string
	add := func(k, v string) { kw = append(kw, quote(k)+":"+v) }
	switch g.next(4) {
	case 0: // no type
	case 1, 2:
		add("type", quote(g.pick(genTypes)))
	case 3:
		add("type", "["+strings.Join(g.distinct(genTypes, 1+g.next(3)), ",")+"]")
	}
	for range g.next(6) {
		switch g.next(20) {
		case 0:
			add("minimum", g.pick(genBounds))
		case 1:
			add("maximum", g.pick(genBounds))
		case 2:
			add("exclusiveMinimum", g.pick(genBounds))
		case 3:
			add("exclusiveMaximum", g.pick(genBounds))
		case 4:
			add("minLength", strconv.Itoa(g.next(4)))
		case 5:
			add("maxLength", strconv.Itoa(g.next(4)))
		case 6:
			var vs []string
			for range 1 + g.next(4) {
				vs = append(vs, g.genScalar())
			}
			add("enum", "["+strings.Join(vs, ",")+"]")
		case 7:
			add("const", g.genScalar())
		case 8:
			if depth < 3 {
				add("items", g.genSchema(depth+1))
			}
		case 9:
			add("minItems", strconv.Itoa(g.next(3)))
		case 10:
			add("maxItems", strconv.Itoa(g.next(3)))
		case 11:
			add("uniqueItems", "false")
		case 12, 13:
			if depth < 3 {
				var ps []string
				for range g.next(4) {
					ps = append(ps, quote(g.pick(genKeys))+":"+g.genSchema(depth+1))
				}
				add("properties", "{"+strings.Join(ps, ",")+"}")
			}
		case 14:
			add("required", "["+strings.Join(g.distinct(genKeys, g.next(3)), ",")+"]")
		case 15:
			switch g.next(3) {
			case 0:
				add("additionalProperties", "false")
			case 1:
				add("additionalProperties", "true")
			default:
				if depth < 3 {
					add("additionalProperties", g.genSchema(depth+1))
				}
			}
		case 16:
			add("format", quote(g.pick([]string{"email", "date", "uri", "ipv4", "regex"})))
		case 17:
			add("description", `"d"`)
			add("title", `"t"`)
		case 18:
			add("default", g.genValue(1))
			add("examples", "["+g.genValue(1)+"]")
		case 19:
			add("deprecated", "true")
			add("readOnly", "false")
			add("$comment", `"c"`)
		}
	}
	return "{" + strings.Join(kw, ",") + "}"
}

// genDraft may add a root $schema to an object schema doc; asserted reports
// whether that draft asserts "format" (drafts before 2019-09).
func (g *gen) genDraft(doc string) (out string, asserted bool) {
	if !strings.HasPrefix(doc, "{") {
		return doc, false
	}
	drafts := []struct {
		uri      string
		asserted bool
	}{{"", false}, {"https://json-schema.org/draft/2020-12/schema", false}, {"https://json-schema.org/draft/2019-09/schema", false},
		{"http://json-schema.org/draft-07/schema#", true}, {"http://json-schema.org/draft-06/schema#", true}}
	d := drafts[g.next(len(drafts))]
	if d.uri == "" {
		return doc, false
	}
	sep := ","
	if doc == "{}" {
		sep = ""
	}
	return `{"$schema":` + quote(d.uri) + sep + doc[1:], d.asserted
}

// distinct picks up to n different entries of pool, quoted.
func (g *gen) distinct(pool []string, n int) []string {
	seen := map[string]bool{}
	var out []string
	for range n {
		if p := g.pick(pool); !seen[p] {
			seen[p] = true
			out = append(out, quote(p))
		}
	}
	return out
}

func (g *gen) genScalar() string {
	switch g.next(5) {
	case 0:
		return "null"
	case 1:
		return []string{"true", "false"}[g.next(2)]
	case 2:
		return g.pick(genNumbers)
	}
	return quote(g.pick(genStrings))
}

// genValue writes a random JSON value from small pools, so that it often
// satisfies a generated schema.
func (g *gen) genValue(depth int) string {
	k := g.next(8)
	if depth > 3 && k >= 6 {
		k = 0
	}
	switch k {
	case 6:
		var es []string
		for range g.next(4) {
			es = append(es, g.genValue(depth+1))
		}
		return "[" + strings.Join(es, ",") + "]"
	case 7, 5:
		var ps []string
		for range g.next(5) {
			ps = append(ps, quote(g.pick(genKeys))+":"+g.genValue(depth+1))
		}
		return "{" + strings.Join(ps, ",") + "}"
	}
	return g.genScalar()
}

// FuzzValidateFastPath: over random schemas of the fast path's keyword subset
// and random arguments, whenever the fast check accepts, the library accepts
// too, and check (the only thing Execute takes from validation: normalized
// text, coercion notes, violations) returns exactly the same with and without
// the fast check.
func FuzzValidateFastPath(f *testing.F) {
	f.Add([]byte{3, 2, 4, 12, 1, 4, 5, 6, 7, 8, 9, 10}, `{"a":1}`)
	f.Add([]byte("\x02\x05\x0c\x03\x01\x04\x0e\x02"), `{"limit":"5"}`)
	f.Add([]byte{}, "")
	f.Fuzz(func(t *testing.T, data []byte, raw string) {
		g := &gen{b: data}
		schema := g.genSchema(0)
		doc, asserted := g.genDraft(schema)
		v, err := compileSchema([]byte(doc))
		if err != nil && doc != schema {
			t.Skipf("not a valid schema of the draft it names: %v", err) // draft-07's metaschema wants distinct enum items
		}
		if err != nil {
			t.Fatalf("generated schema %s does not compile: %v", doc, err)
		}
		// Under a draft that asserts format a schema using it has no fast
		// check (TestFastCheckCoverage); the text may hold "format" that a
		// later duplicate key overrides, so here only the checks below count.
		if asserted && strings.Contains(doc, `"format"`) && v.fast == nil {
			return
		}
		if v.fast == nil {
			t.Fatalf("no fast check for a schema of the supported subset: %s", doc)
		}
		slow := *v
		slow.fast = nil
		for _, args := range []string{g.genValue(0), g.genValue(0), raw, " " + strings.ReplaceAll(g.genValue(0), ",", " ,\n\t")} {
			if inst, err := parseJSON(args); err == nil && v.fast.accepts(inst) {
				if err := v.schema.Validate(inst); err != nil {
					t.Fatalf("schema %s: the fast check accepts %s, the library rejects it: %v", doc, args, err)
				}
			}
			if v.fast.acceptsText(args) {
				inst, err := parseJSONStd(args)
				if err != nil {
					t.Fatalf("schema %s: the text check accepts %q, encoding/json rejects it: %v", doc, args, err)
				}
				if err := v.schema.Validate(inst); err != nil {
					t.Fatalf("schema %s: the text check accepts %s, the library rejects it: %v", doc, args, err)
				}
			}
			n1, c1, vs1 := v.check(args)
			n2, c2, vs2 := slow.check(args)
			// The library orders some violations by map iteration (several
			// unknown keys), so they compare as sets.
			if n1 != n2 || !reflect.DeepEqual(c1, c2) || !reflect.DeepEqual(sortedViolations(vs1), sortedViolations(vs2)) {
				t.Fatalf("schema %s args %s: with the fast check (%q %q %v), without (%q %q %v)", doc, args, n1, c1, vs1, n2, c2, vs2)
			}
		}
	})
}

func sortedViolations(vs []Violation) []string {
	if vs == nil {
		return nil
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	sort.Strings(out)
	return out
}

// The fast check is built for what Define generates and for simple raw
// schemas, and not for anything it does not understand.
func TestFastCheckCoverage(t *testing.T) {
	t.Parallel()
	params, err := schemaOf(reflect.TypeFor[tenFields]())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		doc  string
		want bool
	}{
		{string(params), true},
		{string(emptyObjectSchema), true},
		{`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"integer"}}}}`, true},
		{`{"type":"string","format":"email"}`, true},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"string","format":"email"}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"s":{"type":"string","format":"email"}}}`, false},
		// What MCP servers' generators emit (server-everything's echo).
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"message":{"type":"string","description":"Message to echo"}},"required":["message"]}`, true},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"integer","minimum":1}}}`, true},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","type":"number","minimum":1,"exclusiveMinimum":true}`, false},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"string","format":"email"}`, true},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"string","format":"email"}`, true},
		{`{"type":"object","properties":{"a":{"$schema":"http://json-schema.org/draft-07/schema#","type":"string"}}}`, false},
		{`{"$defs":{"x":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/x"}}}`, false},
		{`{"type":"string","pattern":"^a"}`, false},
		{`{"type":"array","uniqueItems":true}`, false},
		{`{"type":"number","multipleOf":2}`, false},
		{`{"enum":[[1]]}`, false},
		{`{"anyOf":[{"type":"string"}]}`, false},
		{`{"type":"integer","minimum":1e400}`, false},
	} {
		v, err := compileSchema([]byte(tc.doc))
		if err != nil {
			t.Fatalf("%s: %v", tc.doc, err)
		}
		if got := v.fast != nil; got != tc.want {
			t.Errorf("%s: fast check built = %v, want %v", tc.doc, got, tc.want)
		}
	}
}

// Doubtful values defer to the library (accepts is false) even when valid.
func TestFastCheckDefers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ doc, args string }{
		{`{"type":"integer"}`, `1.0`},
		{`{"type":"integer"}`, `1e2`},
		{`{"type":"integer"}`, `-0`},
		{`{"type":"number","minimum":0.1}`, `0.1`},
		{`{"type":"number","maximum":9007199254740993}`, `9007199254740992.0`},
		{`{"enum":[1]}`, `1.0`},
		{`{"type":"integer","minimum":1}`, `"5"`},
		{`{"type":"object","properties":{"limit":{"type":"integer"}}}`, `{"limit":"5"}`},
	} {
		v, err := compileSchema([]byte(tc.doc))
		if err != nil || v.fast == nil {
			t.Fatalf("%s: %v (fast %v)", tc.doc, err, v != nil && v.fast != nil)
		}
		inst, err := parseJSON(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if v.fast.accepts(inst) {
			t.Errorf("%s: the fast check accepts %s, want a deferral", tc.doc, tc.args)
		}
	}
	// Text the raw-text check is unsure of goes to the parser (and is then
	// accepted by the tree check or the library).
	obj, err := compileSchema([]byte(`{"type":"object","properties":{"a":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{`{"a":"x\u0041"}`, `{"\u0061":"x"}`, "{\"a\":\"\xff\"}", "\ufeff{}", `{"a":"x"}}`,
		`{"a":"x",}`, `{"a":01}`, `{"a":"x"} {}`, strings.Repeat(`{"b":`, 40) + "1" + strings.Repeat("}", 40)} {
		if obj.fast.acceptsText(raw) {
			t.Errorf("the text check accepts %q, want a deferral", raw)
		}
	}
	v, err := compileSchema([]byte(`{"type":"integer","minimum":-9223372036854775808,"maximum":9223372036854775807}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{"-9223372036854775808", "9223372036854775807", "0"} {
		inst, _ := parseJSON(ok)
		if !v.fast.accepts(inst) || !v.fast.acceptsText(ok) {
			t.Errorf("exact int64 bound: %s deferred", ok)
		}
	}
	inst, _ := parseJSON(`{"path":"a","pattern":"p","mode":"files"}`)
	if vv, _ := compileSchema([]byte(`{"type":"object","required":["path"],"properties":{"path":{"type":"string"}}}`)); !vv.fast.accepts(inst) ||
		!vv.fast.acceptsText(` {"path":"a","pattern":"p","mode":"files"}`+"\n") {
		t.Error("a valid object deferred")
	}
}
