package types

import (
	"strings"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
)

// AT TIME ZONE, which PostgreSQL's parser writes as timezone(zone, x):
// a timestamptz shown as the wall-clock time of a zone, or a wall-clock
// timestamp of a zone taken as a timestamptz. Zones are region names of
// the time zone database (Europe/Paris, America/New_York) and UTC; a
// wall-clock time that a daylight-saving transition skips or repeats
// resolves as PostgreSQL resolves it.
//
// Abbreviations (EST, CET), POSIX-style zones (UTC+3) and interval
// offsets are rejected: PostgreSQL reads them through its own table of
// abbreviations and sign conventions, which RockStream does not
// reproduce.

func init() {
	addFunc("timezone", TimestampTZ, timestampAtZone, Text, Timestamp)
	addFunc("timezone", Timestamp, timestampTZAtZone, Text, TimestampTZ)
	addUnsupported("timezone", "interval time zones are not supported", TimestampTZ, Interval, Timestamp)
	addUnsupported("timezone", "interval time zones are not supported", Timestamp, Interval, TimestampTZ)
	addPhantom("timezone", []TypeID{Text, phantomTime}, []TypeID{Interval, phantomTime})
}

// ZoneSupported reports whether AT TIME ZONE accepts zone: UTC, GMT, Z,
// or a name of the time zone database with a slash (Europe/Paris,
// Etc/GMT+3), which PostgreSQL reads from the same database.
func ZoneSupported(zone string) bool {
	switch strings.ToLower(zone) {
	case "utc", "gmt", "z":
		return true
	}
	return strings.Contains(zone, "/")
}

// atZone resolves a zone name, failing as PostgreSQL does for an unknown
// one.
func atZone(name string) (*time.Location, error) {
	if !ZoneSupported(name) {
		return nil, errs.Newf(errs.FeatureNotSupported,
			"time zone %q is not supported yet: use UTC or a region name such as Europe/Paris", name)
	}
	if strings.Contains(name, "/") {
		// The database's file names are case-sensitive; try the name as
		// written before the spellings loadZone derives from lower case.
		if loc, err := time.LoadLocation(name); err == nil {
			return loc, nil
		}
	}
	loc, ok := loadZone(lowerUnits(name))
	if !ok {
		return nil, errs.Newf(errs.InvalidParameterValue, "time zone %q not recognized", name)
	}
	return loc, nil
}

// timestampTZAtZone shows an instant as the wall-clock time of a zone.
func timestampTZAtZone(a []Value) (Value, error) {
	ts := a[1].n
	if !isFiniteTimestamp(ts) {
		return MakeTimestamp(ts), nil
	}
	loc, err := atZone(a[0].s)
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
	loc, err := atZone(a[0].s)
	if err != nil {
		return Null, err
	}
	f := fieldsOf(ts)
	off := zoneOffset(dtParsed{year: f.year, mon: f.month, day: f.day, hour: f.hour, min: f.minute, sec: f.second}, loc)
	r, ok := subInt64(ts, off*microsPerSecond)
	if !ok || !validTimestamp(r) {
		return Null, errTimestampRange
	}
	return MakeTimestampTZ(r), nil
}

// dateTruncZone is date_trunc(unit, timestamptz, zone): the instant is
// truncated as a wall-clock time of the zone. For days and longer units
// the truncated wall-clock time takes the zone's offset at that time, as
// PostgreSQL redetermines it; shorter units keep the instant's offset.
func dateTruncZone(a []Value) (Value, error) {
	ts := a[1].n
	if !isFiniteTimestamp(ts) {
		return a[1], nil
	}
	loc, err := atZone(a[2].s)
	if err != nil {
		return Null, err
	}
	_, off := time.Unix(floorDiv(ts, microsPerSecond), 0).In(loc).Zone()
	local, ok := addInt64(ts, int64(off)*microsPerSecond)
	if !ok || !validTimestamp(local) {
		return Null, errTimestampRange
	}
	v, err := dateTrunc(TimestampTZ)([]Value{a[0], MakeTimestampTZ(local)})
	if err != nil || v.IsNull() {
		return v, err
	}
	offset := int64(off)
	switch decodeUnit(lowerUnits(a[0].s), false) {
	case unitHour, unitMinute, unitSecond, unitMillisecond, unitMicrosecond:
	default:
		f := fieldsOf(v.n)
		offset = zoneOffset(dtParsed{year: f.year, mon: f.month, day: f.day, hour: f.hour, min: f.minute, sec: f.second}, loc)
	}
	r, ok := subInt64(v.n, offset*microsPerSecond)
	if !ok || !validTimestamp(r) {
		return Null, errTimestampRange
	}
	return MakeTimestampTZ(r), nil
}
