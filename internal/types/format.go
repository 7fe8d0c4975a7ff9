package types

import (
	"strconv"
)

// Format returns v in PostgreSQL's text output format for type t
// (booleans t/f; floats shortest round-trip; numeric with its scale;
// dates ISO; timestamps "2026-11-30 01:02:03[.ffffff]"; timestamptz in UTC
// with "+00" (FormatZone shows it in a session time zone); intervals in the postgres IntervalStyle; bytea as \x hex).
// NULL formats as "" and the caller decides how to show it.
//
// The text depends only on v's representation; t is accepted so that
// callers can pass the column type they have at hand.
func Format(v Value, t Type) string {
	switch v.kind {
	case KindNull:
		return ""
	case Text:
		return v.s
	case Bool:
		if v.n != 0 {
			return "t"
		}
		return "f"
	case Int2, Int4, Int8:
		return strconv.FormatInt(v.n, 10)
	}
	var buf [64]byte
	return string(AppendFormat(buf[:0], v, t))
}

// FormatZone is Format with timestamptz values, alone or in arrays,
// shown in the session time zone z.
func FormatZone(v Value, t Type, z Zone) string {
	if z.IsUTC() || !hasTimestampTZ(v.kind) {
		return Format(v, t)
	}
	return string(AppendFormatZone(nil, v, t, z))
}

// AppendFormat appends Format(v, t) to dst. It does not allocate for
// scalar values when dst has room.
func AppendFormat(dst []byte, v Value, t Type) []byte { return AppendFormatZone(dst, v, t, UTCZone) }

func hasTimestampTZ(k TypeID) bool { return k == TimestampTZ || k == ArrayOf(TimestampTZ) }

// AppendFormatZone appends FormatZone(v, t, z) to dst.
func AppendFormatZone(dst []byte, v Value, t Type, z Zone) []byte {
	switch v.kind {
	case KindNull:
		return dst
	case Bool:
		if v.n != 0 {
			return append(dst, 't')
		}
		return append(dst, 'f')
	case Int2, Int4, Int8:
		return strconv.AppendInt(dst, v.n, 10)
	case Float4:
		return AppendFloat(dst, v.Float(), 32)
	case Float8:
		return AppendFloat(dst, v.Float(), 64)
	case Numeric:
		return AppendNumeric(dst, v.dec())
	case Text:
		return append(dst, v.s...)
	case Bytea:
		return appendByteaHex(dst, v.s)
	case Date:
		return AppendDate(dst, v.Days())
	case Timestamp:
		return AppendTimestamp(dst, v.n, false)
	case Time:
		return AppendTime(dst, v.n)
	case TimeTZ:
		return AppendTimeTZ(dst, v.n, int32(v.aux))
	case TimestampTZ:
		return AppendTimestampTZ(dst, v.n, z)
	case Interval:
		return AppendInterval(dst, v.Interval())
	case Jsonb:
		return AppendJSONB(dst, v.JSONB())
	case Oid, RegClass, RegType, RegProc, RegNamespace, RegRole:
		return appendCatalogFormat(dst, v)
	}
	if v.kind.IsArray() {
		if t.Vector {
			return appendVectorText(dst, v)
		}
		return appendArrayText(dst, v, t, z)
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// appendByteaHex appends bytea_out's hex format: \x followed by two
// lower-case hex digits per byte.
func appendByteaHex(dst []byte, b string) []byte {
	dst = append(dst, '\\', 'x')
	for i := 0; i < len(b); i++ {
		dst = append(dst, hexDigits[b[i]>>4], hexDigits[b[i]&15])
	}
	return dst
}

// castText returns v's text as a cast to text or varchar produces it: the
// output function's text, except that booleans become "true" and "false".
func castText(v Value, t Type) string { return castTextZone(v, t, UTCZone) }

// castTextZone is castText in the session time zone z.
func castTextZone(v Value, t Type, z Zone) string {
	if v.kind == Bool {
		if v.n != 0 {
			return "true"
		}
		return "false"
	}
	return FormatZone(v, t, z)
}
