package runtime

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/rockstream/rockstream/internal/sql"
)

// displayQuery is view o's definition as pg_views and \d+ show it: with
// the current names of the relations and columns it reads, where an
// ALTER ... RENAME changed them since (PostgreSQL prints a view from its
// query tree, so it shows the new names too). A select-list column whose
// column was renamed keeps its output name with an alias. Column names
// are matched by name: a name that two inputs renamed differently is
// left as written. A relation is named as PostgreSQL prints it: alone
// when the reader's search path finds it, else qualified with its schema.
func (c *catalog) displayQuery(o *object) *pg.Node {
	if o.query == nil || o.inputs == nil {
		return o.query
	}
	rels := map[string]string{}
	// objs are the relations the names resolved to, by name as written.
	objs := map[string]*object{}
	cols := map[string]string{}
	ambiguous := map[string]bool{}
	for name, img := range o.inputs {
		cur := c.byID(img.ID)
		if cur == nil {
			continue
		}
		objs[name] = cur
		if sch, bare := c.splitKey(cur.name); bare != name && qualifiedName(sch, bare) != name {
			rels[name] = bare
		}
		if cur.kind != sql.Table {
			continue
		}
		for _, ic := range img.Cols {
			p := cur.attnumPos(ic.Attnum)
			if p < 0 || cur.cols[p].Name == ic.Name {
				continue
			}
			if n, ok := cols[ic.Name]; ok && n != cur.cols[p].Name {
				ambiguous[ic.Name] = true
			}
			cols[ic.Name] = cur.cols[p].Name
		}
	}
	for n := range ambiguous {
		delete(cols, n)
	}
	if len(rels) == 0 && len(cols) == 0 && c.allVisible(objs) {
		return o.query
	}
	q := proto.Clone(o.query).(*pg.Node)
	if sel := q.GetSelectStmt(); sel != nil {
		for _, t := range sel.TargetList {
			rt := t.GetResTarget()
			if rt == nil || rt.Name != "" {
				continue
			}
			if cr := rt.Val.GetColumnRef(); cr != nil && len(cr.Fields) > 0 {
				if s := cr.Fields[len(cr.Fields)-1].GetString_(); s != nil && cols[s.Sval] != "" {
					rt.Name = s.Sval
				}
			}
		}
	}
	pgWalk(q, func(v any) {
		switch x := v.(type) {
		case *pg.RangeVar:
			if cur, ok := objs[qualifiedName(x.Schemaname, x.Relname)]; ok {
				sch, bare := c.splitKey(cur.name)
				x.Relname, x.Schemaname = bare, ""
				if c.resolve(bare) != cur {
					x.Schemaname = sch
				}
			}
		case *pg.ColumnRef:
			for i, f := range x.Fields {
				s := f.GetString_()
				if s == nil {
					continue
				}
				if i == len(x.Fields)-1 {
					if n, ok := cols[s.Sval]; ok {
						s.Sval = n
					}
				} else if n, ok := rels[s.Sval]; ok {
					s.Sval = n
				}
			}
		}
	})
	return q
}

// allVisible reports whether the reader's search path finds each of objs
// under the name it was written with, unqualified.
func (c *catalog) allVisible(objs map[string]*object) bool {
	for name, o := range objs {
		if _, bare := c.splitKey(o.name); bare != name || c.resolve(bare) != o {
			return false
		}
	}
	return true
}
