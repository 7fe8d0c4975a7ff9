package types

import (
	"github.com/rockstream/rockstream/internal/errs"
)

// jsonbCastContext is pg_cast for jsonb: to boolean and the numeric types
// explicitly (jsonb_bool, jsonb_int4, ...), to text on assignment and from
// text explicitly through the output and input functions; nothing else.
func jsonbCastContext(from, to TypeID) CastKind {
	if from == Jsonb {
		switch to {
		case Bool, Int2, Int4, Int8, Numeric, Float4, Float8:
			return ExplicitCast
		case Text, Varchar:
			return AssignmentCast
		}
		return NoCast
	}
	if from == Text || from == Varchar {
		return ExplicitCast
	}
	return NoCast
}

// jsonKindName names a node's kind as jsonb's cast errors do.
func jsonKindName(k JSONKind) string {
	switch k {
	case JSONNull:
		return "null"
	case JSONString:
		return "string"
	case JSONNumber:
		return "numeric"
	case JSONBool:
		return "boolean"
	case JSONArray:
		return "array"
	}
	return "object"
}

// castJSONB converts a jsonb scalar to boolean or a numeric type, as
// jsonb_bool, jsonb_numeric, jsonb_int4, ... do: the value must be a
// scalar of the matching kind (22023 otherwise), and numbers convert as
// numeric does (rounding to integers, 22003 out of range).
func castJSONB(v Value, t Type) (Value, error) {
	j := v.JSONB()
	switch t.ID {
	case Jsonb:
		return v, nil
	case Json:
		return MakeText(string(AppendJSONB(nil, j))), nil
	case Bool:
		if j.Kind == JSONBool {
			return MakeBool(j.Bool), nil
		}
	case Int2, Int4, Int8, Numeric, Float4, Float8:
		if j.Kind == JSONNumber {
			return Cast(MakeNumeric(j.Num), t, true)
		}
	default:
		return Null, cannotCast(Jsonb, t)
	}
	return Null, errs.Newf(errs.InvalidParameterValue, "cannot cast jsonb %s to type %s", jsonKindName(j.Kind), t.ID.baseName())
}

// jsonbBinaryVersion is the version byte before the text in jsonb's binary
// format (jsonb_send).
const jsonbBinaryVersion = 1

// parseJSONBBinary is jsonb_recv: the version byte 1, then the text.
func parseJSONBBinary(src []byte) (Value, error) {
	if len(src) == 0 {
		return Null, errInsufficientData
	}
	if src[0] != jsonbBinaryVersion {
		// PostgreSQL raises this with elog, so its SQLSTATE is XX000.
		return Null, errs.Newf(errs.Internal, "unsupported jsonb version number %d", src[0])
	}
	if err := CheckUTF8(src[1:]); err != nil {
		return Null, err
	}
	j, err := ParseJSONB(string(src[1:]))
	if err != nil {
		return Null, err
	}
	return MakeJSONB(j), nil
}
