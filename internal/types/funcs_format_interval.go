package types

import (
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
)

// to_char(interval, text), as PostgreSQL 15's interval_to_char: the
// interval is split into years (months / 12), months (months % 12), days,
// hours (any number of them), minutes, seconds and microseconds, each
// keeping the sign of its part, and the template's fields show those
// numbers as they are, not as a calendar date: HH and HH12 show hours on
// a 12-hour clock, HH24 all the hours, DDD the span in days (30 a month),
// YYYY the years, CC the years / 100, RM the month in Roman numerals (a
// whole number of years shows XII or I). Names of months and days, D, ID,
// eras and time zones fail with 22007 as in PostgreSQL; the ISO-calendar
// fields (IYYY, IW, IDDD, ...) and J, which PostgreSQL computes from the
// parts as if they were a date, are refused with 0A000.

func init() {
	addFunc("to_char", Text, intervalToChar, Interval, Text)
}

// romanMonthsReversed are PostgreSQL's rm_months_upper: December first.
var romanMonthsReversed = []string{"XII", "XI", "X", "IX", "VIII", "VII", "VI", "V", "IV", "III", "II", "I"}

func intervalToChar(a []Value) (Value, error) {
	f := a[1].s
	if f == "" {
		return Null, nil
	}
	s, err := formatIntervalDCH(parseDCH(f), a[0].Interval())
	if err != nil {
		return Null, err
	}
	return MakeText(s), nil
}

func invalidForInterval() error {
	e := errIntervalF.(*errs.Error)
	c := *e
	c.Hint = "Intervals are not tied to specific calendar dates."
	return &c
}

// formatIntervalDCH applies a parsed template to an interval.
func formatIntervalDCH(nodes []fmtNode, iv IntervalValue) (string, error) {
	year, mon := int64(iv.Months/12), int64(iv.Months%12)
	mday := int64(iv.Days)
	t := iv.Micros
	hour := t / 3_600_000_000
	t -= hour * 3_600_000_000
	min := t / 60_000_000
	t -= min * 60_000_000
	sec := t / 1_000_000
	fsec := t - sec*1_000_000
	yday := int64(int32((year*12+mon)*30 + mday))
	var b strings.Builder
	// signed is a number zero-padded to width, one more when negative.
	signed := func(n int64, width int, fm bool) string {
		if fm {
			width = 0
		} else if n < 0 {
			width++
		}
		return fmt.Sprintf("%0*d", width, n)
	}
	plain := func(n int64, width int, fm bool) string {
		if fm {
			width = 0
		}
		return fmt.Sprintf("%0*d", width, n)
	}
	for _, n := range nodes {
		if n.kind != nodeField {
			b.WriteString(n.ch)
			continue
		}
		var s string
		num := true
		switch n.kw.key {
		case dchAM, dchPM, dchAM_, dchPM_, dcham, dchpm, dcham_, dchpm_:
			num = false
			pm := hour%24 >= 12
			s = meridiem(n.kw.key, pm)
		case dchHH, dchHH12:
			h := hour % 12
			if h == 0 {
				h = 12
			}
			w := 2
			if hour < 0 {
				w = 3
			}
			s = plain(h, w, n.fm)
		case dchHH24:
			s = signed(hour, 2, n.fm)
		case dchMI:
			s = signed(min, 2, n.fm)
		case dchSS:
			s = signed(sec, 2, n.fm)
		case dchFF1, dchFF2, dchFF3, dchFF4, dchFF5, dchFF6:
			digits := int(n.kw.key-dchFF1) + 1
			v := fsec
			for range 6 - digits {
				v /= 10
			}
			s = fmt.Sprintf("%0*d", digits, v)
		case dchMS:
			s = fmt.Sprintf("%03d", fsec/1000)
		case dchUS:
			s = fmt.Sprintf("%06d", fsec)
		case dchSSSS:
			s = fmt.Sprint(hour*3600 + min*60 + sec)
		case dchtz, dchTZ, dchTZH, dchTZM, dchOF,
			dchAD, dchBC, dchAD_, dchBC_, dchad, dchbc, dchad_, dchbc_,
			dchMONTH, dchMonth, dchmonth, dchMON, dchMon, dchmon,
			dchDAY, dchDay, dchday, dchDY, dchDy, dchdy, dchD, dchID:
			return "", invalidForInterval()
		case dchIDDD, dchIW, dchIYYY, dchIYY, dchIY, dchI, dchJ:
			return "", errs.Newf(errs.FeatureNotSupported, "to_char of an interval with the ISO-calendar or Julian-day field %s is not supported", n.kw.name)
		case dchMM:
			s = signed(mon, 2, n.fm)
		case dchDDD:
			s = plain(yday, 3, n.fm)
		case dchDD:
			s = plain(mday, 2, n.fm)
		case dchWW:
			s = plain((yday-1)/7+1, 2, n.fm)
		case dchW:
			s = fmt.Sprint((mday-1)/7 + 1)
		case dchQ:
			if mon != 0 {
				s = fmt.Sprint((mon-1)/3 + 1)
			}
		case dchCC:
			c := year / 100
			if c <= 99 && c >= -99 {
				s = signed(c, 2, n.fm)
			} else {
				s = fmt.Sprint(c)
			}
		case dchYComma:
			i := year / 1000
			s = fmt.Sprintf("%d,%03d", i, year-i*1000)
		case dchYYYY:
			s = fmt.Sprintf("%0*d", yearWidth(year, 4, n.fm), year)
		case dchYYY:
			s = fmt.Sprintf("%0*d", yearWidth(year, 3, n.fm), year%1000)
		case dchYY:
			s = fmt.Sprintf("%0*d", yearWidth(year, 2, n.fm), year%100)
		case dchY:
			s = fmt.Sprintf("%1d", year%10)
		case dchRM, dchrm:
			num = false
			if mon == 0 && year == 0 {
				break
			}
			var i int64
			switch {
			case mon == 0 && year >= 0:
				i = 0
			case mon == 0:
				i = 11
			case mon < 0:
				i = -(mon + 1)
			default:
				i = 12 - mon
			}
			s = romanMonthsReversed[i]
			if n.kw.key == dchrm {
				s = strings.ToLower(s)
			}
			if !n.fm {
				s = fmt.Sprintf("%-4s", s)
			}
		case dchFX:
			num = false
		}
		if num && n.th != 0 {
			s = ordinal(s, n.th == 1)
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// yearWidth is the zero-padded width of a year field: one more for a
// negative year (as PostgreSQL decides it, from the whole year), none in
// fill mode.
func yearWidth(year int64, width int, fm bool) int {
	if fm {
		return 0
	}
	if year < 0 {
		return width + 1
	}
	return width
}
