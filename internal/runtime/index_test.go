package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// execAll runs each statement in s, failing t on an error.
func execAll(t testing.TB, s *Session, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := s.Exec(context.Background(), q, nil); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// explainText returns plain EXPLAIN's lines for q, joined by newlines.
func explainText(t testing.TB, s *Session, q string) string {
	t.Helper()
	res, err := s.Exec(context.Background(), "EXPLAIN "+q, nil)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", q, err)
	}
	var lines []string
	for _, row := range res.Rows {
		lines = append(lines, row[0].Str())
	}
	return strings.Join(lines, "\n")
}

// TestIndexStatements checks CREATE INDEX and DROP INDEX: generated
// names, IF [NOT] EXISTS, the relation namespace they share with tables
// and views, what is refused and with which SQLSTATE, and that dropping a
// relation drops its indexes and their entries.
func TestIndexStatements(t *testing.T) {
	ctx := context.Background()
	eng := OpenMemory()
	s := eng.NewSession()
	var notices []string
	s.OnNotice(func(n Notice) { notices = append(notices, n.Message) })
	execAll(t, s,
		"CREATE TABLE t (id int PRIMARY KEY, b int, c text, j jsonb)",
		"CREATE VIEW pv AS SELECT * FROM t",
		"CREATE MATERIALIZED VIEW mv AS SELECT b, count(*) AS n FROM t GROUP BY b",
		"INSERT INTO t VALUES (1, 10, 'x', NULL), (2, 20, 'y', NULL), (3, 10, NULL, NULL)",
		"CREATE INDEX ON t (b)",
		"CREATE INDEX ON t (b)",
		"CREATE INDEX ON t (b, c)",
		"CREATE INDEX named ON t USING btree (c)",
		"CREATE INDEX IF NOT EXISTS named ON t (b)",
		"CREATE INDEX ON mv (n)",
	)
	if len(notices) != 1 || notices[0] != `relation "named" already exists, skipping` {
		t.Fatalf("notices: %q", notices)
	}
	eng.mu.RLock()
	names := eng.mu.cat.indexNames()
	eng.mu.RUnlock()
	if got := strings.Join(names, " "); got != "mv_n_idx named t_b_c_idx t_b_idx t_b_idx1" {
		t.Fatalf("index names: %s", got)
	}
	for q, state := range map[string]string{
		"CREATE INDEX named ON t (b)":                  "42P07",
		"CREATE TABLE named (a int)":                   "42P07",
		"CREATE INDEX t ON mv (b)":                     "42P07",
		"CREATE INDEX ON nope (b)":                     "42P01",
		"CREATE INDEX ON t (nope)":                     "42703",
		"CREATE INDEX ON pv (b)":                       "42809",
		"CREATE UNIQUE INDEX ON t (b)":                 "23505",
		"CREATE UNIQUE INDEX ON mv (n)":                "0A000",
		"CREATE INDEX ON t (b) NULLS NOT DISTINCT":     "42601",
		"CREATE INDEX ON t ((b + 1))":                  "0A000",
		"CREATE INDEX ON t (b) INCLUDE (c)":            "0A000",
		"CREATE INDEX ON t (b) WHERE b > 1":            "0A000",
		"CREATE INDEX ON t USING hash (b)":             "0A000",
		"CREATE INDEX ON t (b DESC)":                   "0A000",
		"CREATE INDEX ON t (j)":                        "0A000",
		"DROP INDEX nope":                              "42704",
		"DROP INDEX t":                                 "42809",
		"DROP TABLE named":                             "42P01",
		"SELECT * FROM t_b_idx":                        "42P01",
		"CREATE INDEX ON rockstream_catalog.views (n)": "42809",
	} {
		_, err := s.Exec(ctx, q, nil)
		if got := errs.SQLState(err); got != state {
			t.Errorf("%s: SQLSTATE %s (%v), want %s", q, got, err, state)
		}
	}
	execAll(t, s, "DROP INDEX IF EXISTS nope, t_b_idx1", "DROP INDEX named")
	if err := eng.VerifyIndexes(); err != nil {
		t.Fatal(err)
	}
	execAll(t, s, "DROP TABLE t CASCADE")
	eng.mu.RLock()
	left := len(eng.mu.cat.indexes)
	var entries int
	_ = eng.mu.store.Scan([]byte{nsIndex}, []byte{nsIndex + 1}, func(_, _ []byte) bool { entries++; return true })
	eng.mu.RUnlock()
	if left != 0 || entries != 0 {
		t.Fatalf("after DROP TABLE: %d indexes and %d entries left", left, entries)
	}
	// The names are free again.
	execAll(t, s, "CREATE TABLE t_b_idx (a int)", "CREATE INDEX ON t_b_idx (a)")
}

// TestIndexNames checks the names PostgreSQL gives indexes created
// without one.
func TestIndexNames(t *testing.T) {
	cat := newCatalog()
	for _, c := range []struct {
		table string
		cols  []string
		want  string
	}{
		{"t", []string{"b"}, "t_b_idx"},
		{"t", []string{"a", "b"}, "t_a_b_idx"},
		{strings.Repeat("x", 70), []string{"b"}, strings.Repeat("x", 57) + "_b_idx"},
		{"t", []string{strings.Repeat("y", 70)}, "t_" + strings.Repeat("y", 57) + "_idx"},
		{strings.Repeat("x", 40), []string{strings.Repeat("y", 40)}, strings.Repeat("x", 29) + "_" + strings.Repeat("y", 29) + "_idx"},
	} {
		if got := chooseIndexName(cat, c.table, c.cols); got != c.want {
			t.Errorf("%s %v: got %s, want %s", c.table, c.cols, got, c.want)
		}
	}
}

// indexSchema is keyRangeSchema with indexes on columns that do not lead
// the relations' stored orders.
var indexSchema = append(append([]string(nil), keyRangeSchema...),
	"CREATE INDEX tk_c ON tk (c)",
	"CREATE INDEX tk_vb ON tk (v, b)",
	"CREATE INDEX tn_c ON tn (c, a)",
	"CREATE INDEX tn_b ON tn (b)",
	"CREATE INDEX mg_s ON mg (s, n)",
	"CREATE INDEX mc_a ON mc (a)",
	"CREATE INDEX mk_a ON mk (a, v)",
)

// indexCols are the indexed columns of each relation, leading first.
var indexCols = map[string][]string{
	"tk": {"c", "v", "b"}, "tn": {"c", "b", "a"}, "mg": {"s", "n"}, "mc": {"a"}, "mk": {"a", "v"},
}

// TestIndexReadsMatchFullScan checks on random data and random predicates
// on indexed columns that reading through indexes returns exactly what
// reading every row returns (SELECT, joins, UPDATE and DELETE), with
// NULLs, duplicates in the index keys and mixed numeric comparisons, and
// that every index equals its relation after every write.
func TestIndexReadsMatchFullScan(t *testing.T) {
	ctx := context.Background()
	rapid.Check(t, func(t *rapid.T) {
		eng := OpenMemory()
		s := eng.NewSession()
		exec := func(q string, params ...*string) (*Result, error) { return s.Exec(ctx, q, params) }
		for _, q := range indexSchema {
			if _, err := exec(q); err != nil {
				t.Fatal(err)
			}
		}
		pred := func(rel string) string {
			cols := indexCols[rel]
			var atoms []string
			for range rapid.SampledFrom([]int{1, 1, 2, 2, 3}).Draw(t, "atoms") {
				atoms = append(atoms, keyRangeAtom(t, cols[rapid.IntRange(0, len(cols)-1).Draw(t, "col")]))
			}
			return strings.Join(atoms, " AND ")
		}
		both := func(q string) {
			var res [2]string
			write := !strings.HasPrefix(q, "SELECT")
			for i := range 2 {
				fullScansOnly.Store(i == 1)
				if write {
					if _, err := exec("BEGIN"); err != nil {
						t.Fatal(err)
					}
				}
				r, err := exec(q)
				if write {
					if err == nil {
						if err := eng.verifyIndexesNow(s); err != nil {
							t.Fatalf("%s: %v", q, err)
						}
					}
					if _, err := exec("ROLLBACK"); err != nil {
						t.Fatal(err)
					}
				}
				res[i] = resultText(r, err)
			}
			fullScansOnly.Store(false)
			if res[0] != res[1] {
				t.Fatalf("%s\nby index:\n%s\nfull scan:\n%s", q, res[0], res[1])
			}
		}
		for range rapid.IntRange(1, 3).Draw(t, "rounds") {
			for _, table := range []string{"tk", "tn"} {
				var rows []string
				for range rapid.IntRange(0, 30).Draw(t, "rows") {
					rows = append(rows, keyRangeRow(t, table))
				}
				if len(rows) > 0 {
					q := "INSERT INTO " + table + " VALUES " + strings.Join(rows, ", ")
					if table == "tk" {
						q += " ON CONFLICT DO NOTHING"
					}
					if _, err := exec(q); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
			}
			if rapid.Bool().Draw(t, "change") {
				table := rapid.SampledFrom([]string{"tk", "tn"}).Draw(t, "table")
				q := "UPDATE " + table + " SET c = c + 1 WHERE " + pred(table)
				if rapid.Bool().Draw(t, "delete") {
					q = "DELETE FROM " + table + " WHERE " + pred(table)
				}
				if _, err := exec(q); err != nil && errs.SQLState(err) != "22003" {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if err := eng.VerifyIndexes(); err != nil {
				t.Fatal(err)
			}
			for range rapid.IntRange(1, 8).Draw(t, "queries") {
				rel := rapid.SampledFrom([]string{"tk", "tn", "mg", "mc", "mk"}).Draw(t, "rel")
				switch rapid.IntRange(0, 5).Draw(t, "shape") {
				case 0, 1:
					both("SELECT * FROM " + rel + " WHERE " + pred(rel))
				case 2:
					both("SELECT * FROM tn JOIN tk ON tn.c = tk.a WHERE " + qualify(pred("tk"), "tk") +
						" AND " + qualify(pred("tn"), "tn"))
				case 3:
					if rel == "tk" || rel == "tn" {
						both("DELETE FROM " + rel + " WHERE " + pred(rel) + " RETURNING *")
					}
				case 5:
					// Index lookup joins: the inner side has no
					// condition of its own.
					switch rapid.IntRange(0, 3).Draw(t, "lookup") {
					case 0:
						both("SELECT * FROM tk JOIN tn ON tn.c = tk.a WHERE " + qualify(pred("tk"), "tk"))
					case 1:
						both("SELECT * FROM tn LEFT JOIN tk ON tk.c = tn.b WHERE " + qualify(pred("tn"), "tn"))
					case 2:
						both("SELECT * FROM mg WHERE s IN (SELECT c FROM tn WHERE " + pred("tn") + ")")
					default:
						both("SELECT * FROM tk RIGHT JOIN mk ON mk.a = tk.c WHERE mk.b = 1 AND " + qualify(pred("tk"), "tk"))
					}
				default:
					if rel == "tk" || rel == "tn" {
						both("UPDATE " + rel + " SET v = coalesce(v, '') || '!' WHERE " + pred(rel) + " RETURNING *")
					}
				}
			}
		}
	})
}

// verifyIndexesNow checks the indexes as s's open transaction block sees
// them.
func (e *Engine) verifyIndexesNow(s *Session) error {
	if s.txn == nil || s.txn.w == nil {
		return e.VerifyIndexes()
	}
	w := s.txn.w
	return verifyIndexes(context.Background(), w.ov, w.cat)
}

// TestExplainIndexes checks which scans read an index, as plain EXPLAIN
// shows them.
func TestExplainIndexes(t *testing.T) {
	eng := OpenMemory()
	s := eng.NewSession()
	execAll(t, s, indexSchema...)
	execAll(t, s, "CREATE TABLE big (id bigint PRIMARY KEY, k int, w text)", "CREATE INDEX ON big (k)")
	for _, c := range []struct{ query, plan string }{
		{"SELECT * FROM tk WHERE c = 1", "Index Scan using tk_c on tk\n  Index Cond: (c = 1)"},
		{"SELECT * FROM tk WHERE a = 1 AND c = 1", "Index Scan using tk_pkey on tk\n  Index Cond: (a = 1)"},
		{"SELECT * FROM tk WHERE v = 'a' AND b > 2", "Index Scan using tk_vb on tk\n  Index Cond: ((v = 'a'::text) AND (b > 2))"},
		{"SELECT * FROM tk WHERE b > 2", "Seq Scan on tk"},
		{"SELECT * FROM tn WHERE c IN (1, 2) AND a > 3", "Index Scan using tn_c on tn\n  Index Cond: ((c IN (1, 2)) AND (a > 3))"},
		{"SELECT * FROM tn WHERE c IN (1, 2) AND a = 3", "Index Scan using tn_c on tn\n  Index Cond: ((c IN (1, 2)) AND (a = 3))"},
		{"SELECT * FROM tn WHERE c > 1 AND a = 3", "Key Range Scan on tn\n  Key Cond: (a = 3)"},
		{"SELECT * FROM tn WHERE b = 2.5 AND c > 0", "Index Scan using tn_b on tn\n  Index Cond: (b = 2.5)"},
		{"SELECT * FROM tn WHERE b = 2 AND c = 0", "Index Scan using tn_c on tn\n  Index Cond: (c = 0)"},
		{"SELECT * FROM mg WHERE s > 10", "Index Scan using mg_s on mg\n  Index Cond: (s > 10)"},
		{"SELECT * FROM mc WHERE a = 3000000000", "Index Scan using mc_a on mc\n  Index Cond: (a = 3000000000)"},
		{"SELECT * FROM big WHERE k = 12.0", "Index Scan using big_k_idx on big\n  Index Cond: (k = 12.0)"},
		{"SELECT * FROM big WHERE k = 12 OR k = 13", "Seq Scan on big"},
		{"SELECT * FROM big b1 JOIN big b2 ON b1.id = b2.k WHERE b1.k = 1 AND b2.k = 2",
			"Index Scan using big_k_idx on big\n  Index Cond: (k = 1)\nIndex Scan using big_k_idx on big\n  Index Cond: (k = 2)"},
		{"SELECT * FROM big b1 JOIN big b2 ON b1.id = b2.k WHERE b1.k = 1", "Seq Scan on big\nSeq Scan on big"},
		{"SELECT * FROM big b1 JOIN tk ON tk.a = b1.k WHERE tk.c = 2.5",
			"Index Scan using big_k_idx on big\n  Index Cond: (k = tk.a)\n  Lookup keys from: tk\nIndex Scan using tk_c on tk\n  Index Cond: (c = 2.5)"},
		{"SELECT * FROM tk LEFT JOIN big ON big.id = tk.b WHERE tk.c = 2.5",
			"Index Scan using tk_c on tk\n  Index Cond: (c = 2.5)\nIndex Scan using big_pkey on big\n  Index Cond: (id = tk.b)\n  Lookup keys from: tk"},
		{"SELECT * FROM tk RIGHT JOIN big ON big.id = tk.b WHERE big.k = 1",
			"Seq Scan on tk\nIndex Scan using big_k_idx on big\n  Index Cond: (k = 1)"}, // tk's unmatched rows are dropped, but big's are not
		{"SELECT * FROM tk JOIN tn ON tk.a = tn.c WHERE tk.c = 1 AND tn.c = 4",
			"Index Scan using tk_c on tk\n  Index Cond: (c = 1)\nIndex Scan using tn_c on tn\n  Index Cond: (c = 4)"},
	} {
		if got := explainText(t, s, c.query); got != c.plan {
			t.Errorf("EXPLAIN %s:\n got %q\nwant %q", c.query, got, c.plan)
		}
	}
}

// TestExplainIndexesAsDocumented runs the EXPLAIN examples of
// docs/sql.md's EXPLAIN section.
func TestExplainIndexesAsDocumented(t *testing.T) {
	s := OpenMemory().NewSession()
	execAll(t, s, "CREATE TABLE accounts (id int PRIMARY KEY, branch int, balance numeric)",
		"CREATE TABLE branches (id int PRIMARY KEY, region text)")
	check := func(q, want string) {
		t.Helper()
		if got := explainText(t, s, q); got != want {
			t.Errorf("EXPLAIN %s:\n got %q\nwant %q", q, got, want)
		}
	}
	check("SELECT * FROM accounts WHERE id = 12", "Index Scan using accounts_pkey on accounts\n  Index Cond: (id = 12)")
	check("SELECT * FROM accounts WHERE branch = 3", "Seq Scan on accounts")
	execAll(t, s, "CREATE INDEX ON accounts (branch)")
	check("SELECT * FROM accounts WHERE branch = 3 AND balance > 0", "Index Scan using accounts_branch_idx on accounts\n  Index Cond: (branch = 3)")
	check("SELECT * FROM branches b JOIN accounts a ON a.branch = b.id WHERE b.region = 'eu'",
		"Seq Scan on branches\nIndex Scan using accounts_branch_idx on accounts\n  Index Cond: (branch = b.id)\n  Lookup keys from: branches")
}

// TestIndexWritePaths keeps an index on a keyed table, an unkeyed one, an
// append-only one and a view through every kind of write, on 1 and 3
// workers (every write split), and checks after each that the indexes
// equal their relations and that reads through them find what full scans
// find.
func TestIndexWritePaths(t *testing.T) {
	ctx := context.Background()
	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			eng, err := Open(NewMemoryStore(), Options{Workers: workers, ParallelMinRows: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			s := eng.NewSession()
			check := func(step string) {
				t.Helper()
				if err := eng.VerifyIndexes(); err != nil {
					t.Fatalf("after %s: %v", step, err)
				}
				for _, q := range []string{
					"SELECT * FROM k WHERE g = 3", "SELECT * FROM k WHERE g IN (1, 2) AND v > 'm'",
					"SELECT * FROM u WHERE g = 2", "SELECT * FROM a WHERE y = 'y3'",
					"SELECT * FROM m WHERE n >= 2",
				} {
					by, err1 := s.Exec(ctx, q, nil)
					fullScansOnly.Store(true)
					full, err2 := s.Exec(ctx, q, nil)
					fullScansOnly.Store(false)
					if a, b := resultText(by, err1), resultText(full, err2); a != b {
						t.Fatalf("after %s: %s\nby index:\n%s\nfull scan:\n%s", step, q, a, b)
					}
				}
			}
			execAll(t, s,
				"CREATE TABLE k (id int PRIMARY KEY, g int, v text)",
				"CREATE TABLE u (g int, v numeric)",
				"CREATE TABLE a (x int, y text) APPEND ONLY",
				"CREATE MATERIALIZED VIEW m AS SELECT g, count(*) AS n FROM u GROUP BY g",
				"INSERT INTO k SELECT i, i % 5, 'v' || i FROM generate_series(1, 40) i",
				"INSERT INTO u SELECT i % 7, i % 3 FROM generate_series(1, 40) i",
				"INSERT INTO a SELECT i % 4, 'y' || (i % 6) FROM generate_series(1, 40) i",
				"CREATE INDEX ON k (g, v)", "CREATE INDEX ON u (g)", "CREATE INDEX ON a (y)", "CREATE INDEX ON m (n)",
			)
			check("CREATE INDEX")
			for _, step := range []string{
				"INSERT INTO k VALUES (100, 3, 'new'), (101, NULL, NULL)",
				"INSERT INTO k VALUES (1, 4, 'conflict') ON CONFLICT (id) DO UPDATE SET g = excluded.g, v = excluded.v",
				"INSERT INTO k VALUES (2, 4, 'x') ON CONFLICT DO NOTHING",
				"UPDATE k SET g = g + 1 WHERE g = 2",
				"UPDATE k SET v = v || '!' WHERE id < 10",
				"DELETE FROM k WHERE g = 3 AND v > 'v2'",
				"INSERT INTO u VALUES (2, 1.0), (2, 1.00), (2, 1), (NULL, 5)",
				"DELETE FROM u WHERE v = 1 AND g = 2",
				"UPDATE u SET g = 2 WHERE g = 5",
				"INSERT INTO a VALUES (1, 'y3'), (1, 'y3')",
				"BEGIN", "INSERT INTO k VALUES (200, 2, 'blk')", "UPDATE u SET g = 9 WHERE g = 1", "DELETE FROM k WHERE id = 200", "COMMIT",
				"BEGIN", "DELETE FROM k", "INSERT INTO u VALUES (8, 8)", "ROLLBACK",
				"BEGIN", "INSERT INTO k VALUES (300, 1, 'sp')", "SAVEPOINT x", "DELETE FROM k WHERE g = 1", "ROLLBACK TO SAVEPOINT x", "COMMIT",
				"TRUNCATE u",
				"INSERT INTO u SELECT i % 4, i FROM generate_series(1, 30) i",
			} {
				execAll(t, s, step)
				if !s.InTransaction() {
					check(step)
				}
			}
			// COPY FROM STDIN and the ingest API.
			res, err := s.Exec(ctx, "COPY k FROM STDIN", nil)
			if err == nil {
				_, err = s.CopyFrom(ctx, res.CopyIn, strings.NewReader("500\t3\tcopied\n501\t\\N\tc2\n"))
			}
			if err != nil {
				t.Fatal(err)
			}
			check("COPY")
			_, err = eng.Ingest(ctx, &Ingest{Changes: []RowChange{
				{Table: "k", Op: Upsert, Row: zset.Row{types.MakeInt(types.Int4, 500), types.MakeInt(types.Int4, 1), types.MakeText("up")}},
				{Table: "k", Op: DeleteKey, Row: zset.Row{types.MakeInt(types.Int4, 501), types.Null, types.Null}},
				{Table: "a", Op: Insert, Row: zset.Row{types.MakeInt(types.Int4, 9), types.MakeText("y3")}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			check("Ingest")
		})
	}
}

// TestIndexRecovery checks that indexes survive a restart: their
// definitions are replayed, their entries kept, and writes after the
// restart maintain them.
func TestIndexRecovery(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryStore()
	e1, err := Open(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := e1.NewSession()
	execAll(t, s,
		"CREATE TABLE t (id int PRIMARY KEY, b int, c text)",
		"INSERT INTO t SELECT i, i % 10, 'c' || i FROM generate_series(1, 100) i",
		"CREATE INDEX ON t (b)",
		"CREATE MATERIALIZED VIEW mv AS SELECT b, count(*) AS n, max(c) AS c FROM t GROUP BY b",
		"CREATE INDEX mv_c ON mv (c)",
		"CREATE INDEX gone ON t (c)",
		"DROP INDEX gone",
	)
	s.Close()
	if err := e1.Close(); err != nil {
		t.Fatal(err)
	}
	e2, err := Open(st, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer e2.Close()
	s2 := e2.NewSession()
	if err := e2.VerifyIndexes(); err != nil {
		t.Fatal(err)
	}
	if got := explainText(t, s2, "SELECT * FROM t WHERE b = 3"); got != "Index Scan using t_b_idx on t\n  Index Cond: (b = 3)" {
		t.Fatalf("after reopen: %s", got)
	}
	execAll(t, s2, "UPDATE t SET b = 3 WHERE id <= 5", "DELETE FROM t WHERE id > 95", "CREATE INDEX gone ON t (c)")
	if err := e2.VerifyViews(); err != nil {
		t.Fatal(err)
	}
	res, err := s2.Exec(ctx, "SELECT count(*) FROM t WHERE b = 3", nil)
	if err != nil || formatRows(res) != "14\n" {
		t.Fatalf("count by index after reopen: %v %v", err, res)
	}
}

// TestVerifyIndexesFindsDamage checks that the verification of indexes
// (VerifyViews, rockstream doctor --deep) reports an index that lacks an
// entry, holds one too many, or holds a wrong value.
func TestVerifyIndexesFindsDamage(t *testing.T) {
	for _, damage := range []string{"lacks", "extra", "value"} {
		t.Run(damage, func(t *testing.T) {
			st := NewMemoryStore()
			eng, err := Open(st, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			execAll(t, eng.NewSession(), "CREATE TABLE t (id int PRIMARY KEY, b int)",
				"INSERT INTO t VALUES (1, 10), (2, 20)", "CREATE INDEX ON t (b)")
			if err := eng.VerifyViews(); err != nil {
				t.Fatal(err)
			}
			eng.mu.Lock()
			ix := eng.mu.cat.indexes["t_b_idx"]
			o := eng.mu.cat.lookup("t")
			key := ix.entryKeyOf(o)(nil, ix.prefix(), zset.Row{types.MakeInt(types.Int4, 1), types.MakeInt(types.Int4, 10)})
			switch damage {
			case "lacks":
				err = st.Delete(key)
			case "extra":
				row := zset.Row{types.MakeInt(types.Int4, 3), types.MakeInt(types.Int4, 30)}
				err = st.Set(ix.entryKeyOf(o)(nil, ix.prefix(), row), encodeStored(nil, 1, row))
			default:
				err = st.Set(key, encodeStored(nil, 2, zset.Row{types.MakeInt(types.Int4, 1), types.MakeInt(types.Int4, 10)}))
			}
			eng.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			if err := eng.VerifyViews(); err == nil || !strings.Contains(err.Error(), "index t_b_idx") {
				t.Fatalf("damage %s: verification says %v", damage, err)
			}
		})
	}
}
