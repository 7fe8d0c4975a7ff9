package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"
)

// ColumnName returns the name PostgreSQL gives an unaliased select-list
// or RETURNING item n (FigureColname in parse_target.c): a column keeps
// its name, a function call takes the function's, CAST the inner name or
// else the type's, CASE its ELSE's or "case", and anything else is
// "?column?".
func ColumnName(n *pg.Node) string { return figureColname(n) }

func figureColname(n *pg.Node) string {
	if name, strength := colnameOf(n); strength > 0 {
		return name
	}
	return "?column?"
}

// colnameOf returns a name and how good it is: 2 for a real name, 1 for a
// fallback such as a type name or "case", 0 for none.
func colnameOf(n *pg.Node) (string, int) {
	if n == nil || n.Node == nil {
		return "", 0
	}
	switch x := n.Node.(type) {
	case *pg.Node_ColumnRef:
		name := ""
		for _, f := range x.ColumnRef.Fields {
			if s := f.GetString_(); s != nil {
				name = s.Sval
			}
		}
		if name != "" {
			return name, 2
		}
	case *pg.Node_AIndirection:
		name := ""
		for _, f := range x.AIndirection.Indirection {
			if s := f.GetString_(); s != nil {
				name = s.Sval
			}
		}
		if name != "" {
			return name, 2
		}
		return colnameOf(x.AIndirection.Arg)
	case *pg.Node_FuncCall:
		_, name := funcName(x.FuncCall.Funcname)
		return name, 2
	case *pg.Node_AExpr:
		if x.AExpr.Kind == pg.A_Expr_Kind_AEXPR_NULLIF {
			return "nullif", 2
		}
	case *pg.Node_TypeCast:
		name, strength := colnameOf(x.TypeCast.Arg)
		if strength <= 1 && x.TypeCast.TypeName != nil && len(x.TypeCast.TypeName.Names) > 0 {
			names := x.TypeCast.TypeName.Names
			return names[len(names)-1].GetString_().GetSval(), 1
		}
		return name, strength
	case *pg.Node_CollateClause:
		return colnameOf(x.CollateClause.Arg)
	case *pg.Node_GroupingFunc:
		return "grouping", 2
	case *pg.Node_SubLink:
		switch x.SubLink.SubLinkType {
		case pg.SubLinkType_EXISTS_SUBLINK:
			return "exists", 2
		case pg.SubLinkType_ARRAY_SUBLINK:
			return "array", 2
		case pg.SubLinkType_EXPR_SUBLINK:
			if sel := x.SubLink.Subselect.GetSelectStmt(); sel != nil && len(sel.TargetList) > 0 {
				if rt := sel.TargetList[0].GetResTarget(); rt != nil {
					if rt.Name != "" {
						return rt.Name, 2
					}
					return colnameOf(rt.Val)
				}
			}
		}
	case *pg.Node_CaseExpr:
		name, strength := colnameOf(x.CaseExpr.Defresult)
		if strength <= 1 {
			return "case", 1
		}
		return name, strength
	case *pg.Node_AArrayExpr:
		return "array", 2
	case *pg.Node_RowExpr:
		return "row", 2
	case *pg.Node_CoalesceExpr:
		return "coalesce", 2
	case *pg.Node_MinMaxExpr:
		if x.MinMaxExpr.Op == pg.MinMaxOp_IS_LEAST {
			return "least", 2
		}
		return "greatest", 2
	case *pg.Node_SqlvalueFunction:
		switch x.SqlvalueFunction.Op {
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
			return "current_date", 2
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME_N:
			return "current_time", 2
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
			return "current_timestamp", 2
		case pg.SQLValueFunctionOp_SVFOP_LOCALTIME, pg.SQLValueFunctionOp_SVFOP_LOCALTIME_N:
			return "localtime", 2
		case pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
			return "localtimestamp", 2
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:
			return "current_role", 2
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_USER:
			return "current_user", 2
		case pg.SQLValueFunctionOp_SVFOP_USER:
			return "user", 2
		case pg.SQLValueFunctionOp_SVFOP_SESSION_USER:
			return "session_user", 2
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
			return "current_catalog", 2
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
			return "current_schema", 2
		}
	case *pg.Node_XmlSerialize:
		return "xmlserialize", 2
	}
	return "", 0
}
