package types

import (
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
)

// Conversion of SQL values to jsonb, as PostgreSQL's datum_to_jsonb does
// for to_jsonb, jsonb_build_object and jsonb_build_array: numbers become
// JSON numbers when their text is one (NaN and the infinities become
// strings), booleans booleans, dates and timestamps ISO 8601 strings
// ("2026-01-02T03:04:05+00:00"), arrays JSON arrays, jsonb itself, and
// every other value the string of its output text.

// ToJSONB converts a value to a jsonb tree; NULL becomes JSON null.
func ToJSONB(v Value) *JSON {
	if v.kind.IsArray() {
		elems := make([]*JSON, len(v.Elems()))
		for i, e := range v.Elems() {
			elems[i] = ToJSONB(e)
		}
		return JSONArrayNode(elems)
	}
	switch v.kind {
	case KindNull:
		return jsonNullNode
	case Jsonb:
		return v.JSONB()
	case Bool:
		return JSONBoolNode(v.Bool())
	case Int2, Int4, Int8, Float4, Float8, Numeric:
		text := Format(v, Of(v.kind))
		if isJSONNumber(text) {
			if d, err := ParseNumeric(text); err == nil {
				return JSONNumberNode(d)
			}
		}
		return JSONStringNode(text)
	case Date, Timestamp, TimestampTZ:
		return JSONStringNode(jsonDateTime(v))
	case Text:
		return JSONStringNode(v.s)
	}
	return JSONStringNode(Format(v, Of(v.kind)))
}

// jsonDateTime is JsonEncodeDateTime's text: XSD style, with a T between
// date and time and the zone as +HH:MM.
func jsonDateTime(v Value) string {
	s := Format(v, Of(v.kind))
	if strings.HasSuffix(s, "infinity") || v.kind == Date {
		return s
	}
	bc := strings.HasSuffix(s, " BC")
	s = strings.TrimSuffix(s, " BC")
	s = strings.Replace(s, " ", "T", 1)
	if v.kind == TimestampTZ {
		s = strings.TrimSuffix(s, "+00") + "+00:00"
	}
	if bc {
		s += " BC"
	}
	return s
}

// isJSONNumber reports whether s is a JSON number (IsValidJsonNumber).
func isJSONNumber(s string) bool {
	p := jsonParser{s: s}
	if s == "" || (s[0] != '-' && !isDigit(s[0])) {
		return false
	}
	_, err := p.number()
	return err == nil && p.i == len(s)
}

// jsonKey converts a jsonb_build_object key: a scalar's text.
func jsonKey(v Value, pos int) (string, error) {
	switch {
	case v.kind == KindNull:
		return "", errs.Newf(errs.InvalidParameterValue, "argument %d: key must not be null", pos)
	case v.kind.IsArray() || v.kind == Jsonb:
		return "", errs.New(errs.InvalidParameterValue, "key value must be scalar, not array, composite, or json")
	case v.kind == Bool:
		if v.Bool() {
			return "true", nil
		}
		return "false", nil
	case v.kind == Date || v.kind == Timestamp || v.kind == TimestampTZ:
		return jsonDateTime(v), nil
	case v.kind == Text:
		return v.s, nil
	}
	return Format(v, Of(v.kind)), nil
}

// JSONBBuildObject is jsonb_build_object over its arguments, alternately
// keys and values.
func JSONBBuildObject(args []Value) (Value, error) {
	if len(args)%2 != 0 {
		err := errs.New(errs.InvalidParameterValue, "argument list must have even number of elements")
		if e, ok := err.(*errs.Error); ok {
			e.Hint = "The arguments of jsonb_build_object() must consist of alternating keys and values."
		}
		return Null, err
	}
	keys := make([]string, 0, len(args)/2)
	vals := make([]*JSON, 0, len(args)/2)
	for i := 0; i < len(args); i += 2 {
		k, err := jsonKey(args[i], i+1)
		if err != nil {
			return Null, err
		}
		keys, vals = append(keys, k), append(vals, ToJSONB(args[i+1]))
	}
	return MakeJSONB(NewJSONObject(keys, vals)), nil
}

// JSONBBuildArray is jsonb_build_array over its arguments.
func JSONBBuildArray(args []Value) (Value, error) {
	elems := make([]*JSON, len(args))
	for i, a := range args {
		elems[i] = ToJSONB(a)
	}
	return MakeJSONB(JSONArrayNode(elems)), nil
}

// JSONBExtractPath is jsonb_extract_path (asText false) and
// jsonb_extract_path_text: #> and #>> with the path as arguments after
// the first. A NULL first argument gives NULL.
func JSONBExtractPath(asText bool) func(args []Value) (Value, error) {
	return func(args []Value) (Value, error) {
		if args[0].IsNull() {
			return Null, nil
		}
		j := jsonPath(args[0].JSONB(), args[1:])
		if asText {
			return jsonTextResult(j), nil
		}
		return jsonResult(j), nil
	}
}

// JSONBObjectAggPair makes one pair of jsonb_object_agg: an object of the
// key and the value, failing as the aggregate does for a NULL key.
func JSONBObjectAggPair(args []Value) (Value, error) {
	if args[0].IsNull() {
		return Null, errs.New(errs.InvalidParameterValue, "field name must not be null")
	}
	return JSONBBuildObject(args)
}

// JSONBMergeObjects is jsonb_object_agg's final step: the pairs of an array
// of one-pair objects, in order, the last of duplicate keys winning.
func JSONBMergeObjects(args []Value) (Value, error) {
	var keys []string
	var vals []*JSON
	for _, e := range args[0].Elems() {
		if j := e.JSONB(); j != nil {
			keys, vals = append(keys, j.Keys...), append(vals, j.Vals...)
		}
	}
	return MakeJSONB(NewJSONObject(keys, vals)), nil
}

// ToJSONBFunc is to_jsonb.
func ToJSONBFunc(args []Value) (Value, error) { return MakeJSONB(ToJSONB(args[0])), nil }
