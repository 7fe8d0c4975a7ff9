package types

import (
	"bytes"
	"encoding/binary"
	"errors"
	"unicode/utf8"

	"github.com/rockstream/rockstream/internal/errs"
)

// PostgreSQL's binary format is what a type's send function produces and
// its receive function accepts: the value format of a binary bind
// parameter, a binary result column, and a field of COPY ... (FORMAT
// binary). docs/wire.md describes it type by type.
//
// ParseBinary is a receive function. It accepts exactly what PostgreSQL
// 15's receive function for the type accepts and fails where it fails, with
// the same SQLSTATE and message, checked in the same order: a value shorter
// than its type needs is "insufficient data left in message" (08P01, as
// PostgreSQL reports it), a field the type forbids is 22P03 with the
// receive function's message, and bytes left over once the value is read
// are "incorrect binary data format" (22P03). For a bind parameter,
// PostgreSQL adds " in bind parameter N" to the last message only;
// BindParameterError does that.

// Epoch offsets: PostgreSQL's dates and timestamps count from 2000-01-01,
// RockStream's values from 1970-01-01.
const (
	pgEpochDays   = 10957 // days from 1970-01-01 to 2000-01-01
	pgEpochMicros = pgEpochDays * microsPerDay
)

var (
	// ErrIncorrectBinaryFormat is ParseBinary's error for a value followed
	// by bytes its type does not use (22P03). PostgreSQL says "incorrect
	// binary data format" for a COPY field and "incorrect binary data
	// format in bind parameter N" for a parameter.
	ErrIncorrectBinaryFormat = errs.New(errs.InvalidBinaryRep, "incorrect binary data format")

	errInsufficientData = errs.New(errs.ProtocolViolation, "insufficient data left in message")
	errNoDataLeft       = errs.New(errs.ProtocolViolation, "no data left in message")
)

// AppendBinary appends the PostgreSQL binary representation of v, of type
// t, to dst (what t's send function produces). v must not be NULL.
//
// v's kind must be t's representation (see doc.go); an integer of a
// narrower or wider kind is accepted when it fits t, and TIMESTAMP and
// TIMESTAMPTZ values, which share a representation, are interchangeable.
// Any other mismatch is an internal error, never a silent conversion.
func AppendBinary(dst []byte, v Value, t Type) ([]byte, error) {
	if v.IsNull() {
		return dst, errs.Newf(errs.Internal, "a NULL %s has no binary representation", t)
	}
	if t.ID.IsArray() && v.kind.IsArray() {
		return appendArrayBinary(dst, v, t)
	}
	switch t.ID {
	case Bool:
		if v.kind == Bool {
			return append(dst, byte(v.n)), nil
		}
	case Int2, Int4, Int8:
		if v.kind != Int2 && v.kind != Int4 && v.kind != Int8 {
			break
		}
		if !intFits(v.n, t.ID) {
			return dst, intRangeError(t.ID)
		}
		switch t.ID {
		case Int2:
			return binary.BigEndian.AppendUint16(dst, uint16(v.n)), nil
		case Int4:
			return binary.BigEndian.AppendUint32(dst, uint32(v.n)), nil
		}
		return binary.BigEndian.AppendUint64(dst, uint64(v.n)), nil
	case Float4:
		if v.kind == Float4 {
			return binary.BigEndian.AppendUint32(dst, uint32(v.n)), nil
		}
	case Float8:
		if v.kind == Float8 {
			return binary.BigEndian.AppendUint64(dst, uint64(v.n)), nil
		}
	case Numeric:
		if v.kind == Numeric {
			return appendNumericBinary(dst, v.dec()), nil
		}
	case Unknown, Text, Varchar, Json:
		if v.kind == Text {
			return append(dst, v.s...), nil
		}
	case Bytea:
		if v.kind == Bytea {
			return append(dst, v.s...), nil
		}
	case Date:
		if v.kind == Date {
			days := v.Days()
			if isFiniteDate(days) {
				days -= pgEpochDays
			}
			return binary.BigEndian.AppendUint32(dst, uint32(days)), nil
		}
	case Time:
		if v.kind == Time {
			return binary.BigEndian.AppendUint64(dst, uint64(v.n)), nil
		}
	case TimeTZ:
		if v.kind == TimeTZ {
			return appendTimeTZBinary(dst, v), nil
		}
	case Timestamp, TimestampTZ:
		if v.kind == Timestamp || v.kind == TimestampTZ {
			micros := v.n
			if isFiniteTimestamp(micros) {
				micros -= pgEpochMicros
			}
			return binary.BigEndian.AppendUint64(dst, uint64(micros)), nil
		}
	case Interval:
		if v.kind == Interval {
			iv := v.Interval()
			dst = binary.BigEndian.AppendUint64(dst, uint64(iv.Micros))
			dst = binary.BigEndian.AppendUint32(dst, uint32(iv.Days))
			return binary.BigEndian.AppendUint32(dst, uint32(iv.Months)), nil
		}
	case Jsonb:
		if v.kind == Jsonb {
			return AppendJSONB(append(dst, jsonbBinaryVersion), v.JSONB()), nil
		}
	default:
		if IsCatalogType(t.ID) {
			return appendCatalogBinary(dst, v, t)
		}
		return dst, errs.Newf(errs.FeatureNotSupported, "type %s has no binary output function", t)
	}
	return dst, errs.Newf(errs.Internal, "a %s value cannot be sent as %s", v.kind, t)
}

// ParseBinary decodes the PostgreSQL binary representation of a value of
// type t (what t's receive function accepts), applying t's typmod (varchar
// length, numeric precision/scale) as an assignment would.
//
// The result never refers to src.
func ParseBinary(src []byte, t Type) (Value, error) {
	if t.ID.IsArray() {
		return parseArrayBinary(src, t)
	}
	switch t.ID {
	case Bool:
		if len(src) == 0 {
			return Null, errNoDataLeft
		}
		// boolrecv takes any non-zero byte as true.
		return MakeBool(src[0] != 0), trailing(src, 1)
	case Int2:
		if len(src) < 2 {
			return Null, errInsufficientData
		}
		return MakeInt(Int2, int64(int16(binary.BigEndian.Uint16(src)))), trailing(src, 2)
	case Int4:
		if len(src) < 4 {
			return Null, errInsufficientData
		}
		return MakeInt(Int4, int64(int32(binary.BigEndian.Uint32(src)))), trailing(src, 4)
	case Int8:
		if len(src) < 8 {
			return Null, errInsufficientData
		}
		return MakeInt(Int8, int64(binary.BigEndian.Uint64(src))), trailing(src, 8)
	case Float4:
		// Every bit pattern is a float4, NaN payloads and -0 included; they
		// are kept bit for bit, as float4recv keeps them.
		if len(src) < 4 {
			return Null, errInsufficientData
		}
		return Value{kind: Float4, n: int64(binary.BigEndian.Uint32(src))}, trailing(src, 4)
	case Float8:
		if len(src) < 8 {
			return Null, errInsufficientData
		}
		return Value{kind: Float8, n: int64(binary.BigEndian.Uint64(src))}, trailing(src, 8)
	case Numeric:
		return parseNumericBinary(src, t)
	case Unknown, Text:
		if err := CheckUTF8(src); err != nil {
			return Null, err
		}
		return MakeText(string(src)), nil
	case Varchar:
		if err := CheckUTF8(src); err != nil {
			return Null, err
		}
		return applyVarcharLength(string(src), t, false)
	case Bytea:
		return MakeBytea(src), nil
	case Date:
		return parseDateBinary(src)
	case Timestamp, TimestampTZ:
		return parseTimestampBinary(src, t)
	case Time:
		return parseTimeBinary(src, t)
	case TimeTZ:
		return parseTimeTZBinary(src, t)
	case Jsonb:
		return parseJSONBBinary(src)
	case Json:
		if err := CheckUTF8(src); err != nil {
			return Null, err
		}
		return parseJSON(string(src))
	case Interval:
		if len(src) < 16 {
			return Null, errInsufficientData
		}
		iv := IntervalValue{
			Micros: int64(binary.BigEndian.Uint64(src)),
			Days:   int32(binary.BigEndian.Uint32(src[8:])),
			Months: int32(binary.BigEndian.Uint32(src[12:])),
		}
		// PostgreSQL 15 has no infinite intervals: every bit pattern is an
		// interval.
		return MakeInterval(roundIntervalPrecision(iv, t.Precision)), trailing(src, 16)
	}
	if IsCatalogType(t.ID) {
		return parseCatalogBinary(src, t)
	}
	return Null, errs.Newf(errs.FeatureNotSupported, "type %s has no binary input function", t)
}

// BindParameterError returns ParseBinary's error err as PostgreSQL reports
// it for bind parameter n (1-based): bytes left over become "incorrect
// binary data format in bind parameter n"; every other error is the
// receive function's own and is returned unchanged, as PostgreSQL returns
// it.
func BindParameterError(err error, n int) error {
	if errors.Is(err, ErrIncorrectBinaryFormat) {
		return errs.Newf(errs.InvalidBinaryRep, "incorrect binary data format in bind parameter %d", n)
	}
	return err
}

// trailing returns ErrIncorrectBinaryFormat when src holds more than the n
// bytes a value used. PostgreSQL checks this after the receive function
// returned, so every error of the value itself comes first.
func trailing(src []byte, n int) error {
	if len(src) > n {
		return ErrIncorrectBinaryFormat
	}
	return nil
}

// parseDateBinary decodes date_recv's input: int32 days since 2000-01-01,
// with the int32 extremes for -infinity and infinity.
func parseDateBinary(src []byte) (Value, error) {
	if len(src) < 4 {
		return Null, errInsufficientData
	}
	days := int32(binary.BigEndian.Uint32(src))
	if isFiniteDate(days) {
		if !validDate(int64(days) + pgEpochDays) {
			return Null, errDateRange
		}
		days += pgEpochDays
	}
	return MakeDate(days), trailing(src, 4)
}

// parseTimestampBinary decodes timestamp_recv's and timestamptz_recv's
// input: int64 microseconds since 2000-01-01 00:00:00 (UTC for
// timestamptz), with the int64 extremes for -infinity and infinity.
//
// PostgreSQL's last timestamp is in 294276 AD; RockStream's, in 294247 AD
// (doc.go), so the finite timestamps in between are out of range here.
func parseTimestampBinary(src []byte, t Type) (Value, error) {
	if len(src) < 8 {
		return Null, errInsufficientData
	}
	micros := int64(binary.BigEndian.Uint64(src))
	if isFiniteTimestamp(micros) {
		if micros >= endTimestamp-pgEpochMicros || !validTimestamp(micros+pgEpochMicros) {
			return Null, errTimestampRange
		}
		var err error
		if micros, err = roundTimestampPrecision(micros+pgEpochMicros, t.Precision); err != nil {
			return Null, err
		}
	}
	return Value{kind: t.ID, n: micros}, trailing(src, 8)
}

// CheckUTF8 checks text from a client as PostgreSQL checks it when the
// client encoding is the server's, UTF8 (pg_verify_mbstr): anything that
// is not UTF-8, and a NUL byte, which PostgreSQL's text cannot hold, fails
// with 22021 "invalid byte sequence for encoding "UTF8": 0x.." naming the
// bytes of the first bad character.
func CheckUTF8(b []byte) error {
	if utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 {
		return nil
	}
	for i := 0; i < len(b); {
		c := b[i]
		if c == 0 {
			return invalidByteSequence(b[i:])
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return invalidByteSequence(b[i:])
		}
		i += size
	}
	return nil
}

// invalidByteSequence returns PostgreSQL's report_invalid_encoding error
// for the invalid character at the start of b: the bytes its first byte
// announces (pg_utf_mblen), as far as b goes.
func invalidByteSequence(b []byte) error {
	n := 1
	switch c := b[0]; {
	case c&0xe0 == 0xc0:
		n = 2
	case c&0xf0 == 0xe0:
		n = 3
	case c&0xf8 == 0xf0:
		n = 4
	}
	n = min(n, len(b))
	msg := make([]byte, 0, 64)
	msg = append(msg, `invalid byte sequence for encoding "UTF8": `...)
	for i := range n {
		if i > 0 {
			msg = append(msg, ' ')
		}
		msg = append(msg, '0', 'x', hexDigits[b[i]>>4], hexDigits[b[i]&15])
	}
	return errs.New(errs.CharacterNotInRepertoire, string(msg))
}
