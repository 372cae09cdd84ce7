package tools

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// fastCheck is an accept-only precheck of a simple schema, built once per tool
// next to the compiled library validator. accepts(v) == true means the library
// would certainly accept v (so validation is skipped and, since only a failed
// validation coerces, nothing would have been coerced); false means "not sure"
// and the library decides, with its messages, paths and coercion. It never
// rejects anything itself.
//
// It runs first on the raw text (strict JSON without escapes) and then on the
// parsed value. It is built only for simple schemas — type, properties,
// required, additionalProperties, scalar enum/const, numeric bounds,
// lengths, items and annotations; no $ref or combinators: the keywords
// listed in fastKeywords, and a root $schema naming a draft the library knows
// (the JSON Schema that MCP servers' schema generators emit says draft-07).
// Under drafts before 2019-09 the library asserts "format", so there a
// schema that uses it gets no fast check. Every doubt (non-canonical integers such as 1.0 or -0,
// a number equal to a bound after rounding, an enum number spelled
// differently, a string where a number is expected) defers.
type fastCheck struct {
	never     bool      // the false schema
	types     jsonTypes // 0: any type
	props     map[string]*fastCheck
	required  []string
	addlFalse bool       // additionalProperties: false
	addl      *fastCheck // additionalProperties as a schema; nil: anything
	enum      []any      // scalars: string, bool, nil, json.Number
	hasEnum   bool
	constant  []any // const as a one-value list; both const and enum must hold
	hasConst  bool
	min, max  *numBound
	xmin      *numBound
	xmax      *numBound
	minLen    int // -1: none
	maxLen    int
	items     *fastCheck // nil: anything
	minItems  int
	maxItems  int
}

type jsonTypes uint8

const (
	tNull jsonTypes = 1 << iota
	tBoolean
	tNumber
	tInteger
	tString
	tArray
	tObject
)

var typeNames = map[string]jsonTypes{
	"null": tNull, "boolean": tBoolean, "number": tNumber, "integer": tInteger,
	"string": tString, "array": tArray, "object": tObject,
}

// fastKeywords are the keywords a fast check understands; "format" is an
// annotation here because compileSchema does not assert formats from draft
// 2019-09 on (the default draft is 2020-12); under older drafts fastBuilder
// refuses it.
var fastKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"enum": true, "const": true, "minimum": true, "maximum": true, "exclusiveMinimum": true,
	"exclusiveMaximum": true, "minLength": true, "maxLength": true, "items": true,
	"minItems": true, "maxItems": true, "uniqueItems": true,
	"title": true, "description": true, "default": true, "examples": true, "$comment": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "format": true,
}

// numBound is a numeric bound from the schema: its float64 rounding, and its
// exact value when it is an int64.
type numBound struct {
	f     float64
	i     int64
	isInt bool
}

// buildFastCheck returns the fast check of a parsed schema document whose
// draft the library compiled it under (Schema.DraftVersion), or nil when the
// document uses anything it does not understand.
func buildFastCheck(doc any, draft int) *fastCheck {
	b := fastBuilder{formatAsserted: draft < 2019}
	if m, ok := doc.(map[string]any); ok {
		if _, declared := m["$schema"]; declared {
			if !knownDraft(draft) {
				return nil
			}
			root := make(map[string]any, len(m))
			for k, v := range m {
				if k != "$schema" {
					root[k] = v
				}
			}
			doc = root
		}
	}
	fc, ok := b.build(doc, 0)
	if !ok {
		return nil
	}
	return fc
}

// knownDraft reports whether draft is a version whose fast keywords mean
// what the fast check assumes: 4, 6, 7, 2019 or 2020. (Draft 4's boolean
// exclusiveMinimum/Maximum is not a bound and so gets no fast check; its
// lack of const only makes the fast check stricter, which defers.)
func knownDraft(draft int) bool {
	switch draft {
	case 4, 6, 7, 2019, 2020:
		return true
	}
	return false
}

// fastBuilder compiles a schema document into a fast check.
type fastBuilder struct {
	formatAsserted bool // the draft asserts "format": a schema using it is not simple
}

func (b fastBuilder) build(doc any, depth int) (*fastCheck, bool) {
	if depth > 32 {
		return nil, false
	}
	switch d := doc.(type) {
	case bool:
		return &fastCheck{never: !d, minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}, true
	case map[string]any:
		fc := &fastCheck{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}
		for k, v := range d {
			if !fastKeywords[k] || (k == "format" && b.formatAsserted) || !b.keyword(fc, k, v, depth) {
				return nil, false
			}
		}
		return fc, true
	}
	return nil, false
}

// keyword compiles one keyword into fc; false means unsupported.
func (b fastBuilder) keyword(fc *fastCheck, k string, v any, depth int) bool {
	var ok bool
	switch k {
	case "type":
		fc.types, ok = parseTypes(v)
		return ok
	case "properties":
		m, isMap := v.(map[string]any)
		if !isMap {
			return false
		}
		fc.props = make(map[string]*fastCheck, len(m))
		for name, sub := range m {
			if fc.props[name], ok = b.build(sub, depth+1); !ok {
				return false
			}
		}
		return true
	case "required":
		list, isList := v.([]any)
		if !isList {
			return false
		}
		for _, r := range list {
			s, isStr := r.(string)
			if !isStr {
				return false
			}
			fc.required = append(fc.required, s)
		}
		return true
	case "additionalProperties":
		if b, isBool := v.(bool); isBool {
			fc.addlFalse = !b
			return true
		}
		fc.addl, ok = b.build(v, depth+1)
		return ok
	case "items":
		fc.items, ok = b.build(v, depth+1)
		return ok
	case "enum":
		list, isList := v.([]any)
		if !isList {
			return false
		}
		for _, e := range list {
			if !isScalar(e) {
				return false
			}
		}
		fc.enum, fc.hasEnum = list, true
		return true
	case "const":
		if !isScalar(v) {
			return false
		}
		fc.constant, fc.hasConst = []any{v}, true
		return true
	case "minimum":
		fc.min, ok = parseBound(v)
	case "maximum":
		fc.max, ok = parseBound(v)
	case "exclusiveMinimum":
		fc.xmin, ok = parseBound(v)
	case "exclusiveMaximum":
		fc.xmax, ok = parseBound(v)
	case "minLength":
		fc.minLen, ok = parseCount(v)
	case "maxLength":
		fc.maxLen, ok = parseCount(v)
	case "minItems":
		fc.minItems, ok = parseCount(v)
	case "maxItems":
		fc.maxItems, ok = parseCount(v)
	case "uniqueItems":
		b, isBool := v.(bool)
		return isBool && !b
	default: // annotations
		return true
	}
	return ok
}

func parseTypes(v any) (jsonTypes, bool) {
	switch t := v.(type) {
	case string:
		bit, ok := typeNames[t]
		return bit, ok
	case []any:
		var set jsonTypes
		for _, e := range t {
			s, ok := e.(string)
			if !ok || typeNames[s] == 0 {
				return 0, false
			}
			set |= typeNames[s]
		}
		return set, set != 0
	}
	return 0, false
}

func isScalar(v any) bool {
	switch v.(type) {
	case nil, bool, string, json.Number:
		return true
	}
	return false
}

func parseBound(v any) (*numBound, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	b, ok := numberOf(string(n))
	return &b, ok
}

// numberOf reads a JSON number's text; false when it overflows float64.
func numberOf(s string) (numBound, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return numBound{}, false
	}
	b := numBound{f: f}
	if isIntText(s) {
		b.i, err = strconv.ParseInt(s, 10, 64)
		b.isInt = err == nil
	}
	return b, true
}

func parseCount(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(string(n))
	return i, err == nil && i >= 0
}

// isIntText reports whether a JSON number's text has no fraction or exponent,
// so it is an integer exactly (1.0 and 1e2 are integers too, but those defer).
func isIntText(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// accepts reports whether v is certainly valid; false means "ask the library".
func (fc *fastCheck) accepts(v any) bool {
	if fc.never {
		return false
	}
	if fc.hasEnum && !oneOf(v, fc.enum) || fc.hasConst && !oneOf(v, fc.constant) {
		return false
	}
	switch x := v.(type) {
	case nil:
		return fc.types == 0 || fc.types&tNull != 0
	case bool:
		return fc.types == 0 || fc.types&tBoolean != 0
	case string:
		return fc.acceptsString(x)
	case json.Number:
		return fc.acceptsNumber(string(x))
	case []any:
		return fc.acceptsArray(x)
	case map[string]any:
		return fc.acceptsObject(x)
	}
	return false
}

// oneOf matches v against scalars exactly; a number matches only the same spelling
// (the library compares numbers exactly, so "1" and "1.0" would defer).
func oneOf(v any, list []any) bool {
	for _, e := range list {
		switch x := v.(type) {
		case nil:
			if e == nil {
				return true
			}
		case bool:
			if b, ok := e.(bool); ok && b == x {
				return true
			}
		case string:
			if s, ok := e.(string); ok && s == x {
				return true
			}
		case json.Number:
			if n, ok := e.(json.Number); ok && n == x {
				return true
			}
		}
	}
	return false
}

func (fc *fastCheck) acceptsString(s string) bool {
	if fc.types != 0 && fc.types&tString == 0 {
		return false // a type error, or an integer-valued string to coerce
	}
	if fc.minLen < 0 && fc.maxLen < 0 {
		return true
	}
	n := utf8.RuneCountInString(s)
	return (fc.minLen < 0 || n >= fc.minLen) && (fc.maxLen < 0 || n <= fc.maxLen)
}

func (fc *fastCheck) acceptsNumber(s string) bool {
	intText := isIntText(s) && s != "-0" // check rewrites -0 for an integer
	if fc.types != 0 && fc.types&tNumber == 0 && (fc.types&tInteger == 0 || !intText) {
		return false
	}
	if fc.min == nil && fc.max == nil && fc.xmin == nil && fc.xmax == nil {
		return true
	}
	val, ok := numberOf(s)
	if !ok {
		return false
	}
	return (fc.min == nil || atLeast(&val, fc.min, false)) && (fc.max == nil || atLeast(fc.max, &val, false)) &&
		(fc.xmin == nil || atLeast(&val, fc.xmin, true)) && (fc.xmax == nil || atLeast(fc.xmax, &val, true))
}

// atLeast reports whether a >= b (a > b when strict) is certain. Two exact
// int64s compare exactly; otherwise only different float64 roundings decide
// (rounding is monotone, so they order the exact values the same way) and
// equal roundings defer.
func atLeast(a, b *numBound, strict bool) bool {
	if a.isInt && b.isInt {
		return a.i > b.i || !strict && a.i == b.i
	}
	return a.f > b.f
}

func (fc *fastCheck) acceptsArray(a []any) bool {
	if fc.types != 0 && fc.types&tArray == 0 {
		return false
	}
	if fc.minItems >= 0 && len(a) < fc.minItems || fc.maxItems >= 0 && len(a) > fc.maxItems {
		return false
	}
	if fc.items != nil {
		for _, e := range a {
			if !fc.items.accepts(e) {
				return false
			}
		}
	}
	return true
}

func (fc *fastCheck) acceptsObject(m map[string]any) bool {
	if fc.types != 0 && fc.types&tObject == 0 {
		return false
	}
	for _, r := range fc.required {
		if _, ok := m[r]; !ok {
			return false
		}
	}
	for k, v := range m {
		if sub, ok := fc.props[k]; ok {
			if !sub.accepts(v) {
				return false
			}
			continue
		}
		if fc.addlFalse || fc.addl != nil && !fc.addl.accepts(v) {
			return false
		}
	}
	return true
}

// acceptsText is accepts on the raw argument text itself, without building
// the value tree: true only when raw is certainly valid JSON (a strict subset
// of the grammar: no escapes in strings, valid UTF-8, nesting up to
// maxFastDepth) and the value it encodes is certainly valid. False means
// "not sure": the text is parsed and checked as before.
func (fc *fastCheck) acceptsText(raw string) bool {
	s := textScan{s: raw}
	s.space()
	if !s.value(fc, 0) {
		return false
	}
	s.space()
	return s.i == len(s.s)
}

const maxFastDepth = 32

// textScan walks JSON text; fc == nil in its methods means any value.
type textScan struct {
	s string
	i int
}

func (s *textScan) space() {
	for s.i < len(s.s) {
		switch s.s[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *textScan) value(fc *fastCheck, depth int) bool {
	if s.i >= len(s.s) || depth > maxFastDepth || fc != nil && fc.never {
		return false
	}
	switch c := s.s[s.i]; {
	case c == '{':
		return s.object(fc, depth)
	case c == '[':
		return s.array(fc, depth)
	case c == '"':
		str, ok := s.str()
		return ok && (fc == nil || fc.textString(str))
	case c == 't':
		return s.literal("true") && (fc == nil || fc.textLiteral(tBoolean, "true"))
	case c == 'f':
		return s.literal("false") && (fc == nil || fc.textLiteral(tBoolean, "false"))
	case c == 'n':
		return s.literal("null") && (fc == nil || fc.textLiteral(tNull, "null"))
	case c == '-' || c >= '0' && c <= '9':
		num, ok := s.number()
		return ok && (fc == nil || fc.textNumber(num))
	}
	return false
}

func (s *textScan) literal(lit string) bool {
	if len(s.s)-s.i < len(lit) || s.s[s.i:s.i+len(lit)] != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// str scans a string without escapes or control characters, in valid UTF-8.
func (s *textScan) str() (string, bool) {
	start := s.i + 1
	ascii := true
	for j := start; j < len(s.s); j++ {
		switch c := s.s[j]; {
		case c == '"':
			s.i = j + 1
			v := s.s[start:j]
			return v, ascii || utf8.ValidString(v)
		case c == '\\' || c < 0x20:
			return "", false
		case c >= 0x80:
			ascii = false
		}
	}
	return "", false
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (s *textScan) number() (string, bool) {
	start := s.i
	if s.s[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.s) && s.s[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return "", false
	}
	if s.i < len(s.s) && s.s[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return "", false
		}
	}
	if s.i < len(s.s) && (s.s[s.i] == 'e' || s.s[s.i] == 'E') {
		s.i++
		if s.i < len(s.s) && (s.s[s.i] == '+' || s.s[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return "", false
		}
	}
	return s.s[start:s.i], true
}

func (s *textScan) digits() int {
	n := 0
	for s.i < len(s.s) && s.s[s.i] >= '0' && s.s[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

func (s *textScan) object(fc *fastCheck, depth int) bool {
	if fc != nil && (fc.hasEnum || fc.hasConst || fc.types != 0 && fc.types&tObject == 0 || len(fc.required) > 64) {
		return false
	}
	var seen uint64 // bit i: required[i] is present
	s.i++
	s.space()
	if s.i < len(s.s) && s.s[s.i] == '}' {
		s.i++
		return fc == nil || len(fc.required) == 0
	}
	for {
		s.space()
		if s.i >= len(s.s) || s.s[s.i] != '"' {
			return false
		}
		key, ok := s.str()
		if !ok {
			return false
		}
		s.space()
		if s.i >= len(s.s) || s.s[s.i] != ':' {
			return false
		}
		s.i++
		s.space()
		var sub *fastCheck
		if fc != nil {
			for r, name := range fc.required {
				if name == key {
					seen |= 1 << r
				}
			}
			if p, declared := fc.props[key]; declared {
				sub = p
			} else if fc.addlFalse {
				return false
			} else {
				sub = fc.addl
			}
		}
		if !s.value(sub, depth+1) {
			return false
		}
		s.space()
		if s.i >= len(s.s) {
			return false
		}
		switch s.s[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return fc == nil || seen == 1<<len(fc.required)-1
		default:
			return false
		}
	}
}

func (s *textScan) array(fc *fastCheck, depth int) bool {
	if fc != nil && (fc.hasEnum || fc.hasConst || fc.types != 0 && fc.types&tArray == 0) {
		return false
	}
	var items *fastCheck
	if fc != nil {
		items = fc.items
	}
	n := 0
	s.i++
	s.space()
	if s.i < len(s.s) && s.s[s.i] == ']' {
		s.i++
		return fc == nil || fc.countOK(0)
	}
	for {
		s.space()
		if !s.value(items, depth+1) {
			return false
		}
		n++
		s.space()
		if s.i >= len(s.s) {
			return false
		}
		switch s.s[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return fc == nil || fc.countOK(n)
		default:
			return false
		}
	}
}

func (fc *fastCheck) countOK(n int) bool {
	return (fc.minItems < 0 || n >= fc.minItems) && (fc.maxItems < 0 || n <= fc.maxItems)
}

func (fc *fastCheck) textString(v string) bool {
	if fc.hasEnum && !hasString(fc.enum, v) || fc.hasConst && !hasString(fc.constant, v) {
		return false
	}
	return fc.acceptsString(v)
}

func hasString(list []any, v string) bool {
	for _, e := range list {
		if s, ok := e.(string); ok && s == v {
			return true
		}
	}
	return false
}

func (fc *fastCheck) textNumber(v string) bool {
	if fc.hasEnum && !hasNumber(fc.enum, v) || fc.hasConst && !hasNumber(fc.constant, v) {
		return false
	}
	return fc.acceptsNumber(v)
}

func hasNumber(list []any, v string) bool {
	for _, e := range list {
		if n, ok := e.(json.Number); ok && string(n) == v {
			return true
		}
	}
	return false
}

// textLiteral checks true, false or null (t is tBoolean or tNull).
func (fc *fastCheck) textLiteral(t jsonTypes, lit string) bool {
	if fc.types != 0 && fc.types&t == 0 {
		return false
	}
	var v any
	if t == tBoolean {
		v = lit == "true"
	}
	return (!fc.hasEnum || oneOf(v, fc.enum)) && (!fc.hasConst || oneOf(v, fc.constant))
}
