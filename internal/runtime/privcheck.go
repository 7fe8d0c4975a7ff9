package runtime

import (
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/privilege"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/sql/ext"
	"github.com/rockstream/rockstream/internal/sql/pgparse"
	"github.com/rockstream/rockstream/internal/state"
)

// Privilege checks of statements, before they run: every relation a
// statement reads needs SELECT, the table it writes INSERT, UPDATE,
// DELETE or TRUNCATE (and SELECT when the statement also reads it: a
// WHERE, RETURNING, an UPDATE's SET that reads columns), a relation it
// drops or alters its owner's rights, and a relation it creates CREATE on
// the schema public. A view is read with its owner's rights: its reader
// needs SELECT on the view, the view's owner SELECT on what it reads. A
// materialized view needs SELECT on itself alone; its creator needs
// SELECT on what it reads.
//
// Relations are checked in PostgreSQL's order where one statement lacks
// several privileges: the written table first, then the relations each
// query level reads, outer levels first, then what views read.

// relRead is a relation a statement names, at query nesting depth depth.
type relRead struct {
	schema, name string
	depth        int
}

// cteScope is the CTE names visible at a point of a statement.
type cteScope struct {
	names map[string]bool
	outer *cteScope
}

func (c *cteScope) has(name string) bool {
	for ; c != nil; c = c.outer {
		if c.names[name] {
			return true
		}
	}
	return false
}

// readsOf returns the relations node reads, its CTEs left out where they
// are in scope.
func readsOf(node any, sc *cteScope, depth int) []relRead {
	var out []relRead
	collectReads(node, sc, depth, &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].depth < out[j].depth })
	return out
}

func collectReads(node any, sc *cteScope, depth int, out *[]relRead) {
	switch n := node.(type) {
	case nil:
		return
	case *pg.Node:
		if n == nil {
			return
		}
		walkFields(n, nil, sc, depth, out)
		return
	case *pg.RangeVar:
		if n == nil {
			return
		}
		if n.Schemaname == "" && sc.has(n.Relname) {
			return
		}
		*out = append(*out, relRead{schema: n.Schemaname, name: n.Relname, depth: depth})
		return
	case *pg.SelectStmt:
		if n == nil {
			return
		}
		inner := withCTEs(n.WithClause, sc, depth, out)
		walkFields(n, func(fd protoreflect.FieldDescriptor) bool { return fd.Name() == "with_clause" }, inner, depth+1, out)
		return
	}
	m, ok := node.(interface{ ProtoReflect() protoreflect.Message })
	if !ok {
		return
	}
	walkFields(m, nil, sc, depth, out)
}

// withCTEs collects what a WITH clause's queries read and returns the
// scope of the statement it heads. A CTE sees those before it, and all
// of them when the clause is RECURSIVE.
func withCTEs(w *pg.WithClause, sc *cteScope, depth int, out *[]relRead) *cteScope {
	if w == nil {
		return sc
	}
	all := &cteScope{names: map[string]bool{}, outer: sc}
	for _, c := range w.Ctes {
		all.names[c.GetCommonTableExpr().GetCtename()] = true
	}
	before := &cteScope{names: map[string]bool{}, outer: sc}
	for _, c := range w.Ctes {
		cte := c.GetCommonTableExpr()
		scope := before
		if w.Recursive {
			scope = all
		}
		collectReads(cte.GetCtequery(), scope, depth+1, out)
		before = &cteScope{names: map[string]bool{cte.GetCtename(): true}, outer: before}
	}
	return all
}

// walkFields collects the reads of m's message fields, but those skip
// says to leave out.
func walkFields(m interface{ ProtoReflect() protoreflect.Message }, skip func(protoreflect.FieldDescriptor) bool, sc *cteScope, depth int, out *[]relRead) {
	msg := m.ProtoReflect()
	if !msg.IsValid() {
		return
	}
	msg.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if skip != nil && skip(fd) {
			return true
		}
		switch {
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				collectReads(l.Get(i).Message().Interface(), sc, depth, out)
			}
		case fd.Kind() == protoreflect.MessageKind && !fd.IsMap():
			collectReads(v.Message().Interface(), sc, depth, out)
		}
		return true
	})
}

// hasColumnRef reports whether any of nodes refers to a column.
func hasColumnRef(nodes ...*pg.Node) bool {
	found := false
	for _, n := range nodes {
		pgWalk(n, func(x any) {
			if _, ok := x.(*pg.ColumnRef); ok {
				found = true
			}
		})
	}
	return found
}

// checkRequest is what one statement needs: privileges on relations it
// writes, reads (a read of a view checks what the view reads as its
// owner), owns and creates.
type checkRequest struct {
	writes []relNeed
	reads  []relRead
	owns   []*pg.RangeVar
	create bool // CREATE on the schema the object is created in
	// target names the object created, whose schema needs CREATE; nil:
	// the creation schema of the search path.
	target *pg.RangeVar
}

type relNeed struct {
	rv    *pg.RangeVar
	privs privilege.Privs
}

// requestOf returns what n needs; ok is false for a statement that needs
// nothing checked here.
func requestOf(n *pg.Node) (req checkRequest, ok bool) {
	switch {
	case n.GetSelectStmt() != nil:
		sel := n.GetSelectStmt()
		req.reads = readsOf(sel, nil, 0)
		req.create = sel.IntoClause != nil
		if req.create {
			req.target = sel.IntoClause.Rel
		}
	case n.GetInsertStmt() != nil:
		ins := n.GetInsertStmt()
		sc := withCTEs(ins.WithClause, nil, 0, &req.reads)
		need := privilege.Insert
		if len(ins.ReturningList) > 0 {
			need |= privilege.Select
		}
		if oc := ins.OnConflictClause; oc != nil {
			if oc.Infer != nil {
				need |= privilege.Select
			}
			if oc.Action == pg.OnConflictAction_ONCONFLICT_UPDATE {
				need |= privilege.Update
				if oc.WhereClause != nil || hasColumnRef(oc.TargetList...) {
					need |= privilege.Select
				}
			}
			req.reads = append(req.reads, readsOf(oc, sc, 1)...)
		}
		req.writes = []relNeed{{ins.Relation, need}}
		req.reads = append(req.reads, readsOf(ins.SelectStmt, sc, 0)...)
	case n.GetUpdateStmt() != nil:
		up := n.GetUpdateStmt()
		sc := withCTEs(up.WithClause, nil, 0, &req.reads)
		need := privilege.Update
		var values []*pg.Node
		for _, t := range up.TargetList {
			values = append(values, t.GetResTarget().GetVal())
		}
		if up.WhereClause != nil || len(up.FromClause) > 0 || len(up.ReturningList) > 0 || hasColumnRef(values...) {
			need |= privilege.Select
		}
		req.writes = []relNeed{{up.Relation, need}}
		for _, x := range append(append(append(values, up.WhereClause), up.FromClause...), up.ReturningList...) {
			req.reads = append(req.reads, readsOf(x, sc, 0)...)
		}
	case n.GetDeleteStmt() != nil:
		del := n.GetDeleteStmt()
		sc := withCTEs(del.WithClause, nil, 0, &req.reads)
		need := privilege.Delete
		if del.WhereClause != nil || len(del.UsingClause) > 0 || len(del.ReturningList) > 0 {
			need |= privilege.Select
		}
		req.writes = []relNeed{{del.Relation, need}}
		for _, x := range append(append([]*pg.Node{del.WhereClause}, del.UsingClause...), del.ReturningList...) {
			req.reads = append(req.reads, readsOf(x, sc, 0)...)
		}
	case n.GetTruncateStmt() != nil:
		for _, r := range n.GetTruncateStmt().Relations {
			req.writes = append(req.writes, relNeed{r.GetRangeVar(), privilege.Truncate})
		}
	case n.GetCopyStmt() != nil:
		c := n.GetCopyStmt()
		switch {
		case c.Query != nil:
			req.reads = readsOf(c.Query, nil, 0)
		case c.IsFrom:
			req.writes = []relNeed{{c.Relation, privilege.Insert}}
		default:
			req.writes = []relNeed{{c.Relation, privilege.Select}}
		}
	case n.GetDeclareCursorStmt() != nil:
		return requestOf(n.GetDeclareCursorStmt().Query)
	case n.GetExplainStmt() != nil:
		return requestOf(n.GetExplainStmt().Query)
	case n.GetCreateStmt() != nil:
		req.create, req.target = true, n.GetCreateStmt().Relation
	case n.GetViewStmt() != nil:
		req.create, req.target = true, n.GetViewStmt().View
	case n.GetCreateTableAsStmt() != nil:
		req.create = true
		req.target = n.GetCreateTableAsStmt().GetInto().GetRel()
		req.reads = readsOf(n.GetCreateTableAsStmt().Query, nil, 0)
	case n.GetDropStmt() != nil:
		ds := n.GetDropStmt()
		switch ds.RemoveType {
		case pg.ObjectType_OBJECT_TABLE, pg.ObjectType_OBJECT_VIEW, pg.ObjectType_OBJECT_MATVIEW:
		default:
			return req, false
		}
		for _, obj := range ds.Objects {
			items := obj.GetList().GetItems()
			if len(items) == 0 {
				continue
			}
			rv := &pg.RangeVar{Relname: items[len(items)-1].GetString_().GetSval()}
			if len(items) > 1 {
				rv.Schemaname = items[len(items)-2].GetString_().GetSval()
			}
			req.owns = append(req.owns, rv)
		}
	case n.GetCreateFunctionStmt() != nil:
		// A function is created in a schema as a relation is.
		req.create = true
		req.target = functionTarget(n.GetCreateFunctionStmt().Funcname, "")
	case n.GetAlterObjectSchemaStmt() != nil && n.GetAlterObjectSchemaStmt().ObjectType == pg.ObjectType_OBJECT_FUNCTION:
		as := n.GetAlterObjectSchemaStmt()
		req.create = true
		req.target = functionTarget(as.Object.GetObjectWithArgs().GetObjname(), as.Newschema)
	case n.GetAlterObjectSchemaStmt() != nil && isRelationSetSchema(n.GetAlterObjectSchemaStmt()):
		// As in PostgreSQL: the relation's owner moves it, into a schema
		// it may create in.
		as := n.GetAlterObjectSchemaStmt()
		req.owns = []*pg.RangeVar{as.Relation}
		req.create = true
		req.target = &pg.RangeVar{Schemaname: as.Newschema, Relname: as.Relation.Relname}
	case n.GetAlterTableStmt() != nil:
		req.owns = []*pg.RangeVar{n.GetAlterTableStmt().Relation}
	case n.GetIndexStmt() != nil:
		req.owns = []*pg.RangeVar{n.GetIndexStmt().Relation}
	case n.GetRenameStmt() != nil && n.GetRenameStmt().Relation != nil:
		req.owns = []*pg.RangeVar{n.GetRenameStmt().Relation}
	case n.GetCommentStmt() != nil:
		cs := n.GetCommentStmt()
		items := cs.Object.GetList().GetItems()
		switch cs.Objtype {
		case pg.ObjectType_OBJECT_TABLE, pg.ObjectType_OBJECT_VIEW, pg.ObjectType_OBJECT_MATVIEW:
		case pg.ObjectType_OBJECT_COLUMN:
			if len(items) > 0 {
				items = items[:len(items)-1]
			}
		default:
			return req, false
		}
		if len(items) > 0 {
			rv := &pg.RangeVar{Relname: items[len(items)-1].GetString_().GetSval()}
			if len(items) > 1 {
				rv.Schemaname = items[len(items)-2].GetString_().GetSval()
			}
			req.owns = []*pg.RangeVar{rv}
		}
	default:
		return req, false
	}
	return req, true
}

// functionTarget is the name a function named names is created under, in
// schema when set, for the CREATE check on its schema.
func functionTarget(names []*pg.Node, schema string) *pg.RangeVar {
	rv := &pg.RangeVar{}
	if len(names) > 0 {
		rv.Relname = names[len(names)-1].GetString_().GetSval()
	}
	if len(names) > 1 {
		rv.Schemaname = names[len(names)-2].GetString_().GetSval()
	}
	if schema != "" {
		rv.Schemaname = schema
	}
	return rv
}

// checkStatement checks the privileges n needs, for the session's
// current role.
func (s *Session) checkStatement(n *pg.Node) error {
	return s.withAccess(func(a *access) error {
		req, ok := requestOf(n)
		if !ok {
			return nil
		}
		return a.checkRequest(req)
	})
}

// withAccess runs check with the access of the session's current role;
// not at all for a superuser, so that its statements pay one lookup of
// the role, none while nothing commits (privmemo.go).
func (s *Session) withAccess(check func(a *access) error) error {
	r, cat, release := s.privView()
	defer release()
	var a *access
	var err error
	if role := s.currentRole(); s.readsOwnWrites() {
		a, err = s.accessOf(r, cat, role)
	} else {
		var rec *Role
		var m *roleMemo
		if rec, m, err = s.committedRole(role); err == nil {
			a, err = s.accessWith(r, cat, role, rec, m)
		}
	}
	if err != nil || a == nil {
		return err
	}
	return check(a)
}

func (a *access) checkRequest(req checkRequest) error {
	cat := a.cat
	if err := a.checkSchemaUsage(req); err != nil {
		return err
	}
	for _, rv := range req.owns {
		if o := cat.userObject(rv.Schemaname, rv.Relname); o != nil {
			if err := a.ownerRel(o, a.role); err != nil {
				return err
			}
		}
	}
	for _, w := range req.writes {
		if w.rv == nil {
			continue
		}
		if o := cat.userObject(w.rv.Schemaname, w.rv.Relname); o != nil {
			if err := a.checkRel(o, a.role, w.privs); err != nil {
				return err
			}
		}
	}
	if err := a.checkReads(req.reads, a.role); err != nil {
		return err
	}
	// A schema that does not exist is the statement's error (3F000), as
	// in PostgreSQL, not a missing privilege.
	if target := cat.targetSchema(req.target); req.create && cat.schemaExists(target) {
		sch, err := a.namedSchemaObject(target)
		if err != nil {
			return err
		}
		if err := a.g.Check(sch, a.role, privilege.Create); err != nil {
			return err
		}
	}
	return nil
}

// viewRead is a view whose query is to be checked with its owner's rights.
type viewRead struct {
	o     *object
	owner string
}

// checkReads checks that role may read every relation of reads, and the
// views' owners what their views read, level by level.
func (a *access) checkReads(reads []relRead, role string) error {
	seen := map[uint64]bool{}
	var views []viewRead
	var in *object // the view whose reads are checked; nil: the statement's
	check := func(reads []relRead, role string) error {
		for _, rd := range reads {
			o := a.cat.userObject(rd.schema, rd.name)
			if in != nil {
				o = a.cat.viewInput(in, rd)
			}
			if o == nil {
				continue
			}
			obj, err := a.relObject(o)
			if err != nil {
				return err
			}
			if err := a.g.Check(obj, role, privilege.Select); err != nil {
				return err
			}
			if o.kind == sql.View && o.query != nil && !seen[o.id] {
				seen[o.id] = true
				views = append(views, viewRead{o, obj.Owner})
			}
		}
		return nil
	}
	if err := check(reads, role); err != nil {
		return err
	}
	for len(views) > 0 {
		v := views[0]
		views = views[1:]
		in = v.o
		if err := check(readsOf(v.o.query, nil, 0), v.owner); err != nil {
			return err
		}
	}
	return nil
}

// checkExt checks the privileges of an extension statement: SUBSCRIBE
// and AS OF read, COPY and DECLARE check what they wrap, CREATE SOURCE
// and SINK need CREATE on the database and (a source makes a table)
// on the schema public, ALTER and DROP of one its owner's rights.
func (s *Session) checkExt(st ext.Statement) error {
	switch st.Kind {
	case ext.Subscribe, ext.ExplainIncremental, ext.AsOfEpoch, ext.CopyTo, ext.DeclareCursor,
		ext.CreateConnector, ext.AlterConnector, ext.DropConnector:
	default:
		return nil
	}
	return s.withAccess(func(a *access) error { return s.checkExtAs(a, st) })
}

// checkExtAs is checkExt for a session whose role is checked.
func (s *Session) checkExtAs(a *access, st ext.Statement) error {
	switch st.Kind {
	case ext.Subscribe, ext.ExplainIncremental:
		if st.Name != "" {
			return a.checkRequest(checkRequest{reads: []relRead{nameRead(st.Name)}})
		}
		return a.checkExtQuery(st.Query)
	case ext.AsOfEpoch:
		return a.checkExtQuery(st.Query)
	case ext.CopyTo, ext.DeclareCursor:
		if st.Inner != nil {
			return s.checkExtAs(a, *st.Inner)
		}
		return a.checkExtQuery(st.Query)
	case ext.CreateConnector, ext.AlterConnector, ext.DropConnector:
		return s.checkConnector(a, st)
	}
	return nil
}

// nameRead is a read of the relation name ("schema.name" or "name").
func nameRead(name string) relRead {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '.' {
			return relRead{schema: name[:i], name: name[i+1:]}
		}
	}
	return relRead{name: name}
}

// checkExtQuery checks the SQL an extension statement embeds; text that
// does not parse is left for the statement to report.
func (a *access) checkExtQuery(q string) error {
	if q == "" {
		return nil
	}
	tree, err := pgparse.Parse(q)
	if err != nil || len(tree.Stmts) != 1 {
		return nil
	}
	req, ok := requestOf(tree.Stmts[0].Stmt)
	if !ok {
		return nil
	}
	return a.checkRequest(req)
}

// checkConnector checks CREATE, ALTER and DROP of a source or sink.
func (s *Session) checkConnector(a *access, st ext.Statement) error {
	name := ""
	if st.Connector != nil {
		name = st.Connector.Name
	}
	if st.Kind == ext.CreateConnector {
		db, err := a.databaseObject(s.Setting("current_database"))
		if err != nil {
			return err
		}
		if err := a.g.Check(db, a.role, privilege.Create); err != nil {
			return err
		}
		if st.Connector != nil && st.Connector.Sink {
			return a.checkReads([]relRead{nameRead(st.Connector.From)}, a.role)
		}
		sch, err := a.schemaObject()
		if err != nil {
			return err
		}
		return a.g.Check(sch, a.role, privilege.Create)
	}
	db, err := a.databaseObject(s.Setting("current_database"))
	if err != nil {
		return err
	}
	if p, _ := a.g.Privileges(db, a.role); p&privilege.Create == 0 {
		kind := "source"
		if st.Connector != nil && st.Connector.Sink {
			kind = "sink"
		}
		return errs.Newf(errs.InsufficientPrivilege, "permission denied to change %s %s: altering and dropping sources and sinks needs CREATE on the database", kind, name)
	}
	return nil
}

// recordOwners stores the owner of the relations c has that old has not:
// the current role, with the default privileges it set, when it is a
// role of the catalog (else they stay the bootstrap superuser's).
func (s *Session) recordOwners(st state.Store, old, c *catalog) error {
	role := s.currentRole()
	if ro, err := readRole(st, role); err != nil || ro == nil {
		return err
	}
	def, err := readDefaultACL(st, role)
	if err != nil {
		return err
	}
	// A relation renamed or moved to another schema keeps its id, and so
	// its owner and privileges.
	had := make(map[uint64]bool, len(old.byName))
	for _, o := range old.byName {
		had[o.id] = true
	}
	for _, o := range c.byName {
		if had[o.id] || o.system != nil {
			continue
		}
		if err := writePriv(st, relPrivName(o.id), role, def); err != nil {
			return err
		}
	}
	return nil
}

// dropPrivileges removes a dropped relation's privilege record.
func dropPrivileges(st state.Store, o *object) error { return st.Delete(privKey(relPrivName(o.id))) }
