package types

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
)

// Dates and timestamps use the proleptic Gregorian calendar with
// astronomical year numbering internally (year 0 is 1 BC), as PostgreSQL
// does. A DATE is days since 1970-01-01 in an int32; a TIMESTAMP or
// TIMESTAMPTZ is microseconds since 1970-01-01 00:00:00 (UTC for
// TIMESTAMPTZ) in an int64. The extreme values of each representation stand
// for -infinity and infinity.

const (
	microsPerSecond = 1_000_000
	microsPerMinute = 60 * microsPerSecond
	microsPerHour   = 60 * microsPerMinute
	microsPerDay    = 24 * microsPerHour

	// unixEpochJulian is the Julian day number of 1970-01-01.
	unixEpochJulian = 2440588
	// minDateDays is 4714-11-24 BC (Julian day 0), PostgreSQL's first date.
	minDateDays = -unixEpochJulian
	// endDateDays is one past PostgreSQL's last date, 5874897-12-31.
	endDateDays = 2147483494 - unixEpochJulian

	// minTimestamp is 4714-11-24 00:00:00 BC, PostgreSQL's first timestamp.
	minTimestamp = int64(minDateDays) * microsPerDay
	// endTimestamp is one past the last finite timestamp. PostgreSQL goes on
	// to 294276 AD; microseconds since 1970 in an int64 stop at
	// 294247-01-10 04:00:54.775806, the value before the infinity marker.
	endTimestamp = math.MaxInt64
)

// Infinite DATE and TIMESTAMP values.
const (
	DateNegInfinity      = math.MinInt32
	DatePosInfinity      = math.MaxInt32
	TimestampNegInfinity = math.MinInt64
	TimestampPosInfinity = math.MaxInt64
)

// validDate reports whether days is a finite date PostgreSQL accepts.
func validDate(days int64) bool { return days >= minDateDays && days < endDateDays }

// validTimestamp reports whether micros is a finite timestamp in range.
func validTimestamp(micros int64) bool { return micros >= minTimestamp && micros < endTimestamp }

// isFiniteDate reports whether a DATE value's days are not ±infinity.
func isFiniteDate(days int32) bool { return days != DateNegInfinity && days != DatePosInfinity }

// isFiniteTimestamp reports whether a timestamp is not ±infinity.
func isFiniteTimestamp(t int64) bool { return t != TimestampNegInfinity && t != TimestampPosInfinity }

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian
// date (astronomical year, month 1..12, day 1..31).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400                     // year of the 400-year era, 0..399
	mp := (m + 9) % 12                     // months since March, 0..11
	doy := (153*mp+2)/5 + d - 1            // day of the March-based year, 0..365
	doe := yoe*365 + yoe/4 - yoe/100 + doy // day of the era, 0..146096
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// daysInMonth returns the number of days of month m (1..12) of year y.
func daysInMonth(y, m int64) int64 {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// splitTimestamp splits micros since the epoch into days since the epoch
// and microseconds into that day.
func splitTimestamp(micros int64) (days, tod int64) {
	days = floorDiv(micros, microsPerDay)
	return days, micros - days*microsPerDay
}

// appendYear appends a year in astronomical numbering as PostgreSQL prints
// it: at least four digits, and the BC marker returned for years <= 0.
func appendYear(dst []byte, y int64) ([]byte, bool) {
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	return appendPadded(dst, y, 4), bc
}

// appendPadded appends n (>= 0) with at least width digits.
func appendPadded(dst []byte, n int64, width int) []byte {
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], n, 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// AppendDate appends date_out's ISO text for days since 1970-01-01.
func AppendDate(dst []byte, days int32) []byte {
	switch days {
	case DateNegInfinity:
		return append(dst, "-infinity"...)
	case DatePosInfinity:
		return append(dst, "infinity"...)
	}
	y, m, d := civilFromDays(int64(days))
	dst, bc := appendYear(dst, y)
	dst = append(dst, '-')
	dst = appendPadded(dst, m, 2)
	dst = append(dst, '-')
	dst = appendPadded(dst, d, 2)
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

// appendSeconds appends ss[.ffffff] with trailing fractional zeros removed.
func appendSeconds(dst []byte, sec, micros int64) []byte {
	dst = appendPadded(dst, sec, 2)
	if micros == 0 {
		return dst
	}
	dst = append(dst, '.')
	var frac [6]byte
	for i := 5; i >= 0; i-- {
		frac[i] = byte('0' + micros%10)
		micros /= 10
	}
	n := 6
	for frac[n-1] == '0' {
		n--
	}
	return append(dst, frac[:n]...)
}

// AppendTimestamp appends timestamp_out's ISO text for micros since
// 1970-01-01 00:00:00; withZone adds the "+00" of a TIMESTAMPTZ shown in
// the UTC session time zone.
func AppendTimestamp(dst []byte, micros int64, withZone bool) []byte {
	switch micros {
	case TimestampNegInfinity:
		return append(dst, "-infinity"...)
	case TimestampPosInfinity:
		return append(dst, "infinity"...)
	}
	days, tod := splitTimestamp(micros)
	y, m, d := civilFromDays(days)
	dst, bc := appendYear(dst, y)
	dst = append(dst, '-')
	dst = appendPadded(dst, m, 2)
	dst = append(dst, '-')
	dst = appendPadded(dst, d, 2)
	dst = append(dst, ' ')
	dst = appendPadded(dst, tod/microsPerHour, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, tod/microsPerMinute%60, 2)
	dst = append(dst, ':')
	dst = appendSeconds(dst, tod/microsPerSecond%60, tod%microsPerSecond)
	if withZone {
		dst = append(dst, "+00"...)
	}
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

// dateToTimestamp converts a DATE to a TIMESTAMP at midnight.
func dateToTimestamp(days int32) (int64, error) {
	switch days {
	case DateNegInfinity:
		return TimestampNegInfinity, nil
	case DatePosInfinity:
		return TimestampPosInfinity, nil
	}
	if int64(days) > endTimestamp/microsPerDay {
		return 0, errDateRangeTimestamp
	}
	return int64(days) * microsPerDay, nil
}

// timestampToDate converts a TIMESTAMP to the DATE it falls on.
func timestampToDate(micros int64) (int32, error) {
	switch micros {
	case TimestampNegInfinity:
		return DateNegInfinity, nil
	case TimestampPosInfinity:
		return DatePosInfinity, nil
	}
	days, _ := splitTimestamp(micros)
	if !validDate(days) {
		return 0, errDateRange
	}
	return int32(days), nil
}

// compareDateTimestamp orders a DATE against a TIMESTAMP: a date beyond the
// timestamp range is later than every finite timestamp and earlier than
// infinity.
func compareDateTimestamp(days int32, ts int64) int {
	t, err := dateToTimestamp(days)
	if err != nil {
		if ts == TimestampPosInfinity {
			return -1
		}
		return 1
	}
	return cmpInt64(t, ts)
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// roundTimestampPrecision rounds micros to p fractional-second digits as
// timestamp(p) does: halves away from PostgreSQL's epoch, 2000-01-01 (so
// 1990-01-01 00:00:00.5 rounds down), failing when the result is out of
// range.
func roundTimestampPrecision(micros int64, p int32) (int64, error) {
	if p < 0 || p >= 6 || !isFiniteTimestamp(micros) {
		return micros, nil
	}
	r := roundMicros(micros-pgEpochMicros, p)
	if r >= endTimestamp-pgEpochMicros {
		return 0, errTimestampRange
	}
	return r + pgEpochMicros, nil
}

// roundMicros rounds micros to p (0..5) fractional-second digits, halves
// away from zero. Within half a unit of the int64 limits the arithmetic
// wraps around, as PostgreSQL's (built with -fwrapv) does: an interval(2)
// of -2562047788:00:54.775808 becomes +2562047788:00:54.77 there, and so
// here.
func roundMicros(micros int64, p int32) int64 {
	unit := int64(1)
	for range 6 - p {
		unit *= 10
	}
	half := unit / 2
	if micros >= 0 {
		return (micros + half) / unit * unit
	}
	return -((-micros + half) / unit * unit)
}

// dtErrorFor returns PostgreSQL's error for failed date/time input s of
// type t.
func dtErrorFor(e dtError, t TypeID, s, zone string) error {
	switch e {
	case dtFieldOverflow:
		return errs.Newf(errs.DatetimeOverflow, "date/time field value out of range: %s", quoteInput(s))
	case dtTZDispOverflow:
		return errs.Newf(errs.InvalidTimeZone, "time zone displacement out of range: %s", quoteInput(s))
	case dtIntervalOverflow:
		return errs.Newf(errs.IntervalFieldOverflow, "interval field value out of range: %s", quoteInput(s))
	}
	if zone != "" {
		return errs.Newf(errs.InvalidParameterValue, "time zone %s not recognized", quoteInput(zone))
	}
	name := t.baseName()
	if t == Timestamp {
		name = "timestamp"
	}
	return errs.Newf(errs.InvalidDatetimeFormat, "invalid input syntax for type %s: %s", name, quoteInput(s))
}

// nonDeterministicInput is the error for 'now', 'today' and similar input,
// whose value depends on the clock.
func nonDeterministicInput(t TypeID, s string) error {
	return errs.Newf(errs.FeatureNotSupported,
		"%s input %s depends on the current time, which RockStream does not allow in values; write the value explicitly",
		t.baseName(), quoteInput(strings.TrimSpace(s)))
}

// parseDateTimeText decodes date/time text for type t (Date, Timestamp or
// TimestampTZ) into days or micros.
func parseDateTimeText(t TypeID, s string) (dtParsed, error) {
	fields, e := splitDateTime(s)
	if e != dtOK || len(fields) == 0 {
		return dtParsed{}, dtErrorFor(dtBadFormat, t, s, "")
	}
	p, e, zone := decodeDateTime(fields)
	if e != dtOK {
		return p, dtErrorFor(e, t, s, zone)
	}
	switch p.special {
	case specialNow, specialToday, specialTomorrow, specialYesterday:
		return p, nonDeterministicInput(t, s)
	}
	return p, nil
}

// ParseDate parses DATE text as date_in does.
func ParseDate(s string) (int32, error) {
	p, err := parseDateTimeText(Date, s)
	if err != nil {
		return 0, err
	}
	switch p.special {
	case specialEpoch:
		return 0, nil
	case specialInfinity:
		return DatePosInfinity, nil
	case specialNegInfinity:
		return DateNegInfinity, nil
	}
	if p.year < -4713 || p.year > 5874898 {
		return 0, errs.Newf(errs.DatetimeOverflow, "date out of range: %s", quoteInput(s))
	}
	days := daysFromCivil(p.year, p.mon, p.day)
	if !validDate(days) {
		return 0, errs.Newf(errs.DatetimeOverflow, "date out of range: %s", quoteInput(s))
	}
	return int32(days), nil
}

// ParseTimestamp parses TIMESTAMP text as timestamp_in does (a time zone
// in the text is ignored).
func ParseTimestamp(s string) (int64, error) { return parseTimestamp(Timestamp, s) }

// ParseTimestampTZ parses TIMESTAMPTZ text as timestamptz_in does; text
// without a zone is in the session time zone, UTC.
func ParseTimestampTZ(s string) (int64, error) { return parseTimestamp(TimestampTZ, s) }

func parseTimestamp(t TypeID, s string) (int64, error) { return parseTimestampZone(t, s, UTCZone) }

// parseTimestampZone parses timestamp text; timestamptz text without an
// offset is a wall-clock time of z.
func parseTimestampZone(t TypeID, s string, z Zone) (int64, error) {
	p, err := parseDateTimeText(t, s)
	if err != nil {
		return 0, err
	}
	switch p.special {
	case specialEpoch:
		return 0, nil
	case specialInfinity:
		return TimestampPosInfinity, nil
	case specialNegInfinity:
		return TimestampNegInfinity, nil
	}
	outOfRange := errs.Newf(errs.DatetimeOverflow, "timestamp out of range: %s", quoteInput(s))
	days := daysFromCivil(p.year, p.mon, p.day)
	if !validDate(days) || days > endTimestamp/microsPerDay {
		return 0, outOfRange
	}
	tod := ((p.hour*60+p.min)*60+p.sec)*microsPerSecond + p.usec
	micros, ok := addInt64(days*microsPerDay, tod)
	if !ok {
		return 0, outOfRange
	}
	if t == TimestampTZ && p.fmask&fmTZ != 0 {
		off := p.tzOffset
		if p.tzLoc != nil {
			off = zoneOffset(p, p.tzLoc)
		}
		if micros, ok = addInt64(micros, -off*microsPerSecond); !ok {
			return 0, outOfRange
		}
	} else if t == TimestampTZ && validTimestamp(micros) {
		if micros, err = z.fromLocal(micros); err != nil {
			return 0, outOfRange
		}
	}
	if !validTimestamp(micros) {
		return 0, outOfRange
	}
	return micros, nil
}

// FromGoTime converts a Go time to a value of a date or time type: its
// instant for timestamptz, its wall-clock reading (in its location) for
// timestamp and date. Sub-microsecond digits are dropped. A time outside
// PostgreSQL's range is an error, as it is for text input.
func FromGoTime(x time.Time, id TypeID) (Value, error) {
	switch id {
	case Date:
		days := daysFromCivil(int64(x.Year()), int64(x.Month()), int64(x.Day()))
		if !validDate(days) {
			return Null, errDateRange
		}
		return MakeDate(int32(days)), nil
	case Timestamp:
		_, offset := x.Zone()
		x = x.Add(time.Duration(offset) * time.Second)
	}
	micros := x.Unix()*1_000_000 + int64(x.Nanosecond()/1000)
	if x.Unix() > math.MaxInt64/1_000_000-1 || x.Unix() < minTimestamp/1_000_000-1 || !validTimestamp(micros) {
		return Null, errTimestampRange
	}
	if id == Timestamp {
		return MakeTimestamp(micros), nil
	}
	return MakeTimestampTZ(micros), nil
}

// FromGoInt converts a Go integer to a value of an integer column type
// (with PostgreSQL's range check), or to a bigint for any other type, for
// the column's own conversion to take over.
func FromGoInt(n int64, id TypeID) (Value, error) {
	switch id {
	case Int2:
		if n < math.MinInt16 || n > math.MaxInt16 {
			return Null, errInt2Range
		}
	case Int4:
		if n < math.MinInt32 || n > math.MaxInt32 {
			return Null, errInt4Range
		}
	case Int8:
	default:
		id = Int8
	}
	return MakeInt(id, n), nil
}
