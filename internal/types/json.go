package types

import (
	"bytes"
	"strconv"

	"github.com/rockstream/rockstream/internal/errs"
)

// Json is PostgreSQL's json: the text of a JSON document, kept as it was
// written (whitespace, key order and duplicate keys included), checked
// on input. Its values have kind Text. It has no comparison operators,
// as in PostgreSQL. Its number is outside the ordered block of type.go,
// above the catalog types; like them it is never renumbered.
const Json TypeID = 40

// parseJSON checks that s is a JSON document and returns it unchanged.
// The check is jsonb's parser's, which accepts what json_in accepts.
func parseJSON(s string) (Value, error) {
	if _, err := ParseJSONB(s); err != nil {
		return Null, err
	}
	return MakeText(s), nil
}

// jsonScanner walks the text of a valid JSON document, finding the
// spans of its values without building them.
type jsonScanner struct {
	s string
	i int
}

func (p *jsonScanner) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// skip moves past the value at p.i (after leading space), returning
// where it starts.
func (p *jsonScanner) skip() int {
	p.space()
	start := p.i
	if p.i >= len(p.s) {
		return start
	}
	switch c := p.s[p.i]; c {
	case '{', '[':
		close := byte('}')
		if c == '[' {
			close = ']'
		}
		p.i++
		for {
			p.space()
			if p.i < len(p.s) && p.s[p.i] == close {
				p.i++
				return start
			}
			p.skip()
			p.space()
			if p.i < len(p.s) && p.s[p.i] == ':' {
				p.i++
				p.skip()
				p.space()
			}
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
			}
			if p.i >= len(p.s) {
				return start
			}
		}
	case '"':
		p.i++
		for p.i < len(p.s) && p.s[p.i] != '"' {
			if p.s[p.i] == '\\' {
				p.i++
			}
			p.i++
		}
		p.i++
	default:
		for p.i < len(p.s) {
			switch p.s[p.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r', ':':
				return start
			}
			p.i++
		}
	}
	return start
}

// jsonTop returns the span of the document's top-level value.
func jsonTop(s string) string {
	p := jsonScanner{s: s}
	start := p.skip()
	return s[start:p.i]
}

// jsonMembers calls f with the text of each member of the top-level
// object or array of s (key is the raw key text, with quotes, for an
// object) and reports the top-level value's first byte.
func jsonMembers(s string, f func(key, value string)) byte {
	p := jsonScanner{s: s}
	p.space()
	if p.i >= len(s) {
		return 0
	}
	open := s[p.i]
	if open != '{' && open != '[' {
		return open
	}
	p.i++
	for {
		p.space()
		if p.i >= len(s) || s[p.i] == '}' || s[p.i] == ']' {
			return open
		}
		start := p.skip()
		first := s[start:p.i]
		p.space()
		if open == '{' {
			p.i++ // ':'
			vs := p.skip()
			f(first, s[vs:p.i])
			p.space()
		} else {
			f("", first)
		}
		if p.i < len(s) && s[p.i] == ',' {
			p.i++
		}
	}
}

// jsonUnquote returns the string a JSON string literal stands for.
func jsonUnquote(lit string) string {
	j, err := ParseJSONB(lit)
	if err != nil || j.Kind != JSONString {
		return lit
	}
	return j.Str
}

// jsonField returns the value of the last member named key of the
// top-level object of s (json keeps duplicates; the last one counts, as
// in PostgreSQL), and whether there is one.
func jsonField(s, key string) (string, bool) {
	var out string
	found := false
	if jsonMembers(s, func(k, v string) {
		if jsonUnquote(k) == key {
			out, found = v, true
		}
	}) != '{' {
		return "", false
	}
	return out, found
}

// jsonElement returns element i of the top-level array of s (from the
// end when negative).
func jsonElement(s string, i int64) (string, bool) {
	var elems []string
	if jsonMembers(s, func(_, v string) { elems = append(elems, v) }) != '[' {
		return "", false
	}
	if i < 0 {
		i += int64(len(elems))
	}
	if i < 0 || i >= int64(len(elems)) {
		return "", false
	}
	return elems[i], true
}

// jsonStep follows one path step: an object's key or an array's index.
func jsonStep(s string, step string) (string, bool) {
	top := jsonTop(s)
	if len(top) > 0 && top[0] == '[' {
		i, err := strconv.ParseInt(step, 10, 64)
		if err != nil {
			return "", false
		}
		return jsonElement(top, i)
	}
	return jsonField(top, step)
}

// jsonOut returns the json result of an extraction.
func jsonOut(s string, ok bool) Value {
	if !ok {
		return Null
	}
	return MakeText(s)
}

// jsonTextOut returns the text result of an extraction: a string's
// contents, NULL for null, other values' text.
func jsonTextOut(s string, ok bool) Value {
	if !ok || s == "null" {
		return Null
	}
	if len(s) > 0 && s[0] == '"' {
		return MakeText(jsonUnquote(s))
	}
	return MakeText(s)
}

// jsonTypeOf is json_typeof.
func jsonTypeOf(s string) string {
	top := jsonTop(s)
	if top == "" {
		return "null"
	}
	switch top[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func init() {
	textArr := ArrayOf(Text)
	addBinary("->", Json, Text, Json, func(a, b Value) (Value, error) {
		return jsonOut(jsonField(jsonTop(a.s), b.s)), nil
	})
	addBinary("->", Json, Int4, Json, func(a, b Value) (Value, error) {
		return jsonOut(jsonElement(jsonTop(a.s), b.n)), nil
	})
	addBinary("->>", Json, Text, Text, func(a, b Value) (Value, error) {
		return jsonTextOut(jsonField(jsonTop(a.s), b.s)), nil
	})
	addBinary("->>", Json, Int4, Text, func(a, b Value) (Value, error) {
		return jsonTextOut(jsonElement(jsonTop(a.s), b.n)), nil
	})
	path := func(a, b Value) (string, bool) {
		cur := jsonTop(a.s)
		for _, e := range b.Elems() {
			if e.IsNull() {
				return "", false
			}
			var ok bool
			if cur, ok = jsonStep(cur, e.s); !ok {
				return "", false
			}
		}
		return cur, true
	}
	addBinary("#>", Json, textArr, Json, func(a, b Value) (Value, error) {
		return jsonOut(path(a, b)), nil
	})
	addBinary("#>>", Json, textArr, Text, func(a, b Value) (Value, error) {
		return jsonTextOut(path(a, b)), nil
	})
	addFunc("json_typeof", Text, func(a []Value) (Value, error) {
		return MakeText(jsonTypeOf(a[0].s)), nil
	}, Json)
	addFunc("json_array_length", Int4, func(a []Value) (Value, error) {
		n := 0
		switch jsonMembers(a[0].s, func(string, string) { n++ }) {
		case '[':
			return MakeInt(Int4, int64(n)), nil
		case '{':
			return Null, errs.New(errs.InvalidParameterValue, "cannot get array length of a non-array")
		}
		return Null, errs.New(errs.InvalidParameterValue, "cannot get array length of a scalar")
	}, Json)
}

// jsonCastContext is pg_cast for json: json and jsonb convert to each
// other on assignment; like every type, json converts to text and varchar
// on assignment and from them explicitly.
func jsonCastContext(from, to TypeID) CastKind {
	switch {
	case from == Json && to == Jsonb, from == Jsonb && to == Json:
		return AssignmentCast
	case from == Json && (to == Text || to == Varchar):
		return AssignmentCast
	case to == Json && (from == Text || from == Varchar):
		return ExplicitCast
	}
	return NoCast
}

// appendToJSON appends v as json text, as PostgreSQL's datum_to_json
// does for to_json, json_build_object and json_build_array: a json value
// (raw) as its text, arrays as JSON arrays without spaces, every other
// value as to_jsonb converts it, timestamptz shown in zone z.
func appendToJSON(dst []byte, v Value, raw bool, z Zone) []byte {
	switch {
	case v.IsNull():
		return append(dst, "null"...)
	case raw:
		return append(dst, v.s...)
	case v.kind.IsArray():
		return append(dst, NestArray(v, func(e Value) []byte { return appendToJSON(nil, e, false, z) },
			func(items [][]byte) []byte {
				return append(append([]byte{'['}, bytes.Join(items, []byte{','})...), ']')
			})...)
	}
	return AppendJSONB(dst, ToJSONBZone(v, z))
}

// ToJSONFunc is to_json; raw says the argument is of type json, z is the
// zone timestamptz values are shown in.
func ToJSONFunc(raw bool, z Zone) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		if a[0].IsNull() {
			return Null, nil
		}
		return MakeText(string(appendToJSON(nil, a[0], raw, z))), nil
	}
}

// JSONBuildArrayFunc is json_build_array; raw[i] says argument i is of
// type json, z is the zone timestamptz values are shown in.
func JSONBuildArrayFunc(raw []bool, z Zone) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		dst := []byte{'['}
		for i, v := range a {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendToJSON(dst, v, raw[i], z)
		}
		return MakeText(string(append(dst, ']'))), nil
	}
}

// JSONBuildObjectFunc is json_build_object; raw[i] says argument i is of
// type json, z is the zone timestamptz keys and values are shown in.
func JSONBuildObjectFunc(raw []bool, z Zone) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		if len(a)%2 != 0 {
			err := errs.New(errs.InvalidParameterValue, "argument list must have even number of elements")
			if e, ok := err.(*errs.Error); ok {
				e.Hint = "The arguments of json_build_object() must consist of alternating keys and values."
			}
			return Null, err
		}
		dst := []byte{'{'}
		for i := 0; i < len(a); i += 2 {
			if raw[i] && !a[i].IsNull() {
				return Null, errs.New(errs.InvalidParameterValue, "key value must be scalar, not array, composite, or json")
			}
			k, err := jsonKey(a[i], i+1, z)
			if err != nil {
				return Null, err
			}
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = AppendJSONB(dst, JSONStringNode(k))
			dst = append(dst, " : "...)
			dst = appendToJSON(dst, a[i+1], raw[i+1], z)
		}
		return MakeText(string(append(dst, '}'))), nil
	}
}

// JSONArrayOfTexts is json_agg's result: the json array of its elements'
// json texts (NULL elements are JSON null), as PostgreSQL spaces it.
func JSONArrayOfTexts(a []Value) (Value, error) {
	dst := []byte{'['}
	for i, e := range a[0].Elems() {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		if e.IsNull() {
			dst = append(dst, "null"...)
		} else {
			dst = append(dst, e.s...)
		}
	}
	return MakeText(string(append(dst, ']'))), nil
}

// JSONObjectOfMembers is json_object_agg's result: the json object of
// its members' texts, as PostgreSQL spaces it.
func JSONObjectOfMembers(a []Value) (Value, error) {
	dst := []byte("{ ")
	for i, e := range a[0].Elems() {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = append(dst, e.s...)
	}
	return MakeText(string(append(dst, " }"...))), nil
}

// JSONObjectMember makes one member of json_object_agg, "key" : value;
// raw[i] says argument i is of type json, z is the zone timestamptz keys
// and values are shown in.
func JSONObjectMember(raw []bool, z Zone) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		if a[0].IsNull() {
			return Null, errs.New(errs.InvalidParameterValue, "field name must not be null")
		}
		if raw[0] {
			return Null, errs.New(errs.InvalidParameterValue, "key value must be scalar, not array, composite, or json")
		}
		k, err := jsonKey(a[0], 1, z)
		if err != nil {
			return Null, err
		}
		dst := AppendJSONB(nil, JSONStringNode(k))
		dst = append(dst, " : "...)
		return MakeText(string(appendToJSON(dst, a[1], raw[1], z))), nil
	}
}

// The names of json's set-returning functions as functions returning the
// array of their rows, which the binder unnests (internal/sql).
const (
	JSONArrayElementsArray     = "json_array_elements\x00array"
	JSONArrayElementsTextArray = "json_array_elements_text\x00array"
	JSONObjectKeysArray        = "json_object_keys\x00array"
)

// JSONExtractPath is json_extract_path (asText false) and
// json_extract_path_text: #> and #>> with the path as arguments after the
// first.
func JSONExtractPath(asText bool) func(args []Value) (Value, error) {
	return func(a []Value) (Value, error) {
		if a[0].IsNull() {
			return Null, nil
		}
		cur := jsonTop(a[0].s)
		for _, e := range a[1:] {
			if e.IsNull() {
				return Null, nil
			}
			var ok bool
			if cur, ok = jsonStep(cur, e.s); !ok {
				return Null, nil
			}
		}
		if asText {
			return jsonTextOut(cur, true), nil
		}
		return MakeText(cur), nil
	}
}

func init() {
	// json_array_elements' rows are json texts; the array holds them as
	// text (there is no json[]), and the binder types the column json.
	addFunc(JSONArrayElementsArray, ArrayOf(Text), func(a []Value) (Value, error) {
		var out []Value
		switch jsonMembers(a[0].s, func(_, v string) { out = append(out, MakeText(v)) }) {
		case '[':
			return MakeArray(Text, out), nil
		case '{':
			return Null, errs.New(errs.InvalidParameterValue, "cannot extract elements from an object")
		}
		return Null, errs.New(errs.InvalidParameterValue, "cannot extract elements from a scalar")
	}, Json)
	addFunc(JSONArrayElementsTextArray, ArrayOf(Text), func(a []Value) (Value, error) {
		var out []Value
		switch jsonMembers(a[0].s, func(_, v string) { out = append(out, jsonTextOut(v, true)) }) {
		case '[':
			return MakeArray(Text, out), nil
		case '{':
			return Null, errs.New(errs.InvalidParameterValue, "cannot extract elements from an object")
		}
		return Null, errs.New(errs.InvalidParameterValue, "cannot extract elements from a scalar")
	}, Json)
	addFunc(JSONObjectKeysArray, ArrayOf(Text), func(a []Value) (Value, error) {
		var out []Value
		switch jsonMembers(a[0].s, func(k, _ string) { out = append(out, MakeText(jsonUnquote(k))) }) {
		case '{':
			return MakeArray(Text, out), nil
		case '[':
			return Null, errs.New(errs.InvalidParameterValue, "cannot call json_object_keys on an array")
		}
		return Null, errs.New(errs.InvalidParameterValue, "cannot call json_object_keys on a scalar")
	}, Json)
}

// JSONEachPairsArray names json_each's rows as a function: the array of
// each member's pair ["key", value] as json text (the value as written),
// which the binder unnests and splits (internal/sql).
const JSONEachPairsArray = "json_each\x00pairs"

func init() {
	addFunc(JSONEachPairsArray, ArrayOf(Text), func(a []Value) (Value, error) {
		var out []Value
		switch jsonMembers(a[0].s, func(k, v string) { out = append(out, MakeText("["+k+","+v+"]")) }) {
		case '{':
			return MakeArray(Text, out), nil
		case '[':
			return Null, errs.New(errs.InvalidParameterValue, "cannot deconstruct an array as an object")
		}
		return Null, errs.New(errs.InvalidParameterValue, "cannot deconstruct a scalar")
	}, Json)
}

// RowToJSONFunc is row_to_json of a row with the given field names; raw[i]
// says field i is of type json. With pretty (a second argument true),
// fields after the first start a new line, as in PostgreSQL; z is the
// zone timestamptz fields are shown in.
func RowToJSONFunc(names []string, raw []bool, z Zone) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		pretty := len(a) > len(names) && !a[len(names)].IsNull() && a[len(names)].Bool()
		dst := []byte{'{'}
		for i, name := range names {
			if i > 0 {
				dst = append(dst, ',')
				if pretty {
					dst = append(dst, "\n "...)
				}
			}
			dst = AppendJSONB(dst, JSONStringNode(name))
			dst = append(dst, ':')
			dst = appendToJSON(dst, a[i], raw[i], z)
		}
		return MakeText(string(append(dst, '}'))), nil
	}
}
