package runtime

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/privilege"
)

// Privileges on schemas other than public (schemas.go): a statement that
// names a relation in a schema needs USAGE on it, one that creates an
// object there CREATE on it.

// targetSchema is the schema an object named rv is created in: rv's
// schema, else the creation schema of the search path (public when there
// is none: creating then fails anyway).
func (c *catalog) targetSchema(rv *pg.RangeVar) string {
	if rv != nil && rv.Schemaname != "" {
		return rv.Schemaname
	}
	if sch, err := c.creationSchema(); err == nil {
		return sch
	}
	return publicSchema
}

// checkSchemaUsage checks USAGE on the schemas of the relations the
// statement itself names, outside public (whose USAGE the schema
// public's ACL says).
func (a *access) checkSchemaUsage(req checkRequest) error {
	var rvs []*pg.RangeVar
	rvs = append(rvs, req.owns...)
	for _, w := range req.writes {
		if w.rv != nil {
			rvs = append(rvs, w.rv)
		}
	}
	checked := map[string]bool{}
	check := func(sch string) error {
		if sch == publicSchema || checked[sch] || !a.cat.schemaExists(sch) {
			return nil
		}
		checked[sch] = true
		obj, err := a.namedSchemaObject(sch)
		if err != nil {
			return err
		}
		return a.g.Check(obj, a.role, privilege.Usage)
	}
	for _, rv := range rvs {
		if o := a.cat.userObject(rv.Schemaname, rv.Relname); o != nil {
			sch, _ := a.cat.splitKey(o.name)
			if err := check(sch); err != nil {
				return err
			}
		}
	}
	for _, rd := range req.reads {
		if o := a.cat.userObject(rd.schema, rd.name); o != nil {
			sch, _ := a.cat.splitKey(o.name)
			if err := check(sch); err != nil {
				return err
			}
		}
	}
	if req.create && req.target != nil && req.target.Schemaname != "" {
		return check(req.target.Schemaname)
	}
	return nil
}

// viewInput is the relation a name view v's definition reads denotes:
// the one its image says (inputs.go), else the name in the catalog.
func (c *catalog) viewInput(v *object, rd relRead) *object {
	if img, ok := v.inputs[qualifiedName(rd.schema, rd.name)]; ok {
		if o := c.byID(img.ID); o != nil && o.system == nil {
			return o
		}
		return nil
	}
	return c.userObject(rd.schema, rd.name)
}
