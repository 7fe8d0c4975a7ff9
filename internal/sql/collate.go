package sql

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// byteOrderCollations are the collations of PostgreSQL (as a database
// created with --locale=C.UTF-8 has them) that order text as RockStream
// does, by its UTF-8 bytes: C and POSIX, ucs_basic (C by another name),
// C.utf8 (code point order, which is UTF-8's byte order) and the database
// default, which is C.UTF-8. Names are case-sensitive, as PostgreSQL's are
// once quoted: "posix" and "c" do not exist.
var byteOrderCollations = map[string]bool{"default": true, "C": true, "POSIX": true, "ucs_basic": true, "C.utf8": true}

// checkCollation looks up the collation a COLLATE clause names, as
// PostgreSQL's LookupCollation does: a name it does not know fails with
// 42704; a collation PostgreSQL has whose order is not bytewise (its ICU
// collations, "en-x-icu", ...) with 0A000, since RockStream compares text
// only bytewise.
func checkCollation(c *pg.CollateClause) error {
	var parts []string
	for _, n := range c.Collname {
		parts = append(parts, n.GetString_().GetSval())
	}
	name := strings.Join(parts, ".")
	bare := name
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		bare = parts[1]
	}
	switch {
	case len(parts) > 2 || len(parts) == 2 && parts[0] != "pg_catalog":
	case byteOrderCollations[bare]:
		return nil
	case strings.HasSuffix(bare, "-x-icu"):
		return notSupported(c.Location, "collation %q is not supported: RockStream compares text bytewise, as COLLATE \"C\" does", name)
	}
	return posErr(errs.Newf(errs.UndefinedObject, "collation %q for encoding \"UTF8\" does not exist", name), c.Location)
}

// collatable reports whether values of t take a collation: the string
// types and arrays of them, as in PostgreSQL (bytea, numbers and "char" do
// not).
func collatable(t types.Type) bool {
	if t.ID.IsArray() {
		t = t.Elem()
	}
	switch t.ID {
	case types.Text, types.Varchar, types.Name:
		return true
	}
	return false
}

// notCollatable is PostgreSQL's error for COLLATE on a type without
// collations.
func notCollatable(t types.Type, loc int32) error {
	return posErr(errs.Newf(errs.DatatypeMismatch, "collations are not supported by type %s", t), loc)
}

// CheckColumnCollation checks the COLLATE clause of a column of type t in
// CREATE TABLE, in PostgreSQL's order: the collation must exist and be
// one RockStream honours, then the type must take collations. A column
// with an accepted collation orders as any other.
func CheckColumnCollation(c *pg.CollateClause, t types.Type) error {
	if c == nil {
		return nil
	}
	if err := checkCollation(c); err != nil {
		return err
	}
	if !collatable(t) {
		return notCollatable(t, c.Location)
	}
	return nil
}

// collate binds expr COLLATE name in PostgreSQL's order (the expression,
// then whether its type takes collations, then the collation). RockStream
// compares text bytewise, so the collations that mean exactly that are
// accepted and change nothing; others are refused.
func (ec *exprCtx) collate(c *pg.CollateClause) (plan.Expr, error) {
	e, err := ec.bind(c.Arg)
	if err != nil {
		return nil, err
	}
	if e.Type().ID != types.Unknown && !collatable(e.Type()) {
		return nil, notCollatable(e.Type(), c.Location)
	}
	if err := checkCollation(c); err != nil {
		return nil, err
	}
	return e, nil
}
