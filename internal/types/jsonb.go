package types

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/cockroachdb/apd/v3"
	"github.com/rockstream/rockstream/internal/errs"
)

// JSONB values are trees of JSON nodes in PostgreSQL's jsonb normal form:
// an object's keys are unique (the last duplicate wins on input) and kept
// in jsonb's storage order (shorter keys first, then bytewise); numbers are
// NUMERIC values as numeric_in makes them from the JSON text (1.50 keeps
// its scale, 1e2 is 100); strings are UTF-8 without \u0000. A node is never
// modified once it is in a Value.

// JSONKind is the kind of a JSON node. The values are jsonb's type order
// (PostgreSQL's jbvType): null < string < number < boolean < array < object.
type JSONKind uint8

// The JSON node kinds, in jsonb's order of types.
const (
	JSONNull JSONKind = iota
	JSONString
	JSONNumber
	JSONBool
	JSONArray
	JSONObject
)

// JSON is one node of a jsonb value.
type JSON struct {
	Kind JSONKind
	// Str is a string's text.
	Str string
	// Num is a number's value, in canonical form (see doc.go).
	Num *apd.Decimal
	// Bool is a boolean's truth.
	Bool bool
	// Elems are an array's elements.
	Elems []*JSON
	// Keys and Vals are an object's keys, in storage order, and their
	// values.
	Keys []string
	Vals []*JSON
}

// Shared leaf nodes.
var (
	jsonNullNode  = &JSON{Kind: JSONNull}
	jsonTrueNode  = &JSON{Kind: JSONBool, Bool: true}
	jsonFalseNode = &JSON{Kind: JSONBool}
)

// MakeJSONB returns a JSONB value holding the tree j, which must be in
// normal form (NewJSONObject sorts keys) and never modified afterwards.
func MakeJSONB(j *JSON) Value { return Value{kind: Jsonb, ref: unsafe.Pointer(j)} }

// JSONB returns a JSONB value's tree (nil for other kinds). It must not be
// modified.
func (v Value) JSONB() *JSON {
	if v.kind != Jsonb {
		return nil
	}
	return (*JSON)(v.ref)
}

// JSONStringNode returns a JSON string node.
func JSONStringNode(s string) *JSON { return &JSON{Kind: JSONString, Str: s} }

// JSONNumberNode returns a JSON number node; d must not be modified
// afterwards.
func JSONNumberNode(d *apd.Decimal) *JSON { return &JSON{Kind: JSONNumber, Num: canonical(d)} }

// JSONBoolNode returns a JSON boolean node.
func JSONBoolNode(b bool) *JSON {
	if b {
		return jsonTrueNode
	}
	return jsonFalseNode
}

// JSONNullNode returns the JSON null node.
func JSONNullNode() *JSON { return jsonNullNode }

// JSONArrayNode returns a JSON array node over elems, which it keeps.
func JSONArrayNode(elems []*JSON) *JSON { return &JSON{Kind: JSONArray, Elems: elems} }

// NewJSONObject returns a JSON object node of the given pairs in any order:
// keys are put in storage order and, of duplicates, the last pair wins, as
// jsonb's input does. It keeps neither slice.
func NewJSONObject(keys []string, vals []*JSON) *JSON {
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	// Stable, so that duplicates stay in input order and the last wins.
	slices.SortStableFunc(idx, func(a, b int) int { return compareJSONKeys(keys[a], keys[b]) })
	o := &JSON{Kind: JSONObject}
	for n, i := range idx {
		if n+1 < len(idx) && keys[idx[n+1]] == keys[i] {
			continue
		}
		o.Keys = append(o.Keys, keys[i])
		o.Vals = append(o.Vals, vals[i])
	}
	return o
}

// compareJSONKeys is jsonb's storage order of object keys: shorter keys
// first, then bytewise.
func compareJSONKeys(a, b string) int {
	if len(a) != len(b) {
		return cmp.Compare(len(a), len(b))
	}
	return strings.Compare(a, b)
}

// Lookup returns the value of key in an object node, or nil.
func (j *JSON) Lookup(key string) *JSON {
	if j.Kind != JSONObject {
		return nil
	}
	lo, hi := 0, len(j.Keys)
	for lo < hi {
		m := (lo + hi) / 2
		switch c := compareJSONKeys(j.Keys[m], key); {
		case c == 0:
			return j.Vals[m]
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return nil
}

// compareJSONB orders two jsonb values as PostgreSQL's
// compareJsonbContainers: an object is greater than any other value; a
// scalar at the top is a one-element "raw scalar" array, so arrays and
// scalars compare by element count first, then a scalar before a true
// array of the same count, then element by element.
func compareJSONB(a, b *JSON) int {
	ao, bo := a.Kind == JSONObject, b.Kind == JSONObject
	switch {
	case ao && bo:
		return compareJSONNode(a, b)
	case ao:
		return 1
	case bo:
		return -1
	}
	an, bn := topCount(a), topCount(b)
	if an != bn {
		return cmp.Compare(an, bn)
	}
	ar, br := a.Kind == JSONArray, b.Kind == JSONArray
	switch {
	case ar && br:
		return compareJSONNode(a, b)
	case ar:
		return 1
	case br:
		return -1
	}
	return compareJSONNode(a, b)
}

// topCount is the element count of a top-level array or raw scalar.
func topCount(j *JSON) int {
	if j.Kind == JSONArray {
		return len(j.Elems)
	}
	return 1
}

// compareJSONNode orders nested nodes: by kind, then strings bytewise,
// numbers by value, false before true, arrays and objects by their size
// and then element by element (an object's pairs in storage order, key
// before value).
func compareJSONNode(a, b *JSON) int {
	if a.Kind != b.Kind {
		return cmp.Compare(a.Kind, b.Kind)
	}
	switch a.Kind {
	case JSONString:
		return strings.Compare(a.Str, b.Str)
	case JSONNumber:
		return compareDecimal(a.Num, b.Num)
	case JSONBool:
		switch {
		case a.Bool == b.Bool:
			return 0
		case b.Bool:
			return -1
		}
		return 1
	case JSONArray:
		if c := cmp.Compare(len(a.Elems), len(b.Elems)); c != 0 {
			return c
		}
		for i := range a.Elems {
			if c := compareJSONNode(a.Elems[i], b.Elems[i]); c != 0 {
				return c
			}
		}
	case JSONObject:
		if c := cmp.Compare(len(a.Keys), len(b.Keys)); c != 0 {
			return c
		}
		for i := range a.Keys {
			if c := strings.Compare(a.Keys[i], b.Keys[i]); c != 0 {
				return c
			}
			if c := compareJSONNode(a.Vals[i], b.Vals[i]); c != 0 {
				return c
			}
		}
	}
	return 0
}

// jsonSyntax is jsonb_in's error for malformed text, with PostgreSQL's
// DETAIL.
func jsonSyntax(detail string) error {
	return withDetail(errs.New(errs.InvalidTextRep, "invalid input syntax for type json"), detail)
}

// withDetail sets the DETAIL of an error made by errs.New.
func withDetail(err error, detail string) error {
	if e, ok := err.(*errs.Error); ok {
		e.Detail = detail
	}
	return err
}

// ParseJSONB parses JSON text as jsonb_in does.
func ParseJSONB(s string) (*JSON, error) {
	p := jsonParser{s: s}
	p.skipSpace()
	j, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.i < len(p.s) {
		return nil, jsonSyntax(`Expected end of input, but found "` + p.token() + `".`)
	}
	return j, nil
}

// jsonParser is a recursive-descent parser of JSON text.
type jsonParser struct {
	s     string
	i     int
	depth int
}

// maxJSONDepth bounds nesting, as PostgreSQL's stack depth check does.
const maxJSONDepth = 6400

func (p *jsonParser) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// token returns the text of the token at the parser's position, as
// PostgreSQL's messages quote it.
func (p *jsonParser) token() string {
	if p.i >= len(p.s) {
		return ""
	}
	switch p.s[p.i] {
	case '{', '}', '[', ']', ',', ':', '"':
		return p.s[p.i : p.i+1]
	}
	j := p.i
	for j < len(p.s) && isJSONWordByte(p.s[j]) {
		j++
	}
	if j == p.i {
		_, n := utf8.DecodeRuneInString(p.s[p.i:])
		j = p.i + n
	}
	return p.s[p.i:j]
}

// isJSONWordByte reports whether c continues a bare token (a number or a
// keyword), as PostgreSQL's lexer groups them.
func isJSONWordByte(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '{', '}', '[', ']', ',', ':', '"':
		return false
	}
	return true
}

func (p *jsonParser) unexpectedEnd() error {
	return jsonSyntax("The input string ended unexpectedly.")
}

func (p *jsonParser) value() (*JSON, error) {
	if p.i >= len(p.s) {
		return nil, p.unexpectedEnd()
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return JSONStringNode(s), nil
	case c == '-' || isDigit(c):
		return p.number()
	}
	tok := p.token()
	switch tok {
	case "true":
		p.i += 4
		return jsonTrueNode, nil
	case "false":
		p.i += 5
		return jsonFalseNode, nil
	case "null":
		p.i += 4
		return jsonNullNode, nil
	}
	return nil, jsonSyntax(`Token "` + tok + `" is invalid.`)
}

func (p *jsonParser) enter() error {
	p.depth++
	if p.depth > maxJSONDepth {
		return errs.New(errs.StatementTooComplex, "stack depth limit exceeded")
	}
	return nil
}

func (p *jsonParser) object() (*JSON, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.i++ // {
	var keys []string
	var vals []*JSON
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return &JSON{Kind: JSONObject}, nil
	}
	for {
		if p.i >= len(p.s) {
			return nil, p.unexpectedEnd()
		}
		if p.s[p.i] != '"' {
			return nil, jsonSyntax(`Expected string or "}", but found "` + p.token() + `".`)
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.i >= len(p.s) {
			return nil, p.unexpectedEnd()
		}
		if p.s[p.i] != ':' {
			return nil, jsonSyntax(`Expected ":", but found "` + p.token() + `".`)
		}
		p.i++
		p.skipSpace()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		keys, vals = append(keys, k), append(vals, v)
		p.skipSpace()
		if p.i >= len(p.s) {
			return nil, p.unexpectedEnd()
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			p.skipSpace()
			if p.i < len(p.s) && p.s[p.i] != '"' {
				return nil, jsonSyntax(`Expected string, but found "` + p.token() + `".`)
			}
		case '}':
			p.i++
			return NewJSONObject(keys, vals), nil
		default:
			return nil, jsonSyntax(`Expected "," or "}", but found "` + p.token() + `".`)
		}
	}
}

func (p *jsonParser) array() (*JSON, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.i++ // [
	elems := []*JSON{}
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return JSONArrayNode(elems), nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		elems = append(elems, v)
		p.skipSpace()
		if p.i >= len(p.s) {
			return nil, p.unexpectedEnd()
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			p.skipSpace()
		case ']':
			p.i++
			return JSONArrayNode(elems), nil
		default:
			return nil, jsonSyntax(`Expected "," or "]", but found "` + p.token() + `".`)
		}
	}
}

// number parses a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
// followed by no other word character.
func (p *jsonParser) number() (*JSON, error) {
	start := p.i
	i := p.i
	s := p.s
	digits := func() int {
		n := 0
		for i < len(s) && isDigit(s[i]) {
			i++
			n++
		}
		return n
	}
	ok := true
	if s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if digits() == 0 {
		ok = false
	}
	if ok && i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			ok = false
		}
	}
	if ok && i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			ok = false
		}
	}
	if !ok || (i < len(s) && isJSONWordByte(s[i])) {
		return nil, jsonSyntax(`Token "` + p.token() + `" is invalid.`)
	}
	d, err := ParseNumeric(s[start:i])
	if err != nil {
		return nil, err
	}
	p.i = i
	return JSONNumberNode(d), nil
}

// str parses a JSON string literal at p.i.
func (p *jsonParser) str() (string, error) {
	p.i++ // "
	var b strings.Builder
	s := p.s
	for {
		if p.i >= len(s) {
			return "", p.unexpectedEnd()
		}
		c := s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c < 0x20:
			return "", jsonSyntax("Character with value 0x" + string(hexDigits[c>>4]) + string(hexDigits[c&15]) + " must be escaped.")
		case c != '\\':
			b.WriteByte(c)
			p.i++
			continue
		}
		p.i++
		if p.i >= len(s) {
			return "", p.unexpectedEnd()
		}
		e := s[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, err := p.hex4()
			if err != nil {
				return "", err
			}
			switch {
			case utf16.IsSurrogate(r) && r < 0xdc00:
				if p.i+1 < len(s) && s[p.i] == '\\' && s[p.i+1] == 'u' {
					p.i += 2
					lo, err := p.hex4()
					if err != nil {
						return "", err
					}
					if lo < 0xdc00 || lo > 0xdfff {
						return "", jsonSyntax("Unicode low surrogate must follow a high surrogate.")
					}
					r = utf16.DecodeRune(r, lo)
				} else {
					return "", jsonSyntax("Unicode low surrogate must follow a high surrogate.")
				}
			case utf16.IsSurrogate(r):
				return "", jsonSyntax("Unicode low surrogate must follow a high surrogate.")
			case r == 0:
				return "", withDetail(errs.New(errs.UntranslatableCharacter, "unsupported Unicode escape sequence"), `\u0000 cannot be converted to text.`)
			}
			b.WriteRune(r)
		default:
			p.i--
			_, n := utf8.DecodeRuneInString(s[p.i:])
			return "", jsonSyntax(`Escape sequence "\` + s[p.i:p.i+n] + `" is invalid.`)
		}
	}
}

// hex4 reads the four hex digits of a \u escape.
func (p *jsonParser) hex4() (rune, error) {
	var r rune
	for k := 0; k < 4; k++ {
		if p.i >= len(p.s) {
			return 0, p.unexpectedEnd()
		}
		c := p.s[p.i]
		var d byte
		switch {
		case isDigit(c):
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, jsonSyntax(`"\u" must be followed by four hexadecimal digits.`)
		}
		r = r<<4 | rune(d)
		p.i++
	}
	return r, nil
}

// AppendJSONB appends jsonb_out's text of j: `{"a": 1, "b": [1, 2]}`.
func AppendJSONB(dst []byte, j *JSON) []byte {
	switch j.Kind {
	case JSONNull:
		return append(dst, "null"...)
	case JSONBool:
		if j.Bool {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case JSONNumber:
		return AppendNumeric(dst, j.Num)
	case JSONString:
		return appendJSONString(dst, j.Str)
	case JSONArray:
		dst = append(dst, '[')
		for i, e := range j.Elems {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = AppendJSONB(dst, e)
		}
		return append(dst, ']')
	}
	dst = append(dst, '{')
	for i, k := range j.Keys {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = appendJSONString(dst, k)
		dst = append(dst, ": "...)
		dst = AppendJSONB(dst, j.Vals[i])
	}
	return append(dst, '}')
}

// appendJSONString appends s as a JSON string literal, escaped as
// PostgreSQL's escape_json does.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			if c < 0x20 {
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			} else {
				dst = append(dst, c)
			}
		}
	}
	return append(dst, '"')
}

// FormatJSONB returns jsonb_out's text of j.
func FormatJSONB(j *JSON) string { return string(AppendJSONB(nil, j)) }

// appendJSONPretty appends jsonb_pretty's text of j at the given indent
// level: one element or pair per line, four spaces per level.
func appendJSONPretty(dst []byte, j *JSON, level int) []byte {
	indent := func(dst []byte, n int) []byte {
		for k := 0; k < n; k++ {
			dst = append(dst, "    "...)
		}
		return dst
	}
	switch j.Kind {
	case JSONArray:
		if len(j.Elems) == 0 {
			return append(indent(append(dst, "[\n"...), level), ']')
		}
		dst = append(dst, '[')
		for i, e := range j.Elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '\n')
			dst = indent(dst, level+1)
			dst = appendJSONPretty(dst, e, level+1)
		}
		dst = append(dst, '\n')
		dst = indent(dst, level)
		return append(dst, ']')
	case JSONObject:
		if len(j.Keys) == 0 {
			return append(indent(append(dst, "{\n"...), level), '}')
		}
		dst = append(dst, '{')
		for i, k := range j.Keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '\n')
			dst = indent(dst, level+1)
			dst = appendJSONString(dst, k)
			dst = append(dst, ": "...)
			dst = appendJSONPretty(dst, j.Vals[i], level+1)
		}
		dst = append(dst, '\n')
		dst = indent(dst, level)
		return append(dst, '}')
	}
	return AppendJSONB(dst, j)
}
