package runtime

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/storage"
)

// reuseNote returns the NOTICE the last replacement of view raised, or "".
func reuseNote(notes []string, view string) string {
	last := ""
	for _, n := range notes {
		if strings.HasPrefix(n, "materialized view \""+view+"\": ") {
			last = n
		}
	}
	return last
}

// wantKept checks the replacement's NOTICE: kept of all stateful
// operators kept their state.
func wantKept(t *testing.T, notes []string, view string, kept, all int) {
	t.Helper()
	want := fmt.Sprintf("materialized view %q: %d of %d stateful operators kept their state, %d backfilled", view, kept, all, all-kept)
	if got := reuseNote(notes, view); got != want {
		t.Errorf("NOTICE %q, want %q", got, want)
	}
}

// replaceSteps is a script of the ALTER oracle (runAlterScript) with, for
// each CREATE OR REPLACE that succeeds, how many stateful operators must
// keep their state (kept of all). In PostgreSQL {MV} is a plain view,
// which CREATE OR REPLACE VIEW replaces under the rules RockStream applies
// while a view reads the materialized view; each replacement here keeps
// the columns or adds some, except those expected to fail on both sides.
var replaceSteps = []struct {
	stmt      string
	kept, all int
}{
	{stmt: `CREATE TABLE t (a int, b int, c text)`},
	{stmt: `CREATE TABLE w (k int, y int)`},
	{stmt: `INSERT INTO t VALUES (1, 10, 'p'), (2, 20, 'q'), (2, 21, 'q'), (NULL, 30, NULL), (3, NULL, 'r'), (1, 5, 's')`},
	{stmt: `INSERT INTO w VALUES (1, 100), (2, 200), (2, 201), (4, 400), (NULL, 0)`},
	{stmt: `CREATE {MV} m_agg AS SELECT a, count(*) AS n, sum(b) AS s FROM t GROUP BY a`},
	{stmt: `CREATE {MV} m_join AS SELECT t.a, w.y, count(*) AS n FROM t JOIN w ON t.a = w.k GROUP BY t.a, w.y`},
	{stmt: `CREATE {MV} m_total AS SELECT count(*) AS n, sum(b) AS s, max(b) AS mx FROM t`},
	{stmt: `CREATE {MV} m_dep AS SELECT a, n FROM m_agg WHERE n > 1`},
	// The same query: everything kept.
	{`CREATE OR REPLACE {MV} m_agg AS SELECT a, count(*) AS n, sum(b) AS s FROM t GROUP BY a`, 1, 1},
	{stmt: `INSERT INTO t VALUES (1, 1, 'x'), (5, 50, 'y')`},
	// A column added above the aggregate, and a HAVING: the aggregate's
	// state is kept.
	{`CREATE OR REPLACE {MV} m_agg AS SELECT a, count(*) AS n, sum(b) AS s, a * 2 AS d FROM t GROUP BY a`, 1, 1},
	{stmt: `DELETE FROM t WHERE b = 10`},
	{`CREATE OR REPLACE {MV} m_agg AS SELECT a, count(*) AS n, sum(b) AS s, a * 3 AS d FROM t GROUP BY a HAVING count(*) > 1`, 1, 1},
	{stmt: `UPDATE t SET b = b + 1 WHERE a = 2`},
	{stmt: `INSERT INTO t VALUES (5, 51, 'z')`},
	// m_dep reads m_agg: its columns stay (42P16 as in PostgreSQL).
	{stmt: `CREATE OR REPLACE {MV} m_agg AS SELECT a, count(*) AS n FROM t GROUP BY a`},
	{stmt: `CREATE OR REPLACE {MV} m_agg AS SELECT a, count(*) AS cnt, sum(b) AS s, a * 3 AS d FROM t GROUP BY a`},
	{stmt: `CREATE OR REPLACE {MV} m_agg AS SELECT a, count(*) AS n, sum(b)::numeric AS s, a * 3 AS d FROM t GROUP BY a`},
	// Another aggregate: its state starts again.
	{`CREATE OR REPLACE {MV} m_agg AS SELECT a, count(*) AS n, sum(b) AS s, a * 3 AS d, min(c) AS mc FROM t GROUP BY a`, 0, 1},
	{stmt: `DELETE FROM t WHERE c = 'q'`},
	// Over a join: another aggregate above it, the join kept.
	{`CREATE OR REPLACE {MV} m_join AS SELECT t.a, w.y, count(*) AS n, sum(t.b) AS s FROM t JOIN w ON t.a = w.k GROUP BY t.a, w.y`, 1, 2},
	{stmt: `INSERT INTO w VALUES (1, 101), (5, 500)`},
	{stmt: `INSERT INTO t VALUES (4, 44, 'f'), (2, 22, 'g')`},
	{stmt: `DELETE FROM w WHERE y = 200`},
	// The join's filter changes: nothing below the scans is the same.
	{`CREATE OR REPLACE {MV} m_join AS SELECT t.a, w.y, count(*) AS n, sum(t.b) AS s FROM t JOIN w ON t.a = w.k AND w.y > 100 GROUP BY t.a, w.y`, 0, 2},
	{stmt: `UPDATE w SET y = y + 1`},
	// Two aggregates joined: a filter added on the left gives the right
	// aggregate another operator number; its state moves there.
	{stmt: `CREATE {MV} m_two AS SELECT l.a, l.n, r.s FROM (SELECT a, count(*) AS n FROM t GROUP BY a) l JOIN (SELECT k, sum(y) AS s FROM w GROUP BY k) r ON l.a = r.k`},
	{`CREATE OR REPLACE {MV} m_two AS SELECT l.a, l.n, r.s FROM (SELECT a, count(*) AS n FROM t WHERE b > 20 GROUP BY a) l JOIN (SELECT k, sum(y) AS s FROM w GROUP BY k) r ON l.a = r.k`, 1, 3},
	{stmt: `INSERT INTO w VALUES (2, 7), (6, 1)`},
	{stmt: `INSERT INTO t VALUES (6, 66, 'i'), (2, 25, 'j')`},
	{stmt: `DELETE FROM w WHERE k = 1`},
	// An aggregate without GROUP BY: a partial and a final step, kept.
	{`CREATE OR REPLACE {MV} m_total AS SELECT count(*) AS n, sum(b) AS s, max(b) AS mx, count(*) + 1 AS n1 FROM t`, 2, 2},
	{stmt: `DELETE FROM t WHERE b = 51`},
	{stmt: `INSERT INTO t VALUES (6, 60, 'h')`},
}

// TestReplaceReusesStateMatchesPostgres: after each replacement and each
// change after it, every relation equals PostgreSQL's, and each
// replacement kept the state it should.
func TestReplaceReusesStateMatchesPostgres(t *testing.T) {
	s := OpenMemory().NewSession()
	var notes []string
	s.OnNotice(func(n Notice) { notes = append(notes, n.Message) })
	pgc := connectOracle(t)
	for _, step := range replaceSteps {
		notes = nil
		runAlterScript(t, s, pgc, []string{step.stmt})
		if step.all > 0 {
			view := strings.Fields(strings.SplitN(step.stmt, "{MV} ", 2)[1])[0]
			wantKept(t, notes, view, step.kept, step.all)
		}
	}
}

// opStateIDs returns the operator ids that hold state of view id.
func opStateIDs(t *testing.T, e *Engine, id uint64) map[uint32]int {
	t.Helper()
	e.mu.RLock()
	defer e.mu.RUnlock()
	prefix := relPrefix(nsOpState, id)
	ids := map[uint32]int{}
	end := append([]byte(nil), prefix...)
	end[len(end)-1]++
	if err := e.mu.store.Scan(prefix, end, func(k, _ []byte) bool {
		if len(k) >= len(prefix)+1+4 {
			ids[binary.BigEndian.Uint32(k[len(prefix)+1:])]++
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestReplaceKeepsStateKeys: the kept operator's state entries are the
// ones the old circuit wrote, an operator that starts again has new ones,
// and no entry of an operator the new circuit lacks remains.
func TestReplaceKeepsStateKeys(t *testing.T) {
	e := OpenMemory()
	s := e.NewSession()
	execAll(t, s,
		"CREATE TABLE t (a int, b int)",
		"CREATE TABLE w (k int, y int)",
		"INSERT INTO t SELECT i % 7, i FROM generate_series(1, 50) AS i",
		"INSERT INTO w SELECT i, i * 10 FROM generate_series(0, 6) AS i",
		"CREATE MATERIALIZED VIEW m AS SELECT t.a, count(*) AS n FROM t JOIN w ON t.a = w.k GROUP BY t.a")
	id := e.mu.cat.byName["m"].id
	before := opStateIDs(t, e, id)
	if len(before) != 2 {
		t.Fatalf("state of %d operators, want 2 (join, aggregate): %v", len(before), before)
	}
	execAll(t, s, "CREATE OR REPLACE MATERIALIZED VIEW m AS SELECT t.a, count(*) AS n, max(w.y) AS y FROM t JOIN w ON t.a = w.k GROUP BY t.a")
	after := opStateIDs(t, e, id)
	join := e.mu.cat.byName["m"].circuit.StatefulOperators()[0]
	if after[uint32(join)] != before[uint32(join)] || before[uint32(join)] == 0 {
		t.Errorf("join entries %d before, %d after, want the same", before[uint32(join)], after[uint32(join)])
	}
	if len(after) != 2 {
		t.Errorf("state of %d operators after, want 2: %v", len(after), after)
	}
	// A query without the join: the join's state goes.
	execAll(t, s, "CREATE OR REPLACE MATERIALIZED VIEW m AS SELECT a, count(*) AS n, max(b) AS y FROM t GROUP BY a")
	if got := opStateIDs(t, e, id); len(got) != 1 {
		t.Errorf("state of %d operators after dropping the join, want 1: %v", len(got), got)
	}
	if got, want := alterQuery(t, s, "SELECT * FROM m ORDER BY a"), "0|7|49\n1|8|50\n2|7|44\n3|7|45\n4|7|46\n5|7|47\n6|7|48\n"; got != want {
		t.Errorf("m = %q, want %q", got, want)
	}
}

// TestReplaceReuseRestart: a view replaced over kept state, on a durable
// store, reopens with the new definition on that state and goes on
// exactly; a second replacement after the reopen keeps it again.
func TestReplaceReuseRestart(t *testing.T) {
	dir := t.TempDir()
	open := func() *Engine {
		st, err := storage.Open(storage.Options{Dir: dir, Logger: quietLog, Durability: storage.Relaxed})
		if err != nil {
			t.Fatal(err)
		}
		e, err := Open(st, Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := open()
	s := e.NewSession()
	var notes []string
	s.OnNotice(func(n Notice) { notes = append(notes, n.Message) })
	execAll(t, s,
		"CREATE TABLE t (a int, b int)",
		"INSERT INTO t SELECT i % 5, i FROM generate_series(1, 100) AS i",
		"CREATE MATERIALIZED VIEW m AS SELECT a, sum(b) AS s, count(*) AS n FROM t GROUP BY a",
		"CREATE OR REPLACE MATERIALIZED VIEW m AS SELECT a, sum(b) AS s, count(*) AS n, sum(b) / count(*) AS mean FROM t GROUP BY a",
		"DELETE FROM t WHERE b > 90")
	wantKept(t, notes, "m", 1, 1)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = open()
	defer func() { e.Close() }()
	s = e.NewSession()
	notes = nil
	s.OnNotice(func(n Notice) { notes = append(notes, n.Message) })
	execAll(t, s, "INSERT INTO t VALUES (1, 1000), (7, 7)", "UPDATE t SET b = b + 1 WHERE a = 2")
	// An ad-hoc query computes the view's rows from scratch.
	const query = "SELECT a, sum(b) AS s, count(*) AS n, sum(b) / count(*) AS mean FROM t GROUP BY a"
	check := func(when, having string) {
		t.Helper()
		got := alterQuery(t, s, "SELECT * FROM m ORDER BY a")
		if want := alterQuery(t, s, query+having+" ORDER BY a"); got != want || got == "" {
			t.Errorf("m %s = %q, want %q", when, got, want)
		}
	}
	check("after reopen", "")
	execAll(t, s, "CREATE OR REPLACE MATERIALIZED VIEW m AS "+query+" HAVING count(*) > 1")
	wantKept(t, notes, "m", 1, 1)
	check("after a replacement after reopen", " HAVING count(*) > 1")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = open()
	s = e.NewSession()
	execAll(t, s, "DELETE FROM t WHERE a = 0", "INSERT INTO t VALUES (7, 8)")
	check("after a second reopen", " HAVING count(*) > 1")
}

// TestExplainReplace: EXPLAIN INCREMENTAL CREATE OR REPLACE MATERIALIZED
// VIEW shows which operators the replacement would keep, changing
// nothing, and the replacement then keeps those.
func TestExplainReplace(t *testing.T) {
	s, notes := alterSession(t)
	execAll(t, s,
		"CREATE TABLE t (a int, b int)",
		"CREATE TABLE w (k int, y int)",
		"INSERT INTO t VALUES (1, 2), (2, 3)",
		"INSERT INTO w VALUES (1, 10), (2, 20)",
		"CREATE MATERIALIZED VIEW m AS SELECT t.a, count(*) AS n FROM t JOIN w ON t.a = w.k GROUP BY t.a")
	const replace = "CREATE OR REPLACE MATERIALIZED VIEW m AS SELECT t.a, count(*) AS n, max(w.y) AS y FROM t JOIN w ON t.a = w.k GROUP BY t.a"
	got := alterQuery(t, s, "EXPLAIN INCREMENTAL "+replace)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if last := lines[len(lines)-1]; last != "Replacement: 1 of 2 stateful operators keep their state, 1 backfilled" {
		t.Errorf("last line %q in\n%s", last, got)
	}
	var agg, join string
	for _, l := range lines {
		switch l = strings.TrimSpace(l); {
		case strings.HasPrefix(l, "aggregate"):
			agg = l
		case strings.HasPrefix(l, "join"):
			join = l
		}
	}
	if !strings.HasSuffix(agg, "reuse=backfill") || !strings.HasSuffix(join, "reuse=kept, read") {
		t.Errorf("aggregate %q, join %q in\n%s", agg, join, got)
	}
	if got := alterQuery(t, s, "SELECT * FROM m ORDER BY a"); got != "1|1\n2|1\n" {
		t.Errorf("EXPLAIN changed m: %q", got)
	}
	*notes = nil
	execAll(t, s, replace)
	wantKept(t, *notes, "m", 1, 2)
	if backfilled(*notes, "m") {
		t.Errorf("the replacement read its inputs whole: %q", *notes)
	}
	if got := alterQuery(t, s, "SELECT * FROM m ORDER BY a"); got != "1|1|10\n2|1|20\n" {
		t.Errorf("m = %q", got)
	}
	// Another join: everything is computed again from the inputs.
	*notes = nil
	execAll(t, s, "CREATE OR REPLACE MATERIALIZED VIEW m AS SELECT t.a, count(*) AS n, max(w.y) AS y FROM t JOIN w ON t.a = w.k AND w.y > 0 GROUP BY t.a")
	wantKept(t, *notes, "m", 0, 2)
	if !backfilled(*notes, "m") {
		t.Errorf("a replacement keeping nothing did not backfill: %q", *notes)
	}
	// A view that does not exist yet: every operator is new.
	got = alterQuery(t, s, "EXPLAIN INCREMENTAL CREATE OR REPLACE MATERIALIZED VIEW m2 AS SELECT a, sum(b) AS s FROM t GROUP BY a")
	if !strings.HasSuffix(got, "Replacement: 0 of 1 stateful operators keep their state, 1 backfilled\n") {
		t.Errorf("EXPLAIN of a new view:\n%s", got)
	}
	if _, err := s.Exec(context.Background(), "SELECT * FROM m2", nil); err == nil {
		t.Error("EXPLAIN created m2")
	}
}

// TestReplaceInTransaction: a replacement in a transaction block keeps
// the state the block's earlier changes brought up to date, and one rolled
// back leaves the old view and its state as they were.
func TestReplaceInTransaction(t *testing.T) {
	s, notes := alterSession(t)
	execAll(t, s,
		"CREATE TABLE t (a int, b int)",
		"INSERT INTO t VALUES (1, 2), (2, 3), (2, 4)",
		"CREATE MATERIALIZED VIEW m AS SELECT a, sum(b) AS s, count(*) AS n FROM t GROUP BY a")
	const query = "SELECT a, sum(b) AS s, count(*) AS n FROM t GROUP BY a"
	check := func(when, q string) {
		t.Helper()
		if got, want := alterQuery(t, s, "SELECT * FROM m ORDER BY a"), alterQuery(t, s, q+" ORDER BY a"); got != want {
			t.Errorf("m %s = %q, want %q", when, got, want)
		}
	}
	execAll(t, s, "BEGIN", "INSERT INTO t VALUES (3, 5), (1, 1)", "DELETE FROM t WHERE b = 3")
	*notes = nil
	execAll(t, s, "CREATE OR REPLACE MATERIALIZED VIEW m AS "+query+" HAVING sum(b) > 0",
		"INSERT INTO t VALUES (4, 6)")
	wantKept(t, *notes, "m", 1, 1)
	check("in the block", query+" HAVING sum(b) > 0")
	execAll(t, s, "ROLLBACK")
	check("after ROLLBACK", query)
	execAll(t, s, "INSERT INTO t VALUES (5, 7)", "DELETE FROM t WHERE a = 1")
	check("after ROLLBACK and changes", query)
	*notes = nil
	execAll(t, s, "BEGIN", "INSERT INTO t VALUES (2, 10)",
		"CREATE OR REPLACE MATERIALIZED VIEW m AS "+query+" HAVING count(*) > 1",
		"UPDATE t SET b = b * 2 WHERE a = 2", "COMMIT", "INSERT INTO t VALUES (6, 1)")
	wantKept(t, *notes, "m", 1, 1)
	check("after COMMIT", query+" HAVING count(*) > 1")
}

// TestReplaceMovesState: an unchanged operator that the new circuit
// numbers otherwise keeps its state under its new number, and the view
// goes on exactly.
func TestReplaceMovesState(t *testing.T) {
	e := OpenMemory()
	s := e.NewSession()
	var notes []string
	s.OnNotice(func(n Notice) { notes = append(notes, n.Message) })
	const right = "(SELECT k, sum(y) AS s, count(*) AS c FROM w GROUP BY k) r"
	execAll(t, s,
		"CREATE TABLE t (a int, b int)",
		"CREATE TABLE w (k int, y int)",
		"INSERT INTO t SELECT i % 9, i FROM generate_series(1, 60) AS i",
		"INSERT INTO w SELECT i % 11, i FROM generate_series(1, 80) AS i",
		"CREATE MATERIALIZED VIEW m AS SELECT l.a, l.n, r.s FROM (SELECT a, count(*) AS n FROM t GROUP BY a) l JOIN "+right+" ON l.a = r.k")
	id := e.mu.cat.byName["m"].id
	before := opStateIDs(t, e, id)
	oldAgg := e.mu.cat.byName["m"].circuit.StatefulOperators()[1] // the right aggregate
	const replaced = "SELECT l.a, l.n, r.s FROM (SELECT a, count(*) AS n FROM t WHERE b > 5 GROUP BY a) l JOIN " + right + " ON l.a = r.k"
	notes = nil
	execAll(t, s, "CREATE OR REPLACE MATERIALIZED VIEW m AS "+replaced)
	wantKept(t, notes, "m", 1, 3)
	newAgg := e.mu.cat.byName["m"].circuit.StatefulOperators()[1]
	if newAgg == oldAgg {
		t.Fatalf("the right aggregate is operator %d before and after: the test moves nothing", newAgg)
	}
	after := opStateIDs(t, e, id)
	if after[uint32(newAgg)] != before[uint32(oldAgg)] || before[uint32(oldAgg)] == 0 {
		t.Errorf("right aggregate: %d entries under %d before, %d under %d after", before[uint32(oldAgg)], oldAgg, after[uint32(newAgg)], newAgg)
	}
	execAll(t, s, "INSERT INTO w VALUES (3, 1000), (12, 5)", "DELETE FROM w WHERE y < 10", "UPDATE t SET b = b + 1 WHERE a = 4")
	if got, want := alterQuery(t, s, "SELECT * FROM m ORDER BY 1, 2, 3"), alterQuery(t, s, replaced+" ORDER BY 1, 2, 3"); got != want || got == "" {
		t.Errorf("m = %q, want %q", got, want)
	}
}

// TestReplaceRandomly replaces a view again and again by queries that
// share parts (aggregates, joins, aggregates without GROUP BY, subqueries),
// between random changes of the tables, and checks after each statement
// that the view holds what its query computed from scratch returns.
func TestReplaceRandomly(t *testing.T) {
	queries := []string{
		"SELECT a, count(*) AS n, sum(b) AS s FROM t GROUP BY a",
		"SELECT a, count(*) AS n, sum(b) AS s, a + 1 AS a1 FROM t GROUP BY a",
		"SELECT a, count(*) AS n, sum(b) AS s FROM t GROUP BY a HAVING sum(b) > 10",
		"SELECT a, count(*) AS n, sum(b) AS s, min(b) AS lo FROM t GROUP BY a",
		"SELECT t.a, count(*) AS n, sum(w.y) AS s FROM t JOIN w ON t.a = w.k GROUP BY t.a",
		"SELECT t.a, count(*) AS n, sum(w.y) AS s, max(t.b) AS hi FROM t JOIN w ON t.a = w.k GROUP BY t.a",
		"SELECT t.a, count(*) AS n, sum(w.y) AS s FROM t JOIN w ON t.a = w.k WHERE t.b > 2 GROUP BY t.a",
		"SELECT l.a, l.n, r.s FROM (SELECT a, count(*) AS n FROM t GROUP BY a) l JOIN (SELECT k, sum(y) AS s FROM w GROUP BY k) r ON l.a = r.k",
		"SELECT l.a, l.n, r.s FROM (SELECT a, count(*) AS n FROM t WHERE b <> 3 GROUP BY a) l JOIN (SELECT k, sum(y) AS s FROM w GROUP BY k) r ON l.a = r.k",
		"SELECT count(*) AS n, sum(b) AS s, max(b) AS mx FROM t",
		"SELECT count(*) AS n, sum(b) AS s, max(b) AS mx, count(*) * 2 AS n2 FROM t",
	}
	st := NewMemoryStore()
	e, err := Open(st, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { e.Close() }()
	s := e.NewSession()
	var notes []string
	s.OnNotice(func(n Notice) { notes = append(notes, n.Message) })
	execAll(t, s, "CREATE TABLE t (a int, b int)", "CREATE TABLE w (k int, y int)",
		"INSERT INTO t SELECT i % 6, i % 7 FROM generate_series(1, 40) AS i",
		"INSERT INTO w SELECT i % 8, i FROM generate_series(1, 30) AS i",
		"CREATE MATERIALIZED VIEW m AS "+queries[0])
	rng := rand.New(rand.NewPCG(3, 5))
	cur, kept := 0, 0
	for step := range 240 {
		var stmt string
		switch rng.IntN(5) {
		case 0:
			// Mostly a neighbour in the list, which shares parts.
			if rng.IntN(3) == 0 {
				cur = rng.IntN(len(queries))
			} else {
				cur = min(max(cur+rng.IntN(3)-1, 0), len(queries)-1)
			}
			stmt = "CREATE OR REPLACE MATERIALIZED VIEW m AS " + queries[cur]
		case 1:
			stmt = fmt.Sprintf("INSERT INTO t VALUES (%d, %d), (%d, %d)", rng.IntN(7), rng.IntN(8), rng.IntN(7), rng.IntN(8))
		case 2:
			stmt = fmt.Sprintf("INSERT INTO w VALUES (%d, %d)", rng.IntN(9), rng.IntN(50))
		case 3:
			stmt = fmt.Sprintf("DELETE FROM t WHERE a = %d AND b = %d", rng.IntN(6), rng.IntN(7))
		case 4:
			stmt = fmt.Sprintf("UPDATE w SET y = y + 1 WHERE k = %d", rng.IntN(8))
		}
		notes = nil
		execAll(t, s, stmt)
		if n := reuseNote(notes, "m"); n != "" && !strings.Contains(n, ": 0 of") {
			kept++
		}
		if step%60 == 59 {
			// Reopen: the view goes on from its stored state.
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			if e, err = Open(st, Options{Workers: 1 + step%2}); err != nil {
				t.Fatal(err)
			}
			s = e.NewSession()
			s.OnNotice(func(n Notice) { notes = append(notes, n.Message) })
		}
		got := alterQuery(t, s, "SELECT * FROM m ORDER BY 1, 2, 3")
		if want := alterQuery(t, s, queries[cur]+" ORDER BY 1, 2, 3"); got != want {
			t.Fatalf("step %d, after %s:\nm    %q\nwant %q", step, stmt, got, want)
		}
	}
	if kept < 10 {
		t.Errorf("only %d replacements kept state: the test exercises little", kept)
	}
}
