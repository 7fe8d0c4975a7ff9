package types

import (
	"github.com/rockstream/rockstream/internal/errs"
)

// The functions and operators of the session time zone: each is
// registered with a builder that makes its evaluation for a zone (addZoned,
// addZonedBinary), which the binder calls with the statement's zone
// (Function.InZone, Operator.InZone). Their UTC evaluation is the one
// registered.

func init() {
	for _, numericResult := range []bool{true, false} {
		name := "extract"
		if !numericResult {
			name = "date_part"
		}
		replaceZoned(name, []TypeID{Text, TimestampTZ}, timestampTZPart(numericResult))
	}
	replaceZoned("date_trunc", []TypeID{Text, TimestampTZ}, func(z Zone) func([]Value) (Value, error) {
		if z.IsUTC() {
			return dateTrunc(TimestampTZ)
		}
		return func(a []Value) (Value, error) { return dateTruncIn(a[0], a[1], z.loc) }
	})
	replaceZoned("make_timestamptz", []TypeID{Int4, Int4, Int4, Int4, Int4, Float8}, func(z Zone) func([]Value) (Value, error) {
		local := makeTimestamp(Timestamp)
		return func(a []Value) (Value, error) {
			v, err := local(a)
			if err != nil {
				return Null, err
			}
			utc, err := z.fromLocal(v.n)
			if err != nil {
				return Null, err
			}
			return MakeTimestampTZ(utc), nil
		}
	})
	replaceZoned("age", []TypeID{TimestampTZ, TimestampTZ}, func(z Zone) func([]Value) (Value, error) {
		age := timestampAge(TimestampTZ)
		return func(a []Value) (Value, error) {
			l1, err := z.toLocal(a[0].n)
			if err != nil {
				return Null, err
			}
			l2, err := z.toLocal(a[1].n)
			if err != nil {
				return Null, err
			}
			return age([]Value{MakeTimestampTZ(l1), MakeTimestampTZ(l2)})
		}
	})
	replaceZoned("date", []TypeID{TimestampTZ}, func(z Zone) func([]Value) (Value, error) {
		return func(a []Value) (Value, error) {
			local, err := z.toLocal(a[0].n)
			if err != nil {
				return Null, err
			}
			return timestampDate([]Value{MakeTimestamp(local)})
		}
	})
	replaceZoned(SeriesRows, []TypeID{TimestampTZ, TimestampTZ, Interval}, func(z Zone) func([]Value) (Value, error) {
		return seriesWith(TimestampTZ, tstzAddInterval(z))
	})
	replaceZoned("to_timestamp", []TypeID{Text, Text}, func(z Zone) func([]Value) (Value, error) {
		return func(a []Value) (Value, error) { return toTimestampIn(a, z) }
	})
	addFunc("make_timestamptz", TimestampTZ, makeTimestampTZAt, Int4, Int4, Int4, Int4, Int4, Float8, Text).stable = true

	// Arithmetic and comparisons that read a timestamptz as a wall-clock
	// time: the session zone's days and months, and timestamp or date
	// operands taken in the session zone.
	replaceZonedBinary("+", TimestampTZ, Interval, tstzAddInterval)
	replaceZonedBinary("+", Interval, TimestampTZ, func(z Zone) func(a, b Value) (Value, error) {
		add := tstzAddInterval(z)
		return func(a, b Value) (Value, error) { return add(b, a) }
	})
	replaceZonedBinary("-", TimestampTZ, Interval, func(z Zone) func(a, b Value) (Value, error) {
		add := tstzAddInterval(z)
		return func(a, b Value) (Value, error) { return add(a, MakeInterval(negateForSub(b.Interval()))) }
	})
	for i, name := range comparisonNames {
		replaceZonedBinary(name, Timestamp, TimestampTZ, zonedCompare(i, func(z Zone, a, b Value) int {
			return compareLocalInstant(z, a.n, b.n)
		}))
		replaceZonedBinary(name, TimestampTZ, Timestamp, zonedCompare(i, func(z Zone, a, b Value) int {
			return -compareLocalInstant(z, b.n, a.n)
		}))
		replaceZonedBinary(name, Date, TimestampTZ, zonedCompare(i, func(z Zone, a, b Value) int {
			return compareDateInstant(z, a.Days(), b.n)
		}))
		replaceZonedBinary(name, TimestampTZ, Date, zonedCompare(i, func(z Zone, a, b Value) int {
			return -compareDateInstant(z, b.Days(), a.n)
		}))
	}
	replaceZonedBinary("||", anyNonArray, Text, func(z Zone) func(a, b Value) (Value, error) {
		return func(a, b Value) (Value, error) { return MakeText(castTextZone(a, Type{}, z) + b.s), nil }
	})
	replaceZonedBinary("||", Text, anyNonArray, func(z Zone) func(a, b Value) (Value, error) {
		return func(a, b Value) (Value, error) { return MakeText(a.s + castTextZone(b, Type{}, z)), nil }
	})
}

// replaceZoned makes the overload of name over args a function of the
// session time zone.
func replaceZoned(name string, args []TypeID, zoned func(Zone) func([]Value) (Value, error)) {
	for _, d := range functions[name] {
		if equalIDs(d.args, args) {
			d.eval, d.zoned, d.stable = zoned(UTCZone), zoned, true
			return
		}
	}
	panic("types: no overload to make zoned: " + name)
}

// replaceZonedBinary makes the operator l name r a function of the
// session time zone.
func replaceZonedBinary(name string, l, r TypeID, zoned func(Zone) func(a, b Value) (Value, error)) {
	for _, d := range binaryOps[name] {
		if d.args == [2]TypeID{l, r} {
			d.eval, d.zoned = zoned(UTCZone), zoned
			if d.op != nil {
				d.op.Eval, d.op.zoned = d.eval, zoned
			}
			return
		}
	}
	panic("types: no operator to make zoned: " + name)
}

// zonedCompare builds comparison i (=, <>, <, <=, >, >=) of an ordering
// that depends on the zone.
func zonedCompare(i int, c func(z Zone, a, b Value) int) func(Zone) func(a, b Value) (Value, error) {
	return func(z Zone) func(a, b Value) (Value, error) {
		return compareOps(func(a, b Value) int { return c(z, a, b) })[i]
	}
}

// compareLocalInstant orders a timestamp, taken in zone z, against an
// instant; a timestamp whose instant is out of range is beyond every
// finite instant.
func compareLocalInstant(z Zone, local, utc int64) int {
	t, err := z.fromLocal(local)
	if err != nil {
		if local > 0 {
			t = TimestampPosInfinity
		} else {
			t = TimestampNegInfinity
		}
		if t == utc {
			return -cmpInt64(utc, 0)
		}
	}
	return cmpInt64(t, utc)
}

// compareDateInstant orders a date, at midnight in zone z, against an
// instant.
func compareDateInstant(z Zone, days int32, utc int64) int {
	t, err := dateToTimestamp(days)
	if err != nil {
		if utc == TimestampPosInfinity {
			return -1
		}
		return 1
	}
	return compareLocalInstant(z, t, utc)
}

// tstzAddInterval adds an interval to a timestamptz as
// timestamptz_pl_interval does: months and then days on the wall-clock
// time of zone z, each result taking the zone's offset at its new
// wall-clock time, then the time part to the instant.
func tstzAddInterval(z Zone) func(a, b Value) (Value, error) {
	if z.IsUTC() {
		return tsAddInterval(TimestampTZ)
	}
	return func(a, b Value) (Value, error) {
		ts, iv := a.n, b.Interval()
		if !isFiniteTimestamp(ts) {
			return a, nil
		}
		for _, part := range []IntervalValue{{Months: iv.Months}, {Days: iv.Days}} {
			if part.Months == 0 && part.Days == 0 {
				continue
			}
			local, err := z.toLocal(ts)
			if err != nil {
				return Null, err
			}
			if local, err = timestampAddInterval(local, part); err != nil {
				return Null, err
			}
			if ts, err = z.fromLocal(local); err != nil {
				return Null, err
			}
		}
		r, ok := addInt64(ts, iv.Micros)
		if !ok || !validTimestamp(r) {
			return Null, errTimestampRange
		}
		return MakeTimestampTZ(r), nil
	}
}

// timestampTZPart is extract and date_part of a timestamptz in zone z:
// the fields of its wall-clock time, the zone fields of its offset, and
// the epoch of the instant.
func timestampTZPart(numericResult bool) func(Zone) func([]Value) (Value, error) {
	base := timestampPart(TimestampTZ, numericResult)
	return func(z Zone) func([]Value) (Value, error) {
		if z.IsUTC() {
			return base
		}
		return func(a []Value) (Value, error) {
			ts := a[1].n
			if !isFiniteTimestamp(ts) {
				return base(a)
			}
			switch decodeUnit(lowerUnits(a[0].s), true) {
			case unitEpoch:
				return base(a)
			case unitTimezone:
				return partResult{n: z.offsetAt(ts)}.value(numericResult), nil
			case unitTimezoneHour:
				return partResult{n: z.offsetAt(ts) / 3600}.value(numericResult), nil
			case unitTimezoneMinute:
				return partResult{n: z.offsetAt(ts) / 60 % 60}.value(numericResult), nil
			}
			local, err := z.toLocal(ts)
			if err != nil {
				return Null, err
			}
			return base([]Value{a[0], MakeTimestampTZ(local)})
		}
	}
}

// makeTimestampTZAt is make_timestamptz(year, month, day, hour, min, sec,
// zone): the wall-clock time of the zone, which is an offset
// (+05:30, east of UTC as ISO counts), an abbreviation or a zone name.
func makeTimestampTZAt(a []Value) (Value, error) {
	v, err := makeTimestamp(Timestamp)(a[:6])
	if err != nil {
		return Null, err
	}
	name := a[6].s
	local := v.n
	var off int64
	switch {
	case name != "" && (name[0] == '+' || name[0] == '-'):
		o, e := decodeTZOffset(name)
		if e != dtOK {
			return Null, errs.Newf(errs.InvalidParameterValue, "invalid input syntax for type %s: \"%s\"", "numeric time zone", name)
		}
		off = o
	case name != "" && isDigit(name[0]):
		return Null, &errs.Error{Code: errs.InvalidParameterValue, SQLState: errs.SQLState(errs.New(errs.InvalidParameterValue, "")),
			Message: "invalid input syntax for type numeric time zone: \"" + name + "\"",
			Hint:    "Numeric time zones must have \"-\" or \"+\" as first character."}
	default:
		loc, err := evalZone(name)
		if err != nil {
			return Null, err
		}
		off = localOffset(loc, floorDiv(local, microsPerSecond))
	}
	r, ok := subInt64(local, off*microsPerSecond)
	if !ok || !validTimestamp(r) {
		return Null, errTimestampRange
	}
	return MakeTimestampTZ(r), nil
}
