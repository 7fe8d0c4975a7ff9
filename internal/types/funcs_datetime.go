package types

import (
	"math"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/rockstream/rockstream/internal/errs"
)

// Date/time functions: date_trunc, extract and date_part, make_date,
// make_timestamp, make_interval, age, date_bin, isfinite and the
// justify_* family, as PostgreSQL 15's timestamp.c and date.c define them
// with the session time zone UTC (so TIMESTAMPTZ fields are the UTC
// ones and the time zone fields are zero).

// dtUnit is a field name as DecodeUnits and DecodeSpecial know it.
type dtUnit uint8

const (
	unitNone dtUnit = iota
	unitMicrosecond
	unitMillisecond
	unitSecond
	unitMinute
	unitHour
	unitDay
	unitWeek
	unitMonth
	unitQuarter
	unitYear
	unitDecade
	unitCentury
	unitMillennium
	unitTimezone
	unitTimezoneHour
	unitTimezoneMinute
	unitDOW
	unitDOY
	unitISODOW
	unitISOYear
	unitJulian
	// Reserved words: only epoch is a field.
	unitEpoch
	unitReserved
)

// deltaUnits are the unit names of PostgreSQL's deltatktbl (DecodeUnits),
// as compared: lower case, at most 10 characters.
var deltaUnits = map[string]dtUnit{
	"c": unitCentury, "cent": unitCentury, "centuries": unitCentury, "century": unitCentury,
	"d": unitDay, "day": unitDay, "days": unitDay,
	"dec": unitDecade, "decade": unitDecade, "decades": unitDecade, "decs": unitDecade,
	"h": unitHour, "hour": unitHour, "hours": unitHour, "hr": unitHour, "hrs": unitHour,
	"m": unitMinute, "min": unitMinute, "mins": unitMinute, "minute": unitMinute, "minutes": unitMinute,
	"microsecon": unitMicrosecond, "us": unitMicrosecond, "usec": unitMicrosecond,
	"usecond": unitMicrosecond, "useconds": unitMicrosecond, "usecs": unitMicrosecond,
	"mil": unitMillennium, "millennia": unitMillennium, "millennium": unitMillennium, "mils": unitMillennium,
	"millisecon": unitMillisecond, "ms": unitMillisecond, "msec": unitMillisecond,
	"msecond": unitMillisecond, "mseconds": unitMillisecond, "msecs": unitMillisecond,
	"mon": unitMonth, "mons": unitMonth, "month": unitMonth, "months": unitMonth,
	"qtr": unitQuarter, "quarter": unitQuarter,
	"s": unitSecond, "sec": unitSecond, "second": unitSecond, "seconds": unitSecond, "secs": unitSecond,
	"timezone": unitTimezone, "timezone_h": unitTimezoneHour, "timezone_m": unitTimezoneMinute,
	"w": unitWeek, "week": unitWeek, "weeks": unitWeek,
	"y": unitYear, "year": unitYear, "years": unitYear, "yr": unitYear, "yrs": unitYear,
}

// specialUnits are the field names of datetktbl that DecodeSpecial finds
// when DecodeUnits does not: a few more units and the reserved words.
var specialUnits = map[string]dtUnit{
	"dow": unitDOW, "doy": unitDOY, "isodow": unitISODOW, "isoyear": unitISOYear,
	"j": unitJulian, "jd": unitJulian, "julian": unitJulian,
	"epoch": unitEpoch, "infinity": unitReserved, "-infinity": unitReserved, "now": unitReserved,
	"today": unitReserved, "tomorrow": unitReserved, "yesterday": unitReserved, "allballs": unitReserved,
}

// lowerUnits lower-cases a unit name's ASCII letters and clips it to 63
// bytes, as downcase_truncate_identifier does.
func lowerUnits(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	if len(b) > 63 {
		n := 63
		for n > 0 && b[n]&0xc0 == 0x80 {
			n--
		}
		b = b[:n]
	}
	return string(b)
}

// decodeUnit looks a lower-cased unit name up; special says whether the
// reserved words and extra fields of DecodeSpecial count.
func decodeUnit(low string, special bool) dtUnit {
	key := low
	if len(key) > 10 {
		key = key[:10]
	}
	if u, ok := deltaUnits[key]; ok {
		return u
	}
	if special {
		if u, ok := specialUnits[key]; ok {
			return u
		}
	}
	return unitNone
}

func unitNotRecognized(low string, t TypeID) error {
	return errs.Newf(errs.InvalidParameterValue, "unit %q not recognized for type %s", low, t.baseName())
}

func unitNotSupported(low string, t TypeID) error {
	return errs.Newf(errs.FeatureNotSupported, "unit %q not supported for type %s", low, t.baseName())
}

func init() {
	addFunc("date_trunc", Timestamp, dateTrunc(Timestamp), Text, Timestamp)
	addFunc("date_trunc", TimestampTZ, dateTrunc(TimestampTZ), Text, TimestampTZ)
	addFunc("date_trunc", Interval, intervalTrunc, Text, Interval)
	addFunc("date_trunc", TimestampTZ, dateTruncZone, Text, TimestampTZ, Text)

	for _, numericResult := range []bool{true, false} {
		name, result := "extract", Numeric
		if !numericResult {
			name, result = "date_part", Float8
		}
		addFunc(name, result, timestampPart(Timestamp, numericResult), Text, Timestamp)
		addFunc(name, result, timestampPart(TimestampTZ, numericResult), Text, TimestampTZ)
		addFunc(name, result, intervalPart(numericResult), Text, Interval)
	}
	addFunc("extract", Numeric, extractDate, Text, Date)
	addFunc("date_part", Float8, datePart, Text, Date)

	addFunc("make_date", Date, makeDate, Int4, Int4, Int4)
	addFunc("make_timestamp", Timestamp, makeTimestamp(Timestamp), Int4, Int4, Int4, Int4, Int4, Float8)
	addFunc("make_timestamptz", TimestampTZ, makeTimestamp(TimestampTZ), Int4, Int4, Int4, Int4, Int4, Float8)
	addFunc("make_interval", Interval, makeInterval, Int4, Int4, Int4, Int4, Int4, Int4, Float8)

	addFunc("age", Interval, timestampAge(Timestamp), Timestamp, Timestamp)
	addFunc("age", Interval, timestampAge(TimestampTZ), TimestampTZ, TimestampTZ)
	addUnsupported("age", "with one argument it depends on the current date, which a materialized view cannot follow; pass the reference date as the second argument", Interval, Timestamp)
	addUnsupported("age", "with one argument it depends on the current date, which a materialized view cannot follow; pass the reference date as the second argument", Interval, TimestampTZ)
	addPhantom("age", []TypeID{phantomUser})

	addFunc("date_bin", Timestamp, dateBin(Timestamp), Interval, Timestamp, Timestamp)
	addFunc("date_bin", TimestampTZ, dateBin(TimestampTZ), Interval, TimestampTZ, TimestampTZ)

	addFunc("isfinite", Bool, func(a []Value) (Value, error) { return MakeBool(isFiniteDate(a[0].Days())), nil }, Date)
	addFunc("isfinite", Bool, func(a []Value) (Value, error) { return MakeBool(isFiniteTimestamp(a[0].n)), nil }, Timestamp)
	addFunc("isfinite", Bool, func(a []Value) (Value, error) { return MakeBool(isFiniteTimestamp(a[0].n)), nil }, TimestampTZ)
	addFunc("isfinite", Bool, func(a []Value) (Value, error) { return MakeBool(true), nil }, Interval)
	addFunc("justify_days", Interval, justifyDays, Interval)
	addFunc("justify_hours", Interval, justifyHours, Interval)
	addFunc("justify_interval", Interval, justifyInterval, Interval)
}

// dtFields are a finite timestamp's broken-down fields; year is
// astronomical (0 is 1 BC).
type dtFields struct {
	year, month, day     int64
	hour, minute, second int64
	micros               int64 // fraction of the second
}

func fieldsOf(ts int64) dtFields {
	days, tod := splitTimestamp(ts)
	y, m, d := civilFromDays(days)
	return dtFields{year: y, month: m, day: d,
		hour: tod / microsPerHour, minute: tod / microsPerMinute % 60,
		second: tod / microsPerSecond % 60, micros: tod % microsPerSecond}
}

// timestamp converts fields back, failing when out of range.
func (f dtFields) timestamp() (int64, error) {
	if f.year < -4713-1 || f.year > 294247 {
		return 0, errTimestampRange
	}
	days := daysFromCivil(f.year, f.month, f.day)
	tod := ((f.hour*60+f.minute)*60+f.second)*microsPerSecond + f.micros
	ts, ok := mulInt64(days, microsPerDay)
	if ok {
		ts, ok = addInt64(ts, tod)
	}
	if !ok || !validTimestamp(ts) {
		return 0, errTimestampRange
	}
	return ts, nil
}

// isoWeek returns the ISO 8601 week number and week-numbering year of a
// date given as days since 1970-01-01.
func isoWeek(days int64) (week, year int64) {
	dow := isoDOW(days)        // 1 = Monday .. 7 = Sunday
	thursday := days - dow + 4 // the Thursday of the same ISO week
	year, _, _ = civilFromDays(thursday)
	jan1 := daysFromCivil(year, 1, 1) // the week of Jan 4 is week 1
	return (thursday-jan1)/7 + 1, year
}

// isoDOW returns the ISO day of the week, 1 (Monday) to 7 (Sunday).
func isoDOW(days int64) int64 {
	d := (days+3)%7 + 1 // 1970-01-01 was a Thursday
	if d <= 0 {
		d += 7
	}
	return d
}

// sqlYear converts an astronomical year to the AD/BC year PostgreSQL's
// fields show (1 BC is -1).
func sqlYear(y int64) int64 {
	if y > 0 {
		return y
	}
	return y - 1
}

func decadeOf(y int64) int64 {
	if y >= 0 {
		return y / 10
	}
	return -((8 - (y - 1)) / 10)
}

func centuryOf(y int64) int64 {
	if y > 0 {
		return (y + 99) / 100
	}
	return -((99 - (y - 1)) / 100)
}

func millenniumOf(y int64) int64 {
	if y > 0 {
		return (y + 999) / 1000
	}
	return -((999 - (y - 1)) / 1000)
}

func dateTrunc(t TypeID) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		ts := a[1].n
		low := lowerUnits(a[0].s)
		unit := decodeUnit(low, false)
		if !isFiniteTimestamp(ts) {
			return a[1], nil
		}
		if unit == unitNone {
			return Null, unitNotRecognized(low, t)
		}
		f := fieldsOf(ts)
		switch unit {
		case unitWeek:
			days, _ := splitTimestamp(ts)
			monday := days - isoDOW(days) + 1
			r, err := dtFields{}.withDays(monday)
			if err != nil {
				return Null, err
			}
			return Value{kind: t, n: r}, nil
		case unitMillennium, unitCentury, unitDecade, unitYear, unitQuarter, unitMonth,
			unitDay, unitHour, unitMinute, unitSecond:
			switch unit {
			case unitMillennium:
				if f.year > 0 {
					f.year = ((f.year+999)/1000)*1000 - 999
				} else {
					f.year = -((999-(f.year-1))/1000)*1000 + 1
				}
			case unitCentury:
				if f.year > 0 {
					f.year = ((f.year+99)/100)*100 - 99
				} else {
					f.year = -((99-(f.year-1))/100)*100 + 1
				}
			case unitDecade:
				if f.year > 0 {
					f.year = (f.year / 10) * 10
				} else {
					f.year = -((8 - (f.year - 1)) / 10) * 10
				}
			}
			if unit >= unitYear {
				f.month = 1
			}
			if unit >= unitQuarter {
				f.month = 3*((f.month-1)/3) + 1
			}
			if unit >= unitMonth {
				f.day = 1
			}
			if unit >= unitDay {
				f.hour = 0
			}
			if unit >= unitHour {
				f.minute = 0
			}
			if unit >= unitMinute {
				f.second = 0
			}
			f.micros = 0
		case unitMillisecond:
			f.micros = f.micros / 1000 * 1000
		case unitMicrosecond:
		default:
			return Null, unitNotSupported(low, t)
		}
		r, err := f.timestamp()
		if err != nil {
			return Null, err
		}
		return Value{kind: t, n: r}, nil
	}
}

// withDays returns midnight of the given day.
func (dtFields) withDays(days int64) (int64, error) {
	ts, ok := mulInt64(days, microsPerDay)
	if !ok || !validTimestamp(ts) {
		return 0, errTimestampRange
	}
	return ts, nil
}

// itm is an interval broken down as interval2itm does: years and months
// from the months, days, and hours, minutes, seconds and microseconds
// from the time, each truncated toward zero.
type itm struct {
	year, month, day             int64
	hour, minute, second, micros int64
}

func itmOf(iv IntervalValue) itm {
	t := iv.Micros
	r := itm{year: int64(iv.Months) / 12, month: int64(iv.Months) % 12, day: int64(iv.Days)}
	r.hour = t / microsPerHour
	t -= r.hour * microsPerHour
	r.minute = t / microsPerMinute
	t -= r.minute * microsPerMinute
	r.second = t / microsPerSecond
	r.micros = t - r.second*microsPerSecond
	return r
}

func (m itm) interval() (IntervalValue, error) {
	months := m.year*12 + m.month
	if months > math.MaxInt32 || months < math.MinInt32 || m.day > math.MaxInt32 || m.day < math.MinInt32 {
		return IntervalValue{}, errIntervalRange
	}
	t, ok := mulInt64(m.hour, microsPerHour)
	if ok {
		t, ok = addInt64(t, m.minute*microsPerMinute+m.second*microsPerSecond+m.micros)
	}
	if !ok {
		return IntervalValue{}, errIntervalRange
	}
	return IntervalValue{Months: int32(months), Days: int32(m.day), Micros: t}, nil
}

func intervalTrunc(a []Value) (Value, error) {
	low := lowerUnits(a[0].s)
	unit := decodeUnit(low, false)
	if unit == unitNone {
		return Null, unitNotRecognized(low, Interval)
	}
	m := itmOf(a[1].Interval())
	switch unit {
	case unitMillennium, unitCentury, unitDecade, unitYear, unitQuarter, unitMonth,
		unitDay, unitHour, unitMinute, unitSecond:
		switch unit {
		case unitMillennium:
			m.year = m.year / 1000 * 1000
		case unitCentury:
			m.year = m.year / 100 * 100
		case unitDecade:
			m.year = m.year / 10 * 10
		}
		if unit >= unitYear {
			m.month = 0
		}
		if unit >= unitQuarter {
			m.month = 3 * (m.month / 3)
		}
		if unit >= unitMonth {
			m.day = 0
		}
		if unit >= unitDay {
			m.hour = 0
		}
		if unit >= unitHour {
			m.minute = 0
		}
		if unit >= unitMinute {
			m.second = 0
		}
		m.micros = 0
	case unitMillisecond:
		m.micros = m.micros / 1000 * 1000
	case unitMicrosecond:
	default:
		return Null, unitNotSupported(low, Interval)
	}
	iv, err := m.interval()
	if err != nil {
		return Null, err
	}
	return MakeInterval(iv), nil
}

// partResult is a field's value: an integer, or a number of micro- or
// milliseconds to show with 6 or 3 decimals, or an exact numeric.
type partResult struct {
	n     int64
	scale int32 // n / 10^scale
	dec   *apd.Decimal
	f     float64
	isF   bool // f holds date_part's float value
}

func (p partResult) value(numericResult bool) Value {
	if numericResult {
		if p.dec != nil {
			return MakeNumeric(p.dec)
		}
		return MakeNumeric(newDec(p.n < 0, new(apd.BigInt).SetUint64(absU64(p.n)), p.scale))
	}
	if p.isF {
		return MakeFloat8(p.f)
	}
	return MakeFloat8(float64(p.n))
}

func timestampPart(t TypeID, numericResult bool) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		low := lowerUnits(a[0].s)
		unit := decodeUnit(low, true)
		ts := a[1].n
		if !isFiniteTimestamp(ts) {
			return nonFinitePart(unit, low, t, ts == TimestampNegInfinity, numericResult)
		}
		f := fieldsOf(ts)
		var r partResult
		switch unit {
		case unitMicrosecond:
			r.n = f.second*microsPerSecond + f.micros
		case unitMillisecond:
			r = partResult{n: f.second*microsPerSecond + f.micros, scale: 3,
				f: float64(f.second)*1000 + float64(f.micros)/1000, isF: true}
		case unitSecond:
			r = partResult{n: f.second*microsPerSecond + f.micros, scale: 6,
				f: float64(f.second) + float64(f.micros)/1e6, isF: true}
		case unitMinute:
			r.n = f.minute
		case unitHour:
			r.n = f.hour
		case unitDay:
			r.n = f.day
		case unitMonth:
			r.n = f.month
		case unitQuarter:
			r.n = (f.month-1)/3 + 1
		case unitWeek:
			days, _ := splitTimestamp(ts)
			r.n, _ = isoWeek(days)
		case unitYear:
			r.n = sqlYear(f.year)
		case unitDecade:
			r.n = decadeOf(f.year)
		case unitCentury:
			r.n = centuryOf(f.year)
		case unitMillennium:
			r.n = millenniumOf(f.year)
		case unitJulian:
			days, tod := splitTimestamp(ts)
			jd := days + unixEpochJulian
			if numericResult {
				frac, _ := NumericDiv(NumericFromInt(tod), NumericFromInt(microsPerDay))
				r.dec, _ = NumericAdd(NumericFromInt(jd), frac)
			} else {
				sec := float64((f.hour*60+f.minute)*60+f.second) + float64(f.micros)/1e6
				r = partResult{f: float64(jd) + sec/86400, isF: true}
			}
		case unitISOYear:
			days, _ := splitTimestamp(ts)
			_, y := isoWeek(days)
			if y <= 0 {
				y--
			}
			r.n = y
		case unitDOW, unitISODOW:
			days, _ := splitTimestamp(ts)
			r.n = isoDOW(days)
			if unit == unitDOW && r.n == 7 {
				r.n = 0
			}
		case unitDOY:
			days, _ := splitTimestamp(ts)
			r.n = days - daysFromCivil(f.year, 1, 1) + 1
		case unitTimezone, unitTimezoneHour, unitTimezoneMinute:
			if t != TimestampTZ {
				return Null, unitNotSupported(low, t)
			}
			r.n = 0
		case unitEpoch:
			r = partResult{n: ts, scale: 6, f: float64(ts) / 1e6, isF: true}
		case unitReserved:
			return Null, unitNotSupported(low, t)
		default:
			return Null, unitNotRecognized(low, t)
		}
		return r.value(numericResult), nil
	}
}

// nonFinitePart is extract/date_part of an infinite timestamp: NULL for
// fields that cycle, ±Infinity for those that grow with time.
func nonFinitePart(unit dtUnit, low string, t TypeID, negative, numericResult bool) (Value, error) {
	switch unit {
	case unitNone:
		return Null, unitNotRecognized(low, t)
	case unitMicrosecond, unitMillisecond, unitSecond, unitMinute, unitHour, unitDay, unitMonth,
		unitQuarter, unitWeek, unitDOW, unitISODOW, unitDOY, unitTimezone, unitTimezoneHour, unitTimezoneMinute:
		return Null, nil
	case unitYear, unitDecade, unitCentury, unitMillennium, unitJulian, unitISOYear, unitEpoch:
		sign := 1
		if negative {
			sign = -1
		}
		if numericResult {
			return MakeNumeric(infOf(sign)), nil
		}
		return MakeFloat8(math.Inf(sign)), nil
	}
	return Null, unitNotSupported(low, t)
}

// extractDate is extract(field FROM date), which has its own fields: no
// time-of-day fields, and integer results.
func extractDate(a []Value) (Value, error) {
	low := lowerUnits(a[0].s)
	unit := decodeUnit(low, true)
	d := a[1].Days()
	if !isFiniteDate(d) && unit != unitNone && unit != unitReserved {
		switch unit {
		case unitDay, unitMonth, unitQuarter, unitWeek, unitDOW, unitISODOW, unitDOY:
			return Null, nil
		case unitYear, unitDecade, unitCentury, unitMillennium, unitJulian, unitISOYear, unitEpoch:
			sign := 1
			if d == DateNegInfinity {
				sign = -1
			}
			return MakeNumeric(infOf(sign)), nil
		}
		return Null, unitNotSupported(low, Date)
	}
	days := int64(d)
	y, m, day := civilFromDays(days)
	var n int64
	switch unit {
	case unitDay:
		n = day
	case unitMonth:
		n = m
	case unitQuarter:
		n = (m-1)/3 + 1
	case unitWeek:
		n, _ = isoWeek(days)
	case unitYear:
		n = sqlYear(y)
	case unitDecade:
		n = decadeOf(y)
	case unitCentury:
		n = centuryOf(y)
	case unitMillennium:
		n = millenniumOf(y)
	case unitJulian:
		n = days + unixEpochJulian
	case unitISOYear:
		_, n = isoWeek(days)
		if n <= 0 {
			n--
		}
	case unitDOW, unitISODOW:
		n = isoDOW(days)
		if unit == unitDOW && n == 7 {
			n = 0
		}
	case unitDOY:
		n = days - daysFromCivil(y, 1, 1) + 1
	case unitEpoch:
		n = days * 86400
	case unitNone:
		return Null, unitNotRecognized(low, Date)
	default:
		return Null, unitNotSupported(low, Date)
	}
	return MakeNumeric(NumericFromInt(n)), nil
}

// datePart is date_part(field, date), which PostgreSQL defines as
// date_part(field, date::timestamp).
func datePart(a []Value) (Value, error) {
	ts, err := dateToTimestamp(a[1].Days())
	if err != nil {
		return Null, err
	}
	return timestampPart(Timestamp, false)([]Value{a[0], MakeTimestamp(ts)})
}

func intervalPart(numericResult bool) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		low := lowerUnits(a[0].s)
		unit := decodeUnit(low, true)
		iv := a[1].Interval()
		m := itmOf(iv)
		var r partResult
		switch unit {
		case unitMicrosecond:
			r.n = m.second*microsPerSecond + m.micros
		case unitMillisecond:
			r = partResult{n: m.second*microsPerSecond + m.micros, scale: 3,
				f: float64(m.second)*1000 + float64(m.micros)/1000, isF: true}
		case unitSecond:
			r = partResult{n: m.second*microsPerSecond + m.micros, scale: 6,
				f: float64(m.second) + float64(m.micros)/1e6, isF: true}
		case unitMinute:
			r.n = m.minute
		case unitHour:
			r.n = m.hour
		case unitDay:
			r.n = m.day
		case unitMonth:
			r.n = m.month
		case unitQuarter:
			r.n = m.month/3 + 1
		case unitYear:
			r.n = m.year
		case unitDecade:
			r.n = m.year / 10
		case unitCentury:
			r.n = m.year / 100
		case unitMillennium:
			r.n = m.year / 1000
		case unitEpoch:
			months := int64(iv.Months)
			// A year counts 365.25 days, a month 30.
			secs := 31557600*(months/12) + (30*(months%12)+int64(iv.Days))*86400
			if numericResult {
				v, ok := mulInt64(secs, microsPerSecond)
				if ok {
					v, ok = addInt64(v, iv.Micros)
				}
				if ok {
					r = partResult{n: v, scale: 6}
				} else {
					frac := newDec(iv.Micros < 0, new(apd.BigInt).SetUint64(absU64(iv.Micros)), 6)
					r.dec, _ = NumericAdd(frac, NumericFromInt(secs))
				}
			} else {
				f := float64(iv.Micros) / 1e6
				f += 365.25 * 86400 * float64(months/12)
				f += 30 * 86400 * float64(months%12)
				f += 86400 * float64(iv.Days)
				r = partResult{f: f, isF: true}
			}
		case unitNone, unitReserved:
			return Null, unitNotRecognized(low, Interval)
		default:
			return Null, unitNotSupported(low, Interval)
		}
		return r.value(numericResult), nil
	}
}

// Julian-day limits of dates, as IS_VALID_JULIAN checks them.
const (
	julianMinYear  = -4713
	julianMinMonth = 11
	julianMaxYear  = 5874898
	julianMaxMonth = 6
)

func validJulian(y, m int64) bool {
	return (y > julianMinYear || (y == julianMinYear && m >= julianMinMonth)) &&
		(y < julianMaxYear || (y == julianMaxYear && m < julianMaxMonth))
}

// validateYMD checks a date given with a possibly negative (BC) year as
// ValidateDate does, returning the astronomical year.
func validateYMD(year, month, day int64) (int64, bool) {
	y := year
	if y < 0 {
		y = -(-y - 1) // -1 (1 BC) is astronomical 0
	} else if y == 0 {
		return y, false
	}
	if month < 1 || month > 12 || day < 1 || day > daysInMonth(y, month) {
		return y, false
	}
	return y, true
}

func makeDate(a []Value) (Value, error) {
	year, month, day := a[0].n, a[1].n, a[2].n
	y, ok := validateYMD(year, month, day)
	if !ok {
		// The message shows the year as ValidateDate left it: astronomical.
		return Null, errs.Newf(errs.DatetimeOverflow, "date field value out of range: %d-%02d-%02d", y, month, day)
	}
	if !validJulian(y, month) {
		return Null, errs.Newf(errs.DatetimeOverflow, "date out of range: %d-%02d-%02d", y, month, day)
	}
	days := daysFromCivil(y, month, day)
	if !validDate(days) {
		return Null, errs.Newf(errs.DatetimeOverflow, "date out of range: %d-%02d-%02d", y, month, day)
	}
	return MakeDate(int32(days)), nil
}

// formatG formats f as C's printf("%02g") does.
func formatG(f float64) string {
	s := cFormatG(f, 6)
	if len(s) < 2 {
		s = "0" + s
	}
	return s
}

// cFormatG formats f as C's %.<prec>g: prec significant digits, trailing
// zeros removed, exponent form when the exponent is below -4 or at least
// prec.
func cFormatG(f float64, prec int) string {
	// PostgreSQL's own printf writes these as its float output does.
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if f == 0 {
		if math.Signbit(f) {
			return "-0"
		}
		return "0"
	}
	e := strconv.FormatFloat(f, 'e', prec-1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	x, _ := strconv.Atoi(exp)
	if x < -4 || x >= prec {
		if strings.Contains(mant, ".") {
			mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
		}
		sign := "+"
		if x < 0 {
			sign, x = "-", -x
		}
		xs := strconv.Itoa(x)
		if len(xs) < 2 {
			xs = "0" + xs
		}
		return mant + "e" + sign + xs
	}
	s := strconv.FormatFloat(f, 'f', max(prec-1-x, 0), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func makeTimestamp(t TypeID) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		year, month, day, hour, minute := a[0].n, a[1].n, a[2].n, a[3].n, a[4].n
		sec := a[5].Float()
		y, ok := validateYMD(year, month, day)
		if !ok {
			return Null, errs.Newf(errs.DatetimeOverflow, "date field value out of range: %d-%02d-%02d", year, month, day)
		}
		if !validJulian(y, month) {
			return Null, errs.Newf(errs.DatetimeOverflow, "date out of range: %d-%02d-%02d", year, month, day)
		}
		if timeOverflows(hour, minute, sec) {
			return Null, errs.Newf(errs.DatetimeOverflow, "time field value out of range: %d:%02d:%s", hour, minute, formatG(sec))
		}
		days := daysFromCivil(y, month, day)
		tod := (hour*60+minute)*60*microsPerSecond + int64(math.RoundToEven(sec*microsPerSecond))
		ts, ok := mulInt64(days, microsPerDay)
		if ok {
			ts, ok = addInt64(ts, tod)
		}
		if !ok || !validTimestamp(ts) {
			return Null, errs.Newf(errs.DatetimeOverflow, "timestamp out of range: %d-%02d-%02d %d:%02d:%s",
				year, month, day, hour, minute, formatG(sec))
		}
		return Value{kind: t, n: ts}, nil
	}
}

// timeOverflows reports whether hour:minute:sec is not a time of day
// (24:00:00 is allowed), as float_time_overflows does.
func timeOverflows(hour, minute int64, sec float64) bool {
	if hour < 0 || hour > 24 || minute < 0 || minute >= 60 || math.IsNaN(sec) {
		return true
	}
	us := math.RoundToEven(sec * microsPerSecond)
	if us < 0 || us > 60*microsPerSecond {
		return true
	}
	return (hour*60+minute)*60*microsPerSecond+int64(us) > microsPerDay
}

func makeInterval(a []Value) (Value, error) {
	secs := a[6].Float()
	if math.IsInf(secs, 0) || math.IsNaN(secs) {
		return Null, errIntervalRange
	}
	// PostgreSQL 15 computes the months and days in 32-bit arithmetic
	// without overflow checks; the results wrap the same way here.
	months := int32(a[0].n)*12 + int32(a[1].n)
	days := int32(a[2].n)*7 + int32(a[3].n)
	us := math.RoundToEven(secs * microsPerSecond)
	t := a[4].n*3600*microsPerSecond + a[5].n*60*microsPerSecond + int64(us)
	return MakeInterval(IntervalValue{Months: months, Days: days, Micros: t}), nil
}

func timestampAge(t TypeID) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		t1, t2 := a[0].n, a[1].n
		f1, ok1 := ageFields(t1)
		f2, ok2 := ageFields(t2)
		if !ok1 || !ok2 {
			return Null, errTimestampRange
		}
		d := itm{
			year: f1.year - f2.year, month: f1.month - f2.month, day: f1.day - f2.day,
			hour: f1.hour - f2.hour, minute: f1.minute - f2.minute, second: f1.second - f2.second,
			micros: f1.micros - f2.micros,
		}
		flip := t1 < t2
		neg := func() {
			d = itm{-d.year, -d.month, -d.day, -d.hour, -d.minute, -d.second, -d.micros}
		}
		if flip {
			neg()
		}
		for d.micros < 0 {
			d.micros += microsPerSecond
			d.second--
		}
		for d.second < 0 {
			d.second += 60
			d.minute--
		}
		for d.minute < 0 {
			d.minute += 60
			d.hour--
		}
		for d.hour < 0 {
			d.hour += 24
			d.day--
		}
		for d.day < 0 {
			if flip {
				d.day += daysInMonth(f1.year, f1.month)
			} else {
				d.day += daysInMonth(f2.year, f2.month)
			}
			d.month--
		}
		for d.month < 0 {
			d.month += 12
			d.year--
		}
		if flip {
			neg()
		}
		iv, err := d.interval()
		if err != nil {
			return Null, err
		}
		return MakeInterval(iv), nil
	}
}

// ageFields returns the fields age() works with. PostgreSQL 15 breaks
// infinity down as the largest value of its representation
// (294277-01-09 04:00:54.775807) and fails on -infinity.
func ageFields(ts int64) (dtFields, bool) {
	switch ts {
	case TimestampNegInfinity:
		return dtFields{}, false
	case TimestampPosInfinity:
		const pgEpochDays = 10957 // 2000-01-01, PostgreSQL's epoch
		days := floorDiv(math.MaxInt64, microsPerDay) + pgEpochDays
		tod := int64(math.MaxInt64 % microsPerDay)
		y, m, d := civilFromDays(days)
		return dtFields{year: y, month: m, day: d, hour: tod / microsPerHour, minute: tod / microsPerMinute % 60,
			second: tod / microsPerSecond % 60, micros: tod % microsPerSecond}, true
	}
	return fieldsOf(ts), true
}

func dateBin(t TypeID) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		stride, ts, origin := a[0].Interval(), a[1].n, a[2].n
		if !isFiniteTimestamp(ts) {
			return a[1], nil
		}
		if !isFiniteTimestamp(origin) {
			return Null, errs.New(errs.DatetimeOverflow, "origin out of range")
		}
		if stride.Months != 0 {
			return Null, errs.New(errs.FeatureNotSupported, "timestamps cannot be binned into intervals containing months or years")
		}
		width := int64(stride.Days)*microsPerDay + stride.Micros
		if width <= 0 {
			return Null, errs.New(errs.DatetimeOverflow, "stride must be greater than zero")
		}
		diff := ts - origin
		delta := diff - diff%width
		if diff%width < 0 {
			// Bins start at or before the timestamp, also when the origin
			// is after it.
			delta -= width
		}
		r := origin + delta
		if !validTimestamp(r) {
			return Null, errTimestampRange
		}
		return Value{kind: t, n: r}, nil
	}
}

func justifyHours(a []Value) (Value, error) {
	iv := a[0].Interval()
	whole := iv.Micros / microsPerDay
	t := iv.Micros - whole*microsPerDay
	day := int64(iv.Days) + whole
	if day > math.MaxInt32 || day < math.MinInt32 {
		return Null, errIntervalRange
	}
	if day > 0 && t < 0 {
		t += microsPerDay
		day--
	} else if day < 0 && t > 0 {
		t -= microsPerDay
		day++
	}
	return MakeInterval(IntervalValue{Months: iv.Months, Days: int32(day), Micros: t}), nil
}

func justifyDays(a []Value) (Value, error) {
	iv := a[0].Interval()
	whole := iv.Days / 30
	day := iv.Days - whole*30
	month := int64(iv.Months) + int64(whole)
	if month > math.MaxInt32 || month < math.MinInt32 {
		return Null, errIntervalRange
	}
	if month > 0 && day < 0 {
		day += 30
		month--
	} else if month < 0 && day > 0 {
		day -= 30
		month++
	}
	return MakeInterval(IntervalValue{Months: int32(month), Days: day, Micros: iv.Micros}), nil
}

func justifyInterval(a []Value) (Value, error) {
	iv := a[0].Interval()
	month, day, t := int64(iv.Months), int64(iv.Days), iv.Micros
	if (day > 0 && t > 0) || (day < 0 && t < 0) {
		whole := day / 30
		day -= whole * 30
		month += whole
		if month > math.MaxInt32 || month < math.MinInt32 {
			return Null, errIntervalRange
		}
	}
	whole := t / microsPerDay
	t -= whole * microsPerDay
	day += whole
	wm := day / 30
	day -= wm * 30
	month += wm
	if month > math.MaxInt32 || month < math.MinInt32 {
		return Null, errIntervalRange
	}
	if month > 0 && (day < 0 || (day == 0 && t < 0)) {
		day += 30
		month--
	} else if month < 0 && (day > 0 || (day == 0 && t > 0)) {
		day -= 30
		month++
	}
	if day > 0 && t < 0 {
		t += microsPerDay
		day--
	} else if day < 0 && t > 0 {
		t -= microsPerDay
		day++
	}
	return MakeInterval(IntervalValue{Months: int32(month), Days: int32(day), Micros: t}), nil
}
