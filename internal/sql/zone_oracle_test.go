package sql

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
)

// oracleZones are session time zones with what makes zones hard: daylight
// saving in both hemispheres, half- and quarter-hour offsets, a
// half-hour daylight shift (Lord Howe), offsets with seconds before
// standard time, fixed offsets and POSIX zones.
var oracleZones = []string{
	"Europe/Berlin", "America/New_York", "Asia/Kolkata", "America/St_Johns", "Australia/Lord_Howe",
	"Pacific/Chatham", "Asia/Kathmandu", "Europe/Dublin", "America/Sao_Paulo", "Europe/Moscow",
	"UTC+3", "<+02>-02", "-4.5", "EST5EDT", "Etc/GMT-14",
}

// TestOracleSessionZones evaluates what depends on the session time zone
// in many zones, here and in PostgreSQL with the same TimeZone, and
// demands the same text.
func TestOracleSessionZones(t *testing.T) {
	exprs := []string{
		"timestamptz '2026-03-29 02:30'", "timestamptz '2026-10-25 02:30'", "timestamptz '2026-03-08 02:30'",
		"timestamptz '2026-11-01 01:30'", "timestamptz '1800-01-01 00:00+00'", "timestamptz '1900-06-01 12:00+00'",
		"timestamptz '2026-06-01 12:00 America/Chicago'", "timestamptz '2026-06-01 12:00+05:45'",
		"timestamptz '2026-01-01 00:00+00'::timestamp", "timestamptz '2026-01-01 00:00+00'::date",
		"timestamp '2026-03-29 02:30'::timestamptz", "timestamp '2026-10-25 02:30'::timestamptz",
		"date '2026-03-29'::timestamptz", "timestamptz '2026-01-01 00:00+00'::text",
		"ARRAY[timestamptz '2026-01-01 00:00+00', NULL]::text", "'2026-07-01 00:00'::timestamptz = timestamp '2026-07-01 00:00'",
		"timestamptz '2026-07-01 00:00+00' < timestamp '2026-07-01 00:00'", "date '2026-07-01' < timestamptz '2026-06-30 23:00+00'",
		"timestamptz '2026-03-28 12:00+00' + interval '1 day'", "timestamptz '2026-03-28 12:00+00' + interval '24 hours'",
		"timestamptz '2026-01-31 12:00+00' + interval '1 month'", "timestamptz '2026-10-26 12:00+00' - interval '1 day'",
		"interval '1 mon 1 day 1 hour' + timestamptz '2026-03-01 00:30+00'",
		"date_trunc('day', timestamptz '2026-03-29 12:00+00')", "date_trunc('week', timestamptz '2026-10-28 12:00+00')",
		"date_trunc('hour', timestamptz '2026-10-25 01:30+00')", "date_trunc('month', timestamptz '2026-04-01 00:30+00')",
		"date_trunc('year', timestamptz '2026-01-01 00:30+00')", "date_trunc('day', timestamptz '2026-03-29 12:00+00', 'Asia/Tokyo')",
		"extract(hour from timestamptz '2026-07-01 12:00+00')", "extract(day from timestamptz '2026-07-01 23:30+00')",
		"extract(timezone from timestamptz '2026-07-01 12:00+00')", "extract(timezone_hour from timestamptz '2026-07-01 12:00+00')",
		"extract(timezone_minute from timestamptz '2026-07-01 12:00+00')", "extract(epoch from timestamptz '2026-07-01 12:00+00')",
		"date_part('dow', timestamptz '2026-07-04 23:30+00')", "extract(julian from timestamptz '2026-07-01 22:00+00')",
		"to_char(timestamptz '2026-07-01 12:00+00', 'YYYY-MM-DD HH24:MI:SS TZ tz OF TZH:TZM')",
		"to_char(timestamptz '2026-01-01 12:00+00', 'FMOF')", "to_char(timestamptz '1850-01-01 12:00+00', 'OF TZH TZM')",
		"make_timestamptz(2026, 3, 29, 2, 30, 0)", "make_timestamptz(2026, 10, 25, 2, 30, 0)", "make_timestamptz(2026, 6, 1, 0, 0, 0, 'UTC')",
		"age(timestamptz '2026-04-01 00:00+00', timestamptz '2026-03-01 00:00+00')",
		"age(timestamptz '2026-11-01 00:30+00', timestamptz '2026-10-01 23:30+00')",
		"date(timestamptz '2026-07-01 23:30+00')", "to_timestamp('2026-03-29 02:30', 'YYYY-MM-DD HH24:MI')",
		"to_timestamp('2026-07-01 12:00 +03', 'YYYY-MM-DD HH24:MI TZH')",
		"timestamptz '2026-07-01 00:00+00' || ''", "concat(timestamptz '2026-07-01 00:00+00', 'x')",
		"format('%s', timestamptz '2026-07-01 00:00+00')", "timestamptz '2026-07-01 00:00+00' AT TIME ZONE 'UTC'",
		"timestamp '2026-07-01 00:00' AT TIME ZONE 'America/Los_Angeles'", "timestamptz 'infinity'", "timestamptz '-infinity'::timestamp",
		"timestamptz '2026-07-01 00:00+00' AT TIME ZONE interval '+03:30'",
	}
	for _, zone := range oracleZones {
		compareWithPostgresIn(t, zone, exprs)
	}
}

// TestOracleSessionZoneInstants is a property test: random instants, many
// near daylight-saving transitions, in random zones, through every
// operation that reads the session zone, give PostgreSQL's text.
func TestOracleSessionZoneInstants(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	// Transitions of the oracle zones, within a few hours of which the
	// instants fall.
	transitions := []string{
		"2026-03-29 01:00+00", "2026-10-25 01:00+00", "2026-03-08 07:00+00", "2026-11-01 06:00+00",
		"2026-04-05 15:00+00", "2026-10-04 15:30+00", "1918-04-15 01:00+00", "1970-01-01 00:00+00",
		"2011-03-27 02:00+00", "2014-10-26 02:00+00", "2038-03-28 01:00+00", "1891-03-15 23:00+00",
	}
	units := []string{"microseconds", "second", "minute", "hour", "day", "week", "month", "quarter", "year", "decade", "century"}
	fields := []string{"year", "month", "day", "hour", "minute", "second", "dow", "doy", "isodow", "week", "timezone", "timezone_hour", "timezone_minute", "epoch"}
	steps := []string{"1 day", "-1 day", "1 month", "1 hour", "1 mon 1 day", "-2 mon 3 days 4 hours", "7 days", "30 minutes"}
	formats := []string{"YYYY-MM-DD HH24:MI:SS OF", "HH12 AM TZ", "TZH:TZM Dy DD Mon", "IYYY-IW-ID tz"}
	byZone := map[string][]string{}
	for range 600 {
		zone := oracleZones[r.Intn(len(oracleZones))]
		base := transitions[r.Intn(len(transitions))]
		offset := fmt.Sprintf("%d seconds", r.Intn(6*3600)-3*3600)
		at := fmt.Sprintf("(timestamptz '%s' + interval '%s')", base, offset)
		local := fmt.Sprintf("(timestamp '%s' + interval '%s')", base[:len(base)-3], offset)
		var e string
		switch r.Intn(9) {
		case 0:
			e = at
		case 1:
			e = at + "::timestamp"
		case 2:
			e = local + "::timestamptz"
		case 3:
			e = fmt.Sprintf("date_trunc('%s', %s)", units[r.Intn(len(units))], at)
		case 4:
			e = fmt.Sprintf("extract(%s from %s)", fields[r.Intn(len(fields))], at)
		case 5:
			e = fmt.Sprintf("%s + interval '%s'", at, steps[r.Intn(len(steps))])
		case 6:
			e = fmt.Sprintf("to_char(%s, '%s')", at, formats[r.Intn(len(formats))])
		case 7:
			e = fmt.Sprintf("(%s::text)::timestamptz", local)
		case 8:
			e = fmt.Sprintf("date_trunc('day', %s)::date", at)
		}
		byZone[zone] = append(byZone[zone], e)
	}
	for zone, exprs := range byZone {
		compareWithPostgresIn(t, zone, exprs)
	}
}
