package oracle

import (
	"regexp"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// stmtKind is what a statement does, as far as the comparison cares.
type stmtKind uint8

const (
	// kindChange is any statement that may change data or the catalog
	// (DML, DDL), and anything unparsable.
	kindChange stmtKind = iota
	// kindQuery returns rows and changes nothing: SELECT, VALUES, TABLE,
	// EXPLAIN, SHOW.
	kindQuery
	kindBegin
	kindCommit
	kindRollback
	// kindCreateMatView is CREATE MATERIALIZED VIEW name AS query.
	kindCreateMatView
	// kindCreateView is CREATE VIEW name AS query.
	kindCreateView
	// kindDropMatView is DROP MATERIALIZED VIEW.
	kindDropMatView
	// kindDropView is DROP VIEW.
	kindDropView
)

// stmtInfo is a classified statement.
type stmtInfo struct {
	kind stmtKind
	// name is the relation a CREATE [MATERIALIZED] VIEW creates.
	name string
	// ordered is set for a query whose top level has ORDER BY.
	ordered bool
	// dropped names the relations a DROP [MATERIALIZED] VIEW names.
	dropped []string
}

// classify parses sql (one statement) with PostgreSQL's parser. A
// statement that does not parse is a kindChange: both systems are expected
// to reject it.
func classify(sql string) stmtInfo {
	tree, err := pg.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return stmtInfo{kind: kindChange}
	}
	n := tree.Stmts[0].Stmt
	switch {
	case n.GetSelectStmt() != nil:
		s := n.GetSelectStmt()
		if s.GetIntoClause() != nil {
			return stmtInfo{kind: kindChange}
		}
		return stmtInfo{kind: kindQuery, ordered: len(s.GetSortClause()) > 0}
	case n.GetExplainStmt() != nil, n.GetVariableShowStmt() != nil:
		return stmtInfo{kind: kindQuery}
	case n.GetTransactionStmt() != nil:
		switch n.GetTransactionStmt().GetKind() {
		case pg.TransactionStmtKind_TRANS_STMT_BEGIN, pg.TransactionStmtKind_TRANS_STMT_START:
			return stmtInfo{kind: kindBegin}
		case pg.TransactionStmtKind_TRANS_STMT_COMMIT:
			return stmtInfo{kind: kindCommit}
		case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
			return stmtInfo{kind: kindRollback}
		}
	case n.GetCreateTableAsStmt() != nil:
		c := n.GetCreateTableAsStmt()
		if c.GetObjtype() == pg.ObjectType_OBJECT_MATVIEW {
			return stmtInfo{kind: kindCreateMatView, name: c.GetInto().GetRel().GetRelname()}
		}
	case n.GetViewStmt() != nil:
		return stmtInfo{kind: kindCreateView, name: n.GetViewStmt().GetView().GetRelname()}
	case n.GetDropStmt() != nil:
		d := n.GetDropStmt()
		var names []string
		for _, o := range d.GetObjects() {
			if parts := o.GetList().GetItems(); len(parts) > 0 {
				names = append(names, parts[len(parts)-1].GetString_().GetSval())
			}
		}
		switch d.GetRemoveType() {
		case pg.ObjectType_OBJECT_MATVIEW:
			return stmtInfo{kind: kindDropMatView, dropped: names}
		case pg.ObjectType_OBJECT_VIEW:
			return stmtInfo{kind: kindDropView, dropped: names}
		}
	}
	return stmtInfo{kind: kindChange}
}

var (
	createMatViewRE = regexp.MustCompile(`(?is)^\s*create\s+materialized\s+view\b`)
	dropMatViewRE   = regexp.MustCompile(`(?is)^\s*drop\s+materialized\s+view\b`)
)

// postgresText returns the text PostgreSQL runs for a statement: a
// materialized view becomes a plain view, which is always fresh. It
// reports false when a materialized-view statement does not start with
// its keywords (a leading comment, say) and so cannot be rewritten.
func postgresText(sql string, info stmtInfo) (string, bool) {
	var re *regexp.Regexp
	var repl string
	switch info.kind {
	case kindCreateMatView:
		re, repl = createMatViewRE, "CREATE VIEW"
	case kindDropMatView:
		re, repl = dropMatViewRE, "DROP VIEW"
	default:
		return sql, true
	}
	loc := re.FindStringIndex(sql)
	if loc == nil {
		return sql, false
	}
	return repl + sql[loc[1]:], true
}
