package types

import "github.com/rockstream/rockstream/internal/errs"

// IntervalFields is an INTERVAL type's field restriction, as SQL writes it
// after the type: INTERVAL DAY, INTERVAL YEAR TO MONTH, INTERVAL HOUR TO
// SECOND(3). The bits are PostgreSQL's INTERVAL_MASK values, which
// pg_query passes as the type's first modifier; 0 means no restriction.
//
// A restriction does two things, as in PostgreSQL. It gives a bare number
// in the input its unit: INTERVAL '90' DAY is 90 days, where '90' alone
// is 90 seconds. And it zeroes the fields to the right of its last one
// (truncating toward zero): INTERVAL '1 day 02:03' DAY is '1 day'. Fields
// to the left are kept: INTERVAL '3 days' HOUR is '3 days'.
type IntervalFields int32

// The fields, as PostgreSQL's INTERVAL_MASK(field) (src/include/utils/datetime.h).
const (
	IntervalMonth  IntervalFields = 1 << 1
	IntervalYear   IntervalFields = 1 << 2
	IntervalDay    IntervalFields = 1 << 3
	IntervalHour   IntervalFields = 1 << 10
	IntervalMinute IntervalFields = 1 << 11
	IntervalSecond IntervalFields = 1 << 12

	// intervalFullRange is the modifier of INTERVAL without fields.
	intervalFullRange = 0x7FFF
)

// intervalFieldNames are the valid restrictions, with the text
// format_type prints after "interval".
var intervalFieldNames = map[IntervalFields]string{
	IntervalYear:                 "year",
	IntervalMonth:                "month",
	IntervalDay:                  "day",
	IntervalHour:                 "hour",
	IntervalMinute:               "minute",
	IntervalSecond:               "second",
	IntervalYear | IntervalMonth: "year to month",
	IntervalDay | IntervalHour:   "day to hour",
	IntervalDay | IntervalHour | IntervalMinute:                  "day to minute",
	IntervalDay | IntervalHour | IntervalMinute | IntervalSecond: "day to second",
	IntervalHour | IntervalMinute:                                "hour to minute",
	IntervalHour | IntervalMinute | IntervalSecond:               "hour to second",
	IntervalMinute | IntervalSecond:                              "minute to second",
}

// intervalFieldsOf validates an INTERVAL's first type modifier.
func intervalFieldsOf(mod int32) (IntervalFields, error) {
	if mod == intervalFullRange {
		return 0, nil
	}
	f := IntervalFields(mod)
	if _, ok := intervalFieldNames[f]; !ok {
		return 0, errs.New(errs.InvalidParameterValue, "invalid INTERVAL type modifier")
	}
	return f, nil
}

// String returns the restriction as format_type prints it after
// "interval" ("day", "year to month"), or "" for none.
func (f IntervalFields) String() string { return intervalFieldNames[f] }

// bareUnit returns the unit of a number without one in interval input
// (DecodeInterval's use of the typmod for the rightmost field).
func (f IntervalFields) bareUnit() ivUnit {
	switch f {
	case IntervalYear:
		return ivYear
	case IntervalMonth, IntervalYear | IntervalMonth:
		return ivMonth
	case IntervalDay:
		return ivDay
	case IntervalHour, IntervalDay | IntervalHour:
		return ivHour
	case IntervalMinute, IntervalHour | IntervalMinute, IntervalDay | IntervalHour | IntervalMinute:
		return ivMinute
	}
	return ivSecond
}

// truncate zeroes the fields of iv to the right of the restriction's last
// field (AdjustIntervalForTypmod).
func (f IntervalFields) truncate(iv IntervalValue) IntervalValue {
	switch f {
	case IntervalYear:
		iv.Months = iv.Months / 12 * 12
		iv.Days, iv.Micros = 0, 0
	case IntervalMonth, IntervalYear | IntervalMonth:
		iv.Days, iv.Micros = 0, 0
	case IntervalDay:
		iv.Micros = 0
	case IntervalHour, IntervalDay | IntervalHour:
		iv.Micros = iv.Micros / microsPerHour * microsPerHour
	case IntervalMinute, IntervalHour | IntervalMinute, IntervalDay | IntervalHour | IntervalMinute:
		iv.Micros = iv.Micros / microsPerMinute * microsPerMinute
	}
	return iv
}

// applyIntervalTypmod gives iv type t's fields and fractional-second
// precision, as a cast to t or input of t does.
func applyIntervalTypmod(iv IntervalValue, t Type) IntervalValue {
	return roundIntervalPrecision(t.Fields.truncate(iv), t.Precision)
}
