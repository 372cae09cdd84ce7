package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	sjson "github.com/segmentio/encoding/json"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Violation is one broken rule found by argument validation.
type Violation struct {
	// Path is the JSON Pointer of the offending value ("/limit", "/config/host",
	// "/tags/1"); "" is the arguments object itself.
	Path string
	// Rule is the JSON Schema keyword that failed ("type", "required",
	// "additionalProperties", "minimum", ...), or "json" for unparseable input.
	Rule string
	// Message says what was expected and what was found.
	Message string
}

// String renders the violation as "<path>: <rule>: <message>", with the root
// path shown as "(root)".
func (v Violation) String() string {
	p := v.Path
	if p == "" {
		p = "(root)"
	}
	return p + ": " + v.Rule + ": " + v.Message
}

// ArgsError is the INVALID_ARGS failure of argument validation. Its message is
// "invalid arguments: " followed by every violation joined with "; ".
type ArgsError struct {
	Tool       string
	Violations []Violation
}

// Error returns "invalid arguments: v1; v2; ...".
func (e *ArgsError) Error() string { return "invalid arguments: " + joinViolations(e.Violations) }

// decodeViolation describes the failure to decode schema-valid arguments
// (normalized, the text handed to the decoder) into the tool's Go type: in
// practice a number the schema accepts that the field cannot hold (1e400 for a
// float64, 3000000000 for an int32). The violation's path is found from the
// error's byte offset in normalized, so it names list indices and map keys
// ("/items/1/limit", "/m/k"), and its message says the Go type's range and the
// value as the model wrote it in raw.
func decodeViolation(err error, normalized, raw string) Violation {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return Violation{Rule: "decode", Message: err.Error()}
	}
	loc, isKey := locate(normalized, te.Offset)
	v := Violation{Path: pointer(loc), Rule: "type"}
	got, isNumber := strings.CutPrefix(te.Value, "number ")
	if isNumber && !isKey {
		if inst, perr := parseJSON(raw); perr == nil {
			if n, ok := valueAt(inst, loc).(json.Number); ok {
				got = string(n) // as sent, before any normalization
			}
		}
		if msg, ok := rangeMessage(te.Type.Kind(), got); ok {
			v.Rule, v.Message = "range", msg
			return v
		}
	}
	v.Message = "cannot hold " + te.Value + " in " + te.Type.String()
	return v
}

// rangeMessage says which numbers a Go numeric kind holds:
// "must be between -2147483648 and 2147483647 for int32, got 3000000000".
func rangeMessage(k reflect.Kind, got string) (string, bool) {
	var lo, hi, what string
	switch {
	case k >= reflect.Int && k <= reflect.Int64:
		bits := uint(bitsOf(k))
		lo, hi = strconv.FormatInt(math.MinInt64>>(64-bits), 10), strconv.FormatInt(math.MaxInt64>>(64-bits), 10)
	case k >= reflect.Uint && k <= reflect.Uintptr:
		lo, hi = "0", strconv.FormatUint(math.MaxUint64>>(64-uint(bitsOf(k))), 10)
	case k == reflect.Float32:
		lo, hi = strconv.FormatFloat(-math.MaxFloat32, 'g', -1, 32), strconv.FormatFloat(math.MaxFloat32, 'g', -1, 32)
	case k == reflect.Float64:
		lo, hi = strconv.FormatFloat(-math.MaxFloat64, 'g', -1, 64), strconv.FormatFloat(math.MaxFloat64, 'g', -1, 64)
	default:
		return "", false
	}
	if k < reflect.Float32 {
		if _, whole := integerText(got); !whole {
			what = "an integer "
		}
	}
	return fmt.Sprintf("must be %sbetween %s and %s for %s, got %s", what, lo, hi, k, got), true
}

func bitsOf(k reflect.Kind) int {
	switch k {
	case reflect.Int8, reflect.Uint8:
		return 8
	case reflect.Int16, reflect.Uint16:
		return 16
	case reflect.Int32, reflect.Uint32:
		return 32
	}
	return strconv.IntSize // int, uint, uintptr; 64 for int64, uint64
}

// locate returns the location of the innermost JSON value (or object key,
// isKey) of the valid JSON text that ends at or spans byte offset off, the
// offset encoding/json reports with a type error. It follows the tokens, so
// list indices and map keys are part of the location (encoding/json's Field
// has neither).
func locate(text string, off int64) (loc []string, isKey bool) {
	type frame struct {
		obj     bool
		key     string
		idx     int
		wantKey bool
	}
	var stack []frame
	path := func() []string {
		p := make([]string, len(stack))
		for i, f := range stack {
			if f.obj {
				p[i] = f.key
			} else {
				p[i] = strconv.Itoa(f.idx)
			}
		}
		return p
	}
	advance := func() { // the current element of the innermost container is complete
		if n := len(stack); n > 0 {
			if stack[n-1].obj {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].idx++
			}
		}
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return path(), false
		}
		end := dec.InputOffset()
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if end >= off {
				return path(), false
			}
			stack = append(stack, frame{obj: tok == json.Delim('{'), wantKey: true})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if end >= off {
				return path(), false
			}
			advance()
		default:
			if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
				stack[n-1].key, _ = tok.(string)
				stack[n-1].wantKey = false
				if end >= off {
					return path(), true
				}
				continue
			}
			if end >= off {
				return path(), false
			}
			advance()
		}
	}
}

func joinViolations(vs []Violation) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return strings.Join(parts, "; ")
}

// validator is a compiled parameter (or output) schema. It is built once per tool
// and is safe for concurrent use.
type validator struct {
	schema  *jsonschema.Schema
	doc     any  // the parsed schema document, for allowed-key lookups
	emptyOK bool // `{}` is valid: the "" and "{}" fast path skips the validator
	// fast, when the schema is simple enough, accepts arguments that are
	// certainly valid before the library is asked; nil otherwise.
	fast *fastCheck
}

const schemaURL = "mem:///tool.json"

// compileSchema compiles a JSON Schema document (draft 2020-12 unless it says
// otherwise).
func compileSchema(doc []byte) (*validator, error) {
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(schemaURL, parsed); err != nil {
		return nil, err
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, err
	}
	v := &validator{schema: sch, doc: parsed, fast: buildFastCheck(parsed, sch.DraftVersion)}
	v.emptyOK = sch.Validate(map[string]any{}) == nil
	return v, nil
}

// parseJSON decodes a JSON text into the validator's value model (json.Number
// for numbers). Exactly one JSON value is allowed.
//
// segmentio/encoding parses it (the same value model as encoding/json, at about
// two thirds of the cost); text it rejects, or with anything but whitespace
// after the value, goes through encoding/json, so every error reads exactly as
// encoding/json's.
func parseJSON(raw string) (any, error) {
	if v, ok := parseJSONFast(raw); ok {
		return v, nil
	}
	return parseJSONStd(raw)
}

// parseJSONFast parses raw with segmentio/encoding; ok is false when it
// rejects raw or finds more than whitespace after the value, and for text that
// may nest deeper than encoding/json allows (which segmentio does not check).
func parseJSONFast(raw string) (v any, ok bool) {
	if len(raw) > maxNesting && strings.Count(raw, "[")+strings.Count(raw, "{") > maxNesting {
		return nil, false
	}
	rest, err := sjson.Parse([]byte(raw), &v, sjson.UseNumber|sjson.ZeroCopy)
	return v, err == nil && len(bytes.TrimLeft(rest, " \t\r\n")) == 0
}

// maxNesting is encoding/json's nesting limit.
const maxNesting = 10000

// parseJSONStd is parseJSON with encoding/json alone.
func parseJSONStd(raw string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var extra any
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

// check parses and validates raw arguments. It returns the normalized argument
// text (raw itself unless a value was coerced; "{}" for ""), the coercion notes,
// and the violations (nil when valid). Only two things are coerced: an
// integer-valued string where an integer or number is expected ("5" becomes
// 5), and, in valid arguments, a number the schema says is an integer but that
// is not written as one (100.0, 1e2 and -0 become 100, 100 and 0), so that a
// Go integer field can hold it. A negative zero anywhere else is a "lossless"
// violation: JSON has no -0 distinct from 0 (reference E3). The fast checks accept neither, so they skip
// nothing here.
func (v *validator) check(raw string) (normalized string, coerced []string, violations []Violation) {
	if raw == "" {
		raw = "{}"
	}
	if v.emptyOK && raw == "{}" {
		return raw, nil, nil
	}
	// A negative zero may need a violation (lossless), which the fast
	// checks never give: text that may hold one goes to the library.
	fast := v.fast
	if strings.Contains(raw, "-0") {
		fast = nil
	}
	if fast != nil && fast.acceptsText(raw) {
		return raw, nil, nil // certainly valid JSON and arguments: nothing to coerce
	}
	inst, err := parseJSON(raw)
	if err != nil {
		return raw, nil, []Violation{{Rule: "json", Message: "arguments are not valid JSON: " + err.Error()}}
	}
	if fast != nil && fast.accepts(inst) {
		return raw, nil, nil // certainly valid, so nothing to coerce either
	}
	verr := v.schema.Validate(inst)
	if verr == nil {
		return v.normalized(raw, inst, nil)
	}
	ve, ok := verr.(*jsonschema.ValidationError)
	if !ok {
		return raw, nil, []Violation{{Rule: "schema", Message: verr.Error()}}
	}
	// Coerce integer-valued strings, then validate again.
	c := coercer{root: inst}
	c.walk(ve, false)
	if len(c.notes) > 0 {
		inst = c.root
		if verr = v.schema.Validate(inst); verr == nil {
			return v.normalized(raw, inst, c.notes)
		}
		ve, _ = verr.(*jsonschema.ValidationError)
		if ve == nil {
			return raw, nil, []Violation{{Rule: "schema", Message: verr.Error()}}
		}
	}
	var out []Violation
	v.collect(ve, inst, &out)
	sortViolations(out)
	return raw, nil, out
}

// normalized finishes a valid check: integers written as other numbers are
// rewritten (normalizeIntegers), and when anything was coerced the arguments
// are marshalled again.
func (v *validator) normalized(raw string, inst any, notes []string) (string, []string, []Violation) {
	var ints []string
	inst = normalizeIntegers(inst, v.doc, nil, &ints)
	if lossy := negativeZeros(inst, nil, nil); len(lossy) > 0 {
		return raw, nil, lossy
	}
	if len(notes) == 0 && len(ints) == 0 {
		return raw, nil, nil
	}
	// Found in map order: sort by path, as violations are.
	sort.SliceStable(ints, func(i, j int) bool { return lessPointer(notePath(ints[i]), notePath(ints[j])) })
	// No HTML escaping: a raw tool gets "<&>" as the model wrote it.
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(inst); err != nil {
		return raw, nil, []Violation{{Rule: "json", Message: err.Error()}}
	}
	return strings.TrimSuffix(b.String(), "\n"), append(notes, ints...), nil
}

// normalizeIntegers rewrites, in x, every number that the schema sch says is an
// integer (its "type" is "integer", or a list with "integer" and without
// "number") but that is not written as one, and returns x (a new value when x
// itself is such a number). It follows properties, additionalProperties,
// prefixItems and items only, so a location whose schema comes from
// combinators or references is left alone. Each rewrite adds a note at loc.
func normalizeIntegers(x, sch any, loc []string, notes *[]string) any {
	s, ok := sch.(map[string]any)
	if !ok {
		return x
	}
	switch val := x.(type) {
	case json.Number:
		if !integerOnly(s["type"]) {
			return x
		}
		if canon, _ := integerText(string(val)); canon != "" && canon != string(val) {
			*notes = append(*notes, fmt.Sprintf("%s: coerced number %s to the integer %s", pointer(loc), val, canon))
			return json.Number(canon)
		}
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		_, patterns := s["patternProperties"]
		for k, e := range val {
			sub, declared := props[k]
			if !declared {
				if patterns {
					continue // additionalProperties may not apply
				}
				sub = s["additionalProperties"]
			}
			val[k] = normalizeIntegers(e, sub, append(loc, k), notes)
		}
	case []any:
		prefix, _ := s["prefixItems"].([]any)
		items := s["items"]
		if tuple, isTuple := items.([]any); isTuple { // drafts before 2020-12
			prefix, items = tuple, s["additionalItems"]
		}
		for i, e := range val {
			sub := items
			if i < len(prefix) {
				sub = prefix[i]
			}
			val[i] = normalizeIntegers(e, sub, append(loc, strconv.Itoa(i)), notes)
		}
	}
	return x
}

// negativeZeros appends to out a violation for every negative zero left in x
// (-0, -0.0, -0e5) and returns out. JSON has no negative zero distinct from
// 0, so such a number is not lossless JSON (reference E3); where the schema
// says integer, normalizeIntegers has already rewritten it to 0.
func negativeZeros(x any, loc []string, out []Violation) []Violation {
	switch val := x.(type) {
	case json.Number:
		if s := string(val); strings.HasPrefix(s, "-") {
			if canon, whole := integerText(s); whole && canon == "0" {
				out = append(out, Violation{Path: pointer(loc), Rule: "lossless",
					Message: fmt.Sprintf("must be a lossless JSON value, got %s (JSON has no negative zero; send 0)", s)})
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(val))
		for k := range val {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = negativeZeros(val[k], append(loc, k), out)
		}
	case []any:
		for i, e := range val {
			out = negativeZeros(e, append(loc, strconv.Itoa(i)), out)
		}
	}
	return out
}

func integerOnly(t any) bool {
	switch t := t.(type) {
	case string:
		return t == "integer"
	case []any:
		return slices.Contains(t, any("integer")) && !slices.Contains(t, any("number"))
	}
	return false
}

// integerText reads a JSON number's text: whole is true when it is an
// integer, and canon is then its canonical spelling if it has at most 20
// digits (as long as a Go integer can be), "" otherwise. "100.0", "1e2" and
// "1.5e2" give "100", "100" and "150"; "-0" and "0e7" give "0"; "1e30" is
// whole without a canonical spelling; "1.5" is not whole.
func integerText(s string) (canon string, whole bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, expText, hasExp := strings.Cut(strings.ReplaceAll(s, "E", "e"), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	point := len(intPart) // value = 0.digits × 10^point
	trimmed := strings.TrimLeft(digits, "0")
	point -= len(digits) - len(trimmed)
	digits = strings.TrimRight(trimmed, "0")
	if digits == "" {
		return "0", true
	}
	if hasExp {
		expText = strings.TrimPrefix(expText, "+")
		exp, err := strconv.Atoi(expText)
		if err != nil || exp > 1000 || exp < -1000 { // far outside any Go integer
			return "", !strings.HasPrefix(expText, "-")
		}
		point += exp
	}
	if point < len(digits) {
		return "", false
	}
	if point > 20 {
		return "", true
	}
	canon = digits + strings.Repeat("0", point-len(digits))
	if neg {
		canon = "-" + canon
	}
	return canon, true
}

// validateValue validates an already-decoded value (outputs of raw tools).
func (v *validator) validateValue(inst any) []Violation {
	verr := v.schema.Validate(inst)
	if verr == nil {
		return nil
	}
	ve, ok := verr.(*jsonschema.ValidationError)
	if !ok {
		return []Violation{{Rule: "schema", Message: verr.Error()}}
	}
	var out []Violation
	v.collect(ve, inst, &out)
	sortViolations(out)
	return out
}

// sortViolations orders violations by path, keeping the validator's order
// at one path: the library walks object properties in map order, and the
// same arguments must always give the same message.
func sortViolations(vs []Violation) {
	sort.SliceStable(vs, func(i, j int) bool { return lessPointer(vs[i].Path, vs[j].Path) })
}

// lessPointer orders JSON Pointers segment by segment, array indices (and
// any all-digit segments) by number: /items/2 before /items/10.
func lessPointer(a, b string) bool {
	for a != "" && b != "" {
		var sa, sb string
		sa, a, _ = strings.Cut(strings.TrimPrefix(a, "/"), "/")
		sb, b, _ = strings.Cut(strings.TrimPrefix(b, "/"), "/")
		if a != "" {
			a = "/" + a
		}
		if b != "" {
			b = "/" + b
		}
		if sa == sb {
			continue
		}
		na, ea := strconv.ParseUint(sa, 10, 64)
		nb, eb := strconv.ParseUint(sb, 10, 64)
		if ea == nil && eb == nil {
			return na < nb
		}
		return sa < sb
	}
	return len(a) < len(b)
}

// notePath is the path a coercion note starts with ("/items/2: coerced …").
func notePath(note string) string {
	p, _, _ := strings.Cut(note, ": ")
	return p
}

// coercer finds type errors that an integer-valued string would fix and
// rewrites those strings in place as numbers.
type coercer struct {
	root  any
	notes []string
}

func (c *coercer) walk(ve *jsonschema.ValidationError, inCombinator bool) {
	switch k := ve.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf, *kind.Not:
		inCombinator = true
	case *kind.Type:
		if inCombinator || k.Got != "string" || !(slices.Contains(k.Want, "integer") || slices.Contains(k.Want, "number")) {
			return
		}
		s, ok := valueAt(c.root, ve.InstanceLocation).(string)
		if !ok || !isIntegerText(s) {
			return
		}
		if c.set(ve.InstanceLocation, json.Number(s)) {
			c.notes = append(c.notes, fmt.Sprintf("%s: coerced string %q to the number %s", pointer(ve.InstanceLocation), s, s))
		}
		return
	}
	for _, cause := range ve.Causes {
		c.walk(cause, inCombinator)
	}
}

func (c *coercer) set(loc []string, v any) bool {
	if len(loc) == 0 {
		c.root = v
		return true
	}
	parent := valueAt(c.root, loc[:len(loc)-1])
	last := loc[len(loc)-1]
	switch p := parent.(type) {
	case map[string]any:
		p[last] = v
		return true
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i >= len(p) {
			return false
		}
		p[i] = v
		return true
	}
	return false
}

// isIntegerText reports whether s is a canonical integer: optional '-', no
// leading zeros, at most 18 digits (so it fits an int64 exactly).
func isIntegerText(s string) bool {
	d := strings.TrimPrefix(s, "-")
	if d == "" || len(d) > 18 || (len(d) > 1 && d[0] == '0') {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

func valueAt(root any, loc []string) any {
	cur := root
	for _, tok := range loc {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

// pointer renders an instance location as a JSON Pointer.
func pointer(loc []string) string {
	if len(loc) == 0 {
		return ""
	}
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		tok = strings.ReplaceAll(tok, "~", "~0")
		b.WriteString(strings.ReplaceAll(tok, "/", "~1"))
	}
	return b.String()
}

func child(loc []string, key string) string {
	return pointer(append(append([]string(nil), loc...), key))
}

var printer = message.NewPrinter(language.English)

// collect flattens a validation error tree into violations, in the validator's
// walk order. anyOf/oneOf failures are reported once at their location.
func (v *validator) collect(ve *jsonschema.ValidationError, inst any, out *[]Violation) {
	path := pointer(ve.InstanceLocation)
	switch k := ve.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		for _, c := range ve.Causes {
			v.collect(c, inst, out)
		}
		return
	case *kind.Required:
		for _, m := range k.Missing {
			*out = append(*out, Violation{Path: child(ve.InstanceLocation, m), Rule: "required",
				Message: fmt.Sprintf("missing required property %q", m)})
		}
		return
	case *kind.AdditionalProperties:
		allowed := v.allowedKeys(ve.SchemaURL)
		for _, p := range slices.Sorted(slices.Values(k.Properties)) { // the library's order varies
			*out = append(*out, Violation{Path: child(ve.InstanceLocation, p), Rule: "additionalProperties",
				Message: fmt.Sprintf("unknown key %q (allowed keys: %s)", p, allowed)})
		}
		return
	case *kind.Type:
		*out = append(*out, Violation{Path: path, Rule: "type",
			Message: fmt.Sprintf("must be %s, got %s", article(k.Want), describe(valueAt(inst, ve.InstanceLocation), k.Got))})
		return
	case *kind.Enum:
		*out = append(*out, Violation{Path: path, Rule: "enum",
			Message: fmt.Sprintf("must be one of %s, got %s", jsonText(k.Want), jsonText(k.Got))})
		return
	case *kind.Const:
		*out = append(*out, Violation{Path: path, Rule: "const",
			Message: fmt.Sprintf("must be %s, got %s", jsonText(k.Want), jsonText(k.Got))})
		return
	case *kind.Minimum:
		*out = append(*out, bound(path, "minimum", ">=", k.Want, k.Got))
		return
	case *kind.Maximum:
		*out = append(*out, bound(path, "maximum", "<=", k.Want, k.Got))
		return
	case *kind.ExclusiveMinimum:
		*out = append(*out, bound(path, "exclusiveMinimum", ">", k.Want, k.Got))
		return
	case *kind.ExclusiveMaximum:
		*out = append(*out, bound(path, "exclusiveMaximum", "<", k.Want, k.Got))
		return
	}
	rule := "schema"
	if kp := ve.ErrorKind.KeywordPath(); len(kp) > 0 {
		rule = kp[0]
	}
	*out = append(*out, Violation{Path: path, Rule: rule, Message: ve.ErrorKind.LocalizedString(printer)})
}

func bound(path, rule, op string, want, got *big.Rat) Violation {
	return Violation{Path: path, Rule: rule, Message: fmt.Sprintf("must be %s %s, got %s", op, ratText(want), ratText(got))}
}

func ratText(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// article renders JSON types for a message: "an integer", "a string or a null".
func article(want []string) string {
	parts := make([]string, len(want))
	for i, w := range want {
		if strings.ContainsRune("aeiou", rune(w[0])) {
			parts[i] = "an " + w
		} else {
			parts[i] = "a " + w
		}
	}
	return strings.Join(parts, " or ")
}

// describe renders a found value briefly: its type, and for scalars the value.
func describe(v any, got string) string {
	switch x := v.(type) {
	case string:
		s := x
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		return fmt.Sprintf("string %q", s)
	case json.Number, bool:
		return fmt.Sprintf("%s %v", got, x)
	}
	return got
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// allowedKeys lists, sorted and comma-separated, the declared properties of the
// schema at the given absolute location.
func (v *validator) allowedKeys(loc string) string {
	frag := ""
	if i := strings.IndexByte(loc, '#'); i >= 0 {
		frag = loc[i+1:]
	}
	if u, err := url.PathUnescape(frag); err == nil {
		frag = u
	}
	node := v.doc
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		node = valueAt(node, []string{tok})
	}
	obj, _ := node.(map[string]any)
	props, _ := obj["properties"].(map[string]any)
	if len(props) == 0 {
		return "(none)"
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}
