package types

import (
	"encoding/binary"
	"strings"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
)

// TIME WITH TIME ZONE (timetz) is a time of day and a UTC offset, kept
// as PostgreSQL keeps them: microseconds since midnight (0 to 24:00:00)
// in the word, and the zone in seconds west of UTC (positive west, as
// TimeTzADT.zone) in aux, within ±15:59:59. It has a precision
// (timetz(p)) like time.
//
// Two values compare by their UTC equivalents (the time plus the zone,
// not wrapped around midnight), then by zone, as timetz_cmp does, so
// 10:00+02 and 09:00+01 are different values that compare unequal, and
// equality is equality of both parts.
//
// Wherever PostgreSQL takes a zone's offset on the current date (text
// without an offset, time to timetz, AT TIME ZONE a region name), the
// zone's current date is the transaction's start (Zone.OnDate), as
// PostgreSQL's GetCurrentDateTime and timetz_zone read it. Where there is
// no current date (a view's query, which is maintained at any later
// time), only a zone whose offset does not depend on the date may be used
// there: UTC, a fixed offset, an abbreviation, or a region with no
// transition since 2025; the binder refuses the others when the view is
// created (ReadsCurrentDate, ZoneReadsCurrentDate).

// MakeTimeTZ returns a TIMETZ of micros since midnight in the zone
// zoneWest seconds west of UTC.
func MakeTimeTZ(micros int64, zoneWest int32) Value {
	return Value{kind: TimeTZ, n: micros, aux: int64(zoneWest)}
}

// tzDispLimit bounds a zone's offset: |offset| < 16 hours (TZDISP_LIMIT).
const tzDispLimit = 16 * 3600

// isTimeOfDay reports whether id is time or timetz.
func isTimeOfDay(id TypeID) bool { return id == Time || id == TimeTZ }

// AppendTimeTZ appends a TIMETZ's text: the time as time prints it, then
// the offset east of UTC as +hh[:mm[:ss]].
func AppendTimeTZ(dst []byte, micros int64, zoneWest int32) []byte {
	return appendOffset(AppendTime(dst, micros), -int64(zoneWest))
}

// compareTimeTZ is timetz_cmp: by UTC equivalent, then by zone.
func compareTimeTZ(a, b Value) int {
	ta, tb := a.n+a.aux*microsPerSecond, b.n+b.aux*microsPerSecond
	if c := cmpInt64(ta, tb); c != 0 {
		return c
	}
	return cmpInt64(a.aux, b.aux)
}

// dateFreeRef is the instant from which a region's offset must not change
// for it to count as fixed where PostgreSQL would read the offset on the
// current date.
var dateFreeRef = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// dateFreeOffset returns loc's offset east of UTC, in seconds, when it is
// the same on every date from dateFreeRef on; ok is false for a zone whose
// offset changes (daylight saving time).
func dateFreeOffset(loc *time.Location) (off int64, ok bool) {
	if loc == nil {
		return 0, true
	}
	return offsetFrom(loc, dateFreeRef)
}

// ZoneReadsCurrentDate reports whether the offset of zone z's location
// depends on the date, so that PostgreSQL's reading of it on the current
// date gives a result that depends on when it is computed.
func ZoneReadsCurrentDate(z Zone) bool {
	_, ok := dateFreeOffset(z.loc)
	return !ok
}

// currentDateOffset returns z's offset east of UTC, in seconds, at the
// time of day tod (microseconds) on the current date, as time_timetz and
// DecodeTimeOnly find it: the date of the transaction's start in z, with
// that date's clock reading tod resolved as DetermineTimeZoneOffset
// resolves a local time. what names the conversion for the error where
// z has no current date and its offset depends on the date.
func currentDateOffset(z Zone, tod int64, what string) (int64, error) {
	if off, ok := dateFreeOffset(z.loc); ok {
		return off, nil
	}
	if !z.dated {
		return 0, zoneChangesOffset(what, z.Name())
	}
	local := floorDiv(z.today, microsPerSecond) + z.offsetAt(z.today)
	day := floorDiv(local, 86400) * 86400
	return localOffset(z.loc, day+floorDiv(tod, microsPerSecond)), nil
}

// fixedOffset returns loc's offset east of UTC when loc has only ever had
// that one offset (pg_get_timezone_offset); ok is false otherwise.
func fixedOffset(loc *time.Location) (off int64, ok bool) {
	return offsetFrom(loc, time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC))
}

// offsetFrom returns loc's offset at from when no later transition
// changes it (the tz database has transitions that change only the
// abbreviation, or nothing, as in the 2038 entries of some zones); ok is
// false when one does, or when there are too many to follow.
func offsetFrom(loc *time.Location, from time.Time) (int64, bool) {
	t := from.In(loc)
	_, off := t.Zone()
	for range 16 {
		_, end := t.ZoneBounds()
		if end.IsZero() {
			return int64(off), true
		}
		t = end.In(loc)
		if _, o := t.Zone(); o != off {
			return 0, false
		}
	}
	return 0, false
}

// zoneChangesOffset is the error where PostgreSQL would take a zone's
// offset on the current date and the zone's offset depends on the date.
func zoneChangesOffset(what, zone string) error {
	return errs.Newf(errs.FeatureNotSupported,
		"%s takes the offset time zone %s has on the current date, which changes with daylight saving time, so it is not supported in a view (a maintained view must not depend on when it is computed): write the offset (+02, -05:30) or a fixed zone",
		what, quoteInput(zone))
}

// CastReadsCurrentDate reports whether a cast from type from to timetz
// (or between their arrays) may read session zone z's offset on the
// current date: from time, or from text (which may have no offset), in a
// zone whose offset depends on the date.
func CastReadsCurrentDate(from, to TypeID, z Zone) bool {
	return ZoneReadsCurrentDate(z) && CastMayReadCurrentDate(from, to)
}

// CastMayReadCurrentDate reports whether a cast from type from to timetz
// (or between their arrays) reads the session zone's offset on the
// current date in some zone.
func CastMayReadCurrentDate(from, to TypeID) bool {
	if from.IsArray() && to.IsArray() {
		from, to = from.Elem(), to.Elem()
	}
	if to != TimeTZ {
		return false
	}
	switch from {
	case Time, Text, Varchar, Unknown:
		return true
	}
	return false
}

// CheckTimeTZCast returns the error a cast from type from to timetz (or
// between their arrays) gives in session zone z when it would take z's
// offset on the current date and z has none (a view's query): from time,
// or from text without an offset, in a zone whose offset changes. The
// binder refuses such a cast of a column up front rather than failing on
// each row.
func CheckTimeTZCast(from, to TypeID, z Zone) error {
	if z.dated || !CastReadsCurrentDate(from, to, z) {
		return nil
	}
	if from.IsArray() {
		from = from.Elem()
	}
	if from == Time {
		return zoneChangesOffset("the cast of time to time with time zone", z.Name())
	}
	return zoneChangesOffset("the cast of text to time with time zone (for text without an offset)", z.Name())
}

// ParseTimeTZ parses TIMETZ text as timetz_in does: a time of day, possibly
// after a date, and a zone (an offset, an abbreviation, or a region name,
// which then needs the date unless its offset never changes). Text
// without a zone takes z's offset: on the text's date when it has one,
// else z's offset if it does not depend on the date.
func ParseTimeTZ(s string, z Zone) (micros int64, zoneWest int32, err error) {
	syntax := func() error {
		return errs.Newf(errs.InvalidDatetimeFormat, "invalid input syntax for type time with time zone: %s", quoteInput(s))
	}
	overflow := func() error {
		return errs.Newf(errs.DatetimeOverflow, "date/time field value out of range: %s", quoteInput(s))
	}
	if strings.EqualFold(strings.TrimSpace(s), "allballs") {
		return 0, 0, nil
	}
	hasDate := false
	p, err := parseDateTimeText(Timestamp, "2000-01-01 "+s)
	if errs.CodeOf(err) == errs.DatetimeOverflow {
		return 0, 0, overflow()
	}
	if err != nil && errs.CodeOf(err) != errs.InvalidTimeZone && errs.CodeOf(err) != errs.InvalidParameterValue {
		// Text that holds a date of its own.
		if p, err = parseDateTimeText(Timestamp, s); err == nil {
			hasDate = true
		}
	}
	if err != nil {
		switch errs.CodeOf(err) {
		case errs.InvalidTimeZone, errs.InvalidParameterValue, errs.DatetimeOverflow:
			return 0, 0, err
		}
		return 0, 0, syntax()
	}
	if p.special != 0 {
		return 0, 0, syntax()
	}
	tod := ((p.hour*60+p.min)*60+p.sec)*microsPerSecond + p.usec
	if tod < 0 || tod > microsPerDay {
		return 0, 0, overflow()
	}
	var east int64
	switch {
	case p.fmask&fmTZ != 0 && p.tzLoc == nil:
		east = p.tzOffset
	case p.fmask&fmTZ != 0:
		// A region's offset needs the text's date unless the region has
		// only ever had one.
		if off, ok := fixedOffset(p.tzLoc); ok {
			east = off
		} else if !hasDate {
			return 0, 0, syntax()
		} else {
			east = zoneOffset(p, p.tzLoc)
		}
	case hasDate && z.loc != nil:
		east = zoneOffset(p, z.loc)
	default:
		if east, err = currentDateOffset(z, tod, "time with time zone input "+quoteInput(s)+" without an offset"); err != nil {
			return 0, 0, err
		}
	}
	if east <= -tzDispLimit || east >= tzDispLimit {
		return 0, 0, errs.Newf(errs.InvalidTimeZone, "time zone displacement out of range: %s", quoteInput(s))
	}
	return tod, int32(-east), nil
}

// castToTimeTZ converts v to TIMETZ t in the session time zone z: a time
// takes z's offset on the current date, a timestamptz
// the time of day and offset of its instant in z.
func castToTimeTZ(v Value, t Type, z Zone) (Value, error) {
	var tod, east int64
	switch v.kind {
	case TimeTZ:
		return MakeTimeTZ(roundTimePrecision(v.n, t.Precision), int32(v.aux)), nil
	case Time:
		off, err := currentDateOffset(z, v.n, "the cast of time to time with time zone")
		if err != nil {
			return Null, err
		}
		tod, east = v.n, off
	case TimestampTZ:
		if !isFiniteTimestamp(v.n) {
			// timestamptz_timetz gives NULL for the infinities.
			return Null, nil
		}
		east = z.offsetAt(v.n)
		_, tod = splitTimestamp(v.n + east*microsPerSecond)
	default:
		return Null, cannotCast(v.kind, t)
	}
	return MakeTimeTZ(roundTimePrecision(tod, t.Precision), int32(-east)), nil
}

// timetz ± interval moves the time of day by the interval's time part,
// wrapping around midnight; the zone stays.
func timeTZAddInterval(a, b Value) (Value, error) {
	return MakeTimeTZ(timeAddMicros(a.n, b.Interval().Micros).n, int32(a.aux)), nil
}
func intervalAddTimeTZ(a, b Value) (Value, error) { return timeTZAddInterval(b, a) }
func timeTZSubInterval(a, b Value) (Value, error) {
	return MakeTimeTZ(timeAddMicros(a.n, -b.Interval().Micros).n, int32(a.aux)), nil
}

// date + timetz is the instant at which that date's clocks in the zone
// read the time (datetimetz_timestamptz).
func dateAddTimeTZ(a, b Value) (Value, error) {
	ts, err := dateToTimestamp(a.Days())
	if err != nil || !isFiniteTimestamp(ts) {
		return MakeTimestampTZ(ts), err
	}
	r := ts + b.n + b.aux*microsPerSecond
	if !validTimestamp(r) {
		return Null, errDateRangeTimestamp
	}
	return MakeTimestampTZ(r), nil
}

func timeTZAddDate(a, b Value) (Value, error) { return dateAddTimeTZ(b, a) }

// timeTZAt is timetz_zone: the same instant of the day in another zone.
func timeTZAt(t Value, east int64) Value {
	tod := (t.n + (t.aux+east)*microsPerSecond) % microsPerDay
	if tod < 0 {
		tod += microsPerDay
	}
	return MakeTimeTZ(tod, int32(-east))
}

// timeTZAtZone is timetz AT TIME ZONE text in session zone z (for its
// current date): an abbreviation, a POSIX zone or a region name; a
// region's offset is the one it has at the transaction's start, as
// timetz_zone takes it.
func timeTZAtZone(z Zone) func(a []Value) (Value, error) {
	return func(a []Value) (Value, error) {
		loc, err := evalZone(a[0].s)
		if err != nil {
			return Null, err
		}
		off, ok := dateFreeOffset(loc)
		if !ok {
			if !z.dated {
				return Null, zoneChangesOffset("time with time zone AT TIME ZONE", a[0].s)
			}
			off = Zone{loc: loc}.offsetAt(z.today)
		}
		return timeTZAt(a[1], off), nil
	}
}

// AtZoneReadsCurrentDate reports whether timetz AT TIME ZONE zone reads
// the zone's offset on the current date: zone is a region whose offset
// depends on the date. A zone that is not valid does not (it fails
// alike whenever it is computed).
func AtZoneReadsCurrentDate(zone string) bool {
	loc, err := evalZone(zone)
	if err != nil {
		return false
	}
	_, ok := dateFreeOffset(loc)
	return !ok
}

// timeTZAtInterval is timetz AT TIME ZONE interval (east of UTC).
func timeTZAtInterval(a []Value) (Value, error) {
	off, err := intervalZoneOffset(a[0])
	if err != nil {
		return Null, err
	}
	// timetz_izone takes the interval's seconds as the zone, unbounded.
	return timeTZAt(a[1], off/microsPerSecond), nil
}

// parseTimeTZBinary decodes timetz_recv's format: int64 microseconds
// since midnight and int32 seconds west of UTC, big-endian.
func parseTimeTZBinary(src []byte, t Type) (Value, error) {
	if len(src) < 8 {
		return Null, errInsufficientData
	}
	tod := int64(binary.BigEndian.Uint64(src))
	if tod < 0 || tod > microsPerDay {
		return Null, errTimeRange
	}
	if len(src) < 12 {
		return Null, errInsufficientData
	}
	zone := int32(binary.BigEndian.Uint32(src[8:]))
	if zone <= -tzDispLimit || zone >= tzDispLimit {
		return Null, errs.New(errs.InvalidTimeZone, "time zone displacement out of range")
	}
	return MakeTimeTZ(roundTimePrecision(tod, t.Precision), zone), trailing(src, 12)
}

// appendTimeTZBinary appends timetz_send's format.
func appendTimeTZBinary(dst []byte, v Value) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(v.n))
	return binary.BigEndian.AppendUint32(dst, uint32(int32(v.aux)))
}

// timeTZPart is extract(unit FROM timetz) (numericResult) or date_part,
// as timetz_part computes them: a time's units, the zone's (east of UTC),
// and the epoch of the UTC equivalent.
func timeTZPart(numericResult bool) func([]Value) (Value, error) {
	part := intervalPart(numericResult)
	return func(a []Value) (Value, error) {
		low := lowerUnits(a[0].s)
		east := -a[1].aux
		switch decodeUnit(low, true) {
		case unitMicrosecond, unitMillisecond, unitSecond, unitMinute, unitHour:
			return part([]Value{a[0], MakeInterval(IntervalValue{Micros: a[1].n})})
		case unitEpoch:
			return part([]Value{a[0], MakeInterval(IntervalValue{Micros: a[1].n + a[1].aux*microsPerSecond})})
		case unitTimezone:
			return partResult{n: east}.value(numericResult), nil
		case unitTimezoneHour:
			return partResult{n: east / 3600}.value(numericResult), nil
		case unitTimezoneMinute:
			return partResult{n: east / 60 % 60}.value(numericResult), nil
		case unitNone:
			return Null, unitNotRecognized(low, TimeTZ)
		}
		return Null, unitNotSupported(low, TimeTZ)
	}
}

func init() {
	addComparisons(TimeTZ, TimeTZ, compareOps(compareTimeTZ))
	addBinary("+", TimeTZ, Interval, TimeTZ, timeTZAddInterval)
	addBinary("+", Interval, TimeTZ, TimeTZ, intervalAddTimeTZ)
	addBinary("-", TimeTZ, Interval, TimeTZ, timeTZSubInterval)
	addBinary("+", Date, TimeTZ, TimestampTZ, dateAddTimeTZ)
	addBinary("+", TimeTZ, Date, TimestampTZ, timeTZAddDate)
	addAggregate("min", TimeTZ, TimeTZ)
	addAggregate("max", TimeTZ, TimeTZ)
	addFunc("extract", Numeric, timeTZPart(true), Text, TimeTZ)
	addFunc("date_part", Float8, timeTZPart(false), Text, TimeTZ)
	addZoned("timezone", TimeTZ, timeTZAtZone, Text, TimeTZ)
	addFunc("timezone", TimeTZ, timeTZAtInterval, Interval, TimeTZ)
}
