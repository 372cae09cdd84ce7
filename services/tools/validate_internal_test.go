package tools

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

type tenFields struct {
	Path      string   `json:"path"`
	Offset    int      `json:"offset,omitempty" jsonschema:"minimum=1"`
	Limit     int      `json:"limit,omitempty" jsonschema:"minimum=1,maximum=2000"`
	Pattern   string   `json:"pattern"`
	Include   string   `json:"include,omitempty"`
	Recursive bool     `json:"recursive,omitempty"`
	Mode      string   `json:"mode" jsonschema:"enum=content,enum=files,enum=count"`
	Tags      []string `json:"tags,omitempty"`
	Depth     int      `json:"depth,omitempty"`
	Ratio     float64  `json:"ratio,omitempty"`
}

const tenArgs = `{"path":"src/main.go","offset":10,"limit":200,"pattern":"func .*","include":"*.go","recursive":true,"mode":"content","tags":["a","b"],"depth":3,"ratio":0.5}`

// BenchmarkValidate10Fields measures parse + validation of a 10-field argument
// object against its compiled schema; the decode into the Args struct is
// measured separately.
func BenchmarkValidate10Fields(b *testing.B) {
	params, err := schemaOf(reflect.TypeFor[tenFields]())
	if err != nil {
		b.Fatal(err)
	}
	v, err := compileSchema(params)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("validate", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(tenArgs)))
		stop := CPUTimer(b)
		for b.Loop() {
			if _, _, vs := v.check(tenArgs); vs != nil {
				b.Fatal(vs)
			}
		}
		stop()
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(tenArgs)))
		stop := CPUTimer(b)
		defer stop()
		for b.Loop() {
			var a tenFields
			if err := json.Unmarshal([]byte(tenArgs), &a); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzCheck: validation is total — any argument text yields either valid
// normalized JSON or violations, never a panic.
func FuzzCheck(f *testing.F) {
	params, err := schemaOf(reflect.TypeFor[tenFields]())
	if err != nil {
		f.Fatal(err)
	}
	v, err := compileSchema(params)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{tenArgs, "", "{}", "[1,2]", `{"path":"a","limit":"5"}`, `{"path":1,"tags":[1,"x"]}`, `{"mode":"files","offset":"-0"}`, "nul", `{"a":`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		normalized, coerced, violations := v.check(raw)
		if violations != nil {
			for _, vi := range violations {
				if vi.Rule == "" || vi.Message == "" {
					t.Fatalf("empty violation %+v for %q", vi, raw)
				}
			}
			return
		}
		if !json.Valid([]byte(normalized)) {
			t.Fatalf("valid arguments %q normalized to invalid JSON %q", raw, normalized)
		}
		if len(coerced) > 0 && normalized == raw {
			t.Fatalf("coerced %v but normalized text unchanged", coerced)
		}
	})
}

// FuzzParseFastMatchesEncodingJSON: whatever the segmentio fast path accepts,
// encoding/json accepts too, with the same value (so swapping the parser changed
// nothing the validator sees); what it rejects goes through encoding/json.
func FuzzParseFastMatchesEncodingJSON(f *testing.F) {
	for _, seed := range []string{
		tenArgs, "", " ", "{}", "[]", "null", "0", "-0", "1e400", "-1.5E-7", "123456789012345678901234567890",
		`{"a":1,"a":2}`, `{"a":"\ud83d\ude00 \u00e9 \ud800"}`, "{\"a\":\"\xff\xfe\"}", "{\"a\":\"\x01\"}",
		`{"a":[1,2,{"b":null}]}`, `{"a":1}}`, `{"a":1} {}`, `{"a":1}` + "\n\t\r ", "\ufeff{}", `{'a':1}`,
		`{"a":1,}`, `[1,]`, `01`, `1.`, `.5`, `+1`, `NaN`, `Infinity`, `{"a":tru}`, `"abc`, `{"a" 1}`,
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001), `{"\u0000":"\u0000"}`, "{\"a\":1}\x00",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		fast, ok := parseJSONFast(raw)
		if !ok {
			return
		}
		std, err := parseJSONStd(raw)
		if err != nil {
			t.Fatalf("%q: the fast path accepted what encoding/json rejects: %v", raw, err)
		}
		if !reflect.DeepEqual(fast, std) {
			t.Fatalf("%q: fast %#v, encoding/json %#v", raw, fast, std)
		}
	})
}

func TestIntegerText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		num, canon string
		whole      bool
	}{
		{"100", "100", true}, {"100.0", "100", true}, {"1e2", "100", true}, {"1E+2", "100", true},
		{"1.0e3", "1000", true}, {"-2.5E1", "-25", true}, {"1.5e2", "150", true}, {"-0", "0", true},
		{"0.0", "0", true}, {"0e7", "0", true}, {"-0.0e-99999999999999999999", "0", true}, {"1000e-1", "100", true},
		{"18446744073709551615.0", "18446744073709551615", true}, {"1e19", "10000000000000000000", true},
		{"1e20", "", true}, {"1e30", "", true}, {"1e400", "", true}, {"1e99999999999999999999", "", true},
		{"1.5", "", false}, {"0.5", "", false}, {"1e-1", "", false}, {"15e-1", "", false},
		{"1e-99999999999999999999", "", false}, {"-1.000001", "", false},
	} {
		if canon, whole := integerText(tc.num); canon != tc.canon || whole != tc.whole {
			t.Errorf("integerText(%s) = %q, %v; want %q, %v", tc.num, canon, whole, tc.canon, tc.whole)
		}
	}
}

// locate finds the value encoding/json's type error points at, with list
// indices and map keys.
func TestLocateTypeErrors(t *testing.T) {
	t.Parallel()
	type item struct {
		Limit uint8 `json:"limit"`
	}
	type args struct {
		Items [][]item           `json:"items"`
		M     map[string]int8    `json:"m"`
		K     map[int]bool       `json:"k"`
		A     [2]uint16          `json:"a"`
		S     string             `json:"s"`
		Deep  map[string][]int32 `json:"deep"`
	}
	for _, tc := range []struct{ text, want string }{
		{`{"items":[[{"limit":1}],[{"limit":2},{"limit":300}]]}`, "/items/1/1/limit"},
		{`{"s":"x","m":{"a":1, "b/c" : 200 }}`, "/m/b~1c"},
		{`{"k":{"1":true,"x":false}}`, "/k/x"},
		{`{"a":[1,70000]}`, "/a/1"},
		{`{"s":5}`, "/s"},
		{`{"s":[1]}`, "/s"},
		{`{"deep":{"q":[1,2,3e9]}}`, "/deep/q/2"},
	} {
		var a args
		err := json.Unmarshal([]byte(tc.text), &a)
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			t.Fatalf("%s: %v, want a type error", tc.text, err)
		}
		if loc, _ := locate(tc.text, te.Offset); pointer(loc) != tc.want {
			t.Errorf("%s: located %q, want %q", tc.text, pointer(loc), tc.want)
		}
	}
}

func TestLessPointer(t *testing.T) {
	t.Parallel()
	ordered := []string{"", "/a", "/a/2", "/a/10", "/a/10/b", "/a/b", "/b", "/items/2/limit", "/items/10/limit"}
	for i := range ordered {
		for j := range ordered {
			if got, want := lessPointer(ordered[i], ordered[j]), i < j; got != want && ordered[i] != ordered[j] {
				t.Errorf("lessPointer(%q, %q) = %v, want %v", ordered[i], ordered[j], got, want)
			}
		}
	}
}
