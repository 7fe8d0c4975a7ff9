package types

import (
	"github.com/rockstream/rockstream/internal/errs"
)

// Errors raised on hot paths are allocated once: an *errs.Error is never
// modified after creation (errs.WithPosition copies), so sharing is safe.
var (
	errInt2Range          = errs.New(errs.NumericOutOfRange, "smallint out of range")
	errInt4Range          = errs.New(errs.NumericOutOfRange, "integer out of range")
	errInt8Range          = errs.New(errs.NumericOutOfRange, "bigint out of range")
	errDivByZero          = errs.New(errs.DivisionByZero, "division by zero")
	errFloatOverflow      = errs.New(errs.NumericOutOfRange, "value out of range: overflow")
	errFloatUnderflow     = errs.New(errs.NumericOutOfRange, "value out of range: underflow")
	errNumericOverflow    = errs.New(errs.NumericOutOfRange, "value overflows numeric format")
	errNumericFieldOvfl   = errs.New(errs.NumericOutOfRange, "numeric field overflow")
	errDateRange          = errs.New(errs.DatetimeOverflow, "date out of range")
	errDateRangeTimestamp = errs.New(errs.DatetimeOverflow, "date out of range for timestamp")
	errTimestampRange     = errs.New(errs.DatetimeOverflow, "timestamp out of range")
	errIntervalRange      = errs.New(errs.DatetimeOverflow, "interval out of range")
	errInfiniteDates      = errs.New(errs.DatetimeOverflow, "cannot subtract infinite dates")
	errInfiniteTimestamps = errs.New(errs.DatetimeOverflow, "cannot subtract infinite timestamps")
)

// intRangeError returns the overflow error of the integer kind k.
func intRangeError(k TypeID) error {
	switch k {
	case Int2:
		return errInt2Range
	case Int4:
		return errInt4Range
	}
	return errInt8Range
}

// invalidSyntax returns PostgreSQL's 22P02 error for text that is not a
// valid value of type t.
func invalidSyntax(t TypeID, s string) error {
	return errs.Newf(errs.InvalidTextRep, "invalid input syntax for type %s: %s", t.baseName(), quoteInput(s))
}

// quoteInput double-quotes s as PostgreSQL's messages quote input text
// (verbatim, without escaping).
func quoteInput(s string) string { return `"` + s + `"` }
