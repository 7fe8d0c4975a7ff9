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
// Timestamptz values are shown in UTC; ToJSONBZone shows them in a
// session's zone.
func ToJSONB(v Value) *JSON { return ToJSONBZone(v, UTCZone) }

// ToJSONBZone is ToJSONB with timestamptz values, alone or in arrays,
// shown in zone z with its offset ("2026-01-01T22:04:05-05:00"), as
// PostgreSQL shows them in the session's TimeZone.
func ToJSONBZone(v Value, z Zone) *JSON {
	if v.kind.IsArray() {
		return NestArray(v, func(e Value) *JSON { return ToJSONBZone(e, z) }, JSONArrayNode)
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
		return JSONStringNode(jsonDateTime(v, z))
	case Text:
		return JSONStringNode(v.s)
	}
	return JSONStringNode(Format(v, Of(v.kind)))
}

// jsonDateTime is JsonEncodeDateTime's text: XSD style, with a T between
// date and time and a timestamptz's offset in zone z as +HH:MM (+HH:MM:SS
// when it has seconds).
func jsonDateTime(v Value, z Zone) string {
	s := FormatZone(v, Of(v.kind), z)
	if strings.HasSuffix(s, "infinity") || v.kind == Date {
		return s
	}
	bc := strings.HasSuffix(s, " BC")
	s = strings.TrimSuffix(s, " BC")
	s = strings.Replace(s, " ", "T", 1)
	if v.kind == TimestampTZ {
		// The ISO offset is +HH, +HH:MM or +HH:MM:SS; XSD always has minutes.
		if i := strings.LastIndexAny(s, "+-"); i > strings.IndexByte(s, 'T') && len(s)-i == 3 {
			s += ":00"
		}
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

// jsonKey converts a jsonb_build_object key: a scalar's text, a
// timestamptz's in zone z.
func jsonKey(v Value, pos int, z Zone) (string, error) {
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
		return jsonDateTime(v, z), nil
	case v.kind == Text:
		return v.s, nil
	}
	return Format(v, Of(v.kind)), nil
}

// JSONBBuildObject is jsonb_build_object over its arguments, alternately
// keys and values, with timestamptz values in UTC.
func JSONBBuildObject(args []Value) (Value, error) { return JSONBBuildObjectZone(UTCZone)(args) }

// JSONBBuildObjectZone is jsonb_build_object with timestamptz keys and
// values shown in zone z.
func JSONBBuildObjectZone(z Zone) func([]Value) (Value, error) {
	return func(args []Value) (Value, error) { return jsonbBuildObject(args, z) }
}

func jsonbBuildObject(args []Value, z Zone) (Value, error) {
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
		k, err := jsonKey(args[i], i+1, z)
		if err != nil {
			return Null, err
		}
		keys, vals = append(keys, k), append(vals, ToJSONBZone(args[i+1], z))
	}
	return MakeJSONB(NewJSONObject(keys, vals)), nil
}

// JSONBBuildArray is jsonb_build_array over its arguments, with
// timestamptz values in UTC.
func JSONBBuildArray(args []Value) (Value, error) { return JSONBBuildArrayZone(UTCZone)(args) }

// JSONBBuildArrayZone is jsonb_build_array with timestamptz values shown
// in zone z.
func JSONBBuildArrayZone(z Zone) func([]Value) (Value, error) {
	return func(args []Value) (Value, error) {
		elems := make([]*JSON, len(args))
		for i, a := range args {
			elems[i] = ToJSONBZone(a, z)
		}
		return MakeJSONB(JSONArrayNode(elems)), nil
	}
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

// JSONBObjectAggPairZone makes one pair of jsonb_object_agg: an object of
// the key and the value (timestamptz shown in zone z), failing as the
// aggregate does for a NULL key.
func JSONBObjectAggPairZone(z Zone) func([]Value) (Value, error) {
	return func(args []Value) (Value, error) {
		if args[0].IsNull() {
			return Null, errs.New(errs.InvalidParameterValue, "field name must not be null")
		}
		return jsonbBuildObject(args, z)
	}
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

// ToJSONBFunc is to_jsonb, with timestamptz values in UTC.
func ToJSONBFunc(args []Value) (Value, error) { return MakeJSONB(ToJSONB(args[0])), nil }

// ToJSONBFuncZone is to_jsonb with timestamptz values shown in zone z.
func ToJSONBFuncZone(z Zone) func([]Value) (Value, error) {
	return func(args []Value) (Value, error) { return MakeJSONB(ToJSONBZone(args[0], z)), nil }
}

// JSONBToRecordRows returns the objects jsonb_to_record (set false) or
// jsonb_to_recordset (set true) makes rows of, as a jsonb array: the
// object itself (NULL: one row of NULLs), or the array's elements, which
// must be objects (NULL: no rows).
func JSONBToRecordRows(set bool) func(a []Value) (Value, error) {
	return func(a []Value) (Value, error) {
		if a[0].IsNull() {
			if set {
				return Null, nil
			}
			return MakeArray(Jsonb, []Value{Null}), nil
		}
		j := a[0].JSONB()
		if !set {
			switch j.Kind {
			case JSONObject:
				return MakeArray(Jsonb, []Value{a[0]}), nil
			case JSONArray:
				return Null, errs.New(errs.InvalidParameterValue, "cannot call populate_composite on an array")
			}
			return Null, errs.New(errs.InvalidParameterValue, "cannot call populate_composite on a scalar")
		}
		if j.Kind != JSONArray {
			return Null, errs.New(errs.InvalidParameterValue, "cannot call jsonb_to_recordset on a non-array")
		}
		out := make([]Value, len(j.Elems))
		for i, e := range j.Elems {
			if e.Kind != JSONObject {
				return Null, errs.New(errs.InvalidParameterValue, "argument of jsonb_to_recordset must be an array of objects")
			}
			out[i] = MakeJSONB(e)
		}
		return MakeArray(Jsonb, out), nil
	}
}
