package runtime

import (
	"fmt"
	"strings"
	"unicode"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// stmtName names a statement as a user writes it, as PostgreSQL's command
// tags do ("ALTER TABLE", "CREATE INDEX", "GRANT"), for messages such as
// "ALTER TABLE is not supported".
func stmtName(n *pg.Node) string {
	switch {
	case n.GetAlterTableStmt() != nil:
		return "ALTER " + objectTypeName(n.GetAlterTableStmt().Objtype)
	case n.GetRenameStmt() != nil:
		r := n.GetRenameStmt()
		switch r.RenameType {
		case pg.ObjectType_OBJECT_COLUMN, pg.ObjectType_OBJECT_TABCONSTRAINT:
			return "ALTER " + objectTypeName(r.RelationType)
		}
		return "ALTER " + objectTypeName(r.RenameType)
	case n.GetAlterObjectSchemaStmt() != nil:
		return "ALTER " + objectTypeName(n.GetAlterObjectSchemaStmt().ObjectType)
	case n.GetAlterOwnerStmt() != nil:
		return "ALTER " + objectTypeName(n.GetAlterOwnerStmt().ObjectType)
	case n.GetDefineStmt() != nil:
		return "CREATE " + objectTypeName(n.GetDefineStmt().Kind)
	case n.GetCommentStmt() != nil:
		return "COMMENT"
	case n.GetGrantStmt() != nil:
		if n.GetGrantStmt().IsGrant {
			return "GRANT"
		}
		return "REVOKE"
	case n.GetGrantRoleStmt() != nil:
		if n.GetGrantRoleStmt().IsGrant {
			return "GRANT ROLE"
		}
		return "REVOKE ROLE"
	case n.GetVacuumStmt() != nil:
		if n.GetVacuumStmt().IsVacuumcmd {
			return "VACUUM"
		}
		return "ANALYZE"
	case n.GetExplainStmt() != nil:
		return "EXPLAIN"
	case n.GetDoStmt() != nil:
		return "DO"
	case n.GetLockStmt() != nil:
		return "LOCK TABLE"
	case n.GetCheckPointStmt() != nil:
		return "CHECKPOINT"
	case n.GetCreateTableAsStmt() != nil:
		if n.GetCreateTableAsStmt().Objtype == pg.ObjectType_OBJECT_MATVIEW {
			return "CREATE MATERIALIZED VIEW"
		}
		return "CREATE TABLE AS"
	case n.GetRefreshMatViewStmt() != nil:
		return "REFRESH MATERIALIZED VIEW"
	case n.GetDropStmt() != nil:
		return "DROP " + objectTypeName(n.GetDropStmt().RemoveType)
	}
	// Otherwise the node's name, CreateSchemaStmt → CREATE SCHEMA.
	name := fmt.Sprintf("%T", n.GetNode())
	name = name[strings.LastIndexByte(name, '_')+1:]
	name = strings.TrimSuffix(name, "Stmt")
	for _, fix := range []struct{ from, to string }{
		{"Index", "CreateIndex"}, {"CreateTrig", "CreateTrigger"}, {"CreateSeq", "CreateSequence"},
		{"AlterSeq", "AlterSequence"}, {"Createdb", "CreateDatabase"}, {"Dropdb", "DropDatabase"},
		{"Rule", "CreateRule"}, {"CreateEnum", "CreateType"},
		{"CompositeType", "CreateType"}, {"CreateRange", "CreateType"}, {"AlterEnum", "AlterType"},
		{"CreateFdw", "CreateForeignDataWrapper"}, {"CreateForeignServer", "CreateServer"},
		{"CreatePLang", "CreateLanguage"}, {"CreateTableSpace", "CreateTablespace"},
		{"ClosePortal", "Close"}, {"Truncate", "TruncateTable"},
	} {
		if name == fix.from {
			name = fix.to
			break
		}
	}
	var b strings.Builder
	for i, r := range name {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte(' ')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// objectTypeName is the SQL name of an object type: OBJECT_MATVIEW →
// MATERIALIZED VIEW.
func objectTypeName(t pg.ObjectType) string {
	switch t {
	case pg.ObjectType_OBJECT_MATVIEW:
		return "MATERIALIZED VIEW"
	case pg.ObjectType_OBJECT_FOREIGN_TABLE:
		return "FOREIGN TABLE"
	case pg.ObjectType_OBJECT_TABCONSTRAINT:
		return "TABLE"
	}
	return strings.ReplaceAll(strings.TrimPrefix(t.String(), "OBJECT_"), "_", " ")
}
