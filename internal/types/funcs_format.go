package types

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rockstream/rockstream/internal/errs"
)

// Date/time templates of to_char, to_date and to_timestamp, as
// PostgreSQL's formatting.c reads and applies them: keyword fields (YYYY,
// MM, DD, HH24, MI, SS, MS, US, Month, Day, AM, ...), the FM (fill mode)
// and TM prefixes and the TH/th ordinal suffix, double-quoted literal text
// (a backslash escapes the next character), and any other character
// copied as it is. Keywords are case-sensitive and matched longest first,
// as PostgreSQL matches them.

// dchKey identifies a template keyword.
type dchKey uint8

const (
	dchAD_ dchKey = iota + 1 // A.D.
	dchAM_                   // A.M.
	dchAD
	dchAM
	dchBC_ // B.C.
	dchBC
	dchCC
	dchDAY
	dchDDD
	dchDD
	dchDY
	dchDay
	dchDy
	dchD
	dchFF1
	dchFF2
	dchFF3
	dchFF4
	dchFF5
	dchFF6
	dchFX
	dchHH24
	dchHH12
	dchHH
	dchIDDD
	dchID
	dchIW
	dchIYYY
	dchIYY
	dchIY
	dchI
	dchJ
	dchMI
	dchMM
	dchMONTH
	dchMON
	dchMS
	dchMonth
	dchMon
	dchOF
	dchPM_ // P.M.
	dchPM
	dchQ
	dchRM
	dchSSSS
	dchSS
	dchTZH
	dchTZM
	dchTZ
	dchUS
	dchWW
	dchW
	dchYComma // Y,YYY
	dchYYYY
	dchYYY
	dchYY
	dchY
	dchad_ // a.d.
	dcham_ // a.m.
	dchad
	dcham
	dchbc_ // b.c.
	dchbc
	dchday
	dchdy
	dchmonth
	dchmon
	dchpm_ // p.m.
	dchpm
	dchrm
	dchtz
)

// dateMode is the calendar convention a keyword belongs to; to_date
// refuses to mix the Gregorian and the ISO week-date ones.
type dateMode uint8

const (
	modeNone dateMode = iota
	modeGregorian
	modeISO
)

// dchKeyword is one entry of the keyword table.
type dchKeyword struct {
	name  string
	key   dchKey
	digit bool // the field is numeric
	mode  dateMode
}

// dchKeywords is PostgreSQL's DCH_keywords table.
var dchKeywords = []dchKeyword{
	{"A.D.", dchAD_, false, modeNone}, {"A.M.", dchAM_, false, modeNone}, {"AD", dchAD, false, modeNone},
	{"AM", dchAM, false, modeNone}, {"B.C.", dchBC_, false, modeNone}, {"BC", dchBC, false, modeNone},
	{"CC", dchCC, true, modeNone}, {"DAY", dchDAY, false, modeNone}, {"DDD", dchDDD, true, modeGregorian},
	{"DD", dchDD, true, modeGregorian}, {"DY", dchDY, false, modeNone}, {"Day", dchDay, false, modeNone},
	{"Dy", dchDy, false, modeNone}, {"D", dchD, true, modeGregorian},
	{"FF1", dchFF1, false, modeNone}, {"FF2", dchFF2, false, modeNone}, {"FF3", dchFF3, false, modeNone},
	{"FF4", dchFF4, false, modeNone}, {"FF5", dchFF5, false, modeNone}, {"FF6", dchFF6, false, modeNone},
	{"FX", dchFX, false, modeNone}, {"HH24", dchHH24, true, modeNone}, {"HH12", dchHH12, true, modeNone},
	{"HH", dchHH, true, modeNone}, {"IDDD", dchIDDD, true, modeISO}, {"ID", dchID, true, modeISO},
	{"IW", dchIW, true, modeISO}, {"IYYY", dchIYYY, true, modeISO}, {"IYY", dchIYY, true, modeISO},
	{"IY", dchIY, true, modeISO}, {"I", dchI, true, modeISO}, {"J", dchJ, true, modeNone},
	{"MI", dchMI, true, modeNone}, {"MM", dchMM, true, modeGregorian}, {"MONTH", dchMONTH, false, modeGregorian},
	{"MON", dchMON, false, modeGregorian}, {"MS", dchMS, true, modeNone}, {"Month", dchMonth, false, modeGregorian},
	{"Mon", dchMon, false, modeGregorian}, {"OF", dchOF, false, modeNone}, {"P.M.", dchPM_, false, modeNone},
	{"PM", dchPM, false, modeNone}, {"Q", dchQ, true, modeNone}, {"RM", dchRM, false, modeGregorian},
	{"SSSSS", dchSSSS, true, modeNone}, {"SSSS", dchSSSS, true, modeNone}, {"SS", dchSS, true, modeNone},
	{"TZH", dchTZH, false, modeNone}, {"TZM", dchTZM, true, modeNone}, {"TZ", dchTZ, false, modeNone},
	{"US", dchUS, true, modeNone}, {"WW", dchWW, true, modeGregorian}, {"W", dchW, true, modeGregorian},
	{"Y,YYY", dchYComma, true, modeGregorian}, {"YYYY", dchYYYY, true, modeGregorian},
	{"YYY", dchYYY, true, modeGregorian}, {"YY", dchYY, true, modeGregorian}, {"Y", dchY, true, modeGregorian},
	{"a.d.", dchad_, false, modeNone}, {"a.m.", dcham_, false, modeNone}, {"ad", dchad, false, modeNone},
	{"am", dcham, false, modeNone}, {"b.c.", dchbc_, false, modeNone}, {"bc", dchbc, false, modeNone},
	{"cc", dchCC, true, modeNone}, {"day", dchday, false, modeNone}, {"ddd", dchDDD, true, modeGregorian},
	{"dd", dchDD, true, modeGregorian}, {"dy", dchdy, false, modeNone}, {"d", dchD, true, modeGregorian},
	{"ff1", dchFF1, false, modeNone}, {"ff2", dchFF2, false, modeNone}, {"ff3", dchFF3, false, modeNone},
	{"ff4", dchFF4, false, modeNone}, {"ff5", dchFF5, false, modeNone}, {"ff6", dchFF6, false, modeNone},
	{"fx", dchFX, false, modeNone}, {"hh24", dchHH24, true, modeNone}, {"hh12", dchHH12, true, modeNone},
	{"hh", dchHH, true, modeNone}, {"iddd", dchIDDD, true, modeISO}, {"id", dchID, true, modeISO},
	{"iw", dchIW, true, modeISO}, {"iyyy", dchIYYY, true, modeISO}, {"iyy", dchIYY, true, modeISO},
	{"iy", dchIY, true, modeISO}, {"i", dchI, true, modeISO}, {"j", dchJ, true, modeNone},
	{"mi", dchMI, true, modeNone}, {"mm", dchMM, true, modeGregorian}, {"month", dchmonth, false, modeGregorian},
	{"mon", dchmon, false, modeGregorian}, {"ms", dchMS, true, modeNone}, {"of", dchOF, false, modeNone},
	{"p.m.", dchpm_, false, modeNone}, {"pm", dchpm, false, modeNone}, {"q", dchQ, true, modeNone},
	{"rm", dchrm, false, modeGregorian}, {"sssss", dchSSSS, true, modeNone}, {"ssss", dchSSSS, true, modeNone},
	{"ss", dchSS, true, modeNone}, {"tzh", dchTZH, false, modeNone}, {"tzm", dchTZM, true, modeNone},
	{"tz", dchtz, false, modeNone}, {"us", dchUS, true, modeNone}, {"ww", dchWW, true, modeGregorian},
	{"w", dchW, true, modeGregorian}, {"y,yyy", dchYComma, true, modeGregorian},
	{"yyyy", dchYYYY, true, modeGregorian}, {"yyy", dchYYY, true, modeGregorian},
	{"yy", dchYY, true, modeGregorian}, {"y", dchY, true, modeGregorian},
}

// nodeKind is the kind of a parsed template element.
type nodeKind uint8

const (
	nodeField nodeKind = iota
	nodeChar
	nodeSpace
	nodeSeparator
)

// fmtNode is one element of a parsed template: a keyword field with its
// modifiers, or one literal character.
type fmtNode struct {
	kind nodeKind
	kw   *dchKeyword
	fm   bool // FM: no padding
	tm   bool // TM: translated names, which are not padded
	th   int  // 0, or the TH (1) / th (2) suffix
	ch   string
}

// parseDCH parses a date/time template.
func parseDCH(f string) []fmtNode {
	var out []fmtNode
	for len(f) > 0 {
		fm, tm, th := false, false, 0
		switch {
		case strings.HasPrefix(f, "FM"), strings.HasPrefix(f, "fm"):
			fm = true
			f = f[2:]
		case strings.HasPrefix(f, "TM"), strings.HasPrefix(f, "tm"):
			tm = true
			f = f[2:]
		}
		if kw := matchKeyword(f); kw != nil {
			f = f[len(kw.name):]
			switch {
			case strings.HasPrefix(f, "TH"):
				th = 1
				f = f[2:]
			case strings.HasPrefix(f, "th"):
				th = 2
				f = f[2:]
			case strings.HasPrefix(f, "SP"):
				f = f[2:]
			}
			out = append(out, fmtNode{kind: nodeField, kw: kw, fm: fm, tm: tm, th: th})
			continue
		}
		if len(f) == 0 {
			break
		}
		if f[0] == '"' {
			f = f[1:]
			for len(f) > 0 {
				if f[0] == '"' {
					f = f[1:]
					break
				}
				if f[0] == '\\' && len(f) > 1 {
					f = f[1:]
				}
				_, w := utf8.DecodeRuneInString(f)
				out = append(out, fmtNode{kind: nodeChar, ch: f[:w]})
				f = f[w:]
			}
			continue
		}
		if f[0] == '\\' && len(f) > 1 && f[1] == '"' {
			f = f[1:]
		}
		_, w := utf8.DecodeRuneInString(f)
		n := fmtNode{kind: nodeChar, ch: f[:w]}
		switch {
		case isSeparatorChar(f[:w]):
			n.kind = nodeSeparator
		case w == 1 && isSpace(f[0]):
			n.kind = nodeSpace
		}
		out = append(out, n)
		f = f[w:]
	}
	return out
}

// isSeparatorChar reports whether c is a separator of date/time templates:
// an ASCII character that is neither a letter, a digit nor a space.
func isSeparatorChar(c string) bool {
	if len(c) != 1 {
		return false
	}
	b := c[0]
	return b < 0x80 && !isSpace(b) && !isAlnum(b)
}

// matchKeyword returns the longest keyword at the start of f.
func matchKeyword(f string) *dchKeyword {
	var best *dchKeyword
	for i := range dchKeywords {
		k := &dchKeywords[i]
		if strings.HasPrefix(f, k.name) && (best == nil || len(k.name) > len(best.name)) {
			best = k
		}
	}
	return best
}

var (
	monthNames = []string{"January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December"}
	dayNames     = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	romanMonths  = []string{"I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"}
	errIntervalF = errs.New(errs.InvalidDatetimeFormat, "invalid format specification for an interval value")
)

func init() {
	addFunc("to_char", Text, timestampToChar(false), Timestamp, Text)
	addZoned("to_char", Text, timestampTZToChar, TimestampTZ, Text)
}

func timestampToChar(withZone bool) func([]Value) (Value, error) {
	if withZone {
		return timestampTZToChar(UTCZone)
	}
	return func(a []Value) (Value, error) {
		ts, f := a[0].n, a[1].s
		if !isFiniteTimestamp(ts) || f == "" {
			return Null, nil
		}
		s, err := formatDCH(parseDCH(f), fieldsOf(ts), ts, nil)
		if err != nil {
			return Null, err
		}
		return MakeText(s), nil
	}
}

// timestampTZToChar is to_char(timestamptz, text) in the session time
// zone z: the fields of the wall-clock time, TZ its abbreviation and
// OF, TZH, TZM its offset.
func timestampTZToChar(z Zone) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		ts, f := a[0].n, a[1].s
		if !isFiniteTimestamp(ts) || f == "" {
			return Null, nil
		}
		local, err := z.toLocal(ts)
		if err != nil {
			return Null, err
		}
		zi := &charZone{abbrev: z.abbrevAt(ts), off: z.offsetAt(ts)}
		s, err := formatDCH(parseDCH(f), fieldsOf(local), local, zi)
		if err != nil {
			return Null, err
		}
		return MakeText(s), nil
	}
}

// charZone is the zone of a timestamptz to_char formats: its
// abbreviation and offset east of UTC in seconds.
type charZone struct {
	abbrev string
	off    int64
}

// padInt formats n zero-padded to width (a negative n gets one more).
func padInt(n int64, width int, fm bool) string {
	if fm {
		return strconv.FormatInt(n, 10)
	}
	if n < 0 {
		width++
	}
	s := strconv.FormatInt(absInt(n), 10)
	for len(s) < width-boolInt(n < 0) {
		s = "0" + s
	}
	if n < 0 {
		s = "-" + s
	}
	return s
}

func absInt(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// padText left-justifies s in width characters unless fm.
func padText(s string, width int, fm bool) string {
	if fm {
		return s
	}
	for n := utf8.RuneCountInString(s); n < width; n++ {
		s += " "
	}
	return s
}

// ordinal appends the English ordinal suffix of a number's text.
func ordinal(num string, upper bool) string {
	suffix := "th"
	n := len(num)
	if n > 0 {
		last := num[n-1]
		if !(n > 1 && num[n-2] == '1') {
			switch last {
			case '1':
				suffix = "st"
			case '2':
				suffix = "nd"
			case '3':
				suffix = "rd"
			}
		}
	}
	if upper {
		suffix = strings.ToUpper(suffix)
	}
	return num + suffix
}

// adjustYear converts an astronomical year to the positive BC/AD year
// templates show.
func adjustYear(y int64) int64 {
	if y <= 0 {
		return 1 - y
	}
	return y
}

// formatDCH applies a parsed template to a timestamp's fields.
func formatDCH(nodes []fmtNode, f dtFields, ts int64, zi *charZone) (string, error) {
	var b strings.Builder
	days, _ := splitTimestamp(ts)
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
			pm := f.hour >= 12
			s = meridiem(n.kw.key, pm)
		case dchHH, dchHH12:
			h := f.hour % 12
			if h == 0 {
				h = 12
			}
			s = padInt(h, 2, n.fm)
		case dchHH24:
			s = padInt(f.hour, 2, n.fm)
		case dchMI:
			s = padInt(f.minute, 2, n.fm)
		case dchSS:
			s = padInt(f.second, 2, n.fm)
		case dchFF1, dchFF2, dchFF3, dchFF4, dchFF5, dchFF6:
			digits := int(n.kw.key-dchFF1) + 1
			v := f.micros
			for range 6 - digits {
				v /= 10
			}
			s = padInt(v, digits, false)
		case dchMS:
			s = padInt(f.micros/1000, 3, false)
		case dchUS:
			s = padInt(f.micros, 6, false)
		case dchSSSS:
			s = strconv.FormatInt(f.hour*3600+f.minute*60+f.second, 10)
		case dchtz, dchTZ:
			num = false
			if zi != nil {
				s = zi.abbrev
				if n.kw.key == dchtz {
					s = strings.ToLower(s)
				}
			}
		case dchTZH:
			num = false
			off := int64(0)
			if zi != nil {
				off = zi.off
			}
			s = offsetSign(off) + padInt(absInt(off)/3600, 2, false)
		case dchTZM:
			off := int64(0)
			if zi != nil {
				off = zi.off
			}
			s = padInt(absInt(off)%3600/60, 2, false)
		case dchOF:
			num = false
			off := int64(0)
			if zi != nil {
				off = zi.off
			}
			width := 2
			if n.fm {
				width = 0
			}
			s = offsetSign(off) + padInt(absInt(off)/3600, width, false)
			if absInt(off)%3600 != 0 {
				s += ":" + padInt(absInt(off)%3600/60, 2, false)
			}
		case dchAD, dchBC, dchAD_, dchBC_, dchad, dchbc, dchad_, dchbc_:
			num = false
			bc := f.year <= 0
			switch n.kw.key {
			case dchAD, dchBC:
				s = map[bool]string{false: "AD", true: "BC"}[bc]
			case dchAD_, dchBC_:
				s = map[bool]string{false: "A.D.", true: "B.C."}[bc]
			case dchad, dchbc:
				s = map[bool]string{false: "ad", true: "bc"}[bc]
			default:
				s = map[bool]string{false: "a.d.", true: "b.c."}[bc]
			}
		case dchMONTH, dchMonth, dchmonth:
			num = false
			s = caseAs(monthNames[f.month-1], n.kw.key, dchMONTH, dchmonth)
			s = padText(s, 9, n.fm || n.tm)
		case dchMON, dchMon, dchmon:
			num = false
			s = caseAs(monthNames[f.month-1][:3], n.kw.key, dchMON, dchmon)
		case dchMM:
			s = padInt(f.month, 2, n.fm)
		case dchDAY, dchDay, dchday:
			num = false
			s = caseAs(dayNames[isoDOW(days)%7], n.kw.key, dchDAY, dchday)
			s = padText(s, 9, n.fm || n.tm)
		case dchDY, dchDy, dchdy:
			num = false
			s = caseAs(dayNames[isoDOW(days)%7][:3], n.kw.key, dchDY, dchdy)
		case dchDDD:
			s = padInt(days-daysFromCivil(f.year, 1, 1)+1, 3, n.fm)
		case dchIDDD:
			_, iy := isoWeek(days)
			s = padInt(days-isoYearStart(iy)+1, 3, n.fm)
		case dchDD:
			s = padInt(f.day, 2, n.fm)
		case dchD:
			s = strconv.FormatInt(isoDOW(days)%7+1, 10)
		case dchID:
			s = strconv.FormatInt(isoDOW(days), 10)
		case dchWW:
			s = padInt((days-daysFromCivil(f.year, 1, 1))/7+1, 2, n.fm)
		case dchIW:
			w, _ := isoWeek(days)
			s = padInt(w, 2, n.fm)
		case dchW:
			s = strconv.FormatInt((f.day-1)/7+1, 10)
		case dchQ:
			s = strconv.FormatInt((f.month-1)/3+1, 10)
		case dchCC:
			var c int64
			if f.year > 0 {
				c = (f.year-1)/100 + 1
			} else {
				c = f.year/100 - 1
			}
			if c <= 99 && c >= -99 {
				s = padInt(c, 2, n.fm)
			} else {
				s = strconv.FormatInt(c, 10)
			}
		case dchJ:
			s = strconv.FormatInt(days+unixEpochJulian, 10)
		case dchYComma:
			y := adjustYear(f.year)
			s = strconv.FormatInt(y/1000, 10) + "," + padInt(y%1000, 3, false)
		case dchYYYY, dchIYYY:
			y := f.year
			if n.kw.key == dchIYYY {
				_, y = isoWeek(days)
			}
			s = padInt(adjustYear(y), 4, n.fm)
		case dchYYY, dchYY, dchY, dchIYY, dchIY, dchI:
			y := f.year
			width, mod := 3, int64(1000)
			switch n.kw.key {
			case dchYY, dchIY:
				width, mod = 2, 100
			case dchY, dchI:
				width, mod = 1, 10
			}
			if n.kw.key == dchIYY || n.kw.key == dchIY || n.kw.key == dchI {
				_, y = isoWeek(days)
			}
			s = padInt(adjustYear(y)%mod, width, n.fm)
		case dchRM, dchrm:
			num = false
			s = romanMonths[f.month-1]
			if n.kw.key == dchrm {
				s = strings.ToLower(s)
			}
			s = padText(s, 4, n.fm)
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

// caseAs writes a name in upper case for the upper-case keyword, lower
// case for the lower-case one, and as it is (capitalized) otherwise.
func caseAs(s string, key, upper, lower dchKey) string {
	switch key {
	case upper:
		return strings.ToUpper(s)
	case lower:
		return strings.ToLower(s)
	}
	return s
}

// isoYearStart returns the Monday that starts ISO year y (days since
// 1970-01-01): the Monday of the week holding January 4.
func isoYearStart(y int64) int64 {
	jan4 := daysFromCivil(y, 1, 4)
	return jan4 - isoDOW(jan4) + 1
}

// meridiem is the text of an AM/PM field of template keyword key: AM or
// PM, A.M. or P.M., and their lower-case forms, as key is written.
func meridiem(key dchKey, pm bool) string {
	var forms [2]string
	switch key {
	case dchAM, dchPM:
		forms = [2]string{"AM", "PM"}
	case dchAM_, dchPM_:
		forms = [2]string{"A.M.", "P.M."}
	case dcham, dchpm:
		forms = [2]string{"am", "pm"}
	default:
		forms = [2]string{"a.m.", "p.m."}
	}
	if pm {
		return forms[1]
	}
	return forms[0]
}

func offsetSign(off int64) string {
	if off >= 0 {
		return "+"
	}
	return "-"
}
