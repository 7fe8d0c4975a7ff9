package sql

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
)

// LATERAL (VALUES ...) in FROM. A VALUES list whose rows read the FROM
// items before it is a per-row flat map: every outer row yields one row
// for every row of the list, computed from it. It is bound as the LATERAL
// subquery
//
//	SELECT CASE n WHEN 1 THEN <row 1's column 1> WHEN 2 THEN ... END AS column1, ...
//	FROM (VALUES (1), (2), ...) AS o(n)
//
// whose FROM is a constant relation of the list's ordinals and whose
// select list reads the outer row, so the lateral join (lateral.go) is a
// cross join of the outer items with that constant relation, maintained as
// every join is. CASE resolves its results' common type as VALUES does its
// columns', so the columns keep VALUES's types and names (column1, ...).

// valuesOrdinal names the ordinal column of the constant relation; the
// space keeps it from meeting a column name written without quotes.
const valuesOrdinal = "values ordinal"

// lateralValues returns sel, a VALUES list in a LATERAL subquery, as the
// subquery above; sel itself when it is not a plain VALUES list.
func lateralValues(sel *pg.SelectStmt) (*pg.SelectStmt, error) {
	if len(sel.ValuesLists) == 0 || sel.Op != pg.SetOperation_SETOP_NONE || len(sel.SortClause) > 0 ||
		sel.LimitCount != nil || sel.LimitOffset != nil || sel.WithClause != nil || sel.LockingClause != nil {
		return sel, nil
	}
	rows := make([][]*pg.Node, len(sel.ValuesLists))
	for i, l := range sel.ValuesLists {
		rows[i] = l.GetList().GetItems()
		if len(rows[i]) == 0 {
			return sel, nil
		}
		if len(rows[i]) != len(rows[0]) {
			return nil, posErr(errs.New(errs.SyntaxError, "VALUES lists must all be the same length"), exprLocation(rows[i][0]))
		}
	}
	ordinals := make([]*pg.Node, len(rows))
	for i := range rows {
		ordinals[i] = pg.MakeListNode([]*pg.Node{pg.MakeAConstIntNode(int64(i+1), -1)})
	}
	from := &pg.Node{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
		Subquery: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &pg.SelectStmt{ValuesLists: ordinals}}},
		Alias:    &pg.Alias{Aliasname: valuesOrdinal, Colnames: []*pg.Node{pg.MakeStrNode(valuesOrdinal)}},
	}}}
	ordinal := pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode(valuesOrdinal), pg.MakeStrNode(valuesOrdinal)}, -1)
	targets := make([]*pg.Node, len(rows[0]))
	for c := range rows[0] {
		whens := make([]*pg.Node, len(rows))
		for r, row := range rows {
			whens[r] = pg.MakeCaseWhenNode(pg.MakeAConstIntNode(int64(r+1), -1), row[c], -1)
		}
		targets[c] = pg.MakeResTargetNodeWithNameAndVal(fmt.Sprintf("column%d", c+1), pg.MakeCaseExprNode(ordinal, whens, -1), -1)
	}
	return &pg.SelectStmt{TargetList: targets, FromClause: []*pg.Node{from}}, nil
}
