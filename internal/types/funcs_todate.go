package types

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rockstream/rockstream/internal/errs"
)

// to_date(text, template) and to_timestamp(text, template): the input is
// read field by field as PostgreSQL 15's DCH_from_char reads it. Outside
// FX mode, spaces before fields are skipped, a template space or separator
// matches one space or separator of the input (or none), and a numeric
// field takes its width in digits unless FM is given or the next template
// element is not a digit, in which case it takes all the digits there
// are. Unset fields default to January 1 of year 1 BC (the year 0 of
// PostgreSQL's internal calendar), midnight; the time zone is UTC unless
// TZH/TZM give one.

func init() {
	addFunc("to_date", Date, toDate, Text, Text)
	addFunc("to_timestamp", TimestampTZ, toTimestamp, Text, Text)
	addFunc("to_timestamp", TimestampTZ, toTimestampEpoch, Float8)
}

func errDTFormat(format string, args ...any) error {
	return errs.Newf(errs.InvalidDatetimeFormat, format, args...)
}

// fromChar holds the fields read from the input (PostgreSQL's
// TmFromChar): zero means not given.
type fromChar struct {
	mode                                    dateMode
	hh, pm, mi, ss, ssss, d, dd, ddd, mm    int64
	ms, us, year, bc, ww, w, cc, j, q, yysz int64
	clock12                                 bool
	tzsign, tzh, tzm                        int64
}

// setInt sets a field, failing when the template gave it another value
// before.
func setInt(dst *int64, v int64, n *fmtNode) error {
	if *dst != 0 && *dst != v {
		return errDTFormat("conflicting values for %q field in formatting string", n.kw.name)
	}
	*dst = v
	return nil
}

// nextIsSeparator reports whether the element after node i cannot be part
// of a number, so that the field may take all the digits there are.
func nextIsSeparator(nodes []fmtNode, i int) bool {
	if nodes[i].th != 0 {
		return true
	}
	if i+1 >= len(nodes) {
		return true
	}
	n := nodes[i+1]
	if n.kind == nodeField {
		return !n.kw.digit
	}
	return !(len(n.ch) == 1 && isDigit(n.ch[0]))
}

// parseIntField reads an integer field of width digits at s.
func parseIntField(s string, width int, nodes []fmtNode, i int) (int64, string, int, error) {
	n := &nodes[i]
	init := s
	s = strings.TrimLeft(s, " \t\n\r\v\f")
	copyLen := min(width, len(s))
	cp := s[:copyLen]
	var val int64
	var used int
	var overflow bool
	if n.fm || nextIsSeparator(nodes, i) {
		val, used, overflow = strtol(s)
		s = s[used:]
	} else {
		if len(cp) < width {
			return 0, "", 0, errDTFormat("source string too short for %q formatting field", n.kw.name)
		}
		val, used, overflow = strtol(cp)
		if used > 0 && used < width {
			return 0, "", 0, errDTFormat("invalid value %q for %q", cp, n.kw.name)
		}
		s = s[used:]
	}
	if len(s) == len(init) || used == 0 {
		return 0, "", 0, errDTFormat("invalid value %q for %q", cp, n.kw.name)
	}
	if overflow || val < math.MinInt32 || val > math.MaxInt32 {
		return 0, "", 0, errs.Newf(errs.DatetimeOverflow, "value for %q in source string is out of range", n.kw.name)
	}
	return val, s, used, nil
}

// strtol reads an optionally signed decimal integer as C's strtol does
// (after leading spaces), returning the bytes it used (0 when none).
func strtol(s string) (int64, int, bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	start := i
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	d := i
	var v int64
	overflow := false
	for i < len(s) && isDigit(s[i]) {
		if v > (math.MaxInt64-9)/10 {
			overflow = true
		} else {
			v = v*10 + int64(s[i]-'0')
		}
		i++
	}
	if i == d {
		return 0, 0, false
	}
	_ = start
	if neg {
		v = -v
	}
	return v, i, overflow
}

// seqSearch matches one of words at the start of s, ignoring case, and
// returns its index.
func seqSearch(s string, words []string) (int, int) {
	for i, w := range words {
		if len(s) >= len(w) && strings.EqualFold(s[:len(w)], w) {
			return i, len(w)
		}
	}
	return -1, 0
}

func badWord(s string, n *fmtNode) error {
	if i := strings.IndexAny(s, " \t\n\r\f\v"); i >= 0 {
		s = s[:i]
	}
	return errDTFormat("invalid value %q for %q", s, n.kw.name)
}

// skipTH skips an ordinal suffix after a field that has TH/th.
func skipTH(s string, n *fmtNode) string {
	if n.th != 0 && len(s) >= 2 {
		return s[2:]
	}
	return s
}

// readFields reads the input by the template.
func readFields(in string, nodes []fmtNode) (fromChar, error) {
	var out fromChar
	s := in
	fx := false
	extraSkip := 0
	for i := 0; i < len(nodes) && s != ""; i++ {
		n := &nodes[i]
		if !fx && (n.kind != nodeField || n.kw.key != dchFX) && (n.kind == nodeField || i == 0) {
			for s != "" && isSpace(s[0]) {
				s = s[1:]
				extraSkip++
			}
		}
		if n.kind == nodeSpace || n.kind == nodeSeparator {
			if !fx {
				extraSkip--
				if s != "" && (isSpace(s[0]) || isSeparatorChar(s[:1])) {
					s = s[1:]
					extraSkip++
				}
			} else {
				_, w := utf8.DecodeRuneInString(s)
				s = s[w:]
			}
			continue
		}
		if n.kind != nodeField {
			if !fx {
				if extraSkip > 0 {
					extraSkip--
				} else {
					_, w := utf8.DecodeRuneInString(s)
					s = s[w:]
				}
			} else {
				_, w := utf8.DecodeRuneInString(s)
				s = s[w:]
			}
			continue
		}
		if n.kw.mode != modeNone {
			if out.mode == modeNone {
				out.mode = n.kw.mode
			} else if out.mode != n.kw.mode {
				return out, errDTFormat("invalid combination of date conventions")
			}
		}
		var err error
		var v int64
		var used int
		intField := func(dst *int64, width int) error {
			v, s, used, err = parseIntField(s, width, nodes, i)
			if err != nil {
				return err
			}
			if err := setInt(dst, v, n); err != nil {
				return err
			}
			s = skipTH(s, n)
			return nil
		}
		switch n.kw.key {
		case dchFX:
			fx = true
		case dchAM_, dchPM_, dcham_, dchpm_:
			k, w := seqSearch(s, []string{"a.m.", "p.m.", "A.M.", "P.M."})
			if k < 0 {
				return out, badWord(s, n)
			}
			s = s[w:]
			if err := setInt(&out.pm, int64(k%2), n); err != nil {
				return out, err
			}
			out.clock12 = true
		case dchAM, dchPM, dcham, dchpm:
			k, w := seqSearch(s, []string{"am", "pm", "AM", "PM"})
			if k < 0 {
				return out, badWord(s, n)
			}
			s = s[w:]
			if err := setInt(&out.pm, int64(k%2), n); err != nil {
				return out, err
			}
			out.clock12 = true
		case dchHH, dchHH12:
			if err := intField(&out.hh, 2); err != nil {
				return out, err
			}
			out.clock12 = true
		case dchHH24:
			err = intField(&out.hh, 2)
		case dchMI:
			err = intField(&out.mi, 2)
		case dchSS:
			err = intField(&out.ss, 2)
		case dchMS:
			if err := intField(&out.ms, 3); err != nil {
				return out, err
			}
			switch used {
			case 1:
				out.ms *= 100
			case 2:
				out.ms *= 10
			}
		case dchFF1, dchFF2, dchFF3, dchFF4, dchFF5, dchFF6, dchUS:
			width := 6
			if n.kw.key != dchUS {
				width = int(n.kw.key-dchFF1) + 1
			}
			if err := intField(&out.us, width); err != nil {
				return out, err
			}
			for k := used; k < 6; k++ {
				out.us *= 10
			}
		case dchSSSS:
			err = intField(&out.ssss, len(n.kw.name))
		case dchTZ, dchtz, dchOF:
			return out, errs.Newf(errs.FeatureNotSupported, "formatting field %q is only supported in to_char", n.kw.name)
		case dchTZH:
			switch {
			case s != "" && (s[0] == '+' || s[0] == '-' || s[0] == ' '):
				out.tzsign = 1
				if s[0] == '-' {
					out.tzsign = -1
				}
				s = s[1:]
			case extraSkip > 0 && len(in)-len(s) > 0 && in[len(in)-len(s)-1] == '-':
				out.tzsign = -1
			default:
				out.tzsign = 1
			}
			v, s, _, err = parseIntField(s, 2, nodes, i)
			if err == nil {
				err = setInt(&out.tzh, v, n)
			}
		case dchTZM:
			if out.tzsign == 0 {
				out.tzsign = 1
			}
			v, s, _, err = parseIntField(s, 2, nodes, i)
			if err == nil {
				err = setInt(&out.tzm, v, n)
			}
		case dchAD_, dchBC_, dchad_, dchbc_:
			k, w := seqSearch(s, []string{"a.d.", "b.c.", "A.D.", "B.C."})
			if k < 0 {
				return out, badWord(s, n)
			}
			s = s[w:]
			err = setInt(&out.bc, int64(k%2), n)
		case dchAD, dchBC, dchad, dchbc:
			k, w := seqSearch(s, []string{"ad", "bc", "AD", "BC"})
			if k < 0 {
				return out, badWord(s, n)
			}
			s = s[w:]
			err = setInt(&out.bc, int64(k%2), n)
		case dchMONTH, dchMonth, dchmonth:
			k, w := seqSearch(s, monthNames)
			if k < 0 {
				return out, badWord(s, n)
			}
			s = s[w:]
			err = setInt(&out.mm, int64(k+1), n)
		case dchMON, dchMon, dchmon:
			abbr := make([]string, 12)
			for k, m := range monthNames {
				abbr[k] = m[:3]
			}
			k, w := seqSearch(s, abbr)
			if k < 0 {
				return out, badWord(s, n)
			}
			s = s[w:]
			err = setInt(&out.mm, int64(k+1), n)
		case dchMM:
			err = intField(&out.mm, 2)
		case dchDAY, dchDay, dchday:
			k, w := seqSearch(s, dayNames)
			if k < 0 {
				return out, badWord(s, n)
			}
			s = s[w:]
			if err = setInt(&out.d, int64(k), n); err == nil {
				out.d++
			}
		case dchDY, dchDy, dchdy:
			abbr := make([]string, 7)
			for k, d := range dayNames {
				abbr[k] = d[:3]
			}
			k, w := seqSearch(s, abbr)
			if k < 0 {
				return out, badWord(s, n)
			}
			s = s[w:]
			if err = setInt(&out.d, int64(k), n); err == nil {
				out.d++
			}
		case dchDDD:
			err = intField(&out.ddd, 3)
		case dchIDDD:
			err = intField(&out.ddd, 3)
		case dchDD:
			err = intField(&out.dd, 2)
		case dchD:
			err = intField(&out.d, 1)
		case dchID:
			if err = intField(&out.d, 1); err == nil {
				if out.d++; out.d > 7 {
					out.d = 1
				}
			}
		case dchWW, dchIW:
			err = intField(&out.ww, 2)
		case dchQ:
			err = intField(&out.q, 1)
		case dchCC:
			err = intField(&out.cc, 2)
		case dchYComma:
			y, rest, ok := readYComma(s)
			if !ok {
				return out, errDTFormat("invalid input string for \"Y,YYY\"")
			}
			s = rest
			if err = setInt(&out.year, y, n); err == nil {
				out.yysz = 4
				s = skipTH(s, n)
			}
		case dchYYYY, dchIYYY:
			if err = intField(&out.year, 4); err == nil {
				out.yysz = 4
			}
		case dchYYY, dchIYY:
			if err = intField(&out.year, 3); err == nil {
				if used < 4 {
					out.year = adjustPartialYear(out.year)
				}
				out.yysz = 3
			}
		case dchYY, dchIY:
			if err = intField(&out.year, 2); err == nil {
				if used < 4 {
					out.year = adjustPartialYear(out.year)
				}
				out.yysz = 2
			}
		case dchY, dchI:
			if err = intField(&out.year, 1); err == nil {
				if used < 4 {
					out.year = adjustPartialYear(out.year)
				}
				out.yysz = 1
			}
		case dchRM, dchrm:
			k, w := seqSearch(s, []string{"XII", "XI", "X", "IX", "VIII", "VII", "VI", "V", "IV", "III", "II", "I"})
			if k < 0 {
				return out, badWord(s, n)
			}
			s = s[w:]
			err = setInt(&out.mm, int64(12-k), n)
		case dchW:
			err = intField(&out.w, 1)
		case dchJ:
			err = intField(&out.j, 1)
		}
		if err != nil {
			return out, err
		}
		if !fx {
			extraSkip = 0
			for s != "" && isSpace(s[0]) {
				s = s[1:]
				extraSkip++
			}
		}
	}
	return out, nil
}

// readYComma reads "Y,YYY": digits, a comma, three digits.
func readYComma(s string) (int64, string, bool) {
	m, used, _ := strtol(s)
	if used == 0 || used >= len(s) || s[used] != ',' {
		return 0, s, false
	}
	rest := s[used+1:]
	k := 0
	for k < len(rest) && k < 3 && isDigit(rest[k]) {
		k++
	}
	if k == 0 {
		return 0, s, false
	}
	y, _ := strconv.ParseInt(rest[:k], 10, 64)
	return m*1000 + y, rest[k:], true
}

// adjustPartialYear maps a year given with fewer than four digits to the
// one closest to 2020, as PostgreSQL's adjust_partial_year_to_2020 does.
func adjustPartialYear(y int64) int64 {
	switch {
	case y < 70:
		return y + 2000
	case y < 100:
		return y + 1900
	case y < 520:
		return y + 2000
	case y < 1000:
		return y + 1000
	}
	return y
}

// resolveFields turns the fields read into a date and time of day, as
// do_to_timestamp does, with PostgreSQL's checks. in is the input text,
// for messages.
func resolveFields(fc fromChar, in string) (dtFields, error) {
	f := dtFields{month: 1, day: 1}
	if fc.ssss != 0 {
		x := fc.ssss
		f.hour = x / 3600
		x %= 3600
		f.minute = x / 60
		f.second = x % 60
	}
	if fc.ss != 0 {
		f.second = fc.ss
	}
	if fc.mi != 0 {
		f.minute = fc.mi
	}
	if fc.hh != 0 {
		f.hour = fc.hh
	}
	if fc.clock12 {
		if f.hour < 1 || f.hour > 12 {
			return f, errDTFormat("hour \"%d\" is invalid for the 12-hour clock", f.hour)
		}
		if fc.pm != 0 && f.hour < 12 {
			f.hour += 12
		} else if fc.pm == 0 && f.hour == 12 {
			f.hour = 0
		}
	}
	yearSet, monthSet, daySet := false, false, false
	if fc.year != 0 {
		if fc.cc != 0 && fc.yysz <= 2 {
			cc := fc.cc
			if fc.bc != 0 {
				cc = -cc
			}
			f.year = fc.year % 100
			if f.year != 0 {
				if cc >= 0 {
					f.year += (cc - 1) * 100
				} else {
					f.year = (cc+1)*100 - f.year + 1
				}
			} else {
				f.year = cc * 100
				if cc < 0 {
					f.year++
				}
			}
		} else {
			f.year = fc.year
			if fc.bc != 0 {
				f.year = -f.year
			}
			if f.year < 0 {
				f.year++
			}
		}
		yearSet = true
	} else if fc.cc != 0 {
		cc := fc.cc
		if fc.bc != 0 {
			cc = -cc
		}
		if cc >= 0 {
			f.year = (cc-1)*100 + 1
		} else {
			f.year = cc*100 + 1
		}
		yearSet = true
	}
	if fc.j != 0 {
		f.year, f.month, f.day = civilFromDays(fc.j - unixEpochJulian)
		yearSet, monthSet, daySet = true, true, true
	}
	ddd := fc.ddd
	if fc.ww != 0 {
		if fc.mode == modeISO {
			start := isoYearStart(f.year) + (fc.ww-1)*7
			if fc.d != 0 {
				// d counts from Sunday = 1; ISO weeks start on Monday.
				start += (fc.d + 5) % 7
			}
			f.year, f.month, f.day = civilFromDays(start)
			yearSet, monthSet, daySet = true, true, true
		} else {
			ddd = (fc.ww-1)*7 + 1
		}
	}
	dd := fc.dd
	if fc.w != 0 {
		dd = (fc.w-1)*7 + 1
	}
	if dd != 0 {
		f.day = dd
		daySet = true
	}
	if fc.mm != 0 {
		f.month = fc.mm
		monthSet = true
	}
	if ddd != 0 && (f.month <= 1 || f.day <= 1) {
		if f.year == 0 && fc.bc == 0 {
			return f, errDTFormat("cannot calculate day of year without year information")
		}
		if fc.mode == modeISO {
			f.year, f.month, f.day = civilFromDays(isoYearStart(f.year) - 1 + ddd)
			yearSet, monthSet, daySet = true, true, true
		} else {
			sums := [13]int64{0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365}
			if isLeap(f.year) {
				sums = [13]int64{0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366}
			}
			m := int64(1)
			for ; m <= 12; m++ {
				if ddd <= sums[m] {
					break
				}
			}
			if f.month <= 1 {
				f.month = m
			}
			if f.day <= 1 {
				f.day = ddd - sums[m-1]
			}
			monthSet, daySet = true, true
		}
	}
	f.micros = fc.ms*1000 + fc.us
	fieldOverflow := errs.Newf(errs.DatetimeOverflow, "date/time field value out of range: %q", in)
	if monthSet && (f.month < 1 || f.month > 12) {
		return f, fieldOverflow
	}
	if daySet && (f.day < 1 || f.day > 31) {
		return f, fieldOverflow
	}
	if yearSet && monthSet && daySet && f.day > daysInMonth(f.year, f.month) {
		return f, fieldOverflow
	}
	if f.hour < 0 || f.hour >= 24 || f.minute < 0 || f.minute >= 60 || f.second < 0 || f.second >= 60 ||
		f.micros < 0 || f.micros >= microsPerSecond {
		return f, fieldOverflow
	}
	return f, nil
}

// parseWithTemplate reads in by the template f.
func parseWithTemplate(in, f string) (dtFields, fromChar, error) {
	fc, err := readFields(in, parseDCH(f))
	if err != nil {
		return dtFields{}, fc, err
	}
	fields, err := resolveFields(fc, in)
	return fields, fc, err
}

func toDate(a []Value) (Value, error) {
	in := a[0].s
	f, _, err := parseWithTemplate(in, a[1].s)
	if err != nil {
		return Null, err
	}
	if !validJulian(f.year, f.month) {
		return Null, errs.Newf(errs.DatetimeOverflow, "date out of range: %q", in)
	}
	days := daysFromCivil(f.year, f.month, f.day)
	if !validDate(days) {
		return Null, errs.Newf(errs.DatetimeOverflow, "date out of range: %q", in)
	}
	return MakeDate(int32(days)), nil
}

func toTimestamp(a []Value) (Value, error) { return toTimestampIn(a, UTCZone) }

// toTimestampIn is to_timestamp(text, text) in the session time zone z:
// a wall-clock time without TZH/TZM in the input is z's.
func toTimestampIn(a []Value, z Zone) (Value, error) {
	f, fc, err := parseWithTemplate(a[0].s, a[1].s)
	if err != nil {
		return Null, err
	}
	ts, err := f.timestamp()
	if err != nil {
		return Null, errTimestampRange
	}
	if fc.tzsign != 0 {
		// The input's zone: subtract its offset to get UTC.
		off := fc.tzsign * (fc.tzh*3600 + fc.tzm*60) * microsPerSecond
		var ok bool
		if ts, ok = subInt64(ts, off); !ok || !validTimestamp(ts) {
			return Null, errTimestampRange
		}
	} else if ts, err = z.fromLocal(ts); err != nil {
		return Null, err
	}
	return MakeTimestampTZ(ts), nil
}

// toTimestampEpoch is to_timestamp(seconds since 1970-01-01 UTC).
func toTimestampEpoch(a []Value) (Value, error) {
	x := a[0].Float()
	switch {
	case math.IsNaN(x):
		return Null, errs.New(errs.DatetimeOverflow, "timestamp cannot be NaN")
	case math.IsInf(x, 1):
		return MakeTimestampTZ(TimestampPosInfinity), nil
	case math.IsInf(x, -1):
		return MakeTimestampTZ(TimestampNegInfinity), nil
	}
	// PostgreSQL's range, in seconds since 1970: 4714-11-24 BC to
	// 294277-01-01 (its limit; RockStream's timestamps end earlier).
	if x < -210866803200 || x >= 9224318016000 {
		return Null, errs.Newf(errs.DatetimeOverflow, "timestamp out of range: %q", cFormatG(x, 6))
	}
	us := math.RoundToEven(x * microsPerSecond)
	if us >= math.MaxInt64 || !validTimestamp(int64(us)) {
		return Null, errTimestampRange
	}
	return MakeTimestampTZ(int64(us)), nil
}
