package lake

import (
	"fmt"
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// User schemas: besides public, a lake may keep its catalog in a schema
// of its own (DuckLake's METADATA_SCHEMA option of ATTACH makes it name
// every catalog table "<schema>"."ducklake_..."; with PostgreSQL the
// schema must exist first, CREATE SCHEMA). A schema gets an OID from the
// tables' counter when created and is never dropped. pg_namespace and
// the introspection answer for every schema as PostgreSQL does: the
// system schemas with their fixed OIDs, public, then the user schemas.
//
// Like table definitions, schemas are looked up in the latest committed
// catalog plus the transaction's own, not in its snapshot.

// createSchemaPlan is CREATE SCHEMA [IF NOT EXISTS] name.
type createSchemaPlan struct {
	name        string
	ifNotExists bool
}

// namespace is one schema as pg_namespace lists it.
type namespace struct {
	oid  int64
	name string
}

// systemNamespaces are the schemas every PostgreSQL 15 database has,
// with their OIDs.
var systemNamespaces = []namespace{
	{oidPgCatalog, "pg_catalog"}, {oidPgToast, "pg_toast"}, {oidPublic, "public"}, {oidInformationSchema, "information_schema"},
}

func classifyCreateSchema(c *pg.CreateSchemaStmt, text string) (*Statement, error) {
	if c.Authrole != nil || len(c.SchemaElts) > 0 || c.Schemaname == "" {
		return nil, errUnsupported(summary(text) + " (AUTHORIZATION or schema elements)")
	}
	return &Statement{Kind: KindCreateSchema, schema: &createSchemaPlan{name: normSchema(c.Schemaname), ifNotExists: c.IfNotExists}}, nil
}

// quoteIdent quotes an identifier as PostgreSQL's quote_ident does when
// it must: always, here.
func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

func schemaKey(name string) []byte { return metaKey("schema/" + name) }

// schemaOID returns the OID of the schema named name, as the
// transaction sees the catalog.
func (x *txn) schemaOID(name string) (int64, bool) {
	for _, n := range systemNamespaces {
		if n.name == name {
			return n.oid, true
		}
	}
	if oid, ok := x.ws.schemas[name]; ok {
		return int64(oid), true
	}
	x.store.mu.Lock()
	defer x.store.mu.Unlock()
	oid, ok := x.store.mu.schemas[name]
	return int64(oid), ok
}

// namespaces lists every schema the transaction sees, by OID.
func (x *txn) namespaces() []namespace {
	out := append([]namespace(nil), systemNamespaces...)
	x.store.mu.Lock()
	for name, oid := range x.store.mu.schemas {
		out = append(out, namespace{int64(oid), name})
	}
	x.store.mu.Unlock()
	for name, oid := range x.ws.schemas {
		out = append(out, namespace{int64(oid), name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].oid < out[j].oid })
	return out
}

// userNamespaceOIDs maps the names of public and the user schemas to
// their OIDs: the schemas whose tables the introspection lists.
func (x *txn) userNamespaceOIDs() map[string]int64 {
	out := map[string]int64{}
	for _, n := range x.namespaces() {
		if n.oid == oidPublic || n.oid >= firstOID {
			out[n.name] = n.oid
		}
	}
	return out
}

func (x *txn) runCreateSchema(p *createSchemaPlan) (*result, error) {
	if _, exists := x.schemaOID(p.name); exists {
		if p.ifNotExists {
			return &result{tag: "CREATE SCHEMA", notices: []notice{{"NOTICE", "42P06", fmt.Sprintf("schema %q already exists, skipping", p.name)}}}, nil
		}
		return nil, errorf("42P06", "schema %q already exists", p.name)
	}
	if strings.HasPrefix(p.name, "pg_") {
		return nil, &sqlError{code: "42939", msg: fmt.Sprintf("unacceptable schema name %q", p.name),
			detail: `The prefix "pg_" is reserved for system schemas.`}
	}
	if x.ws.schemas == nil {
		x.ws.schemas = map[string]uint32{}
	}
	x.ws.schemas[p.name] = x.store.allocOID()
	return &result{tag: "CREATE SCHEMA"}, nil
}

// loadSchemas reads the user schemas (Store.mu held or not yet shared).
func (s *Store) loadSchemas() error {
	prefix := schemaKey("")
	var loadErr error
	err := s.db.Scan(prefix, prefixEnd(prefix), func(k, v []byte) bool {
		n, err := decodeUint("schema "+string(k[len(prefix):]), v)
		if err != nil {
			loadErr = err
			return false
		}
		s.mu.schemas[string(k[len(prefix):])] = uint32(n)
		return true
	})
	if err != nil {
		return err
	}
	return loadErr
}

// commitSchemasLocked checks and writes the schemas w creates: a name
// another commit created first fails as PostgreSQL's unique index on
// pg_namespace does.
func (s *Store) commitSchemasLocked(w *writeSet) error {
	for name, oid := range w.schemas {
		if _, dup := s.mu.schemas[name]; dup {
			return &sqlError{code: codeUniqueViolation, msg: `duplicate key value violates unique constraint "pg_namespace_nspname_index"`,
				detail: fmt.Sprintf("Key (nspname)=(%s) already exists.", name)}
		}
		if err := s.db.Set(schemaKey(name), encodeUint(uint64(oid))); err != nil {
			return err
		}
	}
	return nil
}
