package types

import (
	"time"

	"github.com/rockstream/rockstream/internal/errs"
)

// AT TIME ZONE, which PostgreSQL's parser writes as timezone(zone, x):
// a timestamptz shown as the wall-clock time of a zone, or a wall-clock
// timestamp of a zone taken as a timestamptz. A zone is an abbreviation
// (EST, CET: a fixed offset), a region name of the time zone database
// (Europe/Paris, America/New_York), a POSIX zone (UTC+3, three hours
// west of UTC as POSIX counts) or an interval (east of UTC); a
// wall-clock time that a daylight-saving transition skips or repeats
// resolves as PostgreSQL resolves it.

func init() {
	addFunc("timezone", TimestampTZ, timestampAtZone, Text, Timestamp)
	addFunc("timezone", Timestamp, timestampTZAtZone, Text, TimestampTZ)
	addFunc("timezone", TimestampTZ, timestampAtInterval, Interval, Timestamp)
	addFunc("timezone", Timestamp, timestampTZAtInterval, Interval, TimestampTZ)
}

// timestampTZAtZone shows an instant as the wall-clock time of a zone.
func timestampTZAtZone(a []Value) (Value, error) {
	ts := a[1].n
	if !isFiniteTimestamp(ts) {
		return MakeTimestamp(ts), nil
	}
	loc, err := evalZone(a[0].s)
	if err != nil {
		return Null, err
	}
	sec := floorDiv(ts, microsPerSecond)
	_, off := time.Unix(sec, 0).In(loc).Zone()
	r, ok := addInt64(ts, int64(off)*microsPerSecond)
	if !ok || !validTimestamp(r) {
		return Null, errTimestampRange
	}
	return MakeTimestamp(r), nil
}

// timestampAtZone takes a wall-clock time of a zone as an instant.
func timestampAtZone(a []Value) (Value, error) {
	ts := a[1].n
	if !isFiniteTimestamp(ts) {
		return MakeTimestampTZ(ts), nil
	}
	loc, err := evalZone(a[0].s)
	if err != nil {
		return Null, err
	}
	off := localOffset(loc, floorDiv(ts, microsPerSecond))
	r, ok := subInt64(ts, off*microsPerSecond)
	if !ok || !validTimestamp(r) {
		return Null, errTimestampRange
	}
	return MakeTimestampTZ(r), nil
}

// dateTruncZone is date_trunc(unit, timestamptz, zone).
func dateTruncZone(a []Value) (Value, error) {
	if !isFiniteTimestamp(a[1].n) {
		return a[1], nil
	}
	loc, err := evalZone(a[2].s)
	if err != nil {
		return Null, err
	}
	return dateTruncIn(a[0], a[1], loc)
}

// dateTruncIn truncates the instant ts as a wall-clock time of loc. For
// days and longer units the truncated wall-clock time takes the zone's
// offset at that time, as PostgreSQL redetermines it; shorter units keep
// the instant's offset.
func dateTruncIn(unit, tsv Value, loc *time.Location) (Value, error) {
	ts := tsv.n
	if !isFiniteTimestamp(ts) {
		return tsv, nil
	}
	_, off := time.Unix(floorDiv(ts, microsPerSecond), 0).In(loc).Zone()
	local, ok := addInt64(ts, int64(off)*microsPerSecond)
	if !ok || !validTimestamp(local) {
		return Null, errTimestampRange
	}
	v, err := dateTrunc(TimestampTZ)([]Value{unit, MakeTimestampTZ(local)})
	if err != nil || v.IsNull() {
		return v, err
	}
	offset := int64(off)
	switch decodeUnit(lowerUnits(unit.s), false) {
	case unitHour, unitMinute, unitSecond, unitMillisecond, unitMicrosecond:
	default:
		offset = localOffset(loc, floorDiv(v.n, microsPerSecond))
	}
	r, ok := subInt64(v.n, offset*microsPerSecond)
	if !ok || !validTimestamp(r) {
		return Null, errTimestampRange
	}
	return MakeTimestampTZ(r), nil
}

// intervalZoneOffset is the offset east of UTC, in microseconds, of an
// interval time zone, which may have no months or days.
func intervalZoneOffset(v Value) (int64, error) {
	iv := v.Interval()
	if iv.Months != 0 || iv.Days != 0 {
		return 0, errs.Newf(errs.InvalidParameterValue, "interval time zone \"%s\" must not include months or days", AppendInterval(nil, iv))
	}
	// Whole seconds, as PostgreSQL takes them.
	return iv.Micros / microsPerSecond * microsPerSecond, nil
}

// timestampTZAtInterval is timestamptz AT TIME ZONE interval.
func timestampTZAtInterval(a []Value) (Value, error) {
	off, err := intervalZoneOffset(a[0])
	if err != nil {
		return Null, err
	}
	ts := a[1].n
	if !isFiniteTimestamp(ts) {
		return MakeTimestamp(ts), nil
	}
	r, ok := addInt64(ts, off)
	if !ok || !validTimestamp(r) {
		return Null, errTimestampRange
	}
	return MakeTimestamp(r), nil
}

// timestampAtInterval is timestamp AT TIME ZONE interval.
func timestampAtInterval(a []Value) (Value, error) {
	off, err := intervalZoneOffset(a[0])
	if err != nil {
		return Null, err
	}
	ts := a[1].n
	if !isFiniteTimestamp(ts) {
		return MakeTimestampTZ(ts), nil
	}
	r, ok := subInt64(ts, off)
	if !ok || !validTimestamp(r) {
		return Null, errTimestampRange
	}
	return MakeTimestampTZ(r), nil
}
