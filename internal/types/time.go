package types

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
)

// TIME (time without time zone) is a time of day: microseconds since
// midnight, from 00:00:00 to 24:00:00 inclusive, as in PostgreSQL. It has
// a precision (time(p), 0..6 fractional digits) like timestamp. TIME WITH
// TIME ZONE is in timetz.go.

// MakeTime returns a TIME of micros since midnight.
func MakeTime(micros int64) Value { return Value{kind: Time, n: micros} }

var errTimeRange = errs.New(errs.DatetimeOverflow, "time out of range")

// ParseTime parses TIME text as time_in does: a time of day, possibly
// after a date (which is ignored, as is a time zone), or allballs.
func ParseTime(s string) (int64, error) {
	if strings.EqualFold(strings.TrimSpace(s), "allballs") {
		return 0, nil
	}
	p, err := parseDateTimeText(Timestamp, "2000-01-01 "+s)
	if errs.CodeOf(err) == errs.DatetimeOverflow {
		return 0, errs.Newf(errs.DatetimeOverflow, "date/time field value out of range: %s", quoteInput(s))
	}
	if err != nil {
		// Text that holds a date of its own.
		if p, err = parseDateTimeText(Timestamp, s); err != nil || p.special != 0 {
			return 0, errs.Newf(errs.InvalidDatetimeFormat, "invalid input syntax for type time: %s", quoteInput(s))
		}
	} else if p.special != 0 {
		return 0, errs.Newf(errs.InvalidDatetimeFormat, "invalid input syntax for type time: %s", quoteInput(s))
	}
	tod := ((p.hour*60+p.min)*60+p.sec)*microsPerSecond + p.usec
	if tod < 0 || tod > microsPerDay {
		return 0, errs.Newf(errs.DatetimeOverflow, "date/time field value out of range: %s", quoteInput(s))
	}
	return tod, nil
}

// AppendTime appends a TIME's text, HH:MM:SS with the fraction's
// significant digits.
func AppendTime(dst []byte, micros int64) []byte {
	dst = appendPadded(dst, micros/microsPerHour, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, micros/microsPerMinute%60, 2)
	dst = append(dst, ':')
	return appendSeconds(dst, micros/microsPerSecond%60, micros%microsPerSecond)
}

// roundTimePrecision rounds a TIME to p fractional digits (-1: all six),
// as time(p) does; the result may be 24:00:00.
func roundTimePrecision(micros int64, p int32) int64 {
	if p < 0 || p >= 6 {
		return micros
	}
	return roundMicros(micros, p)
}

// castToTime converts v to TIME t: the time of day of a timestamp (of a
// timestamptz, in UTC; CastZone gives the session zone's), the time part
// of an interval, the time of a TIMETZ, or a TIME of another precision.
func castToTime(v Value, t Type) (Value, error) {
	var tod int64
	switch v.kind {
	case Time, TimeTZ:
		tod = v.n
	case Timestamp, TimestampTZ:
		if !isFiniteTimestamp(v.n) {
			return Null, errs.New(errs.DatetimeOverflow, "timestamp out of range")
		}
		_, tod = splitTimestamp(v.n)
	case Interval:
		tod = v.Interval().Micros % microsPerDay
		if tod < 0 {
			tod += microsPerDay
		}
	default:
		return Null, cannotCast(v.kind, t)
	}
	return MakeTime(roundTimePrecision(tod, t.Precision)), nil
}

// timeAddMicros is a time of day plus micros, wrapping around midnight.
func timeAddMicros(tod, micros int64) Value {
	r := (tod + micros%microsPerDay) % microsPerDay
	if r < 0 {
		r += microsPerDay
	}
	return MakeTime(r)
}

// time + interval adds the interval's time part (months and days do not
// move a time of day), wrapping around midnight.
func timeAddInterval(a, b Value) (Value, error) { return timeAddMicros(a.n, b.Interval().Micros), nil }
func intervalAddTime(a, b Value) (Value, error) { return timeAddMicros(b.n, a.Interval().Micros), nil }
func timeSubInterval(a, b Value) (Value, error) { return timeAddMicros(a.n, -b.Interval().Micros), nil }

func timeSubTime(a, b Value) (Value, error) {
	return MakeInterval(IntervalValue{Micros: a.n - b.n}), nil
}

// date + time is the timestamp at that time of the day.
func dateAddTime(a, b Value) (Value, error) {
	ts, err := dateToTimestamp(a.Days())
	if err != nil || !isFiniteTimestamp(ts) {
		return MakeTimestamp(ts), err
	}
	r, ok := addInt64(ts, b.n)
	if !ok || !validTimestamp(r) {
		return Null, errTimestampRange
	}
	return MakeTimestamp(r), nil
}

func timeAddDate(a, b Value) (Value, error) { return dateAddTime(b, a) }

func init() {
	addComparisons(Time, Time, intCompareOps)
	addBinary("+", Time, Interval, Time, timeAddInterval)
	addBinary("+", Interval, Time, Time, intervalAddTime)
	addBinary("-", Time, Interval, Time, timeSubInterval)
	addBinary("-", Time, Time, Interval, timeSubTime)
	addBinary("+", Date, Time, Timestamp, dateAddTime)
	addBinary("+", Time, Date, Timestamp, timeAddDate)
}

// parseTimeBinary decodes time_recv's format: int64 microseconds since
// midnight, big-endian.
func parseTimeBinary(src []byte, t Type) (Value, error) {
	if len(src) < 8 {
		return Null, errInsufficientData
	}
	tod := int64(binary.BigEndian.Uint64(src))
	if tod < 0 || tod > microsPerDay {
		return Null, errTimeRange
	}
	return MakeTime(roundTimePrecision(tod, t.Precision)), nil
}

// timePart is extract(unit FROM time) (numericResult) or date_part: the
// units of a time of day, as time_part_common computes them; those of a
// date are not supported for the type, as in PostgreSQL.
func timePart(numericResult bool) func([]Value) (Value, error) {
	part := intervalPart(numericResult)
	return func(a []Value) (Value, error) {
		low := lowerUnits(a[0].s)
		switch decodeUnit(low, true) {
		case unitMicrosecond, unitMillisecond, unitSecond, unitMinute, unitHour, unitEpoch:
			return part([]Value{a[0], MakeInterval(IntervalValue{Micros: a[1].n})})
		case unitNone:
			return Null, unitNotRecognized(low, Time)
		}
		return Null, unitNotSupported(low, Time)
	}
}

// makeTime is make_time(hour, min, sec).
func makeTime(a []Value) (Value, error) {
	hour, minute, sec := a[0].n, a[1].n, a[2].Float()
	if timeOverflows(hour, minute, sec) {
		return Null, errs.Newf(errs.DatetimeOverflow, "time field value out of range: %d:%02d:%s", hour, minute, formatG(sec))
	}
	return MakeTime((hour*60+minute)*60*microsPerSecond + int64(math.RoundToEven(sec*microsPerSecond))), nil
}

func init() {
	addAggregate("min", Time, Time)
	addAggregate("max", Time, Time)
	addFunc("extract", Numeric, timePart(true), Text, Time)
	addFunc("date_part", Float8, timePart(false), Text, Time)
	addFunc("make_time", Time, makeTime, Int4, Int4, Float8)
}
