package runtime

import (
	"strings"
	"sync/atomic"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Column defaults that read the clock: `created_at timestamptz DEFAULT
// now()`. A default is bound once, when the table is created, but one
// that calls now(), current_timestamp or another function of the clock
// (sql.Clock) means the time of the statement that uses it, as in
// PostgreSQL: such a default is kept as its expression (clockDefault) and
// bound again, with the statement's clock, by the statement that fills
// the column. Its every row then gets that statement's one value. So is
// a default that converts time or text to time with time zone, which
// takes the offset of the session zone of the statement that uses it on
// that statement's date.

// standInClock is the time a clock default is bound at when its table is
// created, to check it and learn its type; the value is never used.
var standInClock = sql.Clock{Transaction: time.Unix(0, 0).UTC(), Statement: time.Unix(0, 0).UTC()}

// bindDefault binds column col's DEFAULT raw, of column type t.
func bindDefault(b *sql.Binder, raw *pg.Node, t types.Type, col string) (plan.Expr, error) {
	zone := b.Zone
	b.Clock, b.UsedClock, b.AnyZone = standInClock, false, true
	defer func() { b.Clock, b.UsedClock, b.AnyZone, b.Zone = sql.Clock{}, false, false, zone }()
	e, err := b.Scalar(nil, raw)
	if err != nil {
		return nil, err
	}
	if e, err = b.Assign(e, t, col); err != nil {
		return nil, err
	}
	if b.UsedClock {
		return &clockDefault{bound: e, raw: raw, typ: t, col: col, text: deparseExpr(raw), cat: b.Cat}, nil
	}
	return e, nil
}

// clockDefault is a DEFAULT that reads the clock. It is a plan.Expr for
// what shows it (its type, its text in pg_attrdef); evaluating it without
// a clock is an error, so that no path fills a column with the time the
// table was created.
type clockDefault struct {
	bound plan.Expr // bound at the stand-in clock
	raw   *pg.Node
	typ   types.Type
	col   string
	text  string // as written, for pg_attrdef and \d
	// cat is the catalog the default was bound in, for the SQL functions
	// it calls (a function a default calls cannot be dropped).
	cat sql.Catalog
	// last is the value at the last clock asked for: a statement fills
	// all its rows at one clock, so it binds the default once.
	last atomic.Pointer[clockValue]
}

type clockValue struct {
	clock sql.Clock
	v     types.Value
}

func (d *clockDefault) Type() types.Type { return d.typ }
func (d *clockDefault) String() string   { return d.text }
func (d *clockDefault) Eval(zset.Row) (types.Value, error) {
	return types.Null, errs.Newf(errs.Internal, "internal error: the default of column %q reads the clock and was evaluated without it", d.col)
}

// expr binds the default at clock.
func (d *clockDefault) expr(clock sql.Clock) (plan.Expr, error) {
	if clock.Transaction.IsZero() {
		return nil, errs.Newf(errs.Internal, "internal error: the default of column %q reads the clock, and this statement has none", d.col)
	}
	b := sql.Binder{Cat: d.cat, Clock: clock, Zone: clock.Zone}
	e, err := b.Scalar(nil, d.raw)
	if err != nil {
		return nil, err
	}
	return b.Assign(e, d.typ, d.col)
}

// at evaluates the default at clock.
func (d *clockDefault) at(clock sql.Clock) (types.Value, error) {
	if last := d.last.Load(); last != nil && last.clock == clock {
		return last.v, nil
	}
	e, err := d.expr(clock)
	if err != nil {
		return types.Null, err
	}
	v, err := e.Eval(nil)
	if err == nil {
		d.last.Store(&clockValue{clock: clock, v: v})
	}
	return v, err
}

// defaultExpr is column i's DEFAULT as an expression of a statement
// running at clock (UPDATE ... SET c = DEFAULT); nil when it has none.
func (o *object) defaultExpr(i int, clock sql.Clock) (plan.Expr, error) {
	if d, ok := o.defaults[i].(*clockDefault); ok {
		return d.expr(clock)
	}
	return o.defaults[i], nil
}

// clockOf is the statement's clock; zero for no parameters.
func (p *statementParams) clockOf() sql.Clock {
	if p == nil {
		return sql.Clock{}
	}
	return p.clock
}

// pgparseVersion is the parse tree version the parser writes, which
// Deparse checks.
var pgparseVersion = func() int32 {
	tree, err := pg.Parse("SELECT")
	if err != nil {
		return 0
	}
	return tree.Version
}()

// deparseExpr renders an expression as PostgreSQL prints it back.
func deparseExpr(n *pg.Node) string {
	tree := &pg.ParseResult{Version: pgparseVersion, Stmts: []*pg.RawStmt{{Stmt: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &pg.SelectStmt{
		TargetList: []*pg.Node{{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Val: n}}}}}}}}}}
	text, err := pg.Deparse(tree)
	if err != nil {
		return "?"
	}
	return strings.TrimPrefix(text, "SELECT ")
}
