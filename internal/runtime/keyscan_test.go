package runtime

import (
	"context"
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// TestKeyPrefixes checks which WHERE clauses of a DELETE read only the
// rows under some keys of the leading key column, and how many keys.
// That the rows found are the right ones is checked against PostgreSQL by
// the oracle script dml.sql.
func TestKeyPrefixes(t *testing.T) {
	eng := OpenMemory()
	s := eng.NewSession()
	for _, q := range []string{
		"CREATE TABLE kp (x text, k2 int, k1 int, PRIMARY KEY (k1, k2))",
		"CREATE TABLE kn (k bigint, v varchar(5))",
	} {
		if _, err := s.Exec(context.Background(), q, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		del  string
		keys int // -1: the whole table
	}{
		{"DELETE FROM kp WHERE k1 = 1", 1},
		{"DELETE FROM kp WHERE 1 = k1 AND x = 'a'", 1},
		{"DELETE FROM kp WHERE x = 'a' AND (k1 IN (3, 1, 2, 1, NULL))", 3},
		{"DELETE FROM kp WHERE k1 = NULL", 0},
		{"DELETE FROM kp WHERE k2 = 1", -1},            // not the leading key column
		{"DELETE FROM kp WHERE k1 = 1 OR k1 = 2", -1},  // an OR of keys is not read by key
		{"DELETE FROM kp WHERE k1 NOT IN (1, 2)", -1},  // nor a negation
		{"DELETE FROM kp WHERE k1 = 5000000000", -1},   // integer = bigint: keys of other kinds
		{"DELETE FROM kp WHERE k1 IN (1, k2)", -1},     // not all constants
		{"DELETE FROM kp WHERE k1 < 3", -1},            // ranges are not read by key
		{"DELETE FROM kn WHERE k = 7::bigint", 1},      // the first column without a primary key
		{"DELETE FROM kn WHERE k = 7", -1},             // bigint = integer
		{"DELETE FROM kn WHERE v = 'a' AND k = 7", -1}, // v is not leading, k = 7 is cross-type
	} {
		tree, err := pg.Parse(c.del)
		if err != nil {
			t.Fatal(err)
		}
		del := tree.Stmts[0].Stmt.GetDeleteStmt()
		eng.mu.RLock()
		target, err := bindTarget(eng.mu.cat, del.Relation, del.WhereClause, nil, nil)
		eng.mu.RUnlock()
		if err != nil {
			t.Fatalf("%s: %v", c.del, err)
		}
		prefixes, ok := keyPrefixes(target.o, target.where)
		got := len(prefixes)
		if !ok {
			got = -1
		}
		if got != c.keys {
			t.Errorf("%s: read %d keys, want %d (-1: the whole table)", c.del, got, c.keys)
		}
		for _, p := range prefixes {
			if !strings.HasPrefix(string(p), string(target.o.rowsPrefix())) {
				t.Errorf("%s: key prefix %x outside the table", c.del, p)
			}
		}
	}
}
