package pgcatalog

import "github.com/rockstream/rockstream/internal/zset"

// RockStream's own objects — the schema rockstream_catalog and the system
// relations in it — belong to a built-in extension, "rockstream", as
// PostgreSQL's plpgsql belongs to one: pg_extension lists it with an OID
// below the first user OID, and pg_depend records each member with
// deptype 'e'. That is what makes pg_dump leave them out of a dump (it
// dumps neither a built-in extension nor its members), so that a dump
// loads into PostgreSQL or RockStream without them.

const (
	// rockstreamExtensionOID is the extension's OID, below the system
	// relations' (16300 on) and above PostgreSQL's initdb OIDs.
	rockstreamExtensionOID = 16299
	rockstreamExtension    = "rockstream"
	// pgExtensionOID is pg_extension's OID, the refclassid of a member's
	// pg_depend row.
	pgExtensionOID = 3079
)

func init() {
	pgRowBuilders["pg_catalog.pg_extension"] = pgExtensionRows
}

func pgExtensionRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_extension")
	b.row().set("oid", uint32(rockstreamExtensionOID)).set("extname", rockstreamExtension).
		set("extowner", uint32(bootstrapRoleOID)).set("extnamespace", uint32(rockstreamNamespace)).
		set("extrelocatable", false).set("extversion", "1.0")
	return b.rows, nil
}

// extensionMembers adds to b, a pg_depend builder, the extension's
// members: the schema rockstream_catalog and its system relations.
func (c *Catalog) extensionMembers(b *rowBuilder) {
	member := func(classid, objid uint32) {
		b.row().set("classid", classid).set("objid", objid).set("objsubid", 0).
			set("refclassid", uint32(pgExtensionOID)).set("refobjid", uint32(rockstreamExtensionOID)).
			set("refobjsubid", 0).set("deptype", "e")
	}
	member(pgNamespaceOID, rockstreamNamespace)
	for _, r := range c.snapshot().rels {
		if r.schema == rockstreamCatalogSchema && !r.user {
			member(pgClassOID, r.oid)
		}
	}
}
