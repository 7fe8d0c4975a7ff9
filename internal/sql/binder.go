package sql

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// Binder binds statements against a catalog. Params, when set, supplies
// the values of $1..$n; ParamTypes their types (Unknown where not known;
// the binder fills in the types it infers).
//
// Bound plans keep the Params pointer and read the values through it when
// they run, so it must be set before binding; LIMIT and OFFSET read
// parameter values at bind time. A Binder is not safe for concurrent use.
type Binder struct {
	Cat        Catalog
	Params     *[]types.Value
	ParamTypes []types.Type
	// Clock is when the statement runs, for now() and the other
	// functions of the time (clock.go); zero for a view's query.
	Clock Clock
	// UsedClock is set once the binder has bound a function of the
	// clock: what it bound holds the Clock's time as a constant.
	UsedClock bool
	// UsedSession is set once the binder has bound something that reads
	// the session or its catalog when it runs, or read them while binding:
	// a system function, an OID alias type's name lookup, a per-row
	// subquery. What it bound holds the catalog it was bound against.
	UsedSession bool
	// UsedFunctions lists the signatures of the SQL functions the binder
	// inlined (functions.go), each once: what it bound depends on them.
	UsedFunctions []string
	fnDepth       int
	// Zone is the session time zone (the TimeZone setting): every
	// expression whose result depends on it is bound with it (a cast's
	// plan.Cast.Zone, types.Function.InZone, types.Operator.InZone), so
	// a bound plan evaluates alike wherever it runs. A materialized view
	// is bound with the zone its creating session had.
	Zone types.Zone
	// Random is the session's generator for random() and setseed()
	// (random.go); nil where they are refused (a view's query, a column
	// default).
	Random *types.Random
	// UsedRandom is set once the binder has bound random() or setseed().
	UsedRandom bool
	// TemporalFilters, set when binding the query of a materialized view,
	// binds now() and current_timestamp as plan.Now (clock.go), each
	// recorded in Nows: the caller refuses the view unless its circuit
	// reads every one in a temporal filter.
	TemporalFilters bool
	Nows            []NowUse
	// AnyZone, set when binding a column default, which each statement
	// that uses it binds again in its own session zone, makes every
	// conversion that reads a zone's offset on the current date read the
	// clock (UsedClock), whatever Zone is.
	AnyZone bool
}

// bindState is the state of one call into the binder: it is shared by the
// query, its subqueries, CTEs and expanded views.
type bindState struct {
	b *Binder
	// locs holds the statement position of bound column references,
	// literals and parameters, for errors found after binding (grouping).
	locs map[plan.Expr]int32
	// params holds the parameter nodes bound while their type was Unknown,
	// by number, so that a type inferred later reaches all of them.
	params map[int][]*plan.Param
	// views is the stack of views being expanded, to detect cycles.
	views []string
	// outer is the name space of the queries around the subquery being
	// bound (nil outside subqueries in expressions).
	outer *outerScope
	// noSubLinks, when set, refuses subqueries in expressions with this
	// message; sawSubLink records that one was refused.
	noSubLinks string
	sawSubLink bool
	// wins collects the window function calls of the query level whose
	// select list and ORDER BY are being bound (nil elsewhere).
	wins *winCollector
	// recursions numbers the recursive queries bound, to pair each with
	// its working table.
	recursions int
	// apply, while a subquery is bound for per-row evaluation (apply.go),
	// collects its references to the query around it.
	apply *applyScope
	// fnArgs, while the body of a SQL function is bound (functions.go),
	// are the expressions its parameters $1..$n stand for (fnBody is
	// set then, also for a function without parameters).
	fnArgs []plan.Expr
	fnBody bool
}

// maxViewDepth bounds the nesting of views on views.
const maxViewDepth = 64

func newBindState(b *Binder) *bindState {
	if !b.Clock.Transaction.IsZero() {
		// The current date, where a conversion reads the session zone's
		// offset on it (time with time zone), is the transaction's.
		b.Zone = b.Zone.OnDate(b.Clock.Transaction)
	}
	return &bindState{b: b, locs: map[plan.Expr]int32{}, params: map[int][]*plan.Param{}}
}

// Query binds a SelectStmt node (SELECT, VALUES, set operations) into a
// plan whose Columns() carry the output names PostgreSQL would give
// (?column? for unnamed expressions). ORDER BY/LIMIT/OFFSET become Sort and
// Limit at the top of the plan. Anything outside the supported set fails
// with 0A000 naming the construct.
//
// When ORDER BY sorts by values that are not output columns, the Sort
// (and Limit) run over the output columns plus those hidden ones, and a
// Project above them drops the hidden columns.
func (b *Binder) Query(stmt *pg.Node) (plan.Node, error) {
	sel, err := selectOf(stmt)
	if err != nil {
		return nil, err
	}
	st := newBindState(b)
	n, err := st.query(sel, queryOpts{top: true, resolveUnknowns: true}, nil)
	if err != nil {
		return nil, err
	}
	if err := compositeColumn(n.Columns()); err != nil {
		return nil, err
	}
	if err := st.checkParams(); err != nil {
		return nil, err
	}
	return n, nil
}

// InsertQuery binds the source of INSERT INTO ... SELECT/VALUES: the
// query's output columns are converted to the types of targets by
// assignment rules, as PostgreSQL converts an INSERT's source. Unknown
// literals in the select list or VALUES are parsed as the target type
// (INSERT INTO t(d) SELECT '2026-01-02' stores a date). The result has
// exactly the target columns (their names and types). DEFAULT is not
// accepted here: the caller binds rows with DEFAULT item by item with
// Scalar.
func (b *Binder) InsertQuery(stmt *pg.Node, targets []plan.Column) (plan.Node, error) {
	n, _, err := b.insertQuery(stmt, targets, false)
	return n, err
}

// InsertQueryPrefix is InsertQuery for an INSERT without a column list:
// a source with fewer columns than targets fills the first ones, as in
// PostgreSQL (the others get their defaults). It returns how many.
func (b *Binder) InsertQueryPrefix(stmt *pg.Node, targets []plan.Column) (plan.Node, int, error) {
	return b.insertQuery(stmt, targets, true)
}

func (b *Binder) insertQuery(stmt *pg.Node, targets []plan.Column, prefix bool) (plan.Node, int, error) {
	sel, err := selectOf(stmt)
	if err != nil {
		return nil, 0, err
	}
	st := newBindState(b)
	n, err := st.query(sel, queryOpts{top: true}, nil)
	if err != nil {
		return nil, 0, err
	}
	if err := compositeColumn(n.Columns()); err != nil {
		return nil, 0, err
	}
	cols := n.Columns()
	if len(cols) > len(targets) {
		return nil, 0, errs.New(errs.SyntaxError, "INSERT has more expressions than target columns")
	}
	if prefix {
		targets = targets[:len(cols)]
	}
	if len(cols) < len(targets) {
		return nil, 0, errs.New(errs.SyntaxError, "INSERT has more target columns than expressions")
	}
	n, err = st.convertOutputs(n, targets, func(i int, e plan.Expr) (plan.Expr, error) {
		st.noteCast(e.Type(), targets[i].Type)
		out, err := assign(e, targets[i].Type, targets[i].Name, st.setParamType, b.Zone)
		if loc, ok := st.locs[e]; ok && err != nil {
			err = posErr(err, loc)
		}
		return out, err
	})
	if err != nil {
		return nil, 0, err
	}
	if err := st.checkParams(); err != nil {
		return nil, 0, err
	}
	return n, len(targets), nil
}

// Scalar binds a scalar expression over sc (nil: no columns, as in VALUES
// or DEFAULT). Aggregates and subqueries fail with a clear error.
//
// Unknown literals and parameters keep type Unknown, so that the caller
// can convert them to a target column's type with Coerce or Assign (a
// RETURNING item converts an Unknown literal to text the same way).
func (b *Binder) Scalar(sc *Scope, n *pg.Node) (plan.Expr, error) {
	if sc == nil {
		sc = emptyScope
	}
	st := newBindState(b)
	ec := &exprCtx{st: st, sc: sc, kind: kindScalar}
	return ec.bind(n)
}

// Predicate binds a search condition over sc (the WHERE of UPDATE or
// DELETE; clause names it in messages) and converts it to boolean, failing
// with 42804 as PostgreSQL does ("argument of WHERE must be type boolean,
// not type integer").
func (b *Binder) Predicate(sc *Scope, n *pg.Node, clause string) (plan.Expr, error) {
	if sc == nil {
		sc = emptyScope
	}
	st := newBindState(b)
	st.noSubLinks = "subqueries are not supported here"
	ec := &exprCtx{st: st, sc: sc, kind: kindWhere}
	e, err := ec.bindBool(n, clause)
	if err != nil {
		return nil, err
	}
	if err := st.checkParams(); err != nil {
		return nil, err
	}
	return e, nil
}

// DMLWhere binds the WHERE clause of an UPDATE or DELETE of the table rv
// names, whose scope is sc. A condition without subqueries comes back as
// a predicate over the table's row (as Predicate binds it); one with
// subqueries as the plan of SELECT * FROM rv WHERE cond, whose rows are
// the table's rows that the condition keeps (decorrelated as in a query).
func (b *Binder) DMLWhere(sc *Scope, rv *pg.RangeVar, where *pg.Node) (plan.Expr, plan.Node, error) {
	if where == nil {
		return nil, nil, nil
	}
	st := newBindState(b)
	st.noSubLinks = "subqueries are not supported here"
	ec := &exprCtx{st: st, sc: sc, kind: kindWhere}
	e, err := ec.bindBool(where, "WHERE")
	if err == nil {
		return e, nil, st.checkParams()
	}
	if !st.sawSubLink {
		return nil, nil, err
	}
	star := &pg.Node{Node: &pg.Node_ColumnRef{ColumnRef: &pg.ColumnRef{
		Fields: []*pg.Node{{Node: &pg.Node_AStar{AStar: &pg.A_Star{}}}}}}}
	sel := &pg.SelectStmt{
		TargetList:  []*pg.Node{{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Val: star}}}},
		FromClause:  []*pg.Node{{Node: &pg.Node_RangeVar{RangeVar: rv}}},
		WhereClause: where,
	}
	n, err := b.Query(&pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}})
	return nil, n, err
}

// selectOf unwraps a statement node into its SelectStmt.
func selectOf(stmt *pg.Node) (*pg.SelectStmt, error) {
	if stmt == nil {
		return nil, errs.New(errs.Internal, "no statement to bind")
	}
	if raw := stmt.GetRawStmt(); raw != nil {
		stmt = raw.Stmt
	}
	if sel := stmt.GetSelectStmt(); sel != nil {
		return sel, nil
	}
	return nil, errs.Newf(errs.FeatureNotSupported, "%s is not a query", nodeName(stmt))
}

// param binds $n.
func (st *bindState) param(n int32, loc int32) (plan.Expr, error) {
	if st.fnArgs != nil || st.fnBody {
		if n <= 0 || int(n) > len(st.fnArgs) {
			return nil, posErr(errs.Newf(errs.UndefinedParameter, "there is no parameter $%d", n), loc)
		}
		return st.fnArgs[n-1], nil
	}
	if n <= 0 {
		return nil, posErr(errs.Newf(errs.UndefinedObject, "there is no parameter $%d", n), loc)
	}
	b := st.b
	for len(b.ParamTypes) < int(n) {
		b.ParamTypes = append(b.ParamTypes, types.Of(types.Unknown))
	}
	t := b.ParamTypes[n-1]
	p := &plan.Param{N: int(n), Typ: t, Values: b.Params}
	st.locs[p] = loc
	if t.ID == types.Unknown {
		st.params[int(n)] = append(st.params[int(n)], p)
	}
	return p, nil
}

// setParamType records the type inferred for an Unknown-typed parameter
// and gives it to every node of that parameter bound so far.
func (st *bindState) setParamType(p *plan.Param, t types.Type) error {
	b := st.b
	for len(b.ParamTypes) < p.N {
		b.ParamTypes = append(b.ParamTypes, types.Of(types.Unknown))
	}
	cur := b.ParamTypes[p.N-1]
	if cur.ID != types.Unknown && cur.ID != t.ID {
		return posErr(errs.Newf(errs.DatatypeMismatch,
			"inconsistent types deduced for parameter $%d", p.N), st.locs[p])
	}
	b.ParamTypes[p.N-1] = t
	p.Typ = t
	for _, q := range st.params[p.N] {
		q.Typ = t
	}
	return nil
}

// checkParams fails when a parameter's type could not be inferred.
func (st *bindState) checkParams() error {
	for n, ps := range st.params {
		if st.b.ParamTypes[n-1].ID == types.Unknown {
			return posErr(errs.Newf(errs.IndeterminateDatatype,
				"could not determine data type of parameter $%d", n), st.locs[ps[0]])
		}
	}
	return nil
}

// posErr attaches a statement position (a 0-based AST location) to err.
func posErr(err error, loc int32) error {
	if loc < 0 {
		return err
	}
	return errs.WithPosition(err, int(loc)+1)
}

// notSupported returns a 0A000 error naming the construct.
func notSupported(loc int32, format string, args ...any) error {
	return posErr(errs.Newf(errs.FeatureNotSupported, format, args...), loc)
}

// nodeName names a parse node's kind for messages ("RangeFunction").
func nodeName(n *pg.Node) string {
	if n == nil || n.Node == nil {
		return "empty node"
	}
	s := fmt.Sprintf("%T", n.Node)
	const prefix = "*pg_query.Node_"
	if len(s) > len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):]
	}
	return s
}
