package lake

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Type is a column type RockLake stores or answers with: the types of the
// DuckLake catalog (BIGINT, VARCHAR, BOOLEAN, UUID, TIMESTAMPTZ), those
// DuckLake gives inlined data columns, and the few system types the
// pg_catalog answers use.
type Type uint8

// The types, each with PostgreSQL's OID, length and name (typeInfo).
const (
	TUnknown Type = iota
	TInt2
	TInt4
	TInt8
	TFloat4
	TFloat8
	TBool
	TText
	TVarchar
	TBytea
	TUUID
	TTimestamptz
	TOid
	TName
	TChar
	TInt2Array
	TRegclass
	TTid
)

type typeInfo struct {
	oid  uint32
	size int16
	name string // the name pg_type.typname shows
	sql  string // how CREATE TABLE spells it (parsed names map here)
}

var types = [...]typeInfo{
	TUnknown:     {705, -2, "unknown", "unknown"},
	TInt2:        {21, 2, "int2", "smallint"},
	TInt4:        {23, 4, "int4", "integer"},
	TInt8:        {20, 8, "int8", "bigint"},
	TFloat4:      {700, 4, "float4", "real"},
	TFloat8:      {701, 8, "float8", "double precision"},
	TBool:        {16, 1, "bool", "boolean"},
	TText:        {25, -1, "text", "text"},
	TVarchar:     {1043, -1, "varchar", "character varying"},
	TBytea:       {17, -1, "bytea", "bytea"},
	TUUID:        {2950, 16, "uuid", "uuid"},
	TTimestamptz: {1184, 8, "timestamptz", "timestamp with time zone"},
	TOid:         {26, 4, "oid", "oid"},
	TName:        {19, 64, "name", "name"},
	TChar:        {18, 1, "char", "\"char\""},
	TInt2Array:   {1005, -1, "_int2", "smallint[]"},
	TRegclass:    {2205, 4, "regclass", "regclass"},
	TTid:         {27, 6, "tid", "tid"},
}

// OID returns the type's PostgreSQL OID.
func (t Type) OID() uint32 { return types[t].oid }

// Size returns the type's length as pg_type.typlen gives it.
func (t Type) Size() int16 { return types[t].size }

// String returns the type's pg_type name.
func (t Type) String() string { return types[t].name }

func (t Type) isInt() bool { return t == TInt2 || t == TInt4 || t == TInt8 }

func (t Type) isText() bool {
	return t == TText || t == TVarchar || t == TName || t == TUnknown
}

// typeFromName maps a type name as the PostgreSQL parser leaves it
// (pg_catalog.int8, varchar, bytea, ...) to a Type.
func typeFromName(name string) (Type, bool) {
	switch strings.ToLower(name) {
	case "int2", "smallint":
		return TInt2, true
	case "int4", "integer", "int":
		return TInt4, true
	case "int8", "bigint":
		return TInt8, true
	case "float4", "real":
		return TFloat4, true
	case "float8", "double precision":
		return TFloat8, true
	case "bool", "boolean":
		return TBool, true
	case "text":
		return TText, true
	case "varchar", "character varying":
		return TVarchar, true
	case "bytea":
		return TBytea, true
	case "uuid":
		return TUUID, true
	case "timestamptz", "timestamp with time zone":
		return TTimestamptz, true
	case "tid":
		return TTid, true
	case "oid":
		return TOid, true
	case "regclass":
		return TRegclass, true
	}
	return TUnknown, false
}

// Value is one SQL value. Integers, booleans (0/1), timestamps
// (microseconds since 2000-01-01 UTC, PostgreSQL's epoch), OIDs and tids
// live in I; floats in F; text, bytea and uuid (16 raw bytes) in S.
type Value struct {
	T    Type
	Null bool
	I    int64
	F    float64
	S    string
}

func nullOf(t Type) Value         { return Value{T: t, Null: true} }
func intOf(t Type, i int64) Value { return Value{T: t, I: i} }
func textOf(t Type, s string) Value {
	return Value{T: t, S: s}
}
func boolOf(b bool) Value {
	v := Value{T: TBool}
	if b {
		v.I = 1
	}
	return v
}

// pgEpoch is 2000-01-01 00:00:00 UTC, the zero of PostgreSQL timestamps.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func timestampOf(t time.Time) Value {
	return Value{T: TTimestamptz, I: t.Sub(pgEpoch).Microseconds()}
}

// tid packs a PostgreSQL item pointer (block, offset) into one integer.
func tidOf(block uint32, offset uint16) int64 { return int64(block)<<16 | int64(offset) }

func tidParts(t int64) (uint32, uint16) { return uint32(t >> 16), uint16(t) }

func tidText(t int64) string {
	b, o := tidParts(t)
	return fmt.Sprintf("(%d,%d)", b, o)
}

func parseTid(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if len(s) < 5 || s[0] != '(' || s[len(s)-1] != ')' {
		return 0, fmt.Errorf("invalid input syntax for type tid: %q", s)
	}
	parts := strings.Split(s[1:len(s)-1], ",")
	if len(parts) != 2 {
		return 0, fmt.Errorf("invalid input syntax for type tid: %q", s)
	}
	b, err1 := strconv.ParseUint(strings.TrimSpace(parts[0]), 10, 32)
	o, err2 := strconv.ParseUint(strings.TrimSpace(parts[1]), 10, 16)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("invalid input syntax for type tid: %q", s)
	}
	return tidOf(uint32(b), uint16(o)), nil
}

// Text returns the value in PostgreSQL's text output format (the
// session's TimeZone is UTC, DateStyle ISO, bytea_output hex).
func (v Value) Text() string {
	switch v.T {
	case TInt2, TInt4, TInt8, TOid:
		return strconv.FormatInt(v.I, 10)
	case TRegclass:
		return v.S
	case TFloat4:
		return formatFloat(v.F, 32)
	case TFloat8:
		return formatFloat(v.F, 64)
	case TBool:
		if v.I != 0 {
			return "t"
		}
		return "f"
	case TBytea:
		return `\x` + hex.EncodeToString([]byte(v.S))
	case TUUID:
		h := hex.EncodeToString([]byte(v.S))
		if len(h) != 32 {
			return h
		}
		return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	case TTimestamptz:
		return formatTimestamptz(v.I)
	case TTid:
		return tidText(v.I)
	case TInt2Array:
		return v.S
	}
	return v.S
}

// formatFloat prints f as PostgreSQL does with extra_float_digits = 1:
// the shortest text that reads back exactly, in exponent form when the
// decimal exponent is below -4 or at least 15 (float8; 6 for float4).
func formatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	e := strconv.FormatFloat(f, 'e', -1, bits)
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	limit := 15
	if bits == 32 {
		limit = 6
	}
	if exp < -4 || exp >= limit {
		sign := "+"
		if exp < 0 {
			sign = "-"
			exp = -exp
		}
		return fmt.Sprintf("%se%s%02d", mant, sign, exp)
	}
	return strconv.FormatFloat(f, 'f', -1, bits)
}

func formatTimestamptz(us int64) string {
	t := pgEpoch.Add(time.Duration(us) * time.Microsecond)
	s := t.Format("2006-01-02 15:04:05")
	if frac := t.Nanosecond() / 1000; frac != 0 {
		f := fmt.Sprintf("%06d", frac)
		s += "." + strings.TrimRight(f, "0")
	}
	return s + "+00"
}

// AppendBinary appends the value's binary wire format (without the
// length word) to dst. v must not be NULL.
func (v Value) AppendBinary(dst []byte) []byte {
	switch v.T {
	case TInt2:
		return binary.BigEndian.AppendUint16(dst, uint16(v.I))
	case TInt4, TOid, TRegclass:
		return binary.BigEndian.AppendUint32(dst, uint32(v.I))
	case TInt8, TTimestamptz:
		return binary.BigEndian.AppendUint64(dst, uint64(v.I))
	case TFloat4:
		return binary.BigEndian.AppendUint32(dst, math.Float32bits(float32(v.F)))
	case TFloat8:
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(v.F))
	case TBool:
		return append(dst, byte(v.I))
	case TTid:
		b, o := tidParts(v.I)
		dst = binary.BigEndian.AppendUint32(dst, b)
		return binary.BigEndian.AppendUint16(dst, o)
	case TChar:
		if v.S == "" {
			return dst
		}
		return append(dst, v.S[0])
	case TInt2Array:
		return appendInt2Array(dst, v.S)
	}
	return append(dst, v.S...)
}

// appendInt2Array writes an int2[] in its text form "{1,2}" as the
// binary array format (one dimension, no NULLs).
func appendInt2Array(dst []byte, text string) []byte {
	inner := strings.Trim(text, "{}")
	var elems []int64
	if inner != "" {
		for _, p := range strings.Split(inner, ",") {
			n, _ := strconv.ParseInt(p, 10, 16)
			elems = append(elems, n)
		}
	}
	if len(elems) == 0 {
		dst = binary.BigEndian.AppendUint32(dst, 0)
		dst = binary.BigEndian.AppendUint32(dst, 0)
		return binary.BigEndian.AppendUint32(dst, TInt2.OID())
	}
	dst = binary.BigEndian.AppendUint32(dst, 1)
	dst = binary.BigEndian.AppendUint32(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, TInt2.OID())
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(elems)))
	dst = binary.BigEndian.AppendUint32(dst, 1)
	for _, e := range elems {
		dst = binary.BigEndian.AppendUint32(dst, 2)
		dst = binary.BigEndian.AppendUint16(dst, uint16(e))
	}
	return dst
}

// decodeBinary reads a value of type t from its binary wire format, as
// COPY ... FROM STDIN (FORMAT BINARY) sends it.
func decodeBinary(t Type, b []byte) (Value, error) {
	// PostgreSQL's receive functions read fixed-size values from the
	// field: too few bytes run out of message, too many are left over.
	n, ok := 0, false
	switch t {
	case TBool:
		n, ok = 1, true
	case TInt2:
		n, ok = 2, true
	case TInt4, TFloat4, TOid:
		n, ok = 4, true
	case TInt8, TFloat8, TTimestamptz:
		n, ok = 8, true
	case TUUID:
		n, ok = 16, true
	}
	if ok && len(b) < n {
		return Value{}, &sqlError{code: codeProtocolViolation, msg: "insufficient data left in message"}
	} else if ok && len(b) > n {
		return Value{}, &sqlError{code: "22P03", msg: "incorrect binary data format"}
	}
	switch t {
	case TInt2:
		return intOf(t, int64(int16(binary.BigEndian.Uint16(b)))), nil
	case TInt4:
		return intOf(t, int64(int32(binary.BigEndian.Uint32(b)))), nil
	case TOid:
		return intOf(t, int64(binary.BigEndian.Uint32(b))), nil
	case TInt8, TTimestamptz:
		return intOf(t, int64(binary.BigEndian.Uint64(b))), nil
	case TFloat4:
		return Value{T: t, F: float64(math.Float32frombits(binary.BigEndian.Uint32(b)))}, nil
	case TFloat8:
		return Value{T: t, F: math.Float64frombits(binary.BigEndian.Uint64(b))}, nil
	case TBool:
		if b[0] > 1 {
			return Value{}, &sqlError{code: "22P03", msg: "incorrect binary data format in boolean"}
		}
		return boolOf(b[0] == 1), nil
	case TText, TVarchar, TBytea, TUUID:
		return textOf(t, string(b)), nil
	}
	return Value{}, &sqlError{code: "0A000", msg: fmt.Sprintf("binary input of type %s is not supported", t)}
}

// parseText converts text input (a quoted literal or a COPY text field)
// to a value of type t, as the type's input function does.
func parseText(t Type, s string) (Value, error) {
	bad := func() error {
		return &sqlError{code: "22P02", msg: fmt.Sprintf("invalid input syntax for type %s: %q", types[t].sql, s)}
	}
	switch t {
	case TInt2, TInt4, TInt8, TOid:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return Value{}, outOfRange(t)
			}
			return Value{}, bad()
		}
		return checkRange(intOf(t, n))
	case TFloat4, TFloat8:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "nan":
			return Value{T: t, F: math.NaN()}, nil
		case "infinity", "inf", "+infinity":
			return Value{T: t, F: math.Inf(1)}, nil
		case "-infinity", "-inf":
			return Value{T: t, F: math.Inf(-1)}, nil
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return Value{}, bad()
		}
		if t == TFloat4 {
			f = float64(float32(f))
		}
		return Value{T: t, F: f}, nil
	case TBool:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "t", "true", "y", "yes", "on", "1":
			return boolOf(true), nil
		case "f", "false", "n", "no", "off", "0":
			return boolOf(false), nil
		}
		return Value{}, bad()
	case TText, TVarchar, TName, TUnknown:
		return textOf(t, s), nil
	case TBytea:
		if strings.HasPrefix(s, `\x`) {
			raw, err := hex.DecodeString(s[2:])
			if err != nil {
				return Value{}, &sqlError{code: "22P02", msg: "invalid hexadecimal data: odd number of digits"}
			}
			return textOf(t, string(raw)), nil
		}
		return parseByteaEscape(s)
	case TUUID:
		h := strings.ReplaceAll(strings.Trim(strings.TrimSpace(s), "{}"), "-", "")
		raw, err := hex.DecodeString(h)
		if err != nil || len(raw) != 16 {
			return Value{}, bad()
		}
		return textOf(t, string(raw)), nil
	case TTimestamptz:
		return parseTimestamptz(s)
	case TTid:
		n, err := parseTid(s)
		if err != nil {
			return Value{}, bad()
		}
		return intOf(t, n), nil
	}
	return Value{}, &sqlError{code: "0A000", msg: fmt.Sprintf("input of type %s is not supported", t)}
}

func parseByteaEscape(s string) (Value, error) {
	var out []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i+1 < len(s) && s[i+1] == '\\' {
			out = append(out, '\\')
			i++
			continue
		}
		if i+3 < len(s) {
			n, err := strconv.ParseUint(s[i+1:i+4], 8, 8)
			if err == nil {
				out = append(out, byte(n))
				i += 3
				continue
			}
		}
		return Value{}, &sqlError{code: "22P02", msg: "invalid input syntax for type bytea"}
	}
	return textOf(TBytea, string(out)), nil
}

var timestampLayouts = []string{
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z07",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02",
}

func parseTimestamptz(s string) (Value, error) {
	s = strings.TrimSpace(s)
	for _, l := range timestampLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return timestampOf(t.Truncate(time.Microsecond)), nil
		}
	}
	return Value{}, &sqlError{code: "22007", msg: fmt.Sprintf("invalid input syntax for type timestamp with time zone: %q", s)}
}

func outOfRange(t Type) error {
	name := "integer"
	switch t {
	case TInt2:
		name = "smallint"
	case TInt8:
		name = "bigint"
	}
	if t == TInt8 {
		return &sqlError{code: "22003", msg: "bigint out of range"}
	}
	return &sqlError{code: "22003", msg: name + " out of range"}
}

func checkRange(v Value) (Value, error) {
	switch v.T {
	case TInt2:
		if v.I < math.MinInt16 || v.I > math.MaxInt16 {
			return Value{}, outOfRange(v.T)
		}
	case TInt4:
		if v.I < math.MinInt32 || v.I > math.MaxInt32 {
			return Value{}, outOfRange(v.T)
		}
	case TOid:
		if v.I < 0 || v.I > math.MaxUint32 {
			return Value{}, &sqlError{code: "22003", msg: "OID out of range"}
		}
	}
	return v, nil
}

// compare orders two non-NULL values of comparable types: numbers by
// value, text and bytea bytewise (the C collation), booleans false first.
func compare(a, b Value) int {
	switch {
	case (a.T.isInt() || a.T == TOid) && (b.T.isInt() || b.T == TOid):
		return cmpInt(a.I, b.I)
	case isNumber(a.T) && isNumber(b.T):
		return cmpFloat(num(a), num(b))
	case a.T == TBool || a.T == TTimestamptz || a.T == TTid:
		return cmpInt(a.I, b.I)
	}
	return strings.Compare(a.S, b.S)
}

func isNumber(t Type) bool { return t.isInt() || t == TFloat4 || t == TFloat8 || t == TOid }

func num(v Value) float64 {
	if v.T == TFloat4 || v.T == TFloat8 {
		return v.F
	}
	return float64(v.I)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a):
		return 1
	}
	return -1
}
