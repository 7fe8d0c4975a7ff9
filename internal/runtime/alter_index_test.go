package runtime

import (
	"strings"
	"testing"
)

// TestAlterKeepsIndexesInStep: an index follows ALTER TABLE, renames and
// CREATE OR REPLACE MATERIALIZED VIEW — its entries hold copies of the
// rows, so they are rebuilt from the new rows, its columns are found
// again by number (tables) or name (views), and an index on a dropped
// column is dropped with it. After every statement each index equals its
// relation and reads through it see the new rows.
func TestAlterKeepsIndexesInStep(t *testing.T) {
	for _, workers := range []int{1, 3} {
		e, err := Open(NewMemoryStore(), Options{Workers: workers, ParallelMinRows: 1})
		if err != nil {
			t.Fatal(err)
		}
		s := e.NewSession()
		execAll(t, s,
			"CREATE TABLE t (id int PRIMARY KEY, b int, c text)",
			"INSERT INTO t VALUES (1, 10, 'x'), (2, 20, 'y')",
			"CREATE INDEX ON t (b)")
		steps := []struct{ stmt, query, want string }{
			{"ALTER TABLE t ADD COLUMN d int DEFAULT 5", "SELECT * FROM t WHERE b = 20", "2|20|y|5"},
			{"ALTER TABLE t DROP COLUMN c", "SELECT * FROM t WHERE b = 20", "2|20|5"},
			{"ALTER TABLE t RENAME COLUMN b TO bb", "SELECT * FROM t WHERE bb = 10", "1|10|5"},
			{"ALTER TABLE t RENAME TO t2", "SELECT * FROM t2 WHERE bb = 10", "1|10|5"},
			{"ALTER TABLE t2 ALTER COLUMN bb TYPE bigint", "SELECT pg_typeof(bb) FROM t2 WHERE bb = 10", "bigint"},
			{"CREATE MATERIALIZED VIEW mv AS SELECT id, bb AS b FROM t2", "SELECT * FROM mv WHERE b = 20", "2|20"},
			{"CREATE INDEX ON mv (b)", "SELECT * FROM mv WHERE b = 20", "2|20"},
			{"CREATE OR REPLACE MATERIALIZED VIEW mv AS SELECT id, bb * 2 AS b FROM t2", "SELECT * FROM mv WHERE b = 40", "2|40"},
			{"ALTER MATERIALIZED VIEW mv RENAME TO mv2", "SELECT * FROM mv2 WHERE b = 20", "1|20"},
		}
		for _, st := range steps {
			execAll(t, s, st.stmt)
			if err := e.VerifyIndexes(); err != nil {
				t.Fatalf("workers=%d, after %s: %v", workers, st.stmt, err)
			}
			if got := strings.TrimSpace(alterQuery(t, s, st.query)); !strings.Contains(got, st.want) {
				t.Errorf("workers=%d, after %s: %s gave\n%s\nwant a row %s", workers, st.stmt, st.query, got, st.want)
			}
		}
		if plan := explainText(t, s, "SELECT * FROM t2 WHERE bb = 10"); !strings.Contains(plan, "Index Scan using t_b_idx on t2") {
			t.Errorf("workers=%d: the renamed table's index is not used:\n%s", workers, plan)
		}
		execAll(t, s, "ALTER TABLE t2 DROP COLUMN bb CASCADE")
		if got := alterQuery(t, s, "SELECT indexname FROM pg_indexes ORDER BY 1"); strings.Contains(got, "t_b_idx") {
			t.Errorf("workers=%d: the index on a dropped column is still listed:\n%s", workers, got)
		}
		if err := e.VerifyIndexes(); err != nil {
			t.Fatalf("workers=%d, after the drop: %v", workers, err)
		}
		s.Close()
	}
}
