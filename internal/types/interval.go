package types

import (
	"math"
	"strconv"
	"strings"
)

// INTERVAL keeps months, days and microseconds apart, as PostgreSQL does:
// '1 mon' and '30 days' are distinct values that compare equal (ordering
// treats a month as 30 days and a day as 24 hours).

// AppendInterval appends interval_out's text in the postgres IntervalStyle:
// "1 year 2 mons 3 days 04:05:06.7", "-1 days +02:00:00", "00:00:00".
func AppendInterval(dst []byte, iv IntervalValue) []byte {
	years := int64(iv.Months / 12)
	mons := int64(iv.Months % 12)
	days := int64(iv.Days)
	zero, before := true, false
	dst = appendIntervalPart(dst, years, "year", &zero, &before)
	dst = appendIntervalPart(dst, mons, "mon", &zero, &before)
	dst = appendIntervalPart(dst, days, "day", &zero, &before)
	t := iv.Micros
	if !zero && t == 0 {
		return dst
	}
	neg := t < 0
	// Work on the magnitude as unsigned so that MinInt64 negates.
	mag := uint64(t)
	if neg {
		mag = -mag
	}
	hours := mag / microsPerHour
	mag -= hours * microsPerHour
	mins := mag / microsPerMinute
	mag -= mins * microsPerMinute
	secs := mag / microsPerSecond
	frac := mag - secs*microsPerSecond
	if !zero {
		dst = append(dst, ' ')
	}
	if neg {
		dst = append(dst, '-')
	} else if before {
		dst = append(dst, '+')
	}
	if hours < 10 {
		dst = append(dst, '0')
	}
	dst = strconv.AppendUint(dst, hours, 10)
	dst = append(dst, ':')
	dst = appendPadded(dst, int64(mins), 2)
	dst = append(dst, ':')
	return appendSeconds(dst, int64(secs), int64(frac))
}

// appendIntervalPart appends one "N unit[s]" part; a positive part after a
// negative one carries an explicit "+".
func appendIntervalPart(dst []byte, v int64, unit string, zero, before *bool) []byte {
	if v == 0 {
		return dst
	}
	if !*zero {
		dst = append(dst, ' ')
	}
	if *before && v > 0 {
		dst = append(dst, '+')
	}
	dst = strconv.AppendInt(dst, v, 10)
	dst = append(dst, ' ')
	dst = append(dst, unit...)
	if v != 1 {
		dst = append(dst, 's')
	}
	*before = v < 0
	*zero = false
	return dst
}

// intervalAcc accumulates interval input: years, months and days as int32
// parts and time as int64 microseconds, with overflow reported.
type intervalAcc struct {
	years, months, days int32
	micros              int64
}

func (a *intervalAcc) addMicros(val int64, frac float64, scale int64) bool {
	v, ok := mulInt64(val, scale)
	if !ok {
		return false
	}
	if a.micros, ok = addInt64(a.micros, v); !ok {
		return false
	}
	return a.addFracMicros(frac, scale)
}

// addFracMicros adds frac×scale microseconds, rounding off any fraction of
// a microsecond.
func (a *intervalAcc) addFracMicros(frac float64, scale int64) bool {
	if frac == 0 {
		return true
	}
	f := frac * float64(scale)
	us := int64(f)
	f -= float64(us)
	us += int64(math.RoundToEven(f))
	var ok bool
	a.micros, ok = addInt64(a.micros, us)
	return ok
}

func (a *intervalAcc) addDays(val int64, scale int64) bool {
	v, ok := mulInt64(val, scale)
	if !ok || v > math.MaxInt32 || v < math.MinInt32 {
		return false
	}
	r := int64(a.days) + v
	if r > math.MaxInt32 || r < math.MinInt32 {
		return false
	}
	a.days = int32(r)
	return true
}

// addFracDays adds frac×scale days, the fraction of a day as microseconds.
func (a *intervalAcc) addFracDays(frac float64, scale int64) bool {
	if frac == 0 {
		return true
	}
	f := frac * float64(scale)
	extra := int64(f)
	if !a.addDays(extra, 1) {
		return false
	}
	return a.addFracMicros(f-float64(extra), microsPerDay)
}

func (a *intervalAcc) addMonths(val int64) bool {
	if val > math.MaxInt32 || val < math.MinInt32 {
		return false
	}
	r := int64(a.months) + val
	if r > math.MaxInt32 || r < math.MinInt32 {
		return false
	}
	a.months = int32(r)
	return true
}

func (a *intervalAcc) addYears(val int64, scale int64) bool {
	v, ok := mulInt64(val, scale)
	if !ok || v > math.MaxInt32 || v < math.MinInt32 {
		return false
	}
	r := int64(a.years) + v
	if r > math.MaxInt32 || r < math.MinInt32 {
		return false
	}
	a.years = int32(r)
	return true
}

// addFracYears adds frac×scale years as whole months, rounded.
func (a *intervalAcc) addFracYears(frac float64, scale int64) bool {
	if frac == 0 {
		return true
	}
	m := math.RoundToEven(frac * float64(scale) * 12)
	if m > math.MaxInt32 || m < math.MinInt32 {
		return false
	}
	return a.addMonths(int64(m))
}

// value converts the accumulated parts to an interval.
func (a *intervalAcc) value() (IntervalValue, bool) {
	m := int64(a.years)*12 + int64(a.months)
	if m > math.MaxInt32 || m < math.MinInt32 {
		return IntervalValue{}, false
	}
	return IntervalValue{Months: int32(m), Days: a.days, Micros: a.micros}, true
}

// Interval units, as the unit words map to them.
type ivUnit uint8

const (
	ivNone ivUnit = iota
	ivMicrosecond
	ivMillisecond
	ivSecond
	ivMinute
	ivHour
	ivDay
	ivWeek
	ivMonth
	ivYear
	ivDecade
	ivCentury
	ivMillennium
	ivAgo
)

var intervalUnits = map[string]ivUnit{
	"us": ivMicrosecond, "usec": ivMicrosecond, "usecs": ivMicrosecond, "useconds": ivMicrosecond,
	"microsecon": ivMicrosecond,
	"ms":         ivMillisecond, "msec": ivMillisecond, "msecs": ivMillisecond, "mseconds": ivMillisecond,
	"millisecon": ivMillisecond,
	"s":          ivSecond, "sec": ivSecond, "secs": ivSecond, "second": ivSecond, "seconds": ivSecond,
	"m": ivMinute, "min": ivMinute, "mins": ivMinute, "minute": ivMinute, "minutes": ivMinute,
	"h": ivHour, "hr": ivHour, "hrs": ivHour, "hour": ivHour, "hours": ivHour,
	"d": ivDay, "day": ivDay, "days": ivDay,
	"w": ivWeek, "week": ivWeek, "weeks": ivWeek,
	"mon": ivMonth, "mons": ivMonth, "month": ivMonth, "months": ivMonth,
	"y": ivYear, "yr": ivYear, "yrs": ivYear, "year": ivYear, "years": ivYear,
	"dec": ivDecade, "decs": ivDecade, "decade": ivDecade, "decades": ivDecade,
	"c": ivCentury, "cent": ivCentury, "century": ivCentury, "centuries": ivCentury,
	"mil": ivMillennium, "mils": ivMillennium, "millennium": ivMillennium, "millennia": ivMillennium,
	"ago": ivAgo,
}

// Bits of the interval parts already given.
const (
	imMicrosecond = 1 << iota
	imMillisecond
	imSecond
	imMinute
	imHour
	imDay
	imWeek
	imMonth
	imYear
	imDecade
	imCentury
	imMillennium
	imAllSecs = imSecond | imMillisecond | imMicrosecond
	imTime    = imHour | imMinute | imAllSecs
)

// ParseInterval parses INTERVAL text as interval_in does: the postgres
// format ('1 day 02:00:00', '3 hours', '1 year 2 months', '-1 day +02:00',
// '@ 1 hour ago', '1-2' for years-months, a bare number of seconds) and the
// ISO 8601 formats ('P1Y2M3DT4H5M6S', 'P0001-02-03T04:05:06').
func ParseInterval(s string) (IntervalValue, error) { return parseInterval(s, 0) }

// parseInterval parses INTERVAL text for a type with field restriction
// f, which gives a bare number its unit ('90' is 90 days for INTERVAL
// DAY) and reads 'a:b' as minutes and seconds for INTERVAL MINUTE TO
// SECOND. The caller truncates the result to the fields.
func parseInterval(s string, f IntervalFields) (IntervalValue, error) {
	fields, e := splitDateTime(s)
	var acc intervalAcc
	if e == dtOK {
		e = decodeInterval(fields, f, &acc)
	}
	if e == dtBadFormat {
		acc = intervalAcc{}
		e = decodeISOInterval(s, &acc)
	}
	switch e {
	case dtOK:
	case dtFieldOverflow, dtIntervalOverflow:
		return IntervalValue{}, dtErrorFor(dtIntervalOverflow, Interval, s, "")
	default:
		return IntervalValue{}, dtErrorFor(e, Interval, s, "")
	}
	iv, ok := acc.value()
	if !ok {
		return IntervalValue{}, errIntervalRange
	}
	return iv, nil
}

// parseIntervalNumber splits a number field into its signed integer part
// and signed fraction ("-1.5" is -1 and -0.5), or reports a years-months
// field "Y-M" (months true, value in months).
func parseIntervalNumber(s string) (val int64, frac float64, yearMonth bool, e dtError) {
	neg := false
	p := 0
	if p < len(s) && (s[p] == '+' || s[p] == '-') {
		neg = s[p] == '-'
		p++
	}
	ds := p
	for p < len(s) && isDigit(s[p]) {
		d := int64(s[p] - '0')
		// Accumulate negatively so that the most negative value fits.
		if val < (math.MinInt64+d)/10 {
			return 0, 0, false, dtFieldOverflow
		}
		val = val*10 - d
		p++
	}
	if !neg {
		if val == math.MinInt64 {
			return 0, 0, false, dtFieldOverflow
		}
		val = -val
	}
	rest := s[p:]
	switch {
	case rest == "":
		if p == ds {
			return 0, 0, false, dtBadFormat
		}
		return val, 0, false, dtOK
	case rest[0] == '-' && p > ds:
		m, ok := parseDigits(rest[1:])
		if !ok {
			return 0, 0, false, dtBadFormat
		}
		if m >= 12 {
			return 0, 0, false, dtFieldOverflow
		}
		if neg {
			m = -m
		}
		total, ok := mulInt64(val, 12)
		if !ok {
			return 0, 0, false, dtFieldOverflow
		}
		if total, ok = addInt64(total, m); !ok {
			return 0, 0, false, dtFieldOverflow
		}
		return total, 0, true, dtOK
	case rest[0] == '.':
		for i := 1; i < len(rest); i++ {
			if !isDigit(rest[i]) {
				return 0, 0, false, dtBadFormat
			}
		}
		if len(rest) > 1 {
			f, err := strconv.ParseFloat("0"+rest, 64)
			if err != nil {
				return 0, 0, false, dtBadFormat
			}
			frac = f
		}
		if neg {
			frac = -frac
		}
		return val, frac, false, dtOK
	}
	return 0, 0, false, dtBadFormat
}

// decodeInterval decodes postgres-format interval fields, reading them from
// right to left so that each unit word applies to the number before it
// (DecodeInterval). The type's field restriction r gives the unit of a
// number with none.
func decodeInterval(fields []dtField, r IntervalFields, acc *intervalAcc) dtError {
	fmask := 0
	unit := ivNone
	ago := false
	for i := len(fields) - 1; i >= 0; i-- {
		f := fields[i]
		tmask := 0
		switch f.kind {
		case dtTime, dtSigned, dtDate, dtNumber:
			if f.kind == dtTime || (f.kind == dtSigned && strings.IndexByte(f.s, ':') >= 0) {
				body := f.s
				neg := false
				if f.kind == dtSigned {
					neg = body[0] == '-'
					body = body[1:]
				}
				var h, m, sec, us int64
				e := decodeTime(body, &h, &m, &sec, &us)
				if r == IntervalMinute|IntervalSecond && strings.Count(body, ":") == 1 && strings.IndexByte(body, '.') < 0 {
					// 'a:b' is minutes and seconds for MINUTE TO SECOND.
					h, m, sec = 0, h, m
				}
				t := us
				ok := e == dtOK
				if ok {
					t, ok = addMulInt64(t, h, microsPerHour)
				}
				if ok {
					t, ok = addMulInt64(t, m, microsPerMinute)
				}
				if ok {
					t, ok = addMulInt64(t, sec, microsPerSecond)
				}
				if !ok {
					if f.kind == dtSigned {
						// Not a signed time: try it as a signed number.
						goto number
					}
					if e == dtOK {
						e = dtFieldOverflow
					}
					return e
				}
				if neg {
					t = -t
				}
				if acc.micros, ok = addInt64(acc.micros, t); !ok {
					return dtFieldOverflow
				}
				tmask = imTime
				unit = ivDay
				break
			}
		number:
			if unit == ivNone {
				unit = r.bareUnit()
			}
			val, frac, ym, e := parseIntervalNumber(f.s)
			if e != dtOK {
				return e
			}
			if ym {
				unit = ivMonth
			}
			ok := true
			switch unit {
			case ivMicrosecond:
				ok = acc.addMicros(val, frac, 1)
				tmask = imMicrosecond
			case ivMillisecond:
				ok = acc.addMicros(val, frac, 1000)
				tmask = imMillisecond
			case ivSecond:
				ok = acc.addMicros(val, frac, microsPerSecond)
				tmask = imSecond
				if frac != 0 {
					tmask = imAllSecs
				}
			case ivMinute:
				ok = acc.addMicros(val, frac, microsPerMinute)
				tmask = imMinute
			case ivHour:
				ok = acc.addMicros(val, frac, microsPerHour)
				tmask = imHour
				unit = ivDay
			case ivDay:
				ok = acc.addDays(val, 1) && acc.addFracMicros(frac, microsPerDay)
				tmask = imDay
			case ivWeek:
				ok = acc.addDays(val, 7) && acc.addFracDays(frac, 7)
				tmask = imWeek
			case ivMonth:
				ok = acc.addMonths(val) && acc.addFracDays(frac, 30)
				tmask = imMonth
			case ivYear:
				ok = acc.addYears(val, 1) && acc.addFracYears(frac, 1)
				tmask = imYear
			case ivDecade:
				ok = acc.addYears(val, 10) && acc.addFracYears(frac, 10)
				tmask = imDecade
			case ivCentury:
				ok = acc.addYears(val, 100) && acc.addFracYears(frac, 100)
				tmask = imCentury
			case ivMillennium:
				ok = acc.addYears(val, 1000) && acc.addFracYears(frac, 1000)
				tmask = imMillennium
			default:
				return dtBadFormat
			}
			if !ok {
				return dtFieldOverflow
			}
		case dtString, dtSpecial:
			word := f.s
			if len(word) > 10 {
				word = word[:10]
			}
			u, known := intervalUnits[word]
			if !known {
				return dtBadFormat
			}
			if u == ivAgo {
				// A number right before "ago" has no unit: '1 ago' is
				// malformed (the number case rejects unit ivAgo).
				ago = true
			}
			unit = u
		default:
			return dtBadFormat
		}
		if tmask&fmask != 0 {
			return dtBadFormat
		}
		fmask |= tmask
	}
	if fmask == 0 {
		return dtBadFormat
	}
	if ago {
		if acc.micros == math.MinInt64 || acc.days == math.MinInt32 || acc.months == math.MinInt32 || acc.years == math.MinInt32 {
			return dtFieldOverflow
		}
		acc.micros, acc.days, acc.months, acc.years = -acc.micros, -acc.days, -acc.months, -acc.years
	}
	return dtOK
}

// parseISONumber reads a signed decimal number at the front of s (for the
// ISO 8601 format) and splits it into integer and fractional parts.
func parseISONumber(s string) (val int64, frac float64, rest string, e dtError) {
	if s == "" || !(isDigit(s[0]) || s[0] == '-' || s[0] == '.') {
		return 0, 0, s, dtBadFormat
	}
	n, syn, special, _, _ := scanFloat(s)
	if n == 0 || special || strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		return 0, 0, s, dtBadFormat
	}
	f, err := strconv.ParseFloat(syn, 64)
	if err != nil {
		return 0, 0, s, dtBadFormat
	}
	if f < -1e15 || f > 1e15 {
		return 0, 0, s, dtFieldOverflow
	}
	ip := math.Trunc(f)
	return int64(ip), f - ip, s[n:], dtOK
}

// isoIntegerWidth returns the number of leading digits of s, after an
// optional minus sign.
func isoIntegerWidth(s string) int {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}

// decodeISOInterval decodes the ISO 8601 interval formats: designators
// (P1Y2M3W4DT5H6M7S) and the alternative formats (P0001-02-03T04:05:06,
// P00010203T040506) (DecodeISO8601Interval).
func decodeISOInterval(s string, acc *intervalAcc) dtError {
	if len(s) < 2 || s[0] != 'P' {
		return dtBadFormat
	}
	str := s[1:]
	datePart, haveField := true, false
	for str != "" {
		if str[0] == 'T' {
			datePart, haveField = false, false
			str = str[1:]
			continue
		}
		fieldStart := str
		val, frac, rest, e := parseISONumber(str)
		if e != dtOK {
			return e
		}
		str = rest
		var unit byte
		if str != "" {
			unit = str[0]
			str = str[1:]
		}
		ok := true
		if datePart {
			switch unit {
			case 'Y':
				ok = acc.addYears(val, 1) && acc.addFracYears(frac, 1)
			case 'M':
				ok = acc.addMonths(val) && acc.addFracDays(frac, 30)
			case 'W':
				ok = acc.addDays(val, 7) && acc.addFracDays(frac, 7)
			case 'D':
				ok = acc.addDays(val, 1) && acc.addFracMicros(frac, microsPerDay)
			case 'T', 0, '-':
				if unit != '-' && isoIntegerWidth(fieldStart) == 8 && !haveField {
					ok = acc.addYears(val/10000, 1) && acc.addMonths(val/100%100) &&
						acc.addDays(val%100, 1) && acc.addFracMicros(frac, microsPerDay)
					if !ok {
						return dtFieldOverflow
					}
					if unit == 0 {
						return dtOK
					}
					datePart, haveField = false, false
					continue
				}
				if haveField {
					return dtBadFormat
				}
				if !acc.addYears(val, 1) || !acc.addFracYears(frac, 1) {
					return dtFieldOverflow
				}
				if unit == 0 {
					return dtOK
				}
				if unit == 'T' {
					datePart, haveField = false, false
					continue
				}
				if val, frac, str, e = parseISONumber(str); e != dtOK {
					return e
				}
				if !acc.addMonths(val) || !acc.addFracDays(frac, 30) {
					return dtFieldOverflow
				}
				if str == "" {
					return dtOK
				}
				if str[0] == 'T' {
					datePart, haveField = false, false
					str = str[1:]
					continue
				}
				if str[0] != '-' {
					return dtBadFormat
				}
				if val, frac, str, e = parseISONumber(str[1:]); e != dtOK {
					return e
				}
				if !acc.addDays(val, 1) || !acc.addFracMicros(frac, microsPerDay) {
					return dtFieldOverflow
				}
				if str == "" {
					return dtOK
				}
				if str[0] == 'T' {
					datePart, haveField = false, false
					str = str[1:]
					continue
				}
				return dtBadFormat
			default:
				return dtBadFormat
			}
		} else {
			switch unit {
			case 'H':
				ok = acc.addMicros(val, frac, microsPerHour)
			case 'M':
				ok = acc.addMicros(val, frac, microsPerMinute)
			case 'S':
				ok = acc.addMicros(val, frac, microsPerSecond)
			case 0, ':':
				if unit == 0 && isoIntegerWidth(fieldStart) == 6 && !haveField {
					ok = acc.addMicros(val/10000, 0, microsPerHour) &&
						acc.addMicros(val/100%100, 0, microsPerMinute) &&
						acc.addMicros(val%100, frac, microsPerSecond)
					if !ok {
						return dtFieldOverflow
					}
					return dtOK
				}
				if haveField {
					return dtBadFormat
				}
				if !acc.addMicros(val, frac, microsPerHour) {
					return dtFieldOverflow
				}
				if unit == 0 {
					return dtOK
				}
				if val, frac, str, e = parseISONumber(str); e != dtOK {
					return e
				}
				if !acc.addMicros(val, frac, microsPerMinute) {
					return dtFieldOverflow
				}
				if str == "" {
					return dtOK
				}
				if str[0] != ':' {
					return dtBadFormat
				}
				if val, frac, str, e = parseISONumber(str[1:]); e != dtOK {
					return e
				}
				if !acc.addMicros(val, frac, microsPerSecond) {
					return dtFieldOverflow
				}
				if str == "" {
					return dtOK
				}
				return dtBadFormat
			default:
				return dtBadFormat
			}
		}
		if !ok {
			return dtFieldOverflow
		}
		haveField = true
	}
	return dtOK
}

// intervalAdd returns a+b, failing with "interval out of range".
func intervalAdd(a, b IntervalValue) (IntervalValue, error) {
	m := int64(a.Months) + int64(b.Months)
	d := int64(a.Days) + int64(b.Days)
	us, ok := addInt64(a.Micros, b.Micros)
	if !ok || m > math.MaxInt32 || m < math.MinInt32 || d > math.MaxInt32 || d < math.MinInt32 {
		return IntervalValue{}, errIntervalRange
	}
	return IntervalValue{Months: int32(m), Days: int32(d), Micros: us}, nil
}

// intervalNeg returns -a.
func intervalNeg(a IntervalValue) (IntervalValue, error) {
	if a.Months == math.MinInt32 || a.Days == math.MinInt32 || a.Micros == math.MinInt64 {
		return IntervalValue{}, errIntervalRange
	}
	return IntervalValue{Months: -a.Months, Days: -a.Days, Micros: -a.Micros}, nil
}

// tsRound rounds to microsecond precision in floating point.
func tsRound(x float64) float64 { return math.RoundToEven(x*1e6) / 1e6 }

// intervalScale returns span × factor (or span ÷ factor when divide),
// carrying fractional months down into days (30 per month) and fractional
// days into seconds, as PostgreSQL's interval_mul and interval_div do.
func intervalScale(span IntervalValue, factor float64, divide bool) (IntervalValue, error) {
	if divide && factor == 0 {
		return IntervalValue{}, errDivByZero
	}
	op := func(x float64) float64 {
		if divide {
			return x / factor
		}
		return x * factor
	}
	mf := op(float64(span.Months))
	df := op(float64(span.Days))
	if math.IsNaN(mf) || mf > math.MaxInt32 || mf < math.MinInt32 ||
		math.IsNaN(df) || df > math.MaxInt32 || df < math.MinInt32 {
		return IntervalValue{}, errIntervalRange
	}
	months := int32(mf)
	days := int32(df)
	monthRemDays := tsRound((mf - float64(months)) * 30)
	secRem := tsRound((df - float64(days) + monthRemDays - float64(int32(monthRemDays))) * 86400)
	if math.Abs(secRem) >= 86400 {
		whole := int32(secRem / 86400)
		days += whole
		secRem -= float64(whole) * 86400
	}
	days += int32(monthRemDays)
	t := math.RoundToEven(op(float64(span.Micros)) + secRem*1e6)
	if math.IsNaN(t) || t >= 9.223372036854775807e18 || t < -9.223372036854775808e18 {
		return IntervalValue{}, errIntervalRange
	}
	return IntervalValue{Months: months, Days: days, Micros: int64(t)}, nil
}

// roundIntervalPrecision rounds an interval's microseconds to p fractional
// digits, as interval(p) does.
func roundIntervalPrecision(iv IntervalValue, p int32) IntervalValue {
	if p < 0 || p >= 6 {
		return iv
	}
	iv.Micros = roundMicros(iv.Micros, p)
	return iv
}
