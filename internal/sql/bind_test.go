package sql

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// testCatalog is an in-memory catalog filled by the "catalog" command.
type testCatalog map[string]*Relation

func (c testCatalog) Relation(name string) *Relation {
	return c[strings.TrimPrefix(name, "public.")]
}

// TestBind runs the golden files in testdata/bind. Commands:
//
//	catalog            DDL (CREATE TABLE / VIEW / MATERIALIZED VIEW) to add
//	bind [params=t1,t2] [values=v1,v2]
//	                   binds a query and prints its plan and parameter types
//	insert table=t     binds an INSERT source against t's columns
//	scalar [table=t]   binds an expression (over t's columns)
//	coerce type=T column=c
//	                   binds a constant expression and converts it to type T
//	                   by assignment rules (assign: also infers parameters)
//	predicate [table=t]
//	                   binds a search condition (over t's columns)
//	eval               binds a constant expression and evaluates it
//
// Errors print as "error (SQLSTATE): message", with the position marked.
func TestBind(t *testing.T) {
	datadriven.Walk(t, "testdata/bind", func(t *testing.T, path string) {
		cat := testCatalog{}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "catalog":
				return runCatalog(t, cat, d.Input)
			case "bind":
				return runBind(t, cat, d)
			case "insert":
				return runInsert(t, cat, d)
			case "scalar":
				return runScalar(t, cat, d)
			case "coerce", "assign":
				return runCoerce(t, cat, d)
			case "predicate":
				return runPredicate(t, cat, d)
			case "eval":
				return runEval(t, cat, d)
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

func parseOne(t *testing.T, sql string) *pg.Node {
	res, err := pg.Parse(sql)
	if err != nil {
		t.Fatalf("parse %q: %v", sql, err)
	}
	if len(res.Stmts) != 1 {
		t.Fatalf("want one statement in %q", sql)
	}
	return res.Stmts[0].Stmt
}

func runCatalog(t *testing.T, cat testCatalog, input string) string {
	res, err := pg.Parse(input)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	var out []string
	for _, raw := range res.Stmts {
		n := raw.Stmt
		switch {
		case n.GetCreateStmt() != nil:
			cs := n.GetCreateStmt()
			rel := &Relation{Name: cs.Relation.Relname, Kind: Table}
			for _, e := range cs.TableElts {
				cd := e.GetColumnDef()
				typ, err := typeOf(cd.TypeName)
				if err != nil {
					t.Fatalf("column %s: %v", cd.Colname, err)
				}
				rel.Cols = append(rel.Cols, plan.Column{Name: cd.Colname, Type: typ})
			}
			cat[rel.Name] = rel
			out = append(out, fmt.Sprintf("table %s %s", rel.Name, formatCols(rel.Cols)))
		case n.GetViewStmt() != nil:
			// CREATE OR REPLACE simply replaces the definition.
			vs := n.GetViewStmt()
			rel := &Relation{Name: vs.View.Relname, Kind: View, Query: vs.Query}
			node, err := (&Binder{Cat: cat}).Query(vs.Query)
			if err != nil {
				return formatErr(err, input)
			}
			rel.Cols = append([]plan.Column(nil), node.Columns()...)
			for i, a := range vs.Aliases {
				rel.Cols[i].Name = a.GetString_().GetSval()
			}
			cat[rel.Name] = rel
			out = append(out, fmt.Sprintf("view %s %s", rel.Name, formatCols(rel.Cols)))
		case n.GetCreateTableAsStmt() != nil:
			ca := n.GetCreateTableAsStmt()
			node, err := (&Binder{Cat: cat}).Query(ca.Query)
			if err != nil {
				return formatErr(err, input)
			}
			rel := &Relation{Name: ca.Into.Rel.Relname, Kind: MaterializedView,
				Cols: append([]plan.Column(nil), node.Columns()...)}
			cat[rel.Name] = rel
			out = append(out, fmt.Sprintf("materialized view %s %s", rel.Name, formatCols(rel.Cols)))
		case n.GetCreateFunctionStmt() != nil:
			line, err := defineTestFunction(cat, n)
			if err != nil {
				return formatErr(err, input)
			}
			out = append(out, line)
		default:
			t.Fatalf("unsupported catalog statement %s", nodeName(n))
		}
	}
	return strings.Join(out, "\n") + "\n"
}

func testBinder(t *testing.T, cat testCatalog, d *datadriven.TestData) *Binder {
	b := &Binder{Cat: cat}
	for _, arg := range d.CmdArgs {
		switch arg.Key {
		case "params":
			for _, v := range arg.Vals {
				typ := types.Of(types.Unknown)
				if v != "unknown" {
					var err error
					if typ, err = types.TypeByName([]string{v}, nil); err != nil {
						t.Fatalf("param type %q: %v", v, err)
					}
				}
				b.ParamTypes = append(b.ParamTypes, typ)
			}
		case "values":
			var vals []types.Value
			for _, v := range arg.Vals {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatalf("param value %q: %v", v, err)
				}
				vals = append(vals, types.MakeInt(types.Int8, n))
			}
			b.Params = &vals
		}
	}
	return b
}

func formatParams(b *Binder) string {
	if len(b.ParamTypes) == 0 {
		return ""
	}
	var ps []string
	for i, p := range b.ParamTypes {
		ps = append(ps, fmt.Sprintf("$%d %s", i+1, p))
	}
	return "params: " + strings.Join(ps, ", ") + "\n"
}

func runBind(t *testing.T, cat testCatalog, d *datadriven.TestData) string {
	b := testBinder(t, cat, d)
	node, err := b.Query(parseOne(t, d.Input))
	if err != nil {
		return formatErr(err, d.Input)
	}
	checkPlan(t, node)
	return "output " + formatCols(node.Columns()) + "\n" + FormatPlan(node) + formatParams(b) + formatUsedFunctions(b)
}

func runInsert(t *testing.T, cat testCatalog, d *datadriven.TestData) string {
	var table string
	d.ScanArgs(t, "table", &table)
	b := testBinder(t, cat, d)
	node, err := b.InsertQuery(parseOne(t, d.Input), cat[table].Cols)
	if err != nil {
		return formatErr(err, d.Input)
	}
	checkPlan(t, node)
	return "output " + formatCols(node.Columns()) + "\n" + FormatPlan(node) + formatParams(b)
}

// scalarNode parses "SELECT <expr>" and returns the expression.
func scalarNode(t *testing.T, input string) (*pg.Node, string) {
	sql := "SELECT " + input
	sel := parseOne(t, sql).GetSelectStmt()
	return sel.TargetList[0].GetResTarget().Val, sql
}

func runScalar(t *testing.T, cat testCatalog, d *datadriven.TestData) string {
	b := testBinder(t, cat, d)
	var sc *Scope
	if d.HasArg("table") {
		var table, alias string
		d.ScanArgs(t, "table", &table)
		if d.HasArg("alias") {
			d.ScanArgs(t, "alias", &alias)
		}
		sc = b.TableScope(table, alias, cat[table].Cols)
	}
	n, sql := scalarNode(t, d.Input)
	e, err := b.Scalar(sc, n)
	if err != nil {
		return formatErr(err, sql)
	}
	return fmt.Sprintf("%s : %s\n", e, e.Type()) + formatParams(b)
}

func runCoerce(t *testing.T, cat testCatalog, d *datadriven.TestData) string {
	var typeName, column string
	d.ScanArgs(t, "type", &typeName)
	d.ScanArgs(t, "column", &column)
	b := testBinder(t, cat, d)
	tn := parseOne(t, "SELECT NULL::"+typeName).GetSelectStmt().TargetList[0].GetResTarget().Val.GetTypeCast().TypeName
	to, err := typeOf(tn)
	if err != nil {
		t.Fatalf("type %q: %v", typeName, err)
	}
	n, sql := scalarNode(t, d.Input)
	e, err := b.Scalar(nil, n)
	if err == nil {
		if d.Cmd == "assign" {
			e, err = b.Assign(e, to, column)
		} else {
			e, err = Coerce(e, to, column)
		}
	}
	if err != nil {
		return formatErr(err, sql)
	}
	return fmt.Sprintf("%s : %s\n", e, e.Type()) + formatParams(b)
}

// formatErr prints an error with its SQLSTATE and, when it has one, its
// position marked under the statement's line, as psql does.
func formatErr(err error, sql string) string {
	s := fmt.Sprintf("error (%s): %s\n", errs.SQLState(err), err)
	var e *errs.Error
	if !errors.As(err, &e) || e.Position <= 0 || e.Position > len(sql)+1 {
		return s
	}
	pos := e.Position - 1
	line, start := 1, 0
	for i := 0; i < pos; i++ {
		if sql[i] == '\n' {
			line++
			start = i + 1
		}
	}
	end := strings.IndexByte(sql[start:], '\n')
	if end < 0 {
		end = len(sql) - start
	}
	prefix := fmt.Sprintf("LINE %d: ", line)
	return s + prefix + sql[start:start+end] + "\n" + strings.Repeat(" ", len(prefix)+pos-start) + "^\n"
}

// checkPlan verifies the invariants every bound plan keeps: column
// references are within their input, expressions carry no unresolved
// types or aggregate placeholders, and join keys pair equal types.
func checkPlan(t *testing.T, n plan.Node) {
	t.Helper()
	check := func(e plan.Expr, width int, where string) {
		walk(e, func(x plan.Expr) {
			switch x := x.(type) {
			case *plan.ColRef:
				if x.Index < 0 || x.Index >= width {
					t.Errorf("%s: column #%d out of range (%d columns)", where, x.Index, width)
				}
			case *aggRef:
				t.Errorf("%s: aggregate placeholder left in plan", where)
			}
			if x.Type().ID == types.Unknown {
				t.Errorf("%s: expression %s has type unknown", where, x)
			}
		})
	}
	var visit func(n plan.Node)
	visit = func(n plan.Node) {
		for _, in := range n.Inputs() {
			visit(in)
		}
		for _, c := range n.Columns() {
			if c.Type.ID == types.Unknown {
				t.Errorf("column %s has type unknown", c.Name)
			}
		}
		switch x := n.(type) {
		case *plan.Filter:
			check(x.Pred, len(x.Input.Columns()), "Filter")
			if x.Pred.Type().ID != types.Bool {
				t.Errorf("Filter predicate of type %s", x.Pred.Type())
			}
		case *plan.Project:
			if len(x.Exprs) != len(x.Cols) {
				t.Errorf("Project has %d expressions for %d columns", len(x.Exprs), len(x.Cols))
			}
			for i, e := range x.Exprs {
				check(e, len(x.Input.Columns()), "Project")
				if e.Type() != x.Cols[i].Type {
					t.Errorf("Project column %d declared %s but computes %s", i, x.Cols[i].Type, e.Type())
				}
			}
		case *plan.Join:
			lw, rw := len(x.Left.Columns()), len(x.Right.Columns())
			for i := range x.LeftKeys {
				check(x.LeftKeys[i], lw, "Join left key")
				check(x.RightKeys[i], rw, "Join right key")
				if x.LeftKeys[i].Type().ID != x.RightKeys[i].Type().ID {
					t.Errorf("Join key %d pairs %s with %s", i, x.LeftKeys[i].Type(), x.RightKeys[i].Type())
				}
			}
			if x.Residual != nil {
				check(x.Residual, lw+rw, "Join residual")
			}
		case *plan.Aggregate:
			for _, g := range x.GroupBy {
				check(g, len(x.Input.Columns()), "Aggregate key")
			}
			for _, a := range x.Aggs {
				if a.Arg != nil {
					check(a.Arg, len(x.Input.Columns()), "Aggregate argument")
				}
				if a.Filter != nil {
					check(a.Filter, len(x.Input.Columns()), "Aggregate filter")
				}
			}
		case *plan.Sort:
			for _, k := range x.Keys {
				check(k.Expr, len(x.Input.Columns()), "Sort key")
			}
		case *plan.Values:
			for _, r := range x.Rows {
				if len(r) != len(x.Cols) {
					t.Errorf("Values row has %d entries for %d columns", len(r), len(x.Cols))
				}
				for _, e := range r {
					check(e, 0, "Values")
				}
			}
		case *plan.Union:
			for _, in := range x.Ins {
				for i, c := range in.Columns() {
					if c.Type.ID != x.Cols[i].Type.ID {
						t.Errorf("Union input column %d is %s, union is %s", i, c.Type, x.Cols[i].Type)
					}
				}
			}
		}
	}
	visit(n)
}

func runPredicate(t *testing.T, cat testCatalog, d *datadriven.TestData) string {
	b := testBinder(t, cat, d)
	var sc *Scope
	if d.HasArg("table") {
		var table string
		d.ScanArgs(t, "table", &table)
		sc = b.TableScope(table, "", cat[table].Cols)
	}
	n, sql := scalarNode(t, d.Input)
	e, err := b.Predicate(sc, n, "WHERE")
	if err != nil {
		return formatErr(err, sql)
	}
	return fmt.Sprintf("%s : %s\n", e, e.Type()) + formatParams(b)
}

// runEval evaluates constant expressions, one per line.
func runEval(t *testing.T, cat testCatalog, d *datadriven.TestData) string {
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		b := testBinder(t, cat, d)
		n, sql := scalarNode(t, line)
		e, err := b.Scalar(nil, n)
		if err == nil && e.Type().ID == types.Unknown {
			e, err = Coerce(e, types.Of(types.Text), "?column?")
		}
		if err != nil {
			out.WriteString(line + " => " + formatErr(err, sql))
			continue
		}
		v, err := e.Eval(nil)
		switch {
		case err != nil:
			fmt.Fprintf(&out, "%s => error (%s): %s\n", line, errs.SQLState(err), err)
		case v.IsNull():
			fmt.Fprintf(&out, "%s => NULL\n", line)
		default:
			fmt.Fprintf(&out, "%s => %s (%s)\n", line, types.Format(v, e.Type()), e.Type())
		}
	}
	return out.String()
}
