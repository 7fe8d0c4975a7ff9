package pgcatalog

// Schemas besides the built-in ones. A Source that also implements
// SchemaSource has schemas made with CREATE SCHEMA and a search path;
// one that does not has public alone, searched after pg_catalog.

// Schema is a schema made with CREATE SCHEMA.
type Schema struct {
	// ID is the schema's durable catalog id; its OID derives from it.
	ID   uint64
	Name string
	// Owner owns the schema; ACL is its ACL as pg_namespace.nspacl
	// shows it, nil for the default.
	Owner string
	ACL   []string
	// Comment is what COMMENT ON SCHEMA attached; empty when none.
	Comment string
}

// SchemaSource is the part of a Source that knows schemas.
type SchemaSource interface {
	// Schemas returns the schemas made with CREATE SCHEMA, in any order.
	Schemas() []Schema
	// SearchPath returns the existing schemas of the reading session's
	// search path, in order, pg_catalog left out.
	SearchPath() []string
}

// userSchemas returns the source's schemas made with CREATE SCHEMA.
func (c *Catalog) userSchemas() []Schema {
	if s, ok := c.src.(SchemaSource); ok {
		return s.Schemas()
	}
	return nil
}

// searchPath returns the search path of the session reading c, without
// pg_catalog.
func searchPathOf(src Source) []string {
	if s, ok := src.(SchemaSource); ok {
		return s.SearchPath()
	}
	return []string{"public"}
}

// allNamespaces returns pg_namespace's rows: the built-in schemas and
// those made with CREATE SCHEMA.
func (c *Catalog) allNamespaces() []namespace {
	out := append([]namespace(nil), namespaces...)
	for _, s := range c.userSchemas() {
		out = append(out, namespace{oid: userOID(s.ID), name: s.Name, user: &s})
	}
	return out
}

// namespaceOID returns the OID of the schema named schema, 0 when there
// is none.
func (c *Catalog) namespaceOID(schema string) uint32 {
	for _, n := range c.allNamespaces() {
		if n.name == schema {
			return n.oid
		}
	}
	return 0
}

// namespaceName returns the name of the schema with OID oid, "" when
// there is none.
func (c *Catalog) namespaceName(oid uint32) string {
	for _, n := range c.allNamespaces() {
		if n.oid == oid {
			return n.name
		}
	}
	return ""
}

// UserOID is the OID of the object with durable catalog id id: a
// relation's, a schema's, a function's.
func UserOID(id uint64) uint32 { return userOID(id) }
