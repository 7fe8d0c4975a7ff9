package types

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // the zone database is part of the binary: results do not depend on the machine

	"github.com/rockstream/rockstream/internal/errs"
)

// The session time zone (the TimeZone setting). A TIMESTAMPTZ value is an
// instant, microseconds since 1970-01-01 00:00:00 UTC, whatever the zone;
// the zone decides how the instant reads as a wall-clock time: its text
// output and input without an offset, its casts to and from timestamp,
// date and text, its fields (extract, date_trunc, to_char) and calendar
// arithmetic (+ interval, generate_series, age), as PostgreSQL 15 does.
//
// A wall-clock time that a transition skips takes the offset before the
// transition (02:30 on a spring-forward night reads as 03:30 daylight
// time) and one that a transition repeats the offset after it (standard
// time), as PostgreSQL's DetermineTimeZoneOffset resolves them.
//
// Zones are read from the tz database built into the binary
// (time/tzdata), so that no answer depends on the machine's files.

// Zone is a session time zone. The zero Zone is UTC.
type Zone struct {
	name string
	loc  *time.Location // nil: UTC
	// today is the instant (microseconds since the epoch) whose date is
	// the current date, where PostgreSQL reads a zone's offset on it
	// (time with time zone: GetCurrentDateTime, timetz_zone): the
	// statement's transaction start. dated is false where there is no
	// current date: the binding of a view's query.
	today int64
	dated bool
}

// OnDate returns z with the current date of the instant at (the
// transaction's start), for the timetz conversions that read it.
func (z Zone) OnDate(at time.Time) Zone {
	z.today, z.dated = at.UnixMicro(), true
	return z
}

// Dated reports whether z has a current date (OnDate).
func (z Zone) Dated() bool { return z.dated }

// Undated returns z without a current date.
func (z Zone) Undated() Zone {
	z.today, z.dated = 0, false
	return z
}

// UTCZone is the session time zone UTC, the default.
var UTCZone = Zone{}

// Name is the zone as SHOW TimeZone shows it: the database's spelling of
// a region name (Europe/Berlin), or the POSIX form of a fixed offset
// (<+02>-02).
func (z Zone) Name() string {
	if z.name == "" {
		return "UTC"
	}
	return z.name
}

// IsUTC reports whether z is UTC without a location to look up.
func (z Zone) IsUTC() bool { return z.loc == nil }

// offsetAt returns z's offset east of UTC, in seconds, at the instant utc
// (microseconds since the epoch).
func (z Zone) offsetAt(utc int64) int64 {
	if z.loc == nil {
		return 0
	}
	_, off := time.Unix(floorDiv(utc, microsPerSecond), 0).In(z.loc).Zone()
	return int64(off)
}

// abbrevAt returns z's abbreviation at the instant utc (CET, EDT, +05),
// as to_char's TZ shows it.
func (z Zone) abbrevAt(utc int64) string {
	if z.loc == nil {
		return "UTC"
	}
	name, _ := time.Unix(floorDiv(utc, microsPerSecond), 0).In(z.loc).Zone()
	return name
}

// toLocal returns the wall-clock time of the instant utc in z, as a
// TIMESTAMP value. Infinities stay infinite.
func (z Zone) toLocal(utc int64) (int64, error) {
	if !isFiniteTimestamp(utc) || z.loc == nil {
		return utc, nil
	}
	r, ok := addInt64(utc, z.offsetAt(utc)*microsPerSecond)
	if !ok || !validTimestamp(r) {
		return 0, errTimestampRange
	}
	return r, nil
}

// fromLocal returns the instant at which z's clocks read the wall-clock
// time local (a TIMESTAMP value).
func (z Zone) fromLocal(local int64) (int64, error) {
	if !isFiniteTimestamp(local) || z.loc == nil {
		return local, nil
	}
	off := localOffset(z.loc, floorDiv(local, microsPerSecond))
	r, ok := subInt64(local, off*microsPerSecond)
	if !ok || !validTimestamp(r) {
		return 0, errTimestampRange
	}
	return r, nil
}

// localOffset is the offset east of UTC, in seconds, of the wall-clock
// time local (seconds since 1970-01-01 as if in UTC) in loc, as
// DetermineTimeZoneOffset finds it: from the first transition after a day
// before the time, a time that falls before it in both readings takes
// the offset before, one that falls after in both the offset after; a
// skipped time takes the offset before, a repeated one the offset after.
func localOffset(loc *time.Location, local int64) int64 {
	t := time.Unix(local-86400, 0).In(loc)
	_, before := t.Zone()
	_, end := t.ZoneBounds()
	if end.IsZero() {
		return int64(before)
	}
	boundary := end.Unix()
	_, after := end.In(loc).Zone()
	beforeTime, afterTime := local-int64(before), local-int64(after)
	switch {
	case beforeTime < boundary && afterTime < boundary:
		return int64(before)
	case beforeTime > boundary && afterTime >= boundary:
		return int64(after)
	case beforeTime > afterTime:
		return int64(before)
	}
	return int64(after)
}

// appendOffset appends an offset east of UTC in seconds as PostgreSQL's
// EncodeTimezone writes it: +hh, +hh:mm when there are minutes, and
// +hh:mm:ss when there are seconds (the local mean times of old dates).
func appendOffset(dst []byte, off int64) []byte {
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	dst = append(dst, sign)
	dst = appendPadded(dst, off/3600, 2)
	mins, secs := off/60%60, off%60
	if mins != 0 || secs != 0 {
		dst = append(dst, ':')
		dst = appendPadded(dst, mins, 2)
	}
	if secs != 0 {
		dst = append(dst, ':')
		dst = appendPadded(dst, secs, 2)
	}
	return dst
}

// AppendTimestampTZ appends timestamptz_out's ISO text of the instant utc
// in zone z: the wall-clock time and the offset (2024-03-31 03:30:00+02).
func AppendTimestampTZ(dst []byte, utc int64, z Zone) []byte {
	if !isFiniteTimestamp(utc) || z.loc == nil {
		return AppendTimestamp(dst, utc, true)
	}
	off := z.offsetAt(utc)
	local, ok := addInt64(utc, off*microsPerSecond)
	if !ok || !validTimestamp(local) {
		// Beyond the last wall-clock time: show the instant in UTC.
		return AppendTimestamp(dst, utc, true)
	}
	start := len(dst)
	dst = AppendTimestamp(dst, local, false)
	bc := strings.HasSuffix(string(dst[start:]), " BC")
	if bc {
		dst = dst[:len(dst)-3]
	}
	dst = appendOffset(dst, off)
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

var sessionZones sync.Map // setting text -> Zone

// LoadZone reads a value of the TimeZone setting as PostgreSQL's
// check_timezone does: a number of hours east of UTC (2, -3.5, +02), a
// region name of the tz database in any case (Europe/Berlin), a name the
// database has for a fixed or rule-based zone (UTC, EST5EDT), or a POSIX
// zone with a fixed offset west of UTC (UTC+3, <+02>-02). An unknown zone
// is 22023 invalid value for parameter "TimeZone".
func LoadZone(setting string) (Zone, error) {
	if v, ok := sessionZones.Load(setting); ok {
		return v.(Zone), nil
	}
	z, ok := loadSessionZone(setting)
	if !ok {
		return Zone{}, errs.Newf(errs.InvalidParameterValue, "invalid value for parameter \"TimeZone\": \"%s\"", setting)
	}
	sessionZones.Store(setting, z)
	return z, nil
}

func loadSessionZone(s string) (Zone, bool) {
	if s == "" {
		return Zone{}, false
	}
	switch strings.ToUpper(s) {
	case "UTC":
		return Zone{name: "UTC"}, true
	}
	// A number of hours, in SQL's sign convention (east positive).
	if h, err := strconv.ParseFloat(strings.TrimLeft(s, " \t\n\r\f\v"), 64); err == nil && !math.IsInf(h, 0) && !math.IsNaN(h) {
		if math.Abs(h) >= 168 {
			return Zone{}, false
		}
		return OffsetZone(int64(h * 3600)), true
	}
	if loc, name, ok := loadRegion(s); ok {
		return Zone{name: name, loc: loc}, true
	}
	if off, name, abbrev, ok := parsePOSIXZone(s); ok {
		return Zone{name: name, loc: time.FixedZone(abbrev, int(off))}, true
	}
	return Zone{}, false
}

// OffsetZone is the zone of a fixed offset east of UTC in seconds, named
// as PostgreSQL's pg_tzset_offset names it (<+02>-02, <-03:30>+03:30).
func OffsetZone(east int64) Zone {
	abs := east
	if abs < 0 {
		abs = -abs
	}
	var b []byte
	b = appendPadded(b, abs/3600, 2)
	if rem := abs % 3600; rem != 0 {
		b = append(b, ':')
		b = appendPadded(b, rem/60, 2)
		if rem%60 != 0 {
			b = append(b, ':')
			b = appendPadded(b, rem%60, 2)
		}
	}
	off := string(b)
	abbrev, name := "+"+off, "<+"+off+">-"+off
	if east < 0 {
		abbrev, name = "-"+off, "<-"+off+">+"+off
	}
	return Zone{name: name, loc: time.FixedZone(abbrev, int(east))}
}

// IntervalZone is the zone of SET TIME ZONE INTERVAL '...': the interval
// is the offset east of UTC and may have no months or days.
func IntervalZone(iv IntervalValue) (Zone, error) {
	setting := "INTERVAL '" + string(AppendInterval(nil, iv)) + "'"
	detail := ""
	switch {
	case iv.Months != 0:
		detail = "Cannot specify months in time zone interval."
	case iv.Days != 0:
		detail = "Cannot specify days in time zone interval."
	}
	if detail != "" {
		return Zone{}, &errs.Error{Code: errs.InvalidParameterValue, SQLState: errs.SQLState(errs.New(errs.InvalidParameterValue, "")),
			Message: fmt.Sprintf("invalid value for parameter \"TimeZone\": \"%s\"", setting), Detail: detail}
	}
	return OffsetZone(iv.Micros / microsPerSecond), nil
}

// regionCache maps a name as written to its location and the database's
// spelling of it.
var regionCache sync.Map

type region struct {
	loc  *time.Location
	name string
}

// loadRegion finds a zone of the tz database by name: as written, then
// in the usual capitalizations of the database's names (the database's
// file names are case-sensitive, PostgreSQL's lookup is not).
func loadRegion(s string) (*time.Location, string, bool) {
	if v, ok := regionCache.Load(s); ok {
		r := v.(region)
		return r.loc, r.name, r.loc != nil
	}
	var r region
	if validRegionName(s) {
		for _, cand := range regionCandidates(s) {
			if l, err := time.LoadLocation(cand); err == nil {
				r = region{loc: l, name: cand}
				break
			}
		}
	}
	if r.loc != nil {
		// Only names found are kept: a column of arbitrary zone text
		// must not grow the cache without bound.
		regionCache.Store(s, r)
	}
	return r.loc, r.name, r.loc != nil
}

// validRegionName reports whether s may be looked up as a file of the
// database: letters, digits and _+-/ only, no empty or dot path elements.
func validRegionName(s string) bool {
	if s == "" || s == "Local" || strings.HasPrefix(s, "/") || strings.HasSuffix(s, "/") || strings.Contains(s, "//") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isAlpha(c) || isDigit(c) || c == '_' || c == '+' || c == '-' || c == '/') {
			return false
		}
	}
	return true
}

// regionCandidates are spellings of a zone name to try: as written, each
// word capitalized (america/new_york), the special upper-case names
// (EST5EDT, Etc/GMT+3, US/...), and all upper case.
func regionCandidates(s string) []string {
	low := strings.ToLower(s)
	title := []byte(low)
	up := true
	for i, c := range title {
		if up && c >= 'a' && c <= 'z' {
			title[i] = c - 'a' + 'A'
		}
		up = c == '/' || c == '_' || c == '-'
	}
	out := []string{s, string(title), strings.ToUpper(s)}
	if i := strings.LastIndexByte(low, '/'); i >= 0 {
		// Etc/GMT+3, US/Eastern style: the prefix capitalized, the last
		// element upper case; and lower-case short words (Port-au-Prince,
		// Dar_es_Salaam).
		out = append(out, string(title[:i+1])+strings.ToUpper(low[i+1:]))
		out = append(out, lowerShortWords(string(title)))
	}
	return out
}

// lowerShortWords lower-cases the particles of place names (au, es, de,
// of) after the first word of a path element.
func lowerShortWords(s string) string {
	for _, w := range []string{"Au", "Es", "De", "Of", "Da", "La"} {
		for _, sep := range []string{"-", "_"} {
			s = strings.ReplaceAll(s, sep+w+sep, sep+strings.ToLower(w)+sep)
		}
	}
	return s
}

// parsePOSIXZone reads a POSIX zone without daylight-saving rules: an
// optional name of three or more letters (or <...>) and an offset
// [+-]hh[:mm[:ss]] west of UTC. It returns the offset east of UTC in
// seconds, the zone's name as PostgreSQL shows it (the letters in upper
// case) and its abbreviation (the name without the offset).
func parsePOSIXZone(s string) (int64, string, string, bool) {
	rest := s
	var abbrev string
	quoted := false
	switch {
	case strings.HasPrefix(rest, "<"):
		end := strings.IndexByte(rest, '>')
		if end < 0 {
			return 0, "", "", false
		}
		abbrev, rest = rest[:end+1], rest[end+1:]
		quoted = true
	default:
		i := 0
		for i < len(rest) && isAlpha(rest[i]) {
			i++
		}
		if i != 0 && i < 3 {
			return 0, "", "", false
		}
		abbrev, rest = strings.ToUpper(rest[:i]), rest[i:]
	}
	if rest == "" {
		return 0, "", "", false
	}
	sign := int64(1)
	body := rest
	switch rest[0] {
	case '+':
		body = rest[1:]
	case '-':
		sign, body = -1, rest[1:]
	}
	parts := strings.Split(body, ":")
	if len(parts) > 3 {
		return 0, "", "", false
	}
	var secs int64
	for i, p := range parts {
		if p == "" || len(p) > 3 {
			return 0, "", "", false
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return 0, "", "", false
		}
		if i > 0 && n >= 60 {
			return 0, "", "", false
		}
		if i == 0 && n > 167 {
			return 0, "", "", false
		}
		secs = secs*60 + int64(n)
	}
	for range 3 - len(parts) {
		secs *= 60
	}
	short := abbrev
	if quoted {
		short = abbrev[1 : len(abbrev)-1]
	}
	return -sign * secs, abbrev + rest, short, true
}

// evalZone reads the zone argument of AT TIME ZONE, timezone() and
// date_trunc's third argument as PostgreSQL's timestamptz_zone does: a
// time zone abbreviation first (fixed offsets, est, cet, z), then a zone
// name of the database or a POSIX zone. An interval zone has its own
// overload.
func evalZone(name string) (*time.Location, error) {
	if loc, ok := zoneCache.Load("at:" + name); ok {
		return loc.(*time.Location), nil
	}
	low := lowerUnits(name)
	var loc *time.Location
	if off, ok := zoneAbbrevs[low]; ok {
		loc = time.FixedZone(strings.ToUpper(low), off)
	} else if strings.EqualFold(name, "utc") {
		loc = time.UTC
	} else if l, _, ok := loadRegion(name); ok {
		loc = l
	} else if off, _, abbrev, ok := parsePOSIXZone(name); ok {
		loc = time.FixedZone(abbrev, int(off))
	} else {
		return nil, errs.Newf(errs.InvalidParameterValue, "time zone %q not recognized", name)
	}
	zoneCache.Store("at:"+name, loc)
	return loc, nil
}

// CastZone is Cast in the session time zone z: the casts between
// timestamptz and timestamp, date and text read the instant as a
// wall-clock time of z.
func CastZone(v Value, t Type, explicit bool, z Zone) (Value, error) {
	if z.IsUTC() {
		return Cast(v, t, explicit)
	}
	from := v.kind
	switch {
	case t.ID == TimeTZ && from != Text:
		return castToTimeTZ(v, t, z)
	case from == Text && t.ID == TimeTZ || from == Text && t.ID == ArrayOf(TimeTZ):
		return ParseZone(t, v.s, z)
	case (t.ID == Text || t.ID == Varchar) && hasTimestampTZ(from):
		return Cast(MakeText(castTextZone(v, t, z)), t, explicit)
	case from == Text && hasTimestampTZ(t.ID):
		return ParseZone(t, v.s, z)
	case from == TimestampTZ && (t.ID == Timestamp || t.ID == Date || t.ID == Time):
		local, err := z.toLocal(v.n)
		if err != nil {
			return Null, err
		}
		return Cast(MakeTimestamp(local), t, explicit)
	case (from == Timestamp || from == Date) && t.ID == TimestampTZ:
		ts := v.n
		if from == Date {
			var err error
			if ts, err = dateToTimestamp(v.Days()); err != nil {
				return Null, err
			}
		}
		utc, err := z.fromLocal(ts)
		if err != nil {
			return Null, err
		}
		return Cast(MakeTimestampTZ(utc), t, explicit)
	}
	return Cast(v, t, explicit)
}
