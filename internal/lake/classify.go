package lake

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/sql/pgparse"
)

// Kind is the class of a statement. The list is finite and documented in
// docs/lake.md, one example each; every kind has its own handler.
type Kind uint8

// The statement kinds.
const (
	KindUnsupported Kind = iota
	KindProbeVersion
	KindProbeRegclass
	KindSelectConst
	KindDiscardAll
	KindBegin
	KindCommit
	KindRollback
	KindNamespaces
	KindColumns
	KindEnums
	KindComposites
	KindIndexes
	KindSelect
	KindCopyOut
	KindCopyIn
	KindInsert
	KindUpdate
	KindDelete
	KindCreateTable
	KindDropTable
	KindSchemata
	KindInfoColumns
	KindCreateSchema
	numKinds
)

var kindNames = [...]string{
	KindUnsupported:   "unsupported",
	KindProbeVersion:  "probe_version",
	KindProbeRegclass: "probe_regclass",
	KindSelectConst:   "select_const",
	KindDiscardAll:    "discard_all",
	KindBegin:         "begin",
	KindCommit:        "commit",
	KindRollback:      "rollback",
	KindNamespaces:    "introspect_namespaces",
	KindColumns:       "introspect_columns",
	KindEnums:         "introspect_enums",
	KindComposites:    "introspect_composites",
	KindIndexes:       "introspect_indexes",
	KindSelect:        "select",
	KindCopyOut:       "copy_out",
	KindCopyIn:        "copy_in",
	KindInsert:        "insert",
	KindUpdate:        "update",
	KindDelete:        "delete",
	KindCreateTable:   "create_table",
	KindDropTable:     "drop_table",
	KindSchemata:      "introspect_schemata",
	KindInfoColumns:   "introspect_info_columns",
	KindCreateSchema:  "create_schema",
}

func (k Kind) String() string { return kindNames[k] }

// Statement is one classified statement: its kind, its text, and the
// plan its handler runs. Classification reads only the statement, never
// the catalog: names are resolved when the handler runs.
type Statement struct {
	Kind Kind
	Text string

	sel    *selectPlan
	copyIn *copyInPlan
	copyFmt
	insert *insertPlan
	update *updatePlan
	delete *deletePlan
	create *createPlan
	drop   *dropPlan
	schema *createSchemaPlan
	// regclass is the argument of to_regclass.
	regclass string
	// filter restricts the introspection of columns to one schema list
	// and relation (DuckDB reloads one table at a time).
	filter introspectFilter
	// constCols are the outputs of a SELECT without FROM.
	constCols []eConst
	// limit is a constant SELECT's LIMIT (-1: none); for the version
	// probe, its number of output columns.
	limit int64
	// err is the refusal of a KindUnsupported statement.
	err *sqlError
}

// copyFmt is the format of a COPY.
type copyFmt struct {
	binary  bool
	nullStr string
}

type introspectFilter struct {
	schemas []string
	rel     string
}

type target struct {
	e    expr
	name string
}

// selectPlan is SELECT targets FROM one relation (or one subquery over
// one relation) [WHERE ...] [LIMIT n].
type selectPlan struct {
	from    relRef
	sub     *selectPlan
	alias   string
	targets []target
	where   expr
	limit   int64 // -1 for none
}

type insertPlan struct {
	rel  relRef
	cols []string
	rows [][]expr
}

// valuesRel is WITH name(cols) AS (VALUES ...) or a FROM relation of an
// UPDATE.
type valuesRel struct {
	name string
	cols []string
	rows [][]expr
}

type setClause struct {
	col string
	e   expr
}

type updatePlan struct {
	rel       relRef
	alias     string
	sets      []setClause
	values    *valuesRel // WITH ... AS (VALUES ...) ... FROM name
	fromRel   *relRef    // FROM a table (the temporary table of the UPDATE path)
	fromAlias string
	where     expr
}

type deletePlan struct {
	rel   relRef
	where expr
}

type createPlan struct {
	rel          relRef
	cols         []Column
	pk           []string
	ifNotExists  bool
	temp         bool
	onCommitDrop bool
}

type dropPlan struct {
	rels      []relRef
	missingOK bool
}

type copyInPlan struct {
	rel  relRef
	cols []string
}

// Classify parses a Query message's text into classified statements, in
// order. A syntax error fails the whole text (42601), as PostgreSQL
// does; an unrecognized statement becomes KindUnsupported with the error
// its handler answers, so that statements before it still run.
func Classify(sql string) ([]*Statement, error) {
	tree, err := pgparse.Parse(sql)
	if err != nil {
		return nil, errorf(codeSyntax, "%s", err.Error())
	}
	out := make([]*Statement, 0, len(tree.Stmts))
	for _, raw := range tree.Stmts {
		text := stmtText(sql, raw)
		st, err := classifyNode(raw.Stmt, text)
		if err != nil {
			out = append(out, &Statement{Kind: KindUnsupported, Text: text, err: refusal(text, asSQLError(err))})
			continue
		}
		st.Text = text
		out = append(out, st)
	}
	return out, nil
}

// refusal makes a classification error name the whole statement; what
// part of it is outside the surface goes in the detail.
func refusal(text string, err *sqlError) *sqlError {
	if err.code != codeUnsupported {
		return err
	}
	part := strings.TrimPrefix(err.msg, unsupportedPrefix)
	out := errUnsupported(summary(text))
	if part != summary(text) {
		out.detail = "Not supported: " + part + "."
	}
	return out
}

func stmtText(sql string, raw *pg.RawStmt) string {
	start := int(raw.StmtLocation)
	end := len(sql)
	if raw.StmtLen > 0 {
		end = start + int(raw.StmtLen)
	}
	if start > len(sql) || end > len(sql) || start > end {
		return strings.TrimSpace(sql)
	}
	return strings.TrimSpace(sql[start:end])
}

// summary shortens a statement's text for messages.
func summary(text string) string {
	s := strings.Join(strings.Fields(text), " ")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

func classifyNode(n *pg.Node, text string) (*Statement, error) {
	switch {
	case n.GetTransactionStmt() != nil:
		return classifyTransaction(n.GetTransactionStmt(), text)
	case n.GetDiscardStmt() != nil:
		if n.GetDiscardStmt().Target != pg.DiscardMode_DISCARD_ALL {
			return nil, errUnsupported(summary(text))
		}
		return &Statement{Kind: KindDiscardAll}, nil
	case n.GetSelectStmt() != nil:
		return classifySelect(n.GetSelectStmt(), text)
	case n.GetCopyStmt() != nil:
		return classifyCopy(n.GetCopyStmt(), text)
	case n.GetInsertStmt() != nil:
		return classifyInsert(n.GetInsertStmt(), text)
	case n.GetUpdateStmt() != nil:
		return classifyUpdate(n.GetUpdateStmt(), text)
	case n.GetDeleteStmt() != nil:
		return classifyDelete(n.GetDeleteStmt(), text)
	case n.GetCreateStmt() != nil:
		return classifyCreate(n.GetCreateStmt(), text)
	case n.GetDropStmt() != nil:
		return classifyDrop(n.GetDropStmt(), text)
	case n.GetCreateSchemaStmt() != nil:
		return classifyCreateSchema(n.GetCreateSchemaStmt(), text)
	}
	return nil, errUnsupported(summary(text))
}

func classifyTransaction(ts *pg.TransactionStmt, text string) (*Statement, error) {
	switch ts.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_BEGIN, pg.TransactionStmtKind_TRANS_STMT_START:
		for _, o := range ts.Options {
			de := o.GetDefElem()
			if de == nil {
				return nil, errUnsupported(summary(text))
			}
			switch de.Defname {
			case "transaction_isolation":
				level := strings.ToLower(de.Arg.GetAConst().GetSval().GetSval())
				if level != "repeatable read" && level != "serializable" {
					return nil, errUnsupported("isolation level " + level + " (RockLake runs every transaction as REPEATABLE READ)")
				}
			default:
				return nil, errUnsupported(summary(text))
			}
		}
		return &Statement{Kind: KindBegin}, nil
	case pg.TransactionStmtKind_TRANS_STMT_COMMIT:
		if ts.Chain {
			return nil, errUnsupported(summary(text))
		}
		return &Statement{Kind: KindCommit}, nil
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		if ts.Chain {
			return nil, errUnsupported(summary(text))
		}
		return &Statement{Kind: KindRollback}, nil
	}
	return nil, errUnsupported(summary(text))
}

// fromNames lists the relations a FROM clause names, through joins.
func fromNames(nodes []*pg.Node) []string {
	var out []string
	var walk func(n *pg.Node)
	walk = func(n *pg.Node) {
		switch {
		case n == nil:
		case n.GetRangeVar() != nil:
			out = append(out, n.GetRangeVar().Relname)
		case n.GetJoinExpr() != nil:
			walk(n.GetJoinExpr().Larg)
			walk(n.GetJoinExpr().Rarg)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	return out
}

func hasAll(have []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			if h == w {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func classifySelect(s *pg.SelectStmt, text string) (*Statement, error) {
	// postgres_scanner's introspection: recognized by the catalogs it reads.
	if s.Op == pg.SetOperation_SETOP_UNION && s.Larg != nil {
		names := fromNames(s.Larg.FromClause)
		if hasAll(names, "pg_class", "pg_attribute", "pg_namespace", "pg_type") {
			return &Statement{Kind: KindColumns, filter: columnsFilter(s.Larg.WhereClause)}, nil
		}
		return nil, errUnsupported(summary(text))
	}
	if s.Op != pg.SetOperation_SETOP_NONE || s.WithClause != nil || len(s.DistinctClause) > 0 ||
		len(s.GroupClause) > 0 || s.HavingClause != nil || len(s.WindowClause) > 0 ||
		len(s.LockingClause) > 0 || s.IntoClause != nil || len(s.ValuesLists) > 0 || s.LimitOffset != nil {
		return nil, errUnsupported(summary(text))
	}
	names := fromNames(s.FromClause)
	if len(s.FromClause) == 1 && s.FromClause[0].GetRangeVar() != nil &&
		s.FromClause[0].GetRangeVar().Schemaname == "information_schema" {
		switch names[0] {
		case "schemata":
			return &Statement{Kind: KindSchemata}, nil
		case "columns":
			return &Statement{Kind: KindInfoColumns, filter: columnsFilter(s.WhereClause)}, nil
		}
		return nil, errUnsupported(summary(text))
	}
	switch {
	case len(names) == 1 && names[0] == "pg_namespace" && len(s.FromClause) == 1 && s.FromClause[0].GetRangeVar() != nil:
		return &Statement{Kind: KindNamespaces}, nil
	case hasAll(names, "pg_enum", "pg_type"):
		return &Statement{Kind: KindEnums}, nil
	case hasAll(names, "pg_type", "pg_class", "pg_attribute"):
		return &Statement{Kind: KindComposites}, nil
	case hasAll(names, "pg_indexes"):
		return &Statement{Kind: KindIndexes}, nil
	}
	if len(s.FromClause) == 0 {
		return classifyProbe(s, text)
	}
	if len(s.SortClause) > 0 {
		return nil, errUnsupported(summary(text))
	}
	plan, err := convertSelect(s, text)
	if err != nil {
		return nil, err
	}
	return &Statement{Kind: KindSelect, sel: plan}, nil
}

// columnsFilter reads "pg_namespace.nspname IN (...)" and "relname = '...'"
// from the WHERE clause of the introspection's first branch.
func columnsFilter(where *pg.Node) introspectFilter {
	var f introspectFilter
	var walk func(n *pg.Node)
	walk = func(n *pg.Node) {
		if n == nil {
			return
		}
		if be := n.GetBoolExpr(); be != nil {
			for _, a := range be.Args {
				walk(a)
			}
			return
		}
		ae := n.GetAExpr()
		if ae == nil {
			return
		}
		e, err := convertAExpr(ae)
		if err != nil {
			return
		}
		switch e := e.(type) {
		case eIn:
			if c, ok := e.e.(eCol); ok && !e.not && (c.name == "nspname" || c.name == "table_schema") {
				for _, item := range e.list {
					if k, ok := item.(eConst); ok {
						f.schemas = append(f.schemas, k.v.S)
					}
				}
			}
		case eCmp:
			if c, ok := e.l.(eCol); ok && (c.name == "relname" || c.name == "table_name") && e.op == "=" {
				if k, ok := e.r.(eConst); ok {
					f.rel = k.v.S
				}
			}
			if c, ok := e.l.(eCol); ok && (c.name == "nspname" || c.name == "table_schema") && e.op == "=" {
				if k, ok := e.r.(eConst); ok {
					f.schemas = append(f.schemas, k.v.S)
				}
			}
		}
	}
	walk(where)
	return f
}

// classifyProbe handles SELECT without FROM: the version probe, the
// to_regclass probe and constant selects (SELECT 1, SELECT NULL, NULL
// LIMIT 1).
func classifyProbe(s *pg.SelectStmt, text string) (*Statement, error) {
	if len(s.TargetList) == 0 {
		return nil, errUnsupported(summary(text))
	}
	first := s.TargetList[0].GetResTarget().GetVal()
	if fc := first.GetFuncCall(); fc != nil {
		switch funcName(fc) {
		case "version":
			// version() alone, or with postgres_scanner's RDS probe
			// (SELECT COUNT(*) FROM pg_settings WHERE name LIKE 'rds%').
			switch {
			case len(s.TargetList) == 1:
				return &Statement{Kind: KindProbeVersion}, nil
			case len(s.TargetList) == 2 && s.TargetList[1].GetResTarget().GetVal().GetSubLink() != nil &&
				hasAll(fromNames(s.TargetList[1].GetResTarget().GetVal().GetSubLink().GetSubselect().GetSelectStmt().GetFromClause()), "pg_settings"):
				return &Statement{Kind: KindProbeVersion, limit: 2}, nil
			}
		case "to_regclass":
			if len(s.TargetList) == 1 && len(fc.Args) == 1 && fc.Args[0].GetAConst().GetSval() != nil {
				return &Statement{Kind: KindProbeRegclass, regclass: fc.Args[0].GetAConst().GetSval().Sval}, nil
			}
		}
		return nil, errUnsupported(summary(text))
	}
	st := &Statement{Kind: KindSelectConst, limit: -1}
	for _, t := range s.TargetList {
		rt := t.GetResTarget()
		c := rt.GetVal().GetAConst()
		if c == nil || rt.Name != "" {
			return nil, errUnsupported(summary(text))
		}
		e, err := convertConst(c)
		if err != nil {
			return nil, err
		}
		st.constCols = append(st.constCols, e.(eConst))
	}
	if s.LimitCount != nil {
		n, ok := constInt(s.LimitCount)
		if !ok {
			return nil, errUnsupported(summary(text))
		}
		st.limit = n
	}
	return st, nil
}

func constInt(n *pg.Node) (int64, bool) {
	c := n.GetAConst()
	if c == nil || c.GetIval() == nil {
		return 0, false
	}
	return int64(c.GetIval().Ival), true
}

// convertSelect builds the plan of a scan: targets are column references
// (ctid included) or NULL.
func convertSelect(s *pg.SelectStmt, text string) (*selectPlan, error) {
	if len(s.FromClause) != 1 || len(s.SortClause) > 0 || len(s.GroupClause) > 0 || len(s.DistinctClause) > 0 ||
		s.Op != pg.SetOperation_SETOP_NONE || s.WithClause != nil || s.LimitOffset != nil || s.HavingClause != nil {
		return nil, errUnsupported(summary(text))
	}
	p := &selectPlan{limit: -1}
	from := s.FromClause[0]
	switch {
	case from.GetRangeVar() != nil:
		rv := from.GetRangeVar()
		p.from = rangeVarRef(rv)
		p.alias = rv.Relname
		if rv.Alias != nil {
			p.alias = rv.Alias.Aliasname
		}
	case from.GetRangeSubselect() != nil:
		rs := from.GetRangeSubselect()
		inner := rs.Subquery.GetSelectStmt()
		if inner == nil {
			return nil, errUnsupported(summary(text))
		}
		sub, err := convertSelect(inner, text)
		if err != nil {
			return nil, err
		}
		p.sub = sub
		if rs.Alias != nil {
			p.alias = rs.Alias.Aliasname
		}
	default:
		return nil, errUnsupported(summary(text))
	}
	for _, t := range s.TargetList {
		rt := t.GetResTarget()
		val := rt.GetVal()
		if cr := val.GetColumnRef(); cr != nil {
			if len(cr.Fields) == 1 && cr.Fields[0].GetAStar() != nil {
				return nil, errUnsupported("SELECT *")
			}
		}
		e, err := convertExpr(val)
		if err != nil {
			return nil, err
		}
		switch x := e.(type) {
		case eCol:
			name := x.name
			if rt.Name != "" {
				name = rt.Name
			}
			p.targets = append(p.targets, target{e: e, name: name})
		case eConst:
			if !x.v.Null {
				return nil, errUnsupported(summary(text))
			}
			name := "?column?"
			if rt.Name != "" {
				name = rt.Name
			}
			p.targets = append(p.targets, target{e: e, name: name})
		default:
			return nil, errUnsupported(summary(text))
		}
	}
	where, err := convertExpr(s.WhereClause)
	if err != nil {
		return nil, err
	}
	p.where = where
	if s.LimitCount != nil {
		n, ok := constInt(s.LimitCount)
		if !ok {
			return nil, errUnsupported(summary(text))
		}
		p.limit = n
	}
	return p, nil
}

func classifyCopy(c *pg.CopyStmt, text string) (*Statement, error) {
	if c.IsProgram || c.Filename != "" || c.WhereClause != nil {
		return nil, errUnsupported(summary(text))
	}
	f := copyFmt{nullStr: `\N`}
	for _, o := range c.Options {
		de := o.GetDefElem()
		if de == nil {
			return nil, errUnsupported(summary(text))
		}
		arg := ""
		if de.Arg != nil {
			if s := de.Arg.GetString_(); s != nil {
				arg = s.Sval
			} else if s := de.Arg.GetAConst().GetSval(); s != nil {
				arg = s.Sval
			}
		}
		switch de.Defname {
		case "format":
			switch strings.ToLower(arg) {
			case "binary":
				f.binary = true
			case "text":
			default:
				return nil, errUnsupported(summary(text) + " (format " + arg + ")")
			}
		case "null":
			f.nullStr = arg
		default:
			return nil, errUnsupported(summary(text) + " (option " + de.Defname + ")")
		}
	}
	if c.IsFrom {
		if c.Relation == nil {
			return nil, errUnsupported(summary(text))
		}
		p := &copyInPlan{rel: rangeVarRef(c.Relation)}
		for _, a := range c.Attlist {
			p.cols = append(p.cols, a.GetString_().GetSval())
		}
		return &Statement{Kind: KindCopyIn, copyIn: p, copyFmt: f}, nil
	}
	var sel *selectPlan
	switch {
	case c.Query != nil && c.Query.GetSelectStmt() != nil:
		p, err := convertSelect(c.Query.GetSelectStmt(), text)
		if err != nil {
			return nil, err
		}
		sel = p
	case c.Relation != nil:
		// COPY table [(cols)] TO STDOUT is SELECT cols FROM table.
		sel = &selectPlan{from: rangeVarRef(c.Relation), alias: c.Relation.Relname, limit: -1}
		if len(c.Attlist) == 0 {
			sel.targets = nil // all columns, filled in when bound
		}
		for _, a := range c.Attlist {
			name := a.GetString_().GetSval()
			sel.targets = append(sel.targets, target{e: eCol{name: name}, name: name})
		}
	default:
		return nil, errUnsupported(summary(text))
	}
	return &Statement{Kind: KindCopyOut, sel: sel, copyFmt: f}, nil
}

func convertValues(lists []*pg.Node) ([][]expr, error) {
	var rows [][]expr
	for _, l := range lists {
		var row []expr
		for _, item := range l.GetList().Items {
			if item.GetSetToDefault() != nil {
				return nil, errUnsupported("DEFAULT in VALUES")
			}
			e, err := convertExpr(item)
			if err != nil {
				return nil, err
			}
			row = append(row, e)
		}
		if len(rows) > 0 && len(row) != len(rows[0]) {
			return nil, errorf(codeSyntax, "VALUES lists must all be the same length")
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func classifyInsert(ins *pg.InsertStmt, text string) (*Statement, error) {
	sel := ins.SelectStmt.GetSelectStmt()
	if sel == nil || len(sel.ValuesLists) == 0 || ins.OnConflictClause != nil || len(ins.ReturningList) > 0 ||
		ins.WithClause != nil {
		return nil, errUnsupported(summary(text))
	}
	p := &insertPlan{rel: rangeVarRef(ins.Relation)}
	for _, c := range ins.Cols {
		p.cols = append(p.cols, c.GetResTarget().Name)
	}
	rows, err := convertValues(sel.ValuesLists)
	if err != nil {
		return nil, err
	}
	p.rows = rows
	return &Statement{Kind: KindInsert, insert: p}, nil
}

func classifyUpdate(u *pg.UpdateStmt, text string) (*Statement, error) {
	if len(u.ReturningList) > 0 || len(u.FromClause) > 1 {
		return nil, errUnsupported(summary(text))
	}
	p := &updatePlan{rel: rangeVarRef(u.Relation), alias: u.Relation.Relname}
	if u.Relation.Alias != nil {
		p.alias = u.Relation.Alias.Aliasname
	}
	for _, t := range u.TargetList {
		rt := t.GetResTarget()
		if len(rt.Indirection) > 0 {
			return nil, errUnsupported(summary(text))
		}
		e, err := convertExpr(rt.Val)
		if err != nil {
			return nil, err
		}
		p.sets = append(p.sets, setClause{col: rt.Name, e: e})
	}
	var ctes = map[string]*valuesRel{}
	if u.WithClause != nil {
		if u.WithClause.Recursive {
			return nil, errUnsupported(summary(text))
		}
		for _, c := range u.WithClause.Ctes {
			cte := c.GetCommonTableExpr()
			q := cte.GetCtequery().GetSelectStmt()
			if q == nil || len(q.ValuesLists) == 0 {
				return nil, errUnsupported(summary(text) + " (WITH other than VALUES)")
			}
			rows, err := convertValues(q.ValuesLists)
			if err != nil {
				return nil, err
			}
			v := &valuesRel{name: cte.Ctename, rows: rows}
			for _, a := range cte.Aliascolnames {
				v.cols = append(v.cols, a.GetString_().GetSval())
			}
			for i := len(v.cols); i < len(rows[0]); i++ {
				v.cols = append(v.cols, "column"+strconv.Itoa(i+1))
			}
			if len(v.cols) != len(rows[0]) {
				return nil, errorf("42P10", "WITH query %q has %d columns available but %d columns specified", v.name, len(rows[0]), len(v.cols))
			}
			ctes[v.name] = v
		}
	}
	if len(u.FromClause) == 1 {
		rv := u.FromClause[0].GetRangeVar()
		if rv == nil {
			return nil, errUnsupported(summary(text))
		}
		alias := rv.Relname
		if rv.Alias != nil {
			alias = rv.Alias.Aliasname
		}
		if v, ok := ctes[rv.Relname]; ok && rv.Schemaname == "" {
			v.name = alias
			p.values = v
		} else {
			r := rangeVarRef(rv)
			p.fromRel = &r
			p.fromAlias = alias
		}
	} else if len(ctes) > 0 {
		return nil, errUnsupported(summary(text) + " (WITH without FROM)")
	}
	where, err := convertExpr(u.WhereClause)
	if err != nil {
		return nil, err
	}
	p.where = where
	return &Statement{Kind: KindUpdate, update: p}, nil
}

func classifyDelete(d *pg.DeleteStmt, text string) (*Statement, error) {
	if len(d.UsingClause) > 0 || len(d.ReturningList) > 0 || d.WithClause != nil {
		return nil, errUnsupported(summary(text))
	}
	where, err := convertExpr(d.WhereClause)
	if err != nil {
		return nil, err
	}
	return &Statement{Kind: KindDelete, delete: &deletePlan{rel: rangeVarRef(d.Relation), where: where}}, nil
}

func classifyCreate(c *pg.CreateStmt, text string) (*Statement, error) {
	if len(c.InhRelations) > 0 || c.Partspec != nil || c.OfTypename != nil || len(c.Options) > 0 {
		return nil, errUnsupported(summary(text))
	}
	p := &createPlan{rel: rangeVarRef(c.Relation), ifNotExists: c.IfNotExists}
	switch c.Relation.Relpersistence {
	case "t":
		p.temp = true
	case "p", "":
	default:
		return nil, errUnsupported(summary(text) + " (UNLOGGED)")
	}
	switch c.Oncommit {
	case pg.OnCommitAction_ONCOMMIT_DROP:
		p.onCommitDrop = true
	case pg.OnCommitAction_ONCOMMIT_NOOP, pg.OnCommitAction_ON_COMMIT_ACTION_UNDEFINED:
	default:
		return nil, errUnsupported(summary(text))
	}
	if p.temp && !p.onCommitDrop {
		return nil, errUnsupported("temporary tables other than ON COMMIT DROP")
	}
	for _, elt := range c.TableElts {
		switch {
		case elt.GetColumnDef() != nil:
			cd := elt.GetColumnDef()
			t, err := convertTypeName(cd.TypeName)
			if err != nil {
				return nil, err
			}
			if len(cd.TypeName.Typmods) > 0 {
				return nil, errUnsupported(summary(text) + " (type modifiers)")
			}
			col := Column{Name: cd.Colname, Type: t}
			for _, cn := range cd.Constraints {
				con := cn.GetConstraint()
				switch con.Contype {
				case pg.ConstrType_CONSTR_PRIMARY:
					p.pk = append(p.pk, cd.Colname)
					col.NotNull = true
				case pg.ConstrType_CONSTR_NOTNULL:
					col.NotNull = true
				case pg.ConstrType_CONSTR_NULL:
				default:
					return nil, errUnsupported(summary(text) + " (column constraint)")
				}
			}
			p.cols = append(p.cols, col)
		case elt.GetConstraint() != nil:
			con := elt.GetConstraint()
			if con.Contype != pg.ConstrType_CONSTR_PRIMARY || len(p.pk) > 0 {
				return nil, errUnsupported(summary(text) + " (table constraint)")
			}
			for _, k := range con.Keys {
				p.pk = append(p.pk, k.GetString_().GetSval())
			}
		default:
			return nil, errUnsupported(summary(text))
		}
	}
	return &Statement{Kind: KindCreateTable, create: p}, nil
}

func classifyDrop(d *pg.DropStmt, text string) (*Statement, error) {
	if d.RemoveType != pg.ObjectType_OBJECT_TABLE || d.Behavior == pg.DropBehavior_DROP_CASCADE || d.Concurrent {
		return nil, errUnsupported(summary(text))
	}
	p := &dropPlan{missingOK: d.MissingOk}
	for _, o := range d.Objects {
		var parts []string
		for _, item := range o.GetList().Items {
			parts = append(parts, item.GetString_().GetSval())
		}
		switch len(parts) {
		case 1:
			p.rels = append(p.rels, relRef{name: parts[0]})
		case 2:
			p.rels = append(p.rels, relRef{schema: parts[0], name: parts[1]})
		default:
			return nil, errUnsupported(summary(text))
		}
	}
	return &Statement{Kind: KindDropTable, drop: p}, nil
}
