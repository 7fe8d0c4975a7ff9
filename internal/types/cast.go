package types

import (
	"math"
	"unicode/utf8"

	"github.com/rockstream/rockstream/internal/errs"
)

// CastKind says when a cast from one type to another may be applied.
type CastKind uint8

const (
	NoCast         CastKind = iota // no cast exists
	ExplicitCast                   // only with CAST or ::
	AssignmentCast                 // also when storing into a column
	ImplicitCast                   // also implicitly in expressions
)

// Cast converts v to type t (applying typmods: numeric rounding to scale and
// precision checks, varchar length), with PostgreSQL's errors. explicit is
// true for CAST/:: (where varchar(n) truncates silently) and false for
// assignment (where an over-long value fails with 22001).
//
// The source type is v's kind; whether the cast is allowed in a context is
// CastContext's business, and Cast performs any conversion that exists.
// Text converts to every type through its input function (as Parse), and
// every type converts to text through its output function.
func Cast(v Value, t Type, explicit bool) (Value, error) {
	from := v.kind
	if from == KindNull {
		return Null, nil
	}
	switch t.ID {
	case Unknown:
		return v, nil
	case Text:
		if from == Text {
			return v, nil
		}
		return MakeText(castText(v, t)), nil
	case Varchar:
		s := v.s
		if from != Text {
			s = castText(v, t)
		}
		r, err := applyVarcharLength(s, t, explicit)
		if err == nil && from == Text && r.s == v.s {
			return v, nil
		}
		return r, err
	}
	if from == Text {
		return Parse(t, v.s)
	}
	if from == Jsonb {
		return castJSONB(v, t)
	}
	if t.ID.IsArray() && from.IsArray() {
		return castArray(v, t, explicit)
	}
	if _, ok := oidTypeInfo[t.ID]; ok || isOIDKind(from) {
		return castCatalog(v, t)
	}
	switch t.ID {
	case Bool:
		switch from {
		case Bool:
			return v, nil
		case Int2, Int4, Int8:
			return MakeBool(v.n != 0), nil
		}
	case Int2, Int4, Int8:
		switch from {
		case Int2, Int4, Int8:
			if !intFits(v.n, t.ID) {
				return Null, intRangeError(t.ID)
			}
			return Value{kind: t.ID, n: v.n}, nil
		case Bool:
			return Value{kind: t.ID, n: v.n}, nil
		case Numeric:
			n, err := numericToInt(v.dec(), t.ID)
			if err != nil {
				return Null, err
			}
			return Value{kind: t.ID, n: n}, nil
		case Float4, Float8:
			n, err := floatToInt(v.Float(), t.ID)
			if err != nil {
				return Null, err
			}
			return Value{kind: t.ID, n: n}, nil
		}
	case Numeric:
		var d = v.dec()
		switch from {
		case Int2, Int4, Int8:
			d = NumericFromInt(v.n)
		case Float4:
			d = floatToNumeric(v.Float(), 32)
		case Float8:
			d = floatToNumeric(v.Float(), 64)
		case Numeric:
		default:
			return Null, cannotCast(from, t)
		}
		r, err := applyNumericTypmod(d, t)
		if err != nil {
			return Null, err
		}
		return MakeNumeric(r), nil
	case Float4:
		switch from {
		case Int2, Int4, Int8:
			return MakeFloat4(float32(v.n)), nil
		case Float4:
			return v, nil
		case Float8:
			f := v.Float()
			r := float32(f)
			if math.IsInf(float64(r), 0) && !math.IsInf(f, 0) {
				return Null, errFloatOverflow
			}
			if r == 0 && f != 0 {
				return Null, errFloatUnderflow
			}
			return MakeFloat4(r), nil
		case Numeric:
			f, err := numericToFloat(v.dec(), 32)
			if err != nil {
				return Null, err
			}
			return MakeFloat4(float32(f)), nil
		}
	case Float8:
		switch from {
		case Int2, Int4, Int8:
			return MakeFloat8(float64(v.n)), nil
		case Float4, Float8:
			return MakeFloat8(v.Float()), nil
		case Numeric:
			f, err := numericToFloat(v.dec(), 64)
			if err != nil {
				return Null, err
			}
			return MakeFloat8(f), nil
		}
	case Bytea:
		if from == Bytea {
			return v, nil
		}
	case Date:
		switch from {
		case Date:
			return v, nil
		case Timestamp, TimestampTZ:
			d, err := timestampToDate(v.n)
			if err != nil {
				return Null, err
			}
			return MakeDate(d), nil
		}
	case Timestamp, TimestampTZ:
		var ts int64
		switch from {
		case Date:
			var err error
			if ts, err = dateToTimestamp(v.Days()); err != nil {
				return Null, err
			}
		case Timestamp, TimestampTZ:
			// The session time zone is UTC, so local and UTC times agree.
			ts = v.n
		default:
			return Null, cannotCast(from, t)
		}
		ts, err := roundTimestampPrecision(ts, t.Precision)
		if err != nil {
			return Null, err
		}
		return Value{kind: t.ID, n: ts}, nil
	case Time:
		return castToTime(v, t)
	case TimeTZ:
		return castToTimeTZ(v, t, UTCZone)
	case Interval:
		if from == Time {
			return MakeInterval(IntervalValue{Micros: v.n}), nil
		}
		if from == Interval {
			if t.Precision >= 0 || t.Fields != 0 {
				return MakeInterval(applyIntervalTypmod(v.Interval(), t)), nil
			}
			return v, nil
		}
	}
	return Null, cannotCast(from, t)
}

func cannotCast(from TypeID, t Type) error {
	return errs.Newf(errs.CannotCoerce, "cannot cast type %s to %s", from.baseName(), t)
}

// floatToInt rounds f to the nearest integer (halves to even, as rint) and
// checks it fits integer kind k.
func floatToInt(f float64, k TypeID) (int64, error) {
	r := math.RoundToEven(f)
	var ok bool
	switch k {
	case Int2:
		ok = r >= math.MinInt16 && r < -math.MinInt16
	case Int4:
		ok = r >= math.MinInt32 && r < -math.MinInt32
	default:
		ok = r >= math.MinInt64 && r < -math.MinInt64
	}
	if !ok { // also NaN
		return 0, intRangeError(k)
	}
	return int64(r), nil
}

// applyVarcharLength enforces VARCHAR(n) on s: an explicit cast truncates
// to n characters; otherwise excess characters must all be spaces (which
// are dropped), else 22001.
func applyVarcharLength(s string, t Type, explicit bool) (Value, error) {
	n := int(t.Length)
	if n < 0 || len(s) <= n {
		return MakeText(s), nil
	}
	// Find the byte offset of character n.
	cut, chars := 0, 0
	for cut < len(s) && chars < n {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
		chars++
	}
	if cut == len(s) {
		return MakeText(s), nil
	}
	if !explicit {
		for i := cut; i < len(s); i++ {
			if s[i] != ' ' {
				return Null, errs.Newf(errs.StringTooLong, "value too long for type character varying(%d)", n)
			}
		}
	}
	return MakeText(s[:cut]), nil
}
