package plan

import (
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Expr is a typed scalar expression evaluated over one input row.
type Expr interface {
	// Type returns the expression's result type.
	Type() types.Type
	// Eval evaluates the expression over row.
	Eval(row zset.Row) (types.Value, error)
	// String renders the expression for EXPLAIN, with column names.
	String() string
}

// ColRef is the value of input column Index.
type ColRef struct {
	Index int
	Name  string
	Typ   types.Type
}

// Const is a constant.
type Const struct {
	Val types.Value
	Typ types.Type
	// Pos is the 1-based position of a string literal in the statement's
	// text, which an error converting it to a type reports; 0 for other
	// constants. It takes no part in comparing expressions.
	Pos int
}

// Param is the value of query parameter $N (1-based), bound before the plan
// runs; its value is read from the Params slice the caller shares.
type Param struct {
	N      int
	Typ    types.Type
	Values *[]types.Value
}

// BinOp applies a resolved binary operator; both operands already have the
// operator's argument types.
type BinOp struct {
	Op          *types.Operator
	Left, Right Expr
}

// UnaryOp applies a resolved prefix operator.
type UnaryOp struct {
	Op  *types.Operator
	Arg Expr
}

// Cast converts its argument to Typ. Explicit is true for CAST and ::.
type Cast struct {
	Arg      Expr
	Typ      types.Type
	Explicit bool
	// Zone is the session time zone of the statement that bound the
	// cast, for the casts that depend on it (timestamptz to and from
	// text, timestamp and date); the zero Zone is UTC.
	Zone types.Zone
}

// And is the three-valued conjunction of its arguments.
type And struct{ Args []Expr }

// Or is the three-valued disjunction of its arguments.
type Or struct{ Args []Expr }

// Not is three-valued negation.
type Not struct{ Arg Expr }

// IsNull is "Arg IS NULL" (or IS NOT NULL when Negated).
type IsNull struct {
	Arg     Expr
	Negated bool
}

// IsDistinct is "Left IS DISTINCT FROM Right" (IS NOT DISTINCT FROM when
// Negated). Eq is the resolved "=" operator for the operand types.
type IsDistinct struct {
	Eq          *types.Operator
	Left, Right Expr
	Negated     bool
}

// IsBool is "Arg IS [NOT] TRUE/FALSE/UNKNOWN".
type IsBool struct {
	Arg     Expr
	Test    string // "true", "false" or "unknown"
	Negated bool
}

// When is one WHEN ... THEN ... arm of a Case.
type When struct {
	Cond, Result Expr
}

// Case is a searched CASE (a simple CASE is rewritten to a searched one).
type Case struct {
	Whens []When
	Else  Expr // nil means ELSE NULL
	Typ   types.Type
}

// Coalesce returns its first non-NULL argument.
type Coalesce struct {
	Args []Expr
	Typ  types.Type
}

// NullIf is NULLIF(Left, Right): NULL when Left = Right, else Left.
type NullIf struct {
	Eq          *types.Operator
	Left, Right Expr
}

// InList is "Arg [NOT] IN (List...)" with SQL's NULL rules: true if some
// element equals Arg; else NULL if Arg or some element is NULL; else false.
type InList struct {
	Eq      *types.Operator
	Arg     Expr
	List    []Expr
	Negated bool
}

// Func is a call of a scalar function that is strict unless noted by
// NonStrict (a NULL argument gives NULL without calling Fn).
type Func struct {
	Name      string
	Args      []Expr
	Typ       types.Type
	NonStrict bool
	Fn        func(args []types.Value) (types.Value, error)
	// Render, when set, renders the call from its arguments' text, for
	// calls that SQL writes as syntax (ARRAY[...], a[i], x = ANY (a)).
	Render func(args []string) string
}

func (e *ColRef) Type() types.Type     { return e.Typ }
func (e *Const) Type() types.Type      { return e.Typ }
func (e *Param) Type() types.Type      { return e.Typ }
func (e *BinOp) Type() types.Type      { return e.Op.Result }
func (e *UnaryOp) Type() types.Type    { return e.Op.Result }
func (e *Cast) Type() types.Type       { return e.Typ }
func (e *And) Type() types.Type        { return types.Of(types.Bool) }
func (e *Or) Type() types.Type         { return types.Of(types.Bool) }
func (e *Not) Type() types.Type        { return types.Of(types.Bool) }
func (e *IsNull) Type() types.Type     { return types.Of(types.Bool) }
func (e *IsDistinct) Type() types.Type { return types.Of(types.Bool) }
func (e *IsBool) Type() types.Type     { return types.Of(types.Bool) }
func (e *Case) Type() types.Type       { return e.Typ }
func (e *Coalesce) Type() types.Type   { return e.Typ }
func (e *NullIf) Type() types.Type     { return e.Left.Type() }
func (e *InList) Type() types.Type     { return types.Of(types.Bool) }
func (e *Func) Type() types.Type       { return e.Typ }

func (e *ColRef) Eval(row zset.Row) (types.Value, error) { return row[e.Index], nil }
func (e *Const) Eval(zset.Row) (types.Value, error)      { return e.Val, nil }

func (e *Param) Eval(zset.Row) (types.Value, error) {
	if e.Values == nil || e.N > len(*e.Values) {
		return types.Null, errs.Newf(errs.InvalidParameterValue, "no value supplied for parameter $%d", e.N)
	}
	return (*e.Values)[e.N-1], nil
}

func (e *BinOp) Eval(row zset.Row) (types.Value, error) {
	a, err := e.Left.Eval(row)
	if err != nil || a.IsNull() && !e.Op.NonStrict {
		return types.Null, err
	}
	b, err := e.Right.Eval(row)
	if err != nil || b.IsNull() && !e.Op.NonStrict {
		return types.Null, err
	}
	return e.Op.Eval(a, b)
}

func (e *UnaryOp) Eval(row zset.Row) (types.Value, error) {
	a, err := e.Arg.Eval(row)
	if err != nil || a.IsNull() {
		return types.Null, err
	}
	return e.Op.Eval(a, types.Null)
}

func (e *Cast) Eval(row zset.Row) (types.Value, error) {
	a, err := e.Arg.Eval(row)
	if err != nil || a.IsNull() {
		return types.Null, err
	}
	return types.CastZone(a, e.Typ, e.Explicit, e.Zone)
}

// tri is a three-valued truth value.
type tri uint8

const (
	triFalse tri = iota
	triTrue
	triNull
)

func truth(v types.Value) tri {
	switch {
	case v.IsNull():
		return triNull
	case v.Bool():
		return triTrue
	}
	return triFalse
}

func (t tri) value() types.Value {
	switch t {
	case triTrue:
		return types.MakeBool(true)
	case triFalse:
		return types.MakeBool(false)
	}
	return types.Null
}

func (e *And) Eval(row zset.Row) (types.Value, error) {
	res := triTrue
	for _, a := range e.Args {
		v, err := a.Eval(row)
		if err != nil {
			return types.Null, err
		}
		switch truth(v) {
		case triFalse:
			return types.MakeBool(false), nil
		case triNull:
			res = triNull
		}
	}
	return res.value(), nil
}

func (e *Or) Eval(row zset.Row) (types.Value, error) {
	res := triFalse
	for _, a := range e.Args {
		v, err := a.Eval(row)
		if err != nil {
			return types.Null, err
		}
		switch truth(v) {
		case triTrue:
			return types.MakeBool(true), nil
		case triNull:
			res = triNull
		}
	}
	return res.value(), nil
}

func (e *Not) Eval(row zset.Row) (types.Value, error) {
	v, err := e.Arg.Eval(row)
	if err != nil || v.IsNull() {
		return types.Null, err
	}
	return types.MakeBool(!v.Bool()), nil
}

func (e *IsNull) Eval(row zset.Row) (types.Value, error) {
	v, err := e.Arg.Eval(row)
	if err != nil {
		return types.Null, err
	}
	return types.MakeBool(v.IsNull() != e.Negated), nil
}

func (e *IsDistinct) Eval(row zset.Row) (types.Value, error) {
	a, err := e.Left.Eval(row)
	if err != nil {
		return types.Null, err
	}
	b, err := e.Right.Eval(row)
	if err != nil {
		return types.Null, err
	}
	var distinct bool
	switch {
	case a.IsNull() || b.IsNull():
		distinct = a.IsNull() != b.IsNull()
	default:
		eq, err := e.Eq.Eval(a, b)
		if err != nil {
			return types.Null, err
		}
		distinct = !eq.Bool()
	}
	return types.MakeBool(distinct != e.Negated), nil
}

func (e *IsBool) Eval(row zset.Row) (types.Value, error) {
	v, err := e.Arg.Eval(row)
	if err != nil {
		return types.Null, err
	}
	var r bool
	switch e.Test {
	case "true":
		r = truth(v) == triTrue
	case "false":
		r = truth(v) == triFalse
	default:
		r = v.IsNull()
	}
	return types.MakeBool(r != e.Negated), nil
}

func (e *Case) Eval(row zset.Row) (types.Value, error) {
	for _, w := range e.Whens {
		c, err := w.Cond.Eval(row)
		if err != nil {
			return types.Null, err
		}
		if truth(c) == triTrue {
			return w.Result.Eval(row)
		}
	}
	if e.Else == nil {
		return types.Null, nil
	}
	return e.Else.Eval(row)
}

func (e *Coalesce) Eval(row zset.Row) (types.Value, error) {
	for _, a := range e.Args {
		v, err := a.Eval(row)
		if err != nil || !v.IsNull() {
			return v, err
		}
	}
	return types.Null, nil
}

func (e *NullIf) Eval(row zset.Row) (types.Value, error) {
	a, err := e.Left.Eval(row)
	if err != nil || a.IsNull() {
		return a, err
	}
	b, err := e.Right.Eval(row)
	if err != nil || b.IsNull() {
		return a, err
	}
	eq, err := e.Eq.Eval(a, b)
	if err != nil {
		return types.Null, err
	}
	if eq.Bool() {
		return types.Null, nil
	}
	return a, nil
}

func (e *InList) Eval(row zset.Row) (types.Value, error) {
	a, err := e.Arg.Eval(row)
	if err != nil {
		return types.Null, err
	}
	res := triFalse
	if a.IsNull() {
		res = triNull
	}
	for _, l := range e.List {
		if res == triNull && a.IsNull() {
			break
		}
		v, err := l.Eval(row)
		if err != nil {
			return types.Null, err
		}
		if v.IsNull() {
			res = triNull
			continue
		}
		eq, err := e.Eq.Eval(a, v)
		if err != nil {
			return types.Null, err
		}
		if eq.Bool() {
			res = triTrue
			break
		}
	}
	if e.Negated && res != triNull {
		res ^= 1
	}
	return res.value(), nil
}

func (e *Func) Eval(row zset.Row) (types.Value, error) {
	args := make([]types.Value, len(e.Args))
	for i, a := range e.Args {
		v, err := a.Eval(row)
		if err != nil {
			return types.Null, err
		}
		if v.IsNull() && !e.NonStrict {
			return types.Null, nil
		}
		args[i] = v
	}
	return e.Fn(args)
}

func (e *ColRef) String() string {
	if e.Name != "" {
		return e.Name
	}
	return fmt.Sprintf("#%d", e.Index)
}

func (e *Const) String() string {
	if e.Val.IsNull() {
		return "NULL"
	}
	s := types.Format(e.Val, e.Typ)
	switch e.Typ.ID {
	case types.Int2, types.Int4, types.Int8, types.Numeric, types.Float4, types.Float8:
		return s
	case types.Bool:
		if e.Val.Bool() {
			return "true"
		}
		return "false"
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'::" + e.Typ.String()
}

func (e *Param) String() string { return fmt.Sprintf("$%d", e.N) }
func (e *BinOp) String() string {
	return "(" + e.Left.String() + " " + e.Op.Name + " " + e.Right.String() + ")"
}
func (e *UnaryOp) String() string { return "(" + e.Op.Name + e.Arg.String() + ")" }
func (e *Cast) String() string    { return e.Arg.String() + "::" + e.Typ.String() }
func (e *And) String() string     { return "(" + joinExprs(e.Args, " AND ") + ")" }
func (e *Or) String() string      { return "(" + joinExprs(e.Args, " OR ") + ")" }
func (e *Not) String() string     { return "(NOT " + e.Arg.String() + ")" }

func (e *IsNull) String() string {
	if e.Negated {
		return "(" + e.Arg.String() + " IS NOT NULL)"
	}
	return "(" + e.Arg.String() + " IS NULL)"
}

func (e *IsDistinct) String() string {
	op := " IS DISTINCT FROM "
	if e.Negated {
		op = " IS NOT DISTINCT FROM "
	}
	return "(" + e.Left.String() + op + e.Right.String() + ")"
}

func (e *IsBool) String() string {
	not := ""
	if e.Negated {
		not = "NOT "
	}
	return "(" + e.Arg.String() + " IS " + not + strings.ToUpper(e.Test) + ")"
}

func (e *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	for _, w := range e.Whens {
		b.WriteString(" WHEN " + w.Cond.String() + " THEN " + w.Result.String())
	}
	if e.Else != nil {
		b.WriteString(" ELSE " + e.Else.String())
	}
	b.WriteString(" END")
	return b.String()
}

func (e *Coalesce) String() string { return "COALESCE(" + joinExprs(e.Args, ", ") + ")" }
func (e *NullIf) String() string   { return "NULLIF(" + e.Left.String() + ", " + e.Right.String() + ")" }

func (e *InList) String() string {
	op := " IN ("
	if e.Negated {
		op = " NOT IN ("
	}
	return "(" + e.Arg.String() + op + joinExprs(e.List, ", ") + "))"
}

func (e *Func) String() string {
	if e.Render != nil {
		args := make([]string, len(e.Args))
		for i, a := range e.Args {
			args[i] = a.String()
		}
		return e.Render(args)
	}
	return e.Name + "(" + joinExprs(e.Args, ", ") + ")"
}

func joinExprs(es []Expr, sep string) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return strings.Join(parts, sep)
}
