// Package pgcatalog projects RockStream's catalog into PostgreSQL's
// system catalogs: the relations of pg_catalog and information_schema,
// the system information functions (version(), current_user,
// pg_get_viewdef(), format_type(), ...) and the names of the OID alias
// types (regclass, regtype, regrole, regnamespace, regproc).
//
// The engine describes its catalog through Source (relations, roles,
// settings; schemas and the session's search path through SchemaSource)
// and the reading session through Session; New makes the
// Catalog one query reads. The package holds no state of its own and
// does no I/O: it reads only what the Source returns.
//
// Invariants:
//   - A projection is a pure function of its Source and Session: the same
//     description gives the same rows, in the same order.
//   - OIDs are stable: built-in objects have PostgreSQL 15's OIDs, a user
//     relation's OIDs derive from its durable catalog id (a block of
//     OIDs per relation for itself, its primary key's index and
//     constraint and its column defaults), a schema's made with CREATE
//     SCHEMA from its catalog id too, a role's from its name and a
//     function's from its signature, so OIDs survive restarts and do not
//     move when objects are added.
//   - Unqualified names (regclass, pg_table_is_visible) resolve as the
//     session's search path does: pg_catalog first, then its schemas in
//     order.
//   - Every relation has PostgreSQL 15's columns, in its order and with
//     its types (columns.go); a column RockStream has nothing for holds
//     the zero value of its type in pg_catalog and NULL in
//     information_schema.
//   - A Catalog indexes the Source's relations once, the first time its
//     query needs them, so every system relation and function of one
//     query sees the same relations.
//   - System functions are only answered for a session's query (a
//     Catalog made with a Session); a materialized view never reads them.
package pgcatalog
