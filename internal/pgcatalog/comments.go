package pgcatalog

import (
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Comments are the descriptions COMMENT ON attached to a relation and to
// its columns, as pg_description lists them and obj_description and
// col_description return them (psql's \d+ and \dt+ show them).
type Comments struct {
	// Relation is the relation's own comment; empty when none.
	Relation string
	// Columns are the columns' comments by column number (attnum).
	Columns map[int]string
}

// pgClassOID is pg_class's OID, the classoid of a relation's description.
const pgClassOID = 1259

func init() { pgRowBuilders["pg_catalog.pg_description"] = pgDescriptionRows }

// pgDescriptionRows lists the comments of the user relations and their
// columns, and of the schemas: public's and those COMMENT ON gave one.
func pgDescriptionRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_description")
	for _, r := range c.snapshot().rels {
		if !r.user {
			continue
		}
		cm, err := c.src.Comments(r.id)
		if err != nil {
			return nil, err
		}
		if cm.Relation != "" {
			b.row().set("objoid", r.oid).set("classoid", uint32(pgClassOID)).set("objsubid", 0).set("description", cm.Relation)
		}
		for i := range r.cols {
			if text := cm.Columns[r.attnum(i)]; text != "" {
				b.row().set("objoid", r.oid).set("classoid", uint32(pgClassOID)).set("objsubid", r.attnum(i)).set("description", text)
			}
		}
	}
	for _, n := range c.allNamespaces() {
		// Schema public keeps PostgreSQL's description, which pg_dump
		// leaves out of a dump only when it finds it here.
		if d := c.schemaDescription(n.oid); !d.IsNull() {
			b.row().set("objoid", n.oid).set("classoid", uint32(pgNamespaceOID)).set("objsubid", 0).set("description", d.Str())
		}
	}
	return b.rows, nil
}

// pgNamespaceOID is pg_namespace's OID, the classoid of a schema's
// description.
const pgNamespaceOID = 2615

// schemaDescription is the comment of the schema with OID oid; NULL when
// none.
func (c *Catalog) schemaDescription(oid uint32) types.Value {
	if oid == publicNamespace {
		// As in PostgreSQL, which describes its schema public.
		return types.MakeText("standard public schema")
	}
	for _, n := range c.allNamespaces() {
		if n.oid == oid && n.user != nil && n.user.Comment != "" {
			return types.MakeText(n.user.Comment)
		}
	}
	return types.Null
}

// description returns the comment of the relation with OID oid (of its
// column attnum, or of the relation itself for 0); NULL when none.
func (c *Catalog) description(oid uint32, attnum int) (types.Value, error) {
	r := c.snapshot().relation(oid)
	if r == nil || !r.user {
		return types.Null, nil
	}
	cm, err := c.src.Comments(r.id)
	if err != nil {
		return types.Null, err
	}
	text := cm.Relation
	if attnum != 0 {
		text = cm.Columns[attnum]
	}
	if text == "" {
		return types.Null, nil
	}
	return types.MakeText(text), nil
}

// descriptionFuncs are obj_description and col_description.
func (c *Catalog) descriptionFuncs(name string) []sql.SystemFunc {
	if name == "col_description" {
		return []sql.SystemFunc{nonStrict(sig(tText, func(a []types.Value) (types.Value, error) {
			if a[0].IsNull() || a[1].IsNull() {
				return types.Null, nil
			}
			return c.description(a[0].OID(), int(a[1].Int()))
		}, tOid, tInt4))}
	}
	return []sql.SystemFunc{
		nonStrict(sig(tText, func(a []types.Value) (types.Value, error) {
			if !a[0].IsNull() && !a[1].IsNull() && a[1].Str() == "pg_namespace" {
				return c.schemaDescription(a[0].OID()), nil
			}
			if a[0].IsNull() || a[1].IsNull() || a[1].Str() != "pg_class" {
				return types.Null, nil
			}
			return c.description(a[0].OID(), 0)
		}, tOid, tName)),
		nonStrict(sig(tText, func(a []types.Value) (types.Value, error) {
			if a[0].IsNull() {
				return types.Null, nil
			}
			return c.description(a[0].OID(), 0)
		}, tOid)),
	}
}
