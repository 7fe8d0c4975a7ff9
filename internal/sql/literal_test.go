package sql

import (
	"errors"
	"fmt"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
)

// TestAssignLiteral checks that every literal AssignLiteral takes ends as
// binding it and assigning it to the column does: the same value, or the
// same error with the same position.
func TestAssignLiteral(t *testing.T) {
	columns := []string{
		"int2", "int4", "int8", "numeric", "numeric(5,2)", "float4", "float8", "text", "varchar(3)",
		"bool", "bytea", "date", "timestamp", "timestamp(0)", "timestamptz", "interval", "interval day",
		"int4[]", "regclass",
	}
	literals := []string{
		"1", "-7", "2147483647", "70000", "9223372036854775807", "1.5", "1e3",
		"'12'", "'  42 '", "'abc'", "'1.005'", "'toolong'", "'t'", "'yes'", "'\\x41'",
		"'2026-01-02'", "'2026-01-02 03:04:05.678'", "'2026-01-02 03:04:05+02'", "'90'", "'1 day 2 hours'",
		"'{1,2}'", "'pg_class'", "NULL", "TRUE", "''",
		"TIMESTAMP '2026-01-02 03:04:05.678'", "timestamp(1) '2026-01-02 03:04:05.678'", "DATE 'garbage'",
		"'12'::int8", "'12'::int2", "'70000'::int2", "'1.005'::numeric(5,2)", "'1.005'::numeric", "'x'::text",
		"'toolong'::varchar(4)", "'toolong'::varchar", "INTERVAL '90' DAY", "interval '1 day 2 hours'", "NULL::int4",
		"'t'::bool", "'2026-01-02 03:04:05+02'::timestamptz",
	}
	taken := 0
	for _, col := range columns {
		to := mustType(t, col)
		for _, lit := range literals {
			tree, err := pg.Parse("SELECT  " + lit)
			if err != nil {
				t.Fatal(err)
			}
			node := tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val
			got, ok, gotErr := AssignLiteral(node, to, types.UTCZone)
			if !ok {
				continue
			}
			taken++
			var b Binder
			want, wantErr := func() (types.Value, error) {
				e, err := b.Scalar(nil, node)
				if err != nil {
					return types.Null, err
				}
				if e, err = b.Assign(e, to, "c"); err != nil {
					return types.Null, err
				}
				return e.Eval(nil)
			}()
			if describe(got, gotErr, to) != describe(want, wantErr, to) {
				t.Errorf("%s into %s: AssignLiteral gives %s, binding gives %s", lit, col, describe(got, gotErr, to), describe(want, wantErr, to))
			}
		}
	}
	if taken < len(columns)*len(literals)/3 {
		t.Errorf("AssignLiteral took %d of %d cases; the fast path is barely used", taken, len(columns)*len(literals))
	}
}

func mustType(t *testing.T, name string) types.Type {
	t.Helper()
	tree, err := pg.Parse("SELECT NULL::" + name)
	if err != nil {
		t.Fatal(err)
	}
	tc := tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val.GetTypeCast()
	typ, err := TypeOf(tc.TypeName)
	if err != nil {
		t.Fatal(err)
	}
	return typ
}

func describe(v types.Value, err error, to types.Type) string {
	if err != nil {
		var e *errs.Error
		pos := 0
		if errors.As(err, &e) {
			pos = e.Position
		}
		return fmt.Sprintf("error %s %q at %d", errs.SQLState(err), err.Error(), pos)
	}
	if v.IsNull() {
		return "NULL"
	}
	return fmt.Sprintf("%s (%v)", types.Format(v, to), v.Kind())
}
