package pgcatalog

import (
	"fmt"

	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// pgRowBuilders compute the rows of the pg_catalog relations that are not
// empty. A relation without a builder has no rows: RockStream has nothing
// it would list (triggers, policies, publications, ...).
var pgRowBuilders = map[string]func(c *Catalog) ([]zset.Row, error){
	"pg_catalog.pg_namespace":              pgNamespaceRows,
	"pg_catalog.pg_class":                  pgClassRows,
	"pg_catalog.pg_attribute":              pgAttributeRows,
	"pg_catalog.pg_type":                   pgTypeRows,
	"pg_catalog.pg_index":                  pgIndexRows,
	"pg_catalog.pg_constraint":             pgConstraintRows,
	"pg_catalog.pg_attrdef":                pgAttrdefRows,
	"pg_catalog.pg_database":               pgDatabaseRows,
	"pg_catalog.pg_roles":                  pgRolesRows,
	"pg_catalog.pg_auth_members":           pgAuthMembersRows,
	"pg_catalog.pg_default_acl":            pgDefaultACLRows,
	"pg_catalog.pg_authid":                 pgAuthidRows,
	"pg_catalog.pg_user":                   pgUserRows,
	"pg_catalog.pg_settings":               pgSettingsRows,
	"pg_catalog.pg_proc":                   pgProcRows,
	"pg_catalog.pg_am":                     pgAmRows,
	"pg_catalog.pg_views":                  pgViewsRows,
	"pg_catalog.pg_matviews":               pgMatviewsRows,
	"pg_catalog.pg_tables":                 pgTablesRows,
	"pg_catalog.pg_indexes":                pgIndexesRows,
	"pg_catalog.pg_collation":              pgCollationRows,
	"pg_catalog.pg_tablespace":             pgTablespaceRows,
	"pg_catalog.pg_language":               pgLanguageRows,
	"information_schema.schemata":          infoSchemataRows,
	"information_schema.tables":            infoTablesRows,
	"information_schema.columns":           infoColumnsRows,
	"information_schema.views":             infoViewsRows,
	"information_schema.table_constraints": infoTableConstraintsRows,
	"information_schema.key_column_usage":  infoKeyColumnUsageRows,
}

func pgNamespaceRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_namespace")
	for _, n := range c.allNamespaces() {
		owner := uint32(bootstrapRoleOID)
		if n.oid == publicNamespace {
			owner = databaseOwnerRoleOID
		}
		b.row().set("oid", n.oid).set("nspname", n.name).set("nspowner", owner)
		if n.user != nil {
			b.set("nspowner", ownerOID(n.user.Owner)).set("nspacl", aclValue(n.user.ACL))
		}
		if p := c.privileges(); p != nil && n.oid == publicNamespace {
			o, acl := p.SchemaACL()
			b.set("nspowner", ownerOID(o))
			if acl == nil {
				acl = []string{"pg_database_owner=UC/pg_database_owner", "=U/pg_database_owner"}
			}
			b.set("nspacl", aclValue(acl))
		}
	}
	return b.rows, nil
}

// relam returns a relation kind's access method.
func relam(kind byte) uint32 {
	switch kind {
	case 'r', 'm':
		return heapAccessMethodOID
	case 'i':
		return btreeAccessMethodOID
	}
	return 0
}

func pgClassRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_class")
	for _, r := range c.snapshot().rels {
		replident := byte('d')
		if r.relkind == 'v' {
			replident = 'n'
		}
		b.row().set("oid", r.oid).set("relname", r.name).set("relnamespace", c.namespaceOID(r.schema)).
			set("relowner", ownerOID(r.owner)).set("relam", relam(r.relkind)).
			set("reltuples", -1).set("relhasindex", len(r.indexes) > 0).set("relpersistence", "p").
			set("relkind", r.relkind).set("relnatts", len(r.cols)+len(r.dropped)).set("relhasrules", r.relkind == 'v' || r.relkind == 'm').
			set("relispopulated", true).set("relreplident", replident)
		if r.relkind != 'v' {
			b.set("relfilenode", r.oid)
		}
		if r.acl != nil {
			b.set("relacl", aclValue(r.acl))
		}
		if len(r.options) > 0 {
			b.set("reloptions", types.MakeArray(types.Text, r.options))
		}
		for _, ix := range r.indexes {
			b.row().set("oid", ix.oid).set("relname", ix.name).set("relnamespace", c.namespaceOID(r.schema)).
				set("relowner", ownerOID(r.owner)).set("relam", relam('i')).set("relfilenode", ix.oid).
				set("reltuples", -1).set("relpersistence", "p").set("relkind", "i").set("relnatts", len(ix.cols)).
				set("relispopulated", true).set("relreplident", "n")
		}
	}
	return b.rows, nil
}

// pkName is the name of a table's primary key (its index and constraint).
func pkName(r *pgRelation) string { return r.name + "_pkey" }

func pgAttributeRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_attribute")
	add := func(rel uint32, num int, name string, t types.Type, notNull, hasDef bool) {
		f := pgTypeFactsOf(t)
		coll := uint32(0)
		if f != nil {
			coll = f.collation
			b.row().set("attlen", f.typlen).set("attbyval", f.byval).set("attalign", f.align).
				set("attstorage", f.storage)
		} else {
			b.row()
		}
		b.set("attrelid", rel).set("attname", name).set("atttypid", t.OID()).set("attstattarget", -1).
			set("attnum", num).set("attcacheoff", -1).set("atttypmod", int(t.Typmod())).
			set("attnotnull", notNull).set("atthasdef", hasDef).set("attislocal", true).
			set("attcollation", coll).set("attcompression", "").set("attidentity", "").set("attgenerated", "")
	}
	for _, r := range c.snapshot().rels {
		for i, col := range r.cols {
			add(r.oid, r.attnum(i), col.Name, col.Type, r.notNull[i], r.defaults[i] != "")
		}
		for _, a := range r.dropped {
			// As PostgreSQL keeps a dropped column: its number, no type.
			b.row().set("attrelid", r.oid).set("attname", fmt.Sprintf("........pg.dropped.%d........", a)).
				set("atttypid", uint32(0)).set("attstattarget", 0).set("attlen", -1).set("attnum", a).
				set("attcacheoff", -1).set("atttypmod", -1).set("attbyval", false).set("attalign", "i").
				set("attstorage", "x").set("attnotnull", false).set("atthasdef", false).set("attisdropped", true).
				set("attislocal", true).set("attcollation", uint32(0)).set("attcompression", "").
				set("attidentity", "").set("attgenerated", "")
		}
		for _, ix := range r.indexes {
			for k, i := range ix.cols {
				add(ix.oid, k+1, r.cols[i].Name, r.cols[i].Type, ix.primary, false)
			}
		}
	}
	return b.rows, nil
}

func pgTypeRows(*Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_type")
	for _, f := range pgTypes {
		t := f.typ()
		cat, pref := types.CategoryOf(f.id)
		b.row().set("oid", t.OID()).set("typname", t.TypName()).set("typnamespace", uint32(pgCatalogNamespace)).
			set("typowner", uint32(bootstrapRoleOID)).set("typlen", f.typlen).set("typbyval", f.byval).
			set("typtype", "b").set("typcategory", string([]byte{cat})).set("typispreferred", pref).
			set("typisdefined", true).set("typdelim", ",").set("typarray", f.array).
			set("typinput", types.MakeReg(types.RegProc, f.input, f.inputName)).
			set("typoutput", types.MakeReg(types.RegProc, f.output, f.outputName)).
			set("typreceive", types.MakeReg(types.RegProc, f.recv, f.recvName)).
			set("typsend", types.MakeReg(types.RegProc, f.send, f.sendName)).
			set("typalign", f.align).set("typstorage", f.storage).set("typtypmod", -1).
			set("typcollation", f.collation)
		if f.id == types.Unknown {
			b.set("typtype", "p")
		}
		if f.id.IsArray() {
			b.set("typelem", types.Of(f.id.Elem()).OID()).
				set("typsubscript", types.MakeReg(types.RegProc, 6179, "array_subscript_handler"))
		}
	}
	for _, p := range pseudoTypes {
		b.row().set("oid", p.oid).set("typname", p.name).set("typnamespace", uint32(pgCatalogNamespace)).
			set("typowner", uint32(bootstrapRoleOID)).set("typlen", 4).set("typbyval", true).set("typtype", "p").
			set("typcategory", "P").set("typisdefined", true).set("typdelim", ",").set("typalign", "i").
			set("typstorage", "p").set("typtypmod", -1)
	}
	return b.rows, nil
}

func pgIndexRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_index")
	for _, r := range c.snapshot().rels {
		for _, ix := range r.indexes {
			n := len(ix.cols)
			keys, colls, opts := make([]types.Value, n), make([]types.Value, n), make([]types.Value, n)
			for k, i := range ix.cols {
				keys[k] = types.MakeInt(types.Int2, int64(r.attnum(i)))
				opts[k] = types.MakeInt(types.Int2, 0)
				colls[k] = types.MakeOID(0)
				if f := pgTypeFactsOf(r.cols[i].Type); f != nil {
					colls[k] = types.MakeOID(f.collation)
				}
			}
			b.row().set("indkey", types.MakeArray(types.Int2, keys)).set("indcollation", types.MakeArray(types.Oid, colls)).
				set("indoption", types.MakeArray(types.Int2, opts))
			b.set("indexrelid", ix.oid).set("indrelid", r.oid).set("indnatts", n).
				set("indnkeyatts", n).set("indisunique", ix.primary || ix.unique).set("indnullsnotdistinct", ix.nullsNotDistinct).set("indisprimary", ix.primary).
				set("indimmediate", true).set("indisvalid", true).set("indisready", true).set("indislive", true).
				set("indexprs", nil).set("indpred", nil)
		}
	}
	return b.rows, nil
}

func pgConstraintRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_constraint")
	for _, r := range c.snapshot().rels {
		for _, ix := range r.indexes {
			if !ix.primary && !ix.constraint {
				continue
			}
			keys := make([]types.Value, len(ix.cols))
			for k, i := range ix.cols {
				keys[k] = types.MakeInt(types.Int2, int64(r.attnum(i)))
			}
			oid, contype := ix.oid+uniqueConstraintOffset, "u"
			if ix.primary {
				oid, contype = r.oid+pkConstraintOffset, "p"
			}
			b.row().set("conkey", types.MakeArray(types.Int2, keys))
			b.set("oid", oid).set("conname", ix.name).
				set("connamespace", c.namespaceOID(r.schema)).set("contype", contype).set("convalidated", true).
				set("conrelid", r.oid).set("conindid", ix.oid).set("confupdtype", " ").
				set("confdeltype", " ").set("confmatchtype", " ").set("conislocal", true).set("connoinherit", true).
				set("conbin", nil)
		}
	}
	return b.rows, nil
}

func pgAttrdefRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_attrdef")
	for _, r := range c.snapshot().rels {
		for i, d := range r.defaults {
			if d != "" {
				b.row().set("oid", r.oid+attrDefOffset+uint32(r.attnum(i)-1)).set("adrelid", r.oid).set("adnum", r.attnum(i)).set("adbin", d)
			}
		}
	}
	return b.rows, nil
}

// currentDatabase is the database name the session connected to.
func (c *Catalog) currentDatabase() string {
	if c.session != nil && c.session.Database != "" {
		return c.session.Database
	}
	return defaultDatabase
}

// currentUser is the session's role name.
func (c *Catalog) currentUser() string {
	if c.session != nil && c.session.User != "" {
		return c.session.User
	}
	return bootstrapRole
}

func pgDatabaseRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_database")
	b.row().set("oid", uint32(databaseOID)).set("datname", c.currentDatabase()).set("datdba", uint32(bootstrapRoleOID)).
		set("encoding", 6).set("datlocprovider", "c").set("datallowconn", true).set("datconnlimit", -1).
		set("dattablespace", uint32(defaultTablespaceOID)).set("datcollate", "C").set("datctype", "C").
		set("daticulocale", nil).set("datcollversion", nil)
	if p := c.privileges(); p != nil {
		o, acl := p.DatabaseACL()
		b.set("datdba", ownerOID(o)).set("datacl", aclValue(acl))
	}
	return b.rows, nil
}

const (
	defaultTablespaceOID = 1663
	globalTablespaceOID  = 1664
)

// setRole fills the role columns pg_roles, pg_authid share.
func setRole(b *rowBuilder, r role) {
	b.set("oid", r.oid).set("rolname", r.name).set("rolsuper", r.super).set("rolinherit", !r.noInherit).
		set("rolcreaterole", r.createRole || r.super).set("rolcreatedb", r.createDB || r.super).set("rolcanlogin", r.login).
		set("rolreplication", r.super).set("rolbypassrls", r.super).set("rolconnlimit", -1).
		set("rolvaliduntil", nil)
}

func pgRolesRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_roles")
	for _, r := range c.roles() {
		setRole(b.row(), r)
		b.set("rolpassword", "********").set("rolconfig", c.roleConfig(r.name))
	}
	return b.rows, nil
}

func pgAuthidRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_authid")
	for _, r := range c.roles() {
		setRole(b.row(), r)
		b.set("rolpassword", nil)
	}
	return b.rows, nil
}

func pgUserRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_user")
	for _, r := range c.roles() {
		b.row().set("usename", r.name).set("usesysid", r.oid).set("usecreatedb", r.super).
			set("usesuper", r.super).set("userepl", r.super).set("usebypassrls", r.super).
			set("passwd", "********").set("valuntil", nil).set("useconfig", c.roleConfig(r.name))
	}
	return b.rows, nil
}

func pgSettingsRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_settings")
	for _, st := range c.sortedSettings() {
		val := st.Default
		if c.session != nil {
			val = c.session.Setting(st.Name)
		}
		vartype := "string"
		if st.Bool {
			vartype = "bool"
		}
		b.row().set("name", st.Name).set("setting", val).set("unit", nil).set("category", "Client Connection Defaults").
			set("short_desc", st.Description).set("extra_desc", nil).set("context", "user").set("vartype", vartype).
			set("source", "default").set("min_val", nil).set("max_val", nil).set("boot_val", st.Default).
			set("reset_val", st.Default).set("sourcefile", nil).set("sourceline", nil).set("pending_restart", false)
	}
	return b.rows, nil
}

func pgAmRows(*Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_am")
	b.row().set("oid", uint32(heapAccessMethodOID)).set("amname", "heap").set("amtype", "t").
		set("amhandler", types.MakeReg(types.RegProc, 3, "heap_tableam_handler"))
	b.row().set("oid", uint32(btreeAccessMethodOID)).set("amname", "btree").set("amtype", "i").
		set("amhandler", types.MakeReg(types.RegProc, 330, "bthandler"))
	return b.rows, nil
}

func pgViewsRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_views")
	for _, r := range c.snapshot().rels {
		if r.relkind == 'v' && r.user {
			b.row().set("schemaname", r.schema).set("viewname", r.name).set("viewowner", ownerName(r.owner)).
				set("definition", r.viewQuery)
		}
	}
	return b.rows, nil
}

func pgMatviewsRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_matviews")
	for _, r := range c.snapshot().rels {
		if r.relkind == 'm' {
			b.row().set("schemaname", r.schema).set("matviewname", r.name).set("matviewowner", ownerName(r.owner)).
				set("tablespace", nil).set("hasindexes", len(r.indexes) > 0).set("ispopulated", true).set("definition", r.viewQuery)
		}
	}
	return b.rows, nil
}

func pgTablesRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_tables")
	for _, r := range c.snapshot().rels {
		if r.relkind == 'r' {
			b.row().set("schemaname", r.schema).set("tablename", r.name).set("tableowner", ownerName(r.owner)).
				set("tablespace", nil).set("hasindexes", len(r.indexes) > 0)
		}
	}
	return b.rows, nil
}

func pgIndexesRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_indexes")
	for _, r := range c.snapshot().rels {
		for _, ix := range r.indexes {
			b.row().set("schemaname", r.schema).set("tablename", r.name).set("indexname", ix.name).
				set("tablespace", nil).set("indexdef", indexDef(ix, false))
		}
	}
	return b.rows, nil
}

func pgCollationRows(*Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_collation")
	// The collations COLLATE accepts (sql.CheckColumnCollation), as
	// PostgreSQL 15 has them in a UTF8 database (encoding 6).
	for _, k := range []struct {
		oid            uint32
		name, provider string
		encoding       int
		locale         string
	}{{defaultCollationOID, "default", "d", -1, ""}, {cCollationOID, "C", "c", -1, "C"}, {951, "POSIX", "c", -1, "POSIX"},
		{12340, "ucs_basic", "c", 6, "C"}, {12341, "C.utf8", "c", 6, "C.utf8"}} {
		b.row().set("oid", k.oid).set("collname", k.name).set("collnamespace", uint32(pgCatalogNamespace)).
			set("collowner", uint32(bootstrapRoleOID)).set("collprovider", k.provider).
			set("collisdeterministic", true).set("collencoding", k.encoding).set("collcollate", nil).
			set("collctype", nil).set("colliculocale", nil).set("collversion", nil)
		if k.locale != "" {
			b.set("collcollate", k.locale).set("collctype", k.locale)
		}
	}
	return b.rows, nil
}

func pgTablespaceRows(*Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_tablespace")
	b.row().set("oid", uint32(defaultTablespaceOID)).set("spcname", "pg_default").set("spcowner", uint32(bootstrapRoleOID))
	b.row().set("oid", uint32(globalTablespaceOID)).set("spcname", "pg_global").set("spcowner", uint32(bootstrapRoleOID))
	return b.rows, nil
}

func pgLanguageRows(*Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_language")
	b.row().set("oid", uint32(internalLanguageOID)).set("lanname", "internal").set("lanowner", uint32(bootstrapRoleOID)).
		set("lanvalidator", uint32(2246))
	sqlLanguageRow(b)
	return b.rows, nil
}

const internalLanguageOID = 12
