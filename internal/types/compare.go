package types

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/cockroachdb/apd/v3"
)

// Compare orders two non-NULL values of the same kind as PostgreSQL's
// default btree opclass does (text bytewise, as the C collation; NaN greater
// than every other float; numeric by value). NULLs sort after every value,
// and two NULLs are equal, so Compare is a total order usable for sorting.
//
// In detail: booleans order false < true; floats order -Inf < ... < -0 = 0
// < ... < +Inf < NaN, and all NaNs are equal; numerics order by value
// (1.0 = 1.00), with -Infinity first and NaN last; text and bytea compare
// bytewise; dates and timestamps by instant, with -infinity and infinity at
// the ends; intervals by their length with months of 30 days and days of 24
// hours, so '1 mon' = '30 days' and '1 day' = '24 hours', as PostgreSQL's
// interval_cmp does.
//
// Values of different integer kinds (SMALLINT, INTEGER, BIGINT) compare by
// value, and so do REAL and DOUBLE PRECISION (the REAL converted exactly to
// double, as PostgreSQL's float48 operators do). Any other pair of
// different kinds is a programming error (the planner casts operands to a
// common type first) and panics.
func Compare(a, b Value) int {
	if a.kind == KindNull || b.kind == KindNull {
		switch {
		case a.kind == b.kind:
			return 0
		case a.kind == KindNull:
			return 1
		default:
			return -1
		}
	}
	if a.kind != b.kind {
		return compareMixed(a, b)
	}
	switch a.kind {
	case Bool, Int2, Int4, Int8, Date, Timestamp, TimestampTZ, Time,
		Oid, RegClass, RegType, RegProc, RegNamespace, RegRole:
		// Booleans are 0/1 and dates are sign-extended days, so the word
		// orders them all.
		return cmp.Compare(a.n, b.n)
	case Float4, Float8:
		return compareFloat(a.Float(), b.Float())
	case Numeric:
		return compareDecimal(a.dec(), b.dec())
	case Text, Bytea:
		return strings.Compare(a.s, b.s)
	case Interval:
		return compareInterval(a.Interval(), b.Interval())
	case TimeTZ:
		return compareTimeTZ(a, b)
	case Jsonb:
		return compareJSONB(a.JSONB(), b.JSONB())
	}
	if a.kind.IsArray() {
		return compareArrays(a, b)
	}
	panic(fmt.Sprintf("types.Compare: values of kind %s have no order", kindName(a.kind)))
}

// compareMixed compares values of different kinds, where that is defined.
func compareMixed(a, b Value) int {
	switch {
	case isIntKind(a.kind) && isIntKind(b.kind):
		return cmp.Compare(a.n, b.n)
	case isFloatKind(a.kind) && isFloatKind(b.kind):
		return compareFloat(a.Float(), b.Float())
	case isOIDKind(a.kind) && isOIDKind(b.kind):
		return cmp.Compare(a.n, b.n)
	case a.kind.IsArray() && b.kind.IsArray():
		return compareArrays(a, b)
	}
	panic(fmt.Sprintf("types.Compare: cannot compare %s with %s", kindName(a.kind), kindName(b.kind)))
}

func isIntKind(k Kind) bool   { return k == Int2 || k == Int4 || k == Int8 }
func isFloatKind(k Kind) bool { return k == Float4 || k == Float8 }

// compareFloat orders floats as PostgreSQL's float8_cmp: NaN is equal to
// itself and greater than everything else, and -0 equals 0.
func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	}
	aNaN, bNaN := a != a, b != b
	switch {
	case aNaN && bNaN:
		return 0
	case aNaN:
		return 1
	default:
		return -1
	}
}

// compareDecimal orders numerics by value: -Infinity < finite values <
// +Infinity < NaN, every NaN equal (signaling or not, whatever its sign).
func compareDecimal(a, b *apd.Decimal) int {
	aNaN := a.Form == apd.NaN || a.Form == apd.NaNSignaling
	bNaN := b.Form == apd.NaN || b.Form == apd.NaNSignaling
	switch {
	case aNaN && bNaN:
		return 0
	case aNaN:
		return 1
	case bNaN:
		return -1
	}
	return a.Cmp(b)
}

// usecsPerDay is the length of the day interval comparison assumes.
const usecsPerDay = 24 * 60 * 60 * 1_000_000

// compareInterval orders intervals by their span in microseconds with
// 30-day months and 24-hour days. The span can exceed int64 (months alone
// reach 2^31 × 30 days), so it is compared as the pair (whole days, the
// remaining microseconds in [0, one day)), which orders the same way and
// fits: |days| < 2^37.
func compareInterval(a, b IntervalValue) int {
	ad, au := intervalSpan(a)
	bd, bu := intervalSpan(b)
	if c := cmp.Compare(ad, bd); c != 0 {
		return c
	}
	return cmp.Compare(au, bu)
}

// intervalSpan returns iv's length as days*usecsPerDay + micros with
// 0 <= micros < usecsPerDay.
func intervalSpan(iv IntervalValue) (days, micros int64) {
	days = 30*int64(iv.Months) + int64(iv.Days)
	q, r := iv.Micros/usecsPerDay, iv.Micros%usecsPerDay
	if r < 0 {
		q, r = q-1, r+usecsPerDay
	}
	return days + q, r
}

// kindName names a value kind for error messages.
func kindName(k Kind) string {
	if k == KindNull {
		return "NULL"
	}
	return k.baseName()
}
