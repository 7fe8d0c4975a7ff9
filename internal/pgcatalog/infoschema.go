package pgcatalog

import (
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// information_schema's relations, as PostgreSQL 15 defines them over its
// catalogs: tables lists tables and views (not materialized views, as in
// PostgreSQL), columns their columns, views the plain views.

func infoSchemataRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("information_schema.schemata")
	for _, n := range c.allNamespaces() {
		owner := bootstrapRole
		switch {
		case n.user != nil:
			owner = n.user.Owner
		case n.oid == publicNamespace:
			owner = "pg_database_owner"
			if p := c.privileges(); p != nil {
				owner, _ = p.SchemaACL()
			}
		}
		b.row().set("catalog_name", c.currentDatabase()).set("schema_name", n.name).set("schema_owner", owner)
	}
	return b.rows, nil
}

// infoRelations returns the relations information_schema.tables and
// columns list: tables and plain views.
func infoRelations(c *Catalog) []*pgRelation {
	var out []*pgRelation
	for _, r := range c.snapshot().rels {
		if r.relkind == 'r' || r.relkind == 'v' {
			out = append(out, r)
		}
	}
	return out
}

func infoTablesRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("information_schema.tables")
	for _, r := range infoRelations(c) {
		typ, insertable := "BASE TABLE", "YES"
		if r.relkind == 'v' {
			typ, insertable = "VIEW", "NO"
		}
		if !r.user {
			insertable = "NO"
		}
		b.row().set("table_catalog", c.currentDatabase()).set("table_schema", r.schema).set("table_name", r.name).
			set("table_type", typ).set("is_insertable_into", insertable).set("is_typed", "NO")
	}
	return b.rows, nil
}

func infoViewsRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("information_schema.views")
	for _, r := range infoRelations(c) {
		if r.relkind != 'v' {
			continue
		}
		b.row().set("table_catalog", c.currentDatabase()).set("table_schema", r.schema).set("table_name", r.name).
			set("view_definition", nil).set("check_option", "NONE").set("is_updatable", "NO").
			set("is_insertable_into", "NO").set("is_trigger_updatable", "NO").set("is_trigger_deletable", "NO").
			set("is_trigger_insertable_into", "NO")
		if r.user {
			b.set("view_definition", r.viewQuery)
		}
	}
	return b.rows, nil
}

func infoColumnsRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("information_schema.columns")
	for _, r := range infoRelations(c) {
		updatable := "YES"
		if r.relkind == 'v' || !r.user {
			updatable = "NO"
		}
		for i, col := range r.cols {
			nullable := "YES"
			if r.notNull[i] {
				nullable = "NO"
			}
			b.row().set("table_catalog", c.currentDatabase()).set("table_schema", r.schema).
				set("table_name", r.name).set("column_name", col.Name).set("ordinal_position", i+1).
				set("is_nullable", nullable).set("udt_catalog", c.currentDatabase()).set("udt_schema", pgCatalogSchema).
				set("udt_name", col.Type.TypName()).set("dtd_identifier", strconv.Itoa(i+1)).
				set("is_self_referencing", "NO").set("is_identity", "NO").set("identity_cycle", "NO").
				set("is_generated", "NEVER").set("is_updatable", updatable)
			if r.defaults[i] != "" {
				b.set("column_default", r.defaults[i])
			}
			setInfoType(b, col.Type)
		}
	}
	return b.rows, nil
}

// setInfoType fills information_schema.columns' type columns as
// PostgreSQL's _pg_char_max_length, _pg_numeric_precision, ... compute
// them.
func setInfoType(b *rowBuilder, t types.Type) {
	dataType := t.ID.String()
	switch t.ID {
	case types.Oid, types.RegClass, types.RegType, types.RegProc, types.RegNamespace, types.RegRole, types.Char:
		dataType = t.ID.String()
		if t.ID == types.Char {
			dataType = `"char"`
		}
	}
	b.set("data_type", dataType)
	switch t.ID {
	case types.Varchar:
		if t.Length >= 0 {
			b.set("character_maximum_length", int(t.Length)).set("character_octet_length", int(t.Length)*4)
		} else {
			b.set("character_octet_length", 1073741824)
		}
	case types.Text:
		b.set("character_octet_length", 1073741824)
	case types.Int2:
		b.set("numeric_precision", 16).set("numeric_precision_radix", 2).set("numeric_scale", 0)
	case types.Int4:
		b.set("numeric_precision", 32).set("numeric_precision_radix", 2).set("numeric_scale", 0)
	case types.Int8:
		b.set("numeric_precision", 64).set("numeric_precision_radix", 2).set("numeric_scale", 0)
	case types.Float4:
		b.set("numeric_precision", 24).set("numeric_precision_radix", 2)
	case types.Float8:
		b.set("numeric_precision", 53).set("numeric_precision_radix", 2)
	case types.Numeric:
		b.set("numeric_precision_radix", 10)
		if t.Precision >= 0 {
			b.set("numeric_precision", int(t.Precision)).set("numeric_scale", int(t.Scale))
		}
	case types.Date:
		b.set("datetime_precision", 0)
	case types.Timestamp, types.TimestampTZ, types.Interval, types.Time, types.TimeTZ:
		p := 6
		if t.Precision >= 0 {
			p = int(t.Precision)
		}
		b.set("datetime_precision", p)
	}
}

func infoTableConstraintsRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("information_schema.table_constraints")
	db := c.currentDatabase()
	for _, r := range c.snapshot().rels {
		for _, ix := range r.indexes {
			if !ix.primary && !ix.constraint {
				continue
			}
			// nulls_distinct is NULL for a primary key.
			kind, distinct := "PRIMARY KEY", any(nil)
			if !ix.primary {
				kind, distinct = "UNIQUE", "YES"
				if ix.nullsNotDistinct {
					distinct = "NO"
				}
			}
			b.row().set("constraint_catalog", db).set("constraint_schema", r.schema).set("constraint_name", ix.name).
				set("table_catalog", db).set("table_schema", r.schema).set("table_name", r.name).
				set("constraint_type", kind).set("is_deferrable", "NO").set("initially_deferred", "NO").
				set("enforced", "YES").set("nulls_distinct", distinct)
		}
	}
	return b.rows, nil
}

func infoKeyColumnUsageRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("information_schema.key_column_usage")
	db := c.currentDatabase()
	for _, r := range c.snapshot().rels {
		for _, ix := range r.indexes {
			if !ix.primary && !ix.constraint {
				continue
			}
			for k, i := range ix.cols {
				b.row().set("constraint_catalog", db).set("constraint_schema", r.schema).set("constraint_name", ix.name).
					set("table_catalog", db).set("table_schema", r.schema).set("table_name", r.name).
					set("column_name", r.cols[i].Name).set("ordinal_position", k+1)
			}
		}
	}
	return b.rows, nil
}

// defaultText renders a column default as pg_get_expr shows it: a
// constant as PostgreSQL's deparser writes one ('none'::character varying,
// 42, '-1'::integer, true, 1.5), another expression as EXPLAIN shows it.
func defaultText(e plan.Expr) string {
	k, ok := e.(*plan.Const)
	if !ok {
		if c, ok := e.(*plan.Cast); ok {
			if inner, ok := c.Arg.(*plan.Const); ok && inner.Val.IsNull() {
				return "NULL::" + types.Of(c.Typ.ID).String()
			}
		}
		return e.String()
	}
	if k.Val.IsNull() {
		return "NULL::" + types.Of(k.Typ.ID).String()
	}
	text := types.Format(k.Val, k.Typ)
	label := "::" + types.Of(k.Typ.ID).String()
	switch k.Typ.ID {
	case types.Bool:
		if k.Val.Bool() {
			return "true"
		}
		return "false"
	case types.Int4:
		if !strings.HasPrefix(text, "-") {
			return text
		}
	case types.Numeric:
		if strings.Trim(text, "0123456789+-eE.") == "" {
			lit := text
			if strings.HasPrefix(text, "-") {
				lit = "(" + text + ")"
			}
			if strings.ContainsAny(text, ".eE") {
				return lit
			}
			return lit + label
		}
	}
	return "'" + strings.ReplaceAll(text, "'", "''") + "'" + label
}
