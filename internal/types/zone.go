package types

import (
	"strings"
	"sync"
	"time"
)

// Time zones in date/time text: numeric offsets, common abbreviations,
// POSIX-style "abc+3" zones and IANA names resolved through the system's
// time zone database.

// zoneAbbrevs are common time zone abbreviations and their fixed offsets in
// seconds east of UTC, as PostgreSQL's default abbreviation set has them.
var zoneAbbrevs = map[string]int{
	"utc": 0, "ut": 0, "gmt": 0, "z": 0, "zulu": 0,
	"est": -5 * 3600, "edt": -4 * 3600, "cst": -6 * 3600, "cdt": -5 * 3600,
	"mst": -7 * 3600, "mdt": -6 * 3600, "pst": -8 * 3600, "pdt": -7 * 3600,
	"akst": -9 * 3600, "akdt": -8 * 3600, "hst": -10 * 3600,
	"ast": -4 * 3600, "adt": -3 * 3600, "nst": -(3*3600 + 1800), "ndt": -(2*3600 + 1800),
	"wet": 0, "west": 3600, "bst": 3600, "cet": 3600, "cest": 2 * 3600, "met": 3600, "mest": 2 * 3600,
	"eet": 2 * 3600, "eest": 3 * 3600, "msk": 3 * 3600,
	"ist": 2 * 3600, "jst": 9 * 3600, "kst": 9 * 3600, "hkt": 8 * 3600, "sgt": 8 * 3600,
	"awst": 8 * 3600, "acst": 9*3600 + 1800, "acdt": 10*3600 + 1800, "aest": 10 * 3600, "aedt": 11 * 3600,
	"nzst": 12 * 3600, "nzdt": 13 * 3600,
}

// decodeTZOffset decodes +hh, +hh:mm, +hh:mm:ss or +hhmm into seconds east
// of UTC (DecodeTimezone).
func decodeTZOffset(s string) (int64, dtError) {
	if len(s) < 2 || (s[0] != '+' && s[0] != '-') {
		return 0, dtBadFormat
	}
	rest := s[1:]
	digits := func() (int64, bool) {
		i := 0
		var v int64
		for i < len(rest) && isDigit(rest[i]) {
			if v < 1<<40 {
				v = v*10 + int64(rest[i]-'0')
			}
			i++
		}
		ok := i > 0
		rest = rest[i:]
		return v, ok
	}
	h, ok := digits()
	if !ok {
		return 0, dtBadFormat
	}
	var m, sec int64
	switch {
	case rest != "" && rest[0] == ':':
		rest = rest[1:]
		if m, ok = digits(); !ok {
			return 0, dtBadFormat
		}
		if rest != "" && rest[0] == ':' {
			rest = rest[1:]
			if sec, ok = digits(); !ok {
				return 0, dtBadFormat
			}
		}
	case rest == "" && len(s) > 3:
		m = h % 100
		h /= 100
	}
	if h > 15 || m >= 60 || sec >= 60 {
		return 0, dtTZDispOverflow
	}
	if rest != "" {
		return 0, dtBadFormat
	}
	off := h*3600 + m*60 + sec
	if s[0] == '-' {
		off = -off
	}
	return off, dtOK
}

var zoneCache sync.Map // lower-case name -> *time.Location (nil when unknown)

// loadZone resolves a time zone name (an abbreviation or an IANA name such
// as america/new_york), ignoring case.
func loadZone(name string) (*time.Location, bool) {
	if off, ok := zoneAbbrevs[name]; ok {
		return time.FixedZone(strings.ToUpper(name), off), true
	}
	if v, ok := zoneCache.Load(name); ok {
		loc := v.(*time.Location)
		return loc, loc != nil
	}
	var loc *time.Location
	if off, ok := posixOffset(name); ok {
		loc = time.FixedZone(strings.ToUpper(name), off)
		zoneCache.Store(name, loc)
		return loc, true
	}
	for _, cand := range zoneNameCandidates(name) {
		if l, err := time.LoadLocation(cand); err == nil && cand != "Local" && cand != "" {
			loc = l
			break
		}
	}
	zoneCache.Store(name, loc)
	return loc, loc != nil
}

// posixOffset reads a POSIX-style zone "abc+3" or "utc-05:30": a name of
// three or more letters and an offset west of UTC (so "utc-3" is three
// hours east). It returns the offset east of UTC in seconds.
func posixOffset(name string) (int, bool) {
	i := 0
	for i < len(name) && isAlpha(name[i]) {
		i++
	}
	if i < 3 || i >= len(name) || (name[i] != '+' && name[i] != '-') {
		return 0, false
	}
	off, e := decodeTZOffset(name[i:])
	if e != dtOK {
		return 0, false
	}
	return int(-off), true
}

// zoneNameCandidates returns spellings of a lower-cased zone name to try
// against the case-sensitive tz database.
func zoneNameCandidates(name string) []string {
	title := []byte(name)
	up := true
	for i, c := range title {
		if up && c >= 'a' && c <= 'z' {
			title[i] = c - 'a' + 'A'
		}
		up = c == '/' || c == '_' || c == '-'
	}
	return []string{name, string(title), strings.ToUpper(name)}
}

// zoneOffset returns loc's offset from UTC in seconds (east positive) for
// the wall-clock time in p, resolving skipped and repeated times as
// PostgreSQL does (localOffset).
func zoneOffset(p dtParsed, loc *time.Location) int64 {
	local := daysFromCivil(p.year, p.mon, p.day)*86400 + (p.hour*60+p.min)*60 + p.sec
	return localOffset(loc, local)
}
