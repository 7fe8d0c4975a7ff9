package pgcatalog

import (
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/types"
)

// Functions pg_dump's catalog queries call, beside those of funcs.go.

// dumpFunction returns the overloads of the pg_dump helper called name,
// or nil.
func (c *Catalog) dumpFunction(name string) []sql.SystemFunc {
	switch name {
	case "acldefault":
		return []sql.SystemFunc{sig(types.ArrayType(tText), func(a []types.Value) (types.Value, error) {
			return aclValue(defaultACL(a[0].Str(), c.roleName(a[1].OID()))), nil
		}, tText, tOid)}
	}
	return nil
}

// defaultACL is acldefault's answer: the privileges an object of the
// kind ('r' relation, 's' sequence, 'f' function, 'l' language, 'n'
// schema, 'T' type, 'd' database, 'F' foreign-data wrapper, 'S' foreign
// server, 'L' large object) has while its ACL is NULL, as PostgreSQL's
// acldefault gives them.
func defaultACL(kind, owner string) []string {
	o := types.QuoteIdent(owner)
	switch kind {
	case "r":
		return []string{o + "=arwdDxt/" + o}
	case "s":
		return []string{o + "=rwU/" + o}
	case "f":
		return []string{"=X/" + o, o + "=X/" + o}
	case "l", "T":
		return []string{"=U/" + o, o + "=U/" + o}
	case "n", "F", "S":
		if kind == "n" {
			return []string{o + "=UC/" + o}
		}
		return []string{o + "=U/" + o}
	case "d":
		return []string{"=Tc/" + o, o + "=CTc/" + o}
	case "L":
		return []string{o + "=rw/" + o}
	}
	return []string{}
}
