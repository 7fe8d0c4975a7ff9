package plan

import (
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Now is now() (or current_timestamp) in the query of a materialized
// view: the time of the epoch that evaluates it, a timestamptz. It takes
// part only in a temporal filter, a Filter conjunct that compares it
// (plus or minus constant intervals) with an expression of the row; the
// circuit's temporal filter operator evaluates those conjuncts with the
// epoch's time and schedules the rows' entry and exit. Anywhere else the
// view is refused when it is created, and Eval fails.
type Now struct {
	// Pos is the 1-based position of the call in the statement's text,
	// for errors; it also keeps every Now a distinct pointer.
	Pos int
}

// Type implements Expr.
func (*Now) Type() types.Type { return types.Of(types.TimestampTZ) }

// Eval implements Expr: a Now is never evaluated as an expression.
func (*Now) Eval(zset.Row) (types.Value, error) {
	return types.Null, errs.New(errs.Internal, "internal error: now() of a view evaluated outside its temporal filter")
}

// String implements Expr.
func (*Now) String() string { return "now()" }

// ContainsNow reports whether e reads Now.
func ContainsNow(e Expr) bool {
	if _, ok := e.(*Now); ok {
		return true
	}
	for _, k := range Children(e) {
		if ContainsNow(k) {
			return true
		}
	}
	return false
}

// NowsOf appends to dst every Now of e.
func NowsOf(dst []*Now, e Expr) []*Now {
	if n, ok := e.(*Now); ok {
		return append(dst, n)
	}
	for _, k := range Children(e) {
		dst = NowsOf(dst, k)
	}
	return dst
}
