package runtime

import (
	"context"
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// TestKeyRangesDML checks which WHERE clauses of a DELETE read only some
// key ranges of the table, and how many. That the rows found are the
// right ones is checked against PostgreSQL by the oracle scripts dml.sql
// and key_reads.sql, and against a full scan by TestKeyRangesMatchFullScan.
func TestKeyRangesDML(t *testing.T) {
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
		del    string
		ranges int // -1: the whole table
	}{
		{"DELETE FROM kp WHERE k1 = 1", 1},
		{"DELETE FROM kp WHERE 1 = k1 AND x = 'a'", 1},
		{"DELETE FROM kp WHERE x = 'a' AND (k1 IN (3, 1, 2, 1, NULL))", 3},
		{"DELETE FROM kp WHERE k1 = NULL", 0},
		{"DELETE FROM kp WHERE k1 IN (1, 2) AND k2 IN (5, 6, 7)", 6},
		{"DELETE FROM kp WHERE k1 IN (1, 2) AND k2 BETWEEN 5 AND 7", 2},
		{"DELETE FROM kp WHERE k1 = 1 AND k1 = 2", 0},
		{"DELETE FROM kp WHERE k1 IN (1, 2, 3) AND k1 > 1", 2},
		{"DELETE FROM kp WHERE k2 = 1", -1},           // not the leading key column
		{"DELETE FROM kp WHERE k1 = 1 OR k1 = 2", -1}, // an OR of keys is not read by key
		{"DELETE FROM kp WHERE k1 NOT IN (1, 2)", -1}, // nor a negation
		{"DELETE FROM kp WHERE k1 = 5000000000", 0},   // beyond integer: no row
		{"DELETE FROM kp WHERE k1 < 5000000000", 1},   // every non-NULL key
		{"DELETE FROM kp WHERE k1 = 2.5", 0},
		{"DELETE FROM kp WHERE k1 = 2.0", 1},
		{"DELETE FROM kp WHERE k1 IN (1, k2)", -1}, // not all constants
		{"DELETE FROM kp WHERE k1 < 3", 1},
		{"DELETE FROM kp WHERE k1 > 3 AND k1 < 2", 0},
		{"DELETE FROM kn WHERE k = 7::bigint", 1}, // the first column without a primary key
		{"DELETE FROM kn WHERE k = 7", 1},         // bigint = integer
		{"DELETE FROM kn WHERE k = 7.5", 0},
		{"DELETE FROM kn WHERE k::float8 = 7", -1}, // bigint to double precision is not exact
		{"DELETE FROM kn WHERE v = 'a' AND k = 7", 1},
		{"DELETE FROM kn WHERE k = 7 AND v = 'a'", 1},
		{"DELETE FROM kn WHERE v = 'a'", -1},
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
		ranges, ok := keyRanges(target.o, findKeyConds(target.o, target.where))
		got := len(ranges)
		if !ok {
			got = -1
		}
		if got != c.ranges {
			t.Errorf("%s: read %d key ranges, want %d (-1: the whole table)", c.del, got, c.ranges)
		}
		for _, r := range ranges {
			if !strings.HasPrefix(string(r.lo), string(target.o.rowsPrefix())) || !strings.HasPrefix(string(r.hi), string(target.o.rowsPrefix())) {
				t.Errorf("%s: key range [%x, %x) outside the table", c.del, r.lo, r.hi)
			}
		}
	}
}
