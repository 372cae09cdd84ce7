package tools_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
)

const b15Schema = `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`

type b15Args struct {
	Path  string `json:"path"`
	Limit int    `json:"limit,omitempty" jsonschema:"minimum=1"`
}

// B15 through both definition forms: raw schema and generated from a struct.
func TestB15QuotedNumbersUnknownKeysMissingRequired(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var rawCalls, typedCalls atomic.Int64
	var gotRaw string
	var gotLimit atomic.Int64
	e.register(
		tools.DefineRaw("raw_read", "read", json.RawMessage(b15Schema), func(_ context.Context, _ *tools.Execution, args json.RawMessage) (any, error) {
			rawCalls.Add(1)
			gotRaw = string(args)
			return "ok", nil
		}),
		tools.DefineRaw("lazy_read", "read", json.RawMessage(b15Schema), func(_ context.Context, _ *tools.Execution, args json.RawMessage) (any, error) {
			rawCalls.Add(1)
			gotRaw = string(args)
			return "ok", nil
		}, tools.WithLazySchema()),
		tools.Define("typed_read", "read", func(_ context.Context, _ *tools.Execution, a b15Args) (string, error) {
			typedCalls.Add(1)
			gotLimit.Store(int64(a.Limit))
			return "ok", nil
		}),
	)
	cases := []struct {
		args string
		want string // "" = success
	}{
		{`{"path":"a.txt","limit":"5"}`, ""},
		{`{"path":"a.txt","limit":"5.5"}`, `invalid arguments: /limit: type: must be an integer, got string "5.5"`},
		{`{"path":"a.txt","limit":"abc"}`, `invalid arguments: /limit: type: must be an integer, got string "abc"`},
		{`{"path":"a.txt","limit":true}`, `invalid arguments: /limit: type: must be an integer, got boolean true`},
		{`{"path":"a.txt","limit":""}`, `invalid arguments: /limit: type: must be an integer, got string ""`},
		{`{"path":"a.txt","limit":0}`, `invalid arguments: /limit: minimum: must be >= 1, got 0`},
		{`{"path":"a.txt","line_limit":5}`, `invalid arguments: /line_limit: additionalProperties: unknown key "line_limit" (allowed keys: limit, path)`},
		{`{"limit":5}`, `invalid arguments: /path: required: missing required property "path"`},
		{`{"path":123}`, `invalid arguments: /path: type: must be a string, got number 123`},
		{`[1,2]`, `invalid arguments: (root): type: must be an object, got array`},
		{`{"path":`, `invalid arguments: (root): json: arguments are not valid JSON: unexpected EOF`},
		{`{"path":"a"}}`, `invalid arguments: (root): json: arguments are not valid JSON: unexpected data after the JSON value`},
		{`{"path":"a"} {}`, `invalid arguments: (root): json: arguments are not valid JSON: unexpected data after the JSON value`},
	}
	for _, tool := range []string{"raw_read", "lazy_read", "typed_read"} {
		for _, tc := range cases {
			before := rawCalls.Load() + typedCalls.Load()
			o := e.exec(tool, tc.args)
			ran := rawCalls.Load()+typedCalls.Load() > before
			if tc.want == "" {
				if o.IsError || text(o) != "ok" || !ran {
					t.Errorf("%s %s: got %+v (ran %v), want success", tool, tc.args, o, ran)
				}
				continue
			}
			if !o.IsError || o.ErrorMessage != tc.want || text(o) != "Error: "+tc.want || code(o) != tools.CodeInvalidArgs || o.Error.Name != tools.NameToolArgs {
				t.Errorf("%s %s:\n got %q (%+v)\nwant %q", tool, tc.args, o.ErrorMessage, o.Error, tc.want)
			}
			if ran {
				t.Errorf("%s %s: the body ran on invalid arguments", tool, tc.args)
			}
		}
	}
	if gotRaw != `{"limit":5,"path":"a.txt"}` {
		t.Errorf("raw body got %s, want the coerced arguments", gotRaw)
	}
	if gotLimit.Load() != 5 {
		t.Errorf("typed body got limit %d, want 5", gotLimit.Load())
	}
}

type rangeArgs struct {
	Timeout float64 `json:"timeoutMs,omitempty"`
	Count   int32   `json:"count,omitempty"`
	Nested  struct {
		Limit uint8 `json:"limit,omitempty"`
	} `json:"nested"`
}

// A number the schema accepts but the tool's Go field cannot hold is an
// INVALID_ARGS violation at that field's path, not encoding/json's text.
func TestNumbersTheGoTypeCannotHold(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var ran atomic.Int64
	e.register(tools.Define("ranged", "ranged", func(_ context.Context, _ *tools.Execution, a rangeArgs) (string, error) {
		ran.Add(1)
		return "ok", nil
	}))
	for _, tc := range []struct{ args, want string }{
		{`{"timeoutMs":1e308,"nested":{}}`, ""},
		{`{"timeoutMs":1e400,"nested":{}}`, `invalid arguments: /timeoutMs: range: must be between -1.7976931348623157e+308 and 1.7976931348623157e+308 for float64, got 1e400`},
		{`{"count":3000000000,"nested":{}}`, `invalid arguments: /count: range: must be between -2147483648 and 2147483647 for int32, got 3000000000`},
		{`{"nested":{"limit":256}}`, `invalid arguments: /nested/limit: range: must be between 0 and 255 for uint8, got 256`},
	} {
		before := ran.Load()
		o := e.exec("ranged", tc.args)
		if tc.want == "" {
			if o.IsError || ran.Load() == before {
				t.Errorf("%s: %+v, want success", tc.args, o)
			}
			continue
		}
		if !o.IsError || o.ErrorMessage != tc.want || code(o) != tools.CodeInvalidArgs || ran.Load() != before {
			t.Errorf("%s:\n got %q (%v)\nwant %q", tc.args, o.ErrorMessage, code(o), tc.want)
		}
	}
}

type wholeArgs struct {
	Count int              `json:"count,omitempty"`
	Small int32            `json:"small,omitempty"`
	Limit uint8            `json:"limit,omitempty"`
	Ratio float32          `json:"ratio,omitempty"`
	Items []wholeItem      `json:"items,omitempty"`
	M     map[string]uint8 `json:"m,omitempty"`
}

type wholeItem struct {
	Limit uint8 `json:"limit"`
}

// A whole number written as a float (100.0, 1e2) where the schema says
// integer is an integer: it is rewritten before the typed decode (a coercion
// note, like a quoted integer) and reaches both definition forms as written
// canonically. Only a value the Go type cannot hold is a violation, at the
// path of the value itself (list indices, map keys), saying the type's range
// and the value as sent.
func TestWholeNumbersWrittenAsFloats(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var typed wholeArgs
	var typedNotes []string
	var rawArgs string
	var rawNotes []string
	var ran atomic.Int64
	typedTool := tools.Define("whole", "whole", func(_ context.Context, x *tools.Execution, a wholeArgs) (string, error) {
		ran.Add(1)
		typed, typedNotes = a, x.Coercions()
		return "ok", nil
	})
	e.register(typedTool, tools.DefineRaw("whole_raw", "whole", typedTool.Parameters(), func(_ context.Context, x *tools.Execution, a json.RawMessage) (any, error) {
		ran.Add(1)
		rawArgs, rawNotes = string(a), x.Coercions()
		return "ok", nil
	}))
	for _, tc := range []struct {
		args  string
		typed wholeArgs // the decoded arguments when want is ""
		raw   string    // what the raw tool's body gets
		notes []string
		want  string // the typed tool's failure; the raw tool has no Go type and succeeds
	}{
		{args: `{"count":100.0}`, typed: wholeArgs{Count: 100}, raw: `{"count":100}`,
			notes: []string{"/count: coerced number 100.0 to the integer 100"}},
		{args: `{"count":1e2}`, typed: wholeArgs{Count: 100}, raw: `{"count":100}`,
			notes: []string{"/count: coerced number 1e2 to the integer 100"}},
		{args: `{"count":1.0e3,"small":-2.5E1}`, typed: wholeArgs{Count: 1000, Small: -25}, raw: `{"count":1000,"small":-25}`,
			notes: []string{"/count: coerced number 1.0e3 to the integer 1000", "/small: coerced number -2.5E1 to the integer -25"}},
		{args: `{"limit":-0}`, raw: `{"limit":0}`, notes: []string{"/limit: coerced number -0 to the integer 0"}},
		{args: `{"count":"7","limit":2.0}`, typed: wholeArgs{Count: 7, Limit: 2}, raw: `{"count":7,"limit":2}`,
			notes: []string{`/count: coerced string "7" to the number 7`, "/limit: coerced number 2.0 to the integer 2"}},
		{args: `{"items":[{"limit":1},{"limit":3.0e0}],"m":{"k":4.00}}`,
			typed: wholeArgs{Items: []wholeItem{{1}, {3}}, M: map[string]uint8{"k": 4}}, raw: `{"items":[{"limit":1},{"limit":3}],"m":{"k":4}}`,
			notes: []string{"/items/1/limit: coerced number 3.0e0 to the integer 3", "/m/k: coerced number 4.00 to the integer 4"}},
		{args: `{"ratio":2.0}`, typed: wholeArgs{Ratio: 2}, raw: `{"ratio":2.0}`}, // a number field keeps its text

		{args: `{"small":3000000000}`, raw: `{"small":3000000000}`,
			want: `/small: range: must be between -2147483648 and 2147483647 for int32, got 3000000000`},
		{args: `{"small":3e9}`, raw: `{"small":3000000000}`, notes: []string{"/small: coerced number 3e9 to the integer 3000000000"},
			want: `/small: range: must be between -2147483648 and 2147483647 for int32, got 3e9`},
		{args: `{"count":1e30}`, raw: `{"count":1e30}`,
			want: `/count: range: must be between -9223372036854775808 and 9223372036854775807 for int, got 1e30`},
		{args: `{"ratio":1e39}`, raw: `{"ratio":1e39}`,
			want: `/ratio: range: must be between -3.4028235e+38 and 3.4028235e+38 for float32, got 1e39`},
		{args: `{"items":[{"limit":1},{"limit":300}]}`, raw: `{"items":[{"limit":1},{"limit":300}]}`,
			want: `/items/1/limit: range: must be between 0 and 255 for uint8, got 300`},
		{args: `{"items":[{"limit":1},{"limit":3e2}]}`, raw: `{"items":[{"limit":1},{"limit":300}]}`,
			notes: []string{"/items/1/limit: coerced number 3e2 to the integer 300"},
			want:  `/items/1/limit: range: must be between 0 and 255 for uint8, got 3e2`},
		{args: `{"m":{"k":300}}`, raw: `{"m":{"k":300}}`, want: `/m/k: range: must be between 0 and 255 for uint8, got 300`},
		{args: `{"m":{"a/b":1,"k~":256.0}}`, raw: `{"m":{"a/b":1,"k~":256}}`, notes: []string{"/m/k~0: coerced number 256.0 to the integer 256"},
			want: `/m/k~0: range: must be between 0 and 255 for uint8, got 256.0`},
	} {
		typed, typedNotes, rawArgs, rawNotes = wholeArgs{}, nil, "", nil
		before := ran.Load()
		o := e.exec("whole", tc.args)
		switch {
		case tc.want == "":
			if o.IsError || ran.Load() == before {
				t.Errorf("whole %s: %q, want success", tc.args, o.ErrorMessage)
			} else if !reflect.DeepEqual(typed, tc.typed) || !slices.Equal(typedNotes, tc.notes) {
				t.Errorf("whole %s: body got %+v, notes %q; want %+v, %q", tc.args, typed, typedNotes, tc.typed, tc.notes)
			}
		case !o.IsError || o.ErrorMessage != "invalid arguments: "+tc.want || code(o) != tools.CodeInvalidArgs || ran.Load() != before:
			t.Errorf("whole %s:\n got %q (%v)\nwant %q", tc.args, o.ErrorMessage, code(o), "invalid arguments: "+tc.want)
		}
		before = ran.Load()
		if o := e.exec("whole_raw", tc.args); o.IsError || ran.Load() == before {
			t.Errorf("whole_raw %s: %q, want success", tc.args, o.ErrorMessage)
		} else if rawArgs != tc.raw || !slices.Equal(rawNotes, tc.notes) {
			t.Errorf("whole_raw %s: body got %s, notes %q; want %s, %q", tc.args, rawArgs, rawNotes, tc.raw, tc.notes)
		}
	}
}

// Coerced arguments handed to a raw tool are re-encoded without HTML
// escaping: text the model wrote reaches the body as written.
func TestCoercedArgumentsKeepTheirText(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var got string
	e.register(tools.DefineRaw("raw_html", "raw", json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"s":{"type":"string"}}}`),
		func(_ context.Context, _ *tools.Execution, args json.RawMessage) (any, error) {
			got = string(args)
			return "ok", nil
		}))
	if o := e.exec("raw_html", `{"n":"5","s":"<a & b>"}`); o.IsError {
		t.Fatalf("%+v", o)
	}
	if got != `{"n":5,"s":"<a & b>"}` {
		t.Fatalf("raw tool got %s", got)
	}
}

func TestCoercionIsRecordedOnTheExecution(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var coerced []string
	var args string
	e.register(tools.Define("read", "read", func(_ context.Context, x *tools.Execution, a b15Args) (string, error) {
		coerced, args = x.Coercions(), x.Arguments()
		return "", nil
	}))
	if o := e.exec("read", `{"path":"a","limit":"12"}`); o.IsError {
		t.Fatal(o.ErrorMessage)
	}
	if len(coerced) != 1 || coerced[0] != `/limit: coerced string "12" to the number 12` {
		t.Errorf("coercions %q", coerced)
	}
	if args != `{"limit":12,"path":"a"}` {
		t.Errorf("arguments %s", args)
	}
}

type nested struct {
	Config struct {
		Host string `json:"host"`
		Port int    `json:"port"`
	} `json:"config"`
	Tags  []string `json:"tags" jsonschema:"maxItems=2"`
	Color string   `json:"color,omitempty" jsonschema:"enum=red,enum=green"`
}

func TestViolationsNameNestedPathsAndCollectEveryRule(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.register(tools.Define("cfg", "cfg", func(context.Context, *tools.Execution, nested) (string, error) { return "", nil }))
	o := e.exec("cfg", `{"config":{"host":1,"port":"x","extra":true},"tags":["a",2,"c"],"color":"blue"}`)
	want := []string{
		`/config/extra: additionalProperties: unknown key "extra" (allowed keys: host, port)`,
		`/config/host: type: must be a string, got number 1`,
		`/config/port: type: must be an integer, got string "x"`,
		`/tags/1: type: must be a string, got number 2`,
		`/tags: maxItems: `,
		`/color: enum: must be one of ["red","green"], got "blue"`,
	}
	for _, w := range want {
		if !strings.Contains(o.ErrorMessage, w) {
			t.Errorf("message lacks %q:\n%s", w, o.ErrorMessage)
		}
	}
}

func TestEmptyArgumentsMeanEmptyObject(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	type none struct{}
	e.register(tools.Define("ping", "ping", func(context.Context, *tools.Execution, none) (string, error) { return "pong", nil }))
	for _, args := range []string{"", "{}", " { } "} {
		if o := e.exec("ping", args); o.IsError || text(o) != "pong" {
			t.Errorf("%q: %+v", args, o)
		}
	}
	if o := e.exec("ping", `{"x":1}`); !o.IsError {
		t.Error("unknown key accepted by a tool without arguments")
	}
}

func TestGeneratedSchemaIsInlinedAndClosed(t *testing.T) {
	t.Parallel()
	tool := tools.Define("cfg", "Configure.", func(context.Context, *tools.Execution, nested) (string, error) { return "", nil })
	if tool.Err() != nil {
		t.Fatal(tool.Err())
	}
	var doc map[string]any
	if err := json.Unmarshal(tool.Parameters(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"$schema", "$id", "$defs", "$ref"} {
		if _, ok := doc[k]; ok {
			t.Errorf("schema has %s: %s", k, tool.Parameters())
		}
	}
	if doc["type"] != "object" || doc["additionalProperties"] != false {
		t.Errorf("schema root %s", tool.Parameters())
	}
	req, _ := doc["required"].([]any)
	if len(req) != 2 || req[0] != "config" || req[1] != "tags" {
		t.Errorf("required %v", req)
	}
}

func TestDefinitionErrors(t *testing.T) {
	t.Parallel()
	run := func(context.Context, *tools.Execution, echoArgs) (string, error) { return "", nil }
	cases := []struct {
		tool *tools.Tool
		want string
	}{
		{tools.Define("", "x", run), `tool name "" must be 1-64 characters`},
		{tools.Define("has space", "x", run), `tool name "has space" must be`},
		{tools.Define("run_code", "x", run), `tool name "run_code" is reserved`},
		{tools.Define("t", "x", run, tools.WithTimeout(0)), `tool "t" timeout must be a positive duration`},
		{tools.Define("t", "x", run, tools.WithRender(func(a b15Args, o string) []tools.Content { return nil })), `WithRender takes`},
		{tools.Define("t", "x", func(context.Context, *tools.Execution, string) (string, error) { return "", nil }), `Args must be a struct`},
		{tools.DefineRaw("t", "x", json.RawMessage(`{"type":`), nil), `parameter schema: schema is not valid JSON`},
		{tools.DefineRaw("t", "x", json.RawMessage(`{"type":"nope"}`), nil), `parameter schema:`},
	}
	for _, tc := range cases {
		if err := tc.tool.Err(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want %q", err, tc.want)
		}
	}
	e := newEnv(t)
	if err := e.reg.Register(e.c, cases[2].tool); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("register of a bad tool: %v", err)
	}
}

func TestArgumentsAsTheExecutionShowsThem(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.register(named("none", "ok"), tools.Define("read", "read", func(context.Context, *tools.Execution, b15Args) (string, error) { return "", nil }))
	type seen struct{ args, raw, coerced string }
	var got []seen
	e.on(core.On(e.c, tools.Result, func(_ context.Context, x *tools.Execution) error {
		got = append(got, seen{x.Arguments(), x.RawArguments(), strings.Join(x.Coercions(), ",")})
		return nil
	}))
	cases := []struct {
		name, args string
		want       seen
	}{
		{"none", "", seen{"{}", "", ""}}, // "" means {}
		{"none", "{}", seen{"{}", "{}", ""}},
		{"read", "", seen{"", "", ""}},                                           // invalid: shown as sent
		{"read", ` {"path":"a"} `, seen{` {"path":"a"} `, ` {"path":"a"} `, ""}}, // valid: the model's text
		{"read", `{"path":"a","limit":"3"}`, seen{`{"limit":3,"path":"a"}`, `{"path":"a","limit":"3"}`, `/limit: coerced string "3" to the number 3`}},
		{"read", `{"path":"a","limit":"x"}`, seen{`{"path":"a","limit":"x"}`, `{"path":"a","limit":"x"}`, ""}},
	}
	for _, tc := range cases {
		got = nil
		e.exec(tc.name, tc.args)
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s %q: got %+v, want %+v", tc.name, tc.args, got, tc.want)
		}
	}
}

// The same invalid arguments always give the same message (the validator
// walks properties in map order; unknown keys come as a set).
func TestViolationOrderIsStable(t *testing.T) {
	t.Parallel()
	type args struct {
		A int    `json:"a" jsonschema:"minimum=1"`
		B string `json:"b" jsonschema:"enum=x,enum=y"`
		C bool   `json:"c"`
		D int    `json:"d" jsonschema:"maximum=3"`
	}
	e := newEnv(t)
	e.register(tools.Define("stable", "d", func(context.Context, *tools.Execution, args) (string, error) { return "ok", nil }))
	reg := e.reg
	call := tools.Call{ID: "1", Name: "stable", Arguments: `{"a":0,"b":"z","c":"no","d":9,"zz":1,"yy":2,"xx":3}`}
	first := tools.TextOf(reg.Execute(context.Background(), call).Content)
	for range 30 {
		if got := tools.TextOf(reg.Execute(context.Background(), call).Content); got != first {
			t.Fatalf("message changed between calls:\n%s\n%s", first, got)
		}
	}
	if !strings.Contains(first, `/xx: additionalProperties: unknown key "xx"`) || strings.Index(first, "/a:") > strings.Index(first, "/d:") {
		t.Errorf("message: %s", first)
	}
}

// A negative zero has no JSON value distinct from 0, so it is not lossless
// JSON (reference E3): where the schema says number, or says nothing, it is
// an INVALID_ARGS violation at its path and the body never runs, for typed
// and raw tools alike. Where the schema says integer it is rewritten to 0
// (TestWholeNumbersWrittenAsFloats).
func TestNegativeZeroIsNotLosslessJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var ran atomic.Int64
	typedTool := tools.Define("whole", "whole", func(context.Context, *tools.Execution, wholeArgs) (string, error) {
		ran.Add(1)
		return "ok", nil
	})
	e.register(typedTool, tools.DefineRaw("whole_raw", "whole", typedTool.Parameters(), func(context.Context, *tools.Execution, json.RawMessage) (any, error) {
		ran.Add(1)
		return "ok", nil
	}), tools.DefineRaw("open_raw", "any object", json.RawMessage(`{"type":"object"}`), func(context.Context, *tools.Execution, json.RawMessage) (any, error) {
		ran.Add(1)
		return "ok", nil
	}))
	for _, tc := range []struct{ tool, args, want string }{
		{"whole", `{"ratio":-0}`, `/ratio: lossless: must be a lossless JSON value, got -0 (JSON has no negative zero; send 0)`},
		{"whole_raw", `{"ratio":-0.0}`, `/ratio: lossless: must be a lossless JSON value, got -0.0 (JSON has no negative zero; send 0)`},
		{"whole", `{"ratio":-0e7,"limit":-0}`, `/ratio: lossless: must be a lossless JSON value, got -0e7 (JSON has no negative zero; send 0)`},
		{"open_raw", `{"a":[1,-0]}`, `/a/1: lossless: must be a lossless JSON value, got -0 (JSON has no negative zero; send 0)`},
	} {
		before := ran.Load()
		o := e.exec(tc.tool, tc.args)
		if !o.IsError || o.ErrorMessage != "invalid arguments: "+tc.want || code(o) != tools.CodeInvalidArgs || ran.Load() != before {
			t.Errorf("%s %s:\n got %q (%v)\nwant %q", tc.tool, tc.args, o.ErrorMessage, code(o), "invalid arguments: "+tc.want)
		}
	}
	// Zero, and negative numbers that are not zero, stay valid.
	for _, args := range []string{`{"ratio":0}`, `{"ratio":-0.5}`, `{"ratio":-0.0001e2}`, `{"limit":-0}`} {
		before := ran.Load()
		if o := e.exec("whole_raw", args); o.IsError || ran.Load() == before {
			t.Errorf("%s: %q, want success", args, o.ErrorMessage)
		}
	}
}

// WithLazySchema: the schema is only checked to be JSON at definition; one
// that does not compile fails every call (INVALID_ARGS, saying why) instead
// of the definition, and the body never runs.
func TestLazySchemaThatDoesNotCompileFailsEachCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var calls atomic.Int64
	body := func(context.Context, *tools.Execution, json.RawMessage) (any, error) { calls.Add(1); return "ok", nil }
	bad := json.RawMessage(`{"type":"object","properties":{"n":{"type":"nonsense"}}}`)
	if err := tools.DefineRaw("eager_bad", "d", bad, body).Err(); err == nil {
		t.Fatal("eager: a schema that does not compile is no definition error")
	}
	if err := tools.DefineRaw("lazy_json", "d", json.RawMessage(`{"type":`), body, tools.WithLazySchema()).Err(); err == nil ||
		!strings.Contains(err.Error(), "schema is not valid JSON") {
		t.Fatalf("lazy: a schema that is not JSON: %v", err)
	}
	lazy := tools.DefineRaw("lazy_bad", "d", bad, body, tools.WithLazySchema())
	if lazy.Err() != nil {
		t.Fatal(lazy.Err())
	}
	e.register(lazy)
	for range 2 {
		o := e.exec("lazy_bad", `{"n":1}`)
		if !o.IsError || code(o) != tools.CodeInvalidArgs ||
			!strings.HasPrefix(o.ErrorMessage, "invalid arguments: (root): schema: the tool's parameter schema does not compile: ") {
			t.Fatalf("got %q (%+v)", o.ErrorMessage, o.Error)
		}
	}
	if calls.Load() != 0 {
		t.Fatal("the body ran")
	}
	if string(lazy.Parameters()) != string(bad) {
		t.Fatalf("parameters %s", lazy.Parameters())
	}
}
