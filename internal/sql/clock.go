package sql

import (
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// Clock is when the statement being bound runs, for the functions that
// read the time: now(), current_timestamp, transaction_timestamp(),
// localtimestamp and current_date are the transaction's start,
// statement_timestamp() the statement's, as in PostgreSQL. Each is bound
// as a constant, so every row of the statement sees the same value, and
// every statement of a transaction the same transaction time.
//
// The zero Clock is the binding of a view's query, which is bound once
// and read later: there the functions are refused (a maintained view must
// equal its query whenever it is read). A column default that reads the
// clock is bound again by each statement that uses it (runtime's
// defaults.go); UsedClock tells the binder's caller that it did.
// localtimestamp, localtime and current_date are the session time zone's
// wall-clock time and date at that instant (Binder.Zone), current_time
// its time of day with the zone's offset at that instant. The
// transaction's date is also the current date of the timetz conversions
// that read a zone's offset on it (types.Zone.OnDate): a binder with a
// clock binds them on it and sets UsedClock, one without refuses them
// where the zone's offset depends on the date.
type Clock struct {
	Transaction, Statement time.Time
	// Zone is the session time zone of the statement, for what a column
	// default that reads the clock binds (localtimestamp, current_date);
	// the statement's own expressions read Binder.Zone.
	Zone types.Zone
	// Unfixed, when not empty, refuses the functions whose values the
	// statement's caller must fix, those of the clock and random() and
	// setseed(), with 0A000 naming the function and giving this reason
	// (a member of a cluster running a statement without the values its
	// gateway fixes). A column default that reads the clock is refused
	// with it too: it is bound with the statement's Clock.
	Unfixed string
}

// unfixed is the error refusing what, a function the caller must fix the
// value of, or nil when the clock is not Unfixed.
func (c Clock) unfixed(loc int32, what string) error {
	if c.Unfixed == "" {
		return nil
	}
	return notSupported(loc, "%s is not supported here: %s", what, c.Unfixed)
}

// clockFunction binds a function of the clock called by name (now(),
// ...); ok is false for any other name.
func (ec *exprCtx) clockFunction(f *pg.FuncCall, name string) (plan.Expr, bool, error) {
	var at time.Time
	switch name {
	case "now", "transaction_timestamp":
		at = ec.st.b.Clock.Transaction
	case "statement_timestamp":
		at = ec.st.b.Clock.Statement
	default:
		return nil, false, nil
	}
	if len(f.Args) > 0 || f.AggStar || f.AggDistinct || len(f.AggOrder) > 0 || f.AggFilter != nil {
		return nil, false, nil // the usual checks word the error
	}
	if err := ec.st.b.Clock.unfixed(f.Location, name+"()"); err != nil {
		return nil, true, err
	}
	if at.IsZero() {
		if n := ec.st.b.temporalNow(f.Location, name); n != nil {
			return n, true, nil
		}
		return nil, true, clockRefused(f.Location, name+"()")
	}
	ec.st.b.UsedClock = true
	e, err := clockConst(at, types.TimestampTZ, -1, ec.st.b.Zone)
	return e, true, err
}

// clockValueFunction binds CURRENT_TIMESTAMP[(p)], CURRENT_TIME[(p)],
// LOCALTIMESTAMP[(p)], LOCALTIME[(p)] and CURRENT_DATE; ok is false for
// the other SQL value functions.
func (ec *exprCtx) clockValueFunction(f *pg.SQLValueFunction) (plan.Expr, bool, error) {
	var id types.TypeID
	switch f.Op {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
		id = types.TimestampTZ
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		id = types.Timestamp
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		id = types.Date
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIME, pg.SQLValueFunctionOp_SVFOP_LOCALTIME_N:
		id = types.Time
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME_N:
		id = types.TimeTZ
	default:
		return nil, false, nil
	}
	if err := ec.st.b.Clock.unfixed(f.Location, clockNames[f.Op]); err != nil {
		return nil, true, err
	}
	at := ec.st.b.Clock.Transaction
	if at.IsZero() {
		if f.Op == pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP {
			if n := ec.st.b.temporalNow(f.Location, "current_timestamp"); n != nil {
				return n, true, nil
			}
		}
		return nil, true, clockRefused(f.Location, clockNames[f.Op])
	}
	precision := int32(-1)
	switch f.Op {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N,
		pg.SQLValueFunctionOp_SVFOP_LOCALTIME_N, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME_N:
		precision = min(f.Typmod, 6)
	}
	ec.st.b.UsedClock = true
	e, err := clockConst(at, id, precision, ec.st.b.Zone)
	return e, true, err
}

var clockNames = map[pg.SQLValueFunctionOp]string{
	pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP:   "current_timestamp",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N: "current_timestamp",
	pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP:      "localtimestamp",
	pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:    "localtimestamp",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:        "current_date",
	pg.SQLValueFunctionOp_SVFOP_LOCALTIME:           "localtime",
	pg.SQLValueFunctionOp_SVFOP_LOCALTIME_N:         "localtime",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME:        "current_time",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME_N:      "current_time",
}

// clockRefused is the error for a function of the clock where the
// statement's time is not known.
func clockRefused(loc int32, what string) error {
	return notSupported(loc, "%s is not supported in a view: its result depends on when it is evaluated (queries, DML statements and column defaults may use it; a materialized view may compare now() or current_timestamp with its rows in a temporal filter)", what)
}

// temporalNow binds now() or current_timestamp in the query of a
// materialized view, where the binder allows temporal filters: a
// plan.Now, which only a temporal filter may read (diff builds it from
// the Filter conjuncts that compare it with the row); nil elsewhere.
func (b *Binder) temporalNow(loc int32, name string) *plan.Now {
	if !b.TemporalFilters {
		return nil
	}
	n := &plan.Now{Pos: int(loc) + 1}
	b.Nows = append(b.Nows, NowUse{Now: n, Name: name})
	return n
}

// NowUse is one now() or current_timestamp a view's query reads: the
// plan.Now it is bound as and the name it was called by.
type NowUse struct {
	Now  *plan.Now
	Name string
}

// clockConst is at as a constant of type id, with precision fractional
// digits of seconds (-1: all six), rounded as the type's cast rounds; a
// timestamp, date or time is the wall-clock time of the session zone z,
// a timetz that time of day with z's offset at that instant.
func clockConst(at time.Time, id types.TypeID, precision int32, z types.Zone) (plan.Expr, error) {
	v, err := types.FromGoTime(at.UTC(), types.TimestampTZ)
	if err == nil && id != types.TimestampTZ {
		v, err = types.CastZone(v, types.Of(id), false, z)
	}
	if err != nil {
		return nil, err
	}
	t := types.Of(id)
	if precision >= 0 {
		t.Precision = precision
		if v, err = types.Cast(v, t, false); err != nil {
			return nil, err
		}
	}
	return &plan.Const{Val: v, Typ: t}, nil
}
