package pgcatalog

import "github.com/rockstream/rockstream/internal/zset"

// A view or materialized view has, as in PostgreSQL, an ON SELECT rule
// called _RETURN (pg_rewrite), and pg_depend records what the rule
// reads: the view itself (an internal dependency) and each user relation
// its definition names. pg_dump orders its output by these rows, so that
// a view comes after the tables and views it reads.

// pgRewriteOID is pg_rewrite's OID, the classid of a rule's pg_depend rows.
const pgRewriteOID = 2618

func init() {
	pgRowBuilders["pg_catalog.pg_rewrite"] = pgRewriteRows
	pgRowBuilders["pg_catalog.pg_depend"] = pgDependRows
}

// viewRelations returns the user views and materialized views.
func (c *Catalog) viewRelations() []*pgRelation {
	var out []*pgRelation
	for _, r := range c.snapshot().rels {
		if r.user && (r.relkind == 'v' || r.relkind == 'm') {
			out = append(out, r)
		}
	}
	return out
}

func pgRewriteRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_rewrite")
	for _, r := range c.viewRelations() {
		b.row().set("oid", r.oid+ruleOffset).set("rulename", "_RETURN").set("ev_class", r.oid).
			set("ev_type", "1").set("ev_enabled", "O").set("is_instead", true).set("ev_qual", "<>")
	}
	return b.rows, nil
}

func pgDependRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_depend")
	snap := c.snapshot()
	for _, r := range c.viewRelations() {
		dep := func(ref uint32, deptype string) {
			b.row().set("classid", uint32(pgRewriteOID)).set("objid", r.oid+ruleOffset).set("objsubid", 0).
				set("refclassid", uint32(pgClassOID)).set("refobjid", ref).set("refobjsubid", 0).set("deptype", deptype)
		}
		dep(r.oid, "i")
		for _, id := range r.reads {
			if t := snap.byOID[userOID(id)]; t != nil && t != r {
				dep(t.oid, "n")
			}
		}
	}
	c.extensionMembers(b)
	return b.rows, nil
}
