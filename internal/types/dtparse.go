package types

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// This file reads date and timestamp text the way PostgreSQL's
// ParseDateTime and DecodeDateTime do, for the DateStyle ISO, MDY setting:
// the input is split into fields (numbers, delimited dates, times, words,
// signed offsets), and each field is interpreted by its shape and by which
// parts of the date and time are already known.

// dtKind is the shape of one field of date/time or interval text.
type dtKind uint8

const (
	dtNumber  dtKind = iota // 12, 12.5, .5
	dtDate                  // 2026-01-02, 01/02/2026, 02-jan-2026, america/new_york
	dtTime                  // 10:00, 10:00:00.5
	dtString                // a word
	dtSigned                // +05, -08:00, -1.5, -1-2 (a sign and digits)
	dtSpecial               // +infinity, -infinity
)

type dtField struct {
	kind dtKind
	s    string // lower-cased
}

// dtError is the kind of failure of date/time text.
type dtError uint8

const (
	dtOK dtError = iota
	dtBadFormat
	dtFieldOverflow
	dtTZDispOverflow
	dtIntervalOverflow
)

// splitDateTime splits s into fields as PostgreSQL's ParseDateTime does.
func splitDateTime(s string) ([]dtField, dtError) {
	fields := make([]dtField, 0, 8)
	ls := strings.ToLower(s)
	n := len(ls)
	i := 0
	for i < n {
		c := ls[i]
		start := i
		var kind dtKind
		switch {
		case isSpace(c):
			i++
			continue
		case isDigit(c):
			for i < n && isDigit(ls[i]) {
				i++
			}
			switch {
			case i < n && ls[i] == ':':
				kind = dtTime
				for i < n && (isDigit(ls[i]) || ls[i] == ':' || ls[i] == '.') {
					i++
				}
			case i < n && (ls[i] == '-' || ls[i] == '/' || ls[i] == '.'):
				delim := ls[i]
				i++
				if i < n && isDigit(ls[i]) {
					kind = dtDate
					if delim == '.' {
						kind = dtNumber
					}
					for i < n && isDigit(ls[i]) {
						i++
					}
					if i < n && ls[i] == delim {
						kind = dtDate
						for i < n && (isDigit(ls[i]) || ls[i] == delim) {
							i++
						}
					}
				} else {
					kind = dtDate
					for i < n && (isAlnum(ls[i]) || ls[i] == delim) {
						i++
					}
				}
			default:
				kind = dtNumber
			}
		case c == '.':
			i++
			for i < n && isDigit(ls[i]) {
				i++
			}
			kind = dtNumber
		case isAlpha(c):
			kind = dtString
			for i < n && isAlpha(ls[i]) {
				i++
			}
			isDate := false
			if i < n {
				switch d := ls[i]; {
				case d == '-' || d == '/' || d == '.':
					isDate = true
				case d == '+' || isDigit(d):
					kw, known := dateKeywords[ls[start:i]]
					isDate = !known || kw.kind == kwZone
				}
			}
			if isDate {
				kind = dtDate
				i++
				for i < n {
					d := ls[i]
					if d == '+' || d == '-' || d == '/' || d == '_' || d == '.' || d == ':' || isAlnum(d) {
						i++
						continue
					}
					break
				}
			}
		case c == '+' || c == '-':
			i++
			for i < n && isSpace(ls[i]) {
				i++
			}
			switch {
			case i < n && isDigit(ls[i]):
				kind = dtSigned
				for i < n && (isDigit(ls[i]) || ls[i] == ':' || ls[i] == '.' || ls[i] == '-') {
					i++
				}
			case i < n && isAlpha(ls[i]):
				kind = dtSpecial
				for i < n && isAlpha(ls[i]) {
					i++
				}
			default:
				return nil, dtBadFormat
			}
			// Drop the whitespace between the sign and the digits.
			text := string(c) + strings.TrimLeft(ls[start+1:i], " \t\n\r\v\f")
			fields = append(fields, dtField{kind: kind, s: text})
			continue
		case isPunct(c):
			i++
			continue
		default:
			return nil, dtBadFormat
		}
		fields = append(fields, dtField{kind: kind, s: ls[start:i]})
	}
	return fields, dtOK
}

func isPunct(c byte) bool {
	return c > ' ' && c < 0x7f && !isAlnum(c)
}

// dateKeyword is the meaning of a word in date/time text.
type dateKeyword struct {
	kind  uint8
	value int
}

const (
	kwMonth uint8 = iota + 1
	kwWeekday
	kwAMPM // value 0 = AM, 1 = PM
	kwAD
	kwBC
	kwISOTime // "t"
	kwZone    // value: seconds east of UTC
	kwSpecial // value: specialEpoch, ...
	kwIgnore
	kwJulian // "j": the next number is a Julian day
)

const (
	specialEpoch = iota + 1
	specialInfinity
	specialNegInfinity
	specialNow
	specialToday
	specialTomorrow
	specialYesterday
	specialAllBalls
)

var dateKeywords = func() map[string]dateKeyword {
	m := map[string]dateKeyword{
		"am": {kwAMPM, 0}, "pm": {kwAMPM, 1}, "a.m.": {kwAMPM, 0}, "p.m.": {kwAMPM, 1},
		"ad": {kwAD, 0}, "bc": {kwBC, 0},
		"t":        {kwISOTime, 0},
		"epoch":    {kwSpecial, specialEpoch},
		"infinity": {kwSpecial, specialInfinity}, "-infinity": {kwSpecial, specialNegInfinity},
		"now": {kwSpecial, specialNow}, "today": {kwSpecial, specialToday},
		"tomorrow": {kwSpecial, specialTomorrow}, "yesterday": {kwSpecial, specialYesterday},
		"allballs": {kwSpecial, specialAllBalls},
		"at":       {kwIgnore, 0}, "on": {kwIgnore, 0},
		"j": {kwJulian, 0}, "jd": {kwJulian, 0}, "julian": {kwJulian, 0},
	}
	months := []string{"january", "february", "march", "april", "may", "june", "july",
		"august", "september", "october", "november", "december"}
	for i, name := range months {
		m[name] = dateKeyword{kwMonth, i + 1}
		m[name[:3]] = dateKeyword{kwMonth, i + 1}
	}
	m["sept"] = dateKeyword{kwMonth, 9}
	days := []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}
	for i, name := range days {
		m[name] = dateKeyword{kwWeekday, i}
		m[name[:3]] = dateKeyword{kwWeekday, i}
	}
	for _, alt := range []struct {
		s string
		d int
	}{{"tues", 2}, {"wednes", 3}, {"thur", 4}, {"thurs", 4}} {
		m[alt.s] = dateKeyword{kwWeekday, alt.d}
	}
	for name, off := range zoneAbbrevs {
		m[name] = dateKeyword{kwZone, off}
	}
	return m
}()

// Bits of the parts of a date/time already seen.
const (
	fmYear = 1 << iota
	fmMonth
	fmDay
	fmHour
	fmMinute
	fmSecond
	fmTZ
	fmAMPM
	fmBC
	fmDOY
	fmDOW
	fmDate = fmYear | fmMonth | fmDay
	fmTime = fmHour | fmMinute | fmSecond
)

// dtParsed is decoded date/time text.
type dtParsed struct {
	special   int
	year      int64 // astronomical after validation
	mon, day  int64
	doy       int64
	hour, min int64
	sec, usec int64
	tzOffset  int64 // seconds east of UTC, when fmask has fmTZ and tzLoc is nil
	tzLoc     *time.Location
	fmask     int
}

// decodeDateTime decodes date/time fields as DecodeDateTime does.
func decodeDateTime(fields []dtField) (dtParsed, dtError, string) {
	var p dtParsed
	fmask := 0
	ampm := -1
	bc := false
	is2digits := false
	haveTextMonth := false
	isoTime := false // a "t" was seen: the next field is a time
	julian := false  // a "j" was seen: the next field is a Julian day
	isJulian := false
	for idx, f := range fields {
		tmask := 0
		switch f.kind {
		case dtDate:
			if isAlpha(f.s[0]) && (fmask&(fmMonth|fmDay)) == (fmMonth|fmDay) {
				loc, ok := loadZone(f.s)
				if !ok {
					return p, dtBadFormat, f.s
				}
				p.tzLoc = loc
				tmask = fmTZ
				break
			}
			if (fmask&(fmMonth|fmDay)) == (fmMonth|fmDay) && isDigit(f.s[0]) {
				// hhmmss-zz run together: not supported.
				return p, dtBadFormat, ""
			}
			saved := p
			var err dtError
			tmask, err = decodeDate(f.s, fmask, &is2digits, &haveTextMonth, &p)
			if err != dtOK {
				// A zone name such as america/new_york before the date.
				if isAlpha(f.s[0]) && strings.ContainsAny(f.s, "/_") {
					if loc, ok := loadZone(f.s); ok {
						p = saved
						p.tzLoc = loc
						tmask = fmTZ
						break
					}
					return p, dtBadFormat, f.s
				}
				return p, err, ""
			}
		case dtTime:
			if err := decodeTime(f.s, &p.hour, &p.min, &p.sec, &p.usec); err != dtOK {
				return p, err, ""
			}
			if p.hour > 24 {
				return p, dtFieldOverflow, ""
			}
			tmask = fmTime
			isoTime = false
		case dtSigned:
			off, err := decodeTZOffset(f.s)
			if err != dtOK {
				return p, err, ""
			}
			p.tzOffset = off
			p.tzLoc = nil
			tmask = fmTZ
		case dtNumber:
			if julian {
				jd, ok := parseDigits(f.s)
				if !ok {
					return p, dtBadFormat, ""
				}
				p.year, p.mon, p.day = civilFromDays(jd - unixEpochJulian)
				tmask = fmDate
				julian = false
				isJulian = true
				break
			}
			if isoTime {
				// "t" followed by hhmmss or hhmm.
				var err dtError
				tmask, err = decodeNumberField(f.s, fmask|fmDate, &is2digits, &p)
				if err != dtOK {
					return p, err, ""
				}
				isoTime = false
				break
			}
			flen := len(f.s)
			dot := strings.IndexByte(f.s, '.')
			switch {
			case dot >= 0 && fmask&fmDate == 0:
				var err dtError
				tmask, err = decodeDate(f.s, fmask, &is2digits, &haveTextMonth, &p)
				if err != dtOK {
					return p, err, ""
				}
			case dot > 2:
				var err dtError
				tmask, err = decodeNumberField(f.s, fmask, &is2digits, &p)
				if err != dtOK {
					return p, err, ""
				}
			case flen >= 6 && (fmask&fmDate == 0 || fmask&fmTime == 0):
				var err dtError
				tmask, err = decodeNumberField(f.s, fmask, &is2digits, &p)
				if err != dtOK {
					return p, err, ""
				}
			default:
				var err dtError
				tmask, err = decodeNumber(f.s, fmask, haveTextMonth, &is2digits, &p)
				if err != dtOK {
					return p, err, ""
				}
			}
		case dtSpecial:
			kw, ok := dateKeywords[f.s]
			if !ok || kw.kind != kwSpecial {
				return p, dtBadFormat, ""
			}
			p.special = kw.value
			tmask = fmDate
		case dtString:
			kw, ok := dateKeywords[f.s]
			if !ok {
				loc, ok := loadZone(f.s)
				if !ok {
					return p, dtBadFormat, ""
				}
				p.tzLoc = loc
				tmask = fmTZ
				break
			}
			switch kw.kind {
			case kwMonth:
				// A numeric month already read ("2 Jan 2026") was the day.
				if fmask&fmMonth != 0 && !haveTextMonth && fmask&fmDay == 0 && p.mon >= 1 && p.mon <= 31 {
					p.day = p.mon
					tmask = fmDay
				} else {
					tmask = fmMonth
				}
				p.mon = int64(kw.value)
				haveTextMonth = true
			case kwWeekday:
				// The day of the week is accepted and ignored.
				tmask = fmDOW
			case kwAMPM:
				ampm = kw.value
				tmask = fmAMPM
			case kwAD:
				bc = false
				tmask = fmBC
			case kwBC:
				bc = true
				tmask = fmBC
			case kwISOTime:
				if idx == len(fields)-1 {
					return p, dtBadFormat, ""
				}
				isoTime = true
			case kwZone:
				p.tzOffset = int64(kw.value)
				p.tzLoc = nil
				tmask = fmTZ
			case kwSpecial:
				switch kw.value {
				case specialAllBalls:
					p.hour, p.min, p.sec, p.usec = 0, 0, 0, 0
					p.tzOffset, p.tzLoc = 0, nil
					tmask = fmTime | fmTZ
				case specialNow:
					p.special = kw.value
					tmask = fmDate | fmTime | fmTZ
				default:
					// epoch, infinity, today...: the rest of the text is
					// read but does not matter.
					p.special = kw.value
					tmask = fmDate
				}
			case kwJulian:
				if idx == len(fields)-1 {
					return p, dtBadFormat, ""
				}
				julian = true
			case kwIgnore:
			}
		}
		if tmask&fmask != 0 {
			return p, dtBadFormat, ""
		}
		fmask |= tmask
	}
	p.fmask = fmask
	if p.special != 0 {
		return p, dtOK, ""
	}
	if isJulian {
		bc, is2digits = false, false
		if fmask&fmBC != 0 {
			return p, dtBadFormat, ""
		}
	}
	if err := validateDate(fmask, is2digits, bc, &p, isJulian); err != dtOK {
		return p, err, ""
	}
	if ampm >= 0 {
		if p.hour > 12 {
			return p, dtFieldOverflow, ""
		}
		if ampm == 0 && p.hour == 12 {
			p.hour = 0
		} else if ampm == 1 && p.hour != 12 {
			p.hour += 12
		}
	}
	if p.hour == 24 && (p.min != 0 || p.sec != 0 || p.usec != 0) {
		return p, dtFieldOverflow, ""
	}
	if fmask&fmDate != fmDate {
		return p, dtBadFormat, ""
	}
	return p, dtOK, ""
}

// validateDate applies the era and two-digit-year rules and checks the
// month and day, as ValidateDate does.
func validateDate(fmask int, is2digits, bc bool, p *dtParsed, julian bool) dtError {
	if fmask&fmYear != 0 {
		switch {
		case julian:
		case bc:
			if p.year <= 0 {
				return dtFieldOverflow
			}
			p.year = 1 - p.year
		case is2digits:
			if p.year < 0 {
				return dtFieldOverflow
			}
			if p.year < 70 {
				p.year += 2000
			} else if p.year < 100 {
				p.year += 1900
			}
		default:
			if p.year <= 0 {
				return dtFieldOverflow
			}
		}
	}
	if fmask&fmDOY != 0 {
		y, m, d := civilFromDays(daysFromCivil(p.year, 1, 1) + p.doy - 1)
		p.year, p.mon, p.day = y, m, d
	}
	if fmask&fmMonth != 0 && (p.mon < 1 || p.mon > 12) {
		return dtFieldOverflow
	}
	if fmask&fmDay != 0 && (p.day < 1 || p.day > 31) {
		return dtFieldOverflow
	}
	if fmask&fmDate == fmDate && p.day > daysInMonth(p.year, p.mon) {
		return dtFieldOverflow
	}
	return dtOK
}

// parseDigits parses a run of decimal digits as a non-negative int64.
func parseDigits(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		if n > (math.MaxInt32-int64(s[i]-'0'))/10 {
			return math.MaxInt32 + 1, true // out of int range: caller rejects
		}
		n = n*10 + int64(s[i]-'0')
	}
	return n, true
}

// parseDigits64 parses a run of decimal digits; big reports a value beyond
// int64.
func parseDigits64(s string) (n int64, ok, big bool) {
	if s == "" {
		return 0, false, false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false, false
		}
		d := int64(s[i] - '0')
		if n > (math.MaxInt64-d)/10 {
			big = true
			continue
		}
		n = n*10 + d
	}
	return n, true, big
}

// decodeDate decodes a delimited date field ("2026-01-02", "1/2/2026",
// "02-jan-2026", "2026.01.02") as DecodeDate does.
func decodeDate(s string, fmask int, is2digits, haveTextMonth *bool, p *dtParsed) (int, dtError) {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r < 128 && !isAlnum(byte(r)) })
	tmask := 0
	used := make([]bool, len(parts))
	// Words first: month names and eras.
	for i, part := range parts {
		if !isAlpha(part[0]) {
			continue
		}
		kw, ok := dateKeywords[part]
		if !ok {
			return 0, dtBadFormat
		}
		switch kw.kind {
		case kwMonth:
			if (fmask|tmask)&fmMonth != 0 {
				return 0, dtBadFormat
			}
			p.mon = int64(kw.value)
			*haveTextMonth = true
			tmask |= fmMonth
		default:
			return 0, dtBadFormat
		}
		used[i] = true
	}
	for i, part := range parts {
		if used[i] {
			continue
		}
		if len(part) == 0 {
			return 0, dtBadFormat
		}
		dmask, err := decodeNumber(part, fmask|tmask, *haveTextMonth, is2digits, p)
		if err != dtOK {
			return 0, err
		}
		if dmask&(fmask|tmask) != 0 {
			return 0, dtBadFormat
		}
		tmask |= dmask
	}
	// A date field must complete the date, with no time or other parts
	// before it (DecodeDate).
	if (fmask|tmask)&^(fmDOY|fmTZ) != fmDate {
		return 0, dtBadFormat
	}
	return tmask, dtOK
}

// decodeNumber decodes a plain number as part of a date, given the parts
// already known (DecodeNumber, DateOrder MDY).
func decodeNumber(s string, fmask int, haveTextMonth bool, is2digits *bool, p *dtParsed) (int, dtError) {
	intPart := s
	if i := strings.IndexByte(s, '.'); i >= 0 {
		// A fraction after a complete date and time is fractional seconds;
		// otherwise it is malformed.
		if fmask&fmDate != fmDate {
			return 0, dtBadFormat
		}
		return decodeNumberField(s, fmask, is2digits, p)
	}
	val, ok := parseDigits(intPart)
	if !ok {
		return 0, dtBadFormat
	}
	if val > math.MaxInt32 {
		return 0, dtFieldOverflow
	}
	flen := len(s)
	if flen == 3 && fmask&fmDate == fmYear && val >= 1 && val <= 366 {
		p.doy = val
		return fmDOY | fmMonth | fmDay, dtOK
	}
	switch fmask & fmDate {
	case 0:
		if flen >= 3 {
			p.year = val
			return fmYear, dtOK
		}
		if haveTextMonth {
			p.day = val
			return fmDay, dtOK
		}
		p.mon = val
		return fmMonth, dtOK
	case fmYear:
		p.mon = val
		return fmMonth, dtOK
	case fmMonth:
		if haveTextMonth {
			if flen >= 3 {
				p.year = val
				return fmYear, dtOK
			}
			p.day = val
			return fmDay, dtOK
		}
		p.day = val
		return fmDay, dtOK
	case fmYear | fmMonth:
		if haveTextMonth && flen >= 3 && *is2digits {
			p.day = p.year
			p.year = val
			*is2digits = false
			return fmDay, dtOK
		}
		p.day = val
		return fmDay, dtOK
	case fmDay:
		p.mon = val
		return fmMonth, dtOK
	case fmMonth | fmDay:
		p.year = val
		*is2digits = flen <= 2
		return fmYear, dtOK
	case fmDate:
		return decodeNumberField(s, fmask, is2digits, p)
	}
	return 0, dtBadFormat
}

// decodeNumberField decodes a run of digits that packs several parts:
// YYYYMMDD or YYMMDD before a date is known, hhmmss[.ffffff] or hhmm after
// (DecodeNumberField).
func decodeNumberField(s string, fmask int, is2digits *bool, p *dtParsed) (int, dtError) {
	digits := s
	frac := ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		digits, frac = s[:i], s[i:]
	}
	if fmask&fmDate == 0 && frac == "" {
		n := len(digits)
		if n >= 6 {
			d, _ := parseDigits(digits[n-2:])
			m, _ := parseDigits(digits[n-4 : n-2])
			y, ok := parseDigits(digits[:n-4])
			if !ok {
				return 0, dtBadFormat
			}
			p.day, p.mon, p.year = d, m, y
			*is2digits = n-4 <= 2
			return fmDate, dtOK
		}
		return 0, dtBadFormat
	}
	if fmask&fmTime != 0 {
		return 0, dtBadFormat
	}
	var usec int64
	if frac != "" {
		f, err := strconv.ParseFloat("0"+frac, 64)
		if err != nil {
			return 0, dtBadFormat
		}
		usec = int64(math.RoundToEven(f * 1e6))
	}
	switch len(digits) {
	case 6:
		h, _ := parseDigits(digits[:2])
		m, _ := parseDigits(digits[2:4])
		sec, _ := parseDigits(digits[4:])
		p.hour, p.min, p.sec, p.usec = h, m, sec, usec
		return fmTime, dtOK
	case 4:
		if frac != "" {
			return 0, dtBadFormat
		}
		h, _ := parseDigits(digits[:2])
		m, _ := parseDigits(digits[2:])
		p.hour, p.min, p.sec, p.usec = h, m, 0, 0
		return fmTime, dtOK
	}
	return 0, dtBadFormat
}

// decodeTime decodes hh:mm[:ss[.ffffff]] or mm:ss.ffffff as PostgreSQL's
// DecodeTimeCommon does: each number is read as strtol reads it, so an
// empty one is 0 ("1:" is 01:00:00, "1::2" is 01:00:02, "1:.5" is one
// minute and half a second), and only a number too large for its field
// overflows.
func decodeTime(s string, hour, min, sec, usec *int64) dtError {
	h, rest, big := leadingDigits(s, math.MaxInt64)
	if big {
		return dtFieldOverflow
	}
	if rest == "" || rest[0] != ':' {
		return dtBadFormat
	}
	m, rest, big := leadingDigits(rest[1:], math.MaxInt32)
	if big {
		return dtFieldOverflow
	}
	var sc, us int64
	switch {
	case rest == "":
	case rest[0] == '.':
		// mm:ss.fff, always minutes and seconds.
		frac, err := parseFraction(rest)
		if err != dtOK {
			return err
		}
		if h > math.MaxInt32 {
			return dtFieldOverflow
		}
		h, m, sc, us = 0, h, m, frac
	case rest[0] == ':':
		if sc, rest, big = leadingDigits(rest[1:], math.MaxInt32); big {
			return dtFieldOverflow
		}
		if rest != "" {
			if rest[0] != '.' {
				return dtBadFormat
			}
			var err dtError
			if us, err = parseFraction(rest); err != dtOK {
				return err
			}
		}
	default:
		return dtBadFormat
	}
	if m > 59 || sc > 60 || us > microsPerSecond {
		return dtFieldOverflow
	}
	*hour, *min, *sec, *usec = h, m, sc, us
	return dtOK
}

// leadingDigits reads the decimal digits at the start of s (none is 0)
// and returns their value and the rest of s; big reports a value above
// limit.
func leadingDigits(s string, limit int64) (n int64, rest string, big bool) {
	i := 0
	for ; i < len(s) && isDigit(s[i]); i++ {
		d := int64(s[i] - '0')
		if n > (limit-d)/10 {
			big = true
			continue
		}
		n = n*10 + d
	}
	return n, s[i:], big
}

// parseFraction parses ".ddd" as microseconds, rounding to the nearest
// (ParseFractionalSecond).
func parseFraction(s string) (int64, dtError) {
	if len(s) < 1 || s[0] != '.' {
		return 0, dtBadFormat
	}
	for i := 1; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, dtBadFormat
		}
	}
	f, err := strconv.ParseFloat("0"+s, 64)
	if err != nil {
		return 0, dtBadFormat
	}
	return int64(math.RoundToEven(f * 1e6)), dtOK
}
