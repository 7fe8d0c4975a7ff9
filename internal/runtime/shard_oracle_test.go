package runtime

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/exchange"
	"github.com/rockstream/rockstream/internal/storage"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// The shard oracle tests run engines in shard mode, each with its own
// store and exchange node on loopback, joined to one assignment, and run
// one SQL script on all of them in lockstep: each statement on every
// shard at once, since their steps meet on the mesh. After every
// statement, the union of every shard's rows of each view and table
// equals what PostgreSQL returns for it (a plain view there) and what a
// single-node engine running the same script returns, and no row is on
// a shard that does not own its bucket.

// shardCluster is n shard-mode engines on one mesh.
type shardCluster struct {
	t        testing.TB
	nodes    []*exchange.Node
	addrs    []string
	dirs     []string // each shard's Pebble directory; nil: in memory
	revision uint64
	mu       sync.Mutex // guards meshes
	meshes   []*exchange.Mesh
	engines  []*Engine
	sessions []*Session
}

func newShardCluster(t testing.TB, n int, pebble bool) *shardCluster {
	t.Helper()
	c := &shardCluster{t: t}
	for range n {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		node, err := exchange.Listen(lis, exchange.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c.nodes, c.addrs = append(c.nodes, node), append(c.addrs, node.Addr())
		if pebble {
			c.dirs = append(c.dirs, t.TempDir())
		}
	}
	t.Cleanup(func() {
		c.close()
		for _, node := range c.nodes {
			if err := node.Close(); err != nil {
				t.Error(err)
			}
		}
	})
	c.open()
	return c
}

// open joins every node to the next assignment revision and opens each
// shard's engine on its mesh.
func (c *shardCluster) open() {
	t := c.t
	t.Helper()
	c.revision++
	n := len(c.nodes)
	for i, node := range c.nodes {
		mesh, err := node.Join(exchange.Assignment{Revision: c.revision, Self: i, Peers: c.addrs})
		if err != nil {
			t.Fatal(err)
		}
		var store Store = NewMemoryStore()
		if c.dirs != nil {
			db, err := storage.Open(storage.Options{Dir: c.dirs[i], Logger: quietLog, Durability: storage.Relaxed})
			if err != nil {
				t.Fatal(err)
			}
			store = db
		}
		eng, err := Open(store, Options{Shard: &Shard{Member: i, Members: n,
			Mesh: func(uint64) (*exchange.Mesh, error) { return c.meshOf(i), nil }}})
		if err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		c.meshes = append(c.meshes, mesh)
		c.mu.Unlock()
		c.engines = append(c.engines, eng)
		c.sessions = append(c.sessions, eng.NewSession())
	}
}

// meshOf returns shard i's current mesh.
func (c *shardCluster) meshOf(i int) *exchange.Mesh {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.meshes[i]
}

// rejoin moves every shard to a mesh of the next assignment revision,
// as a cluster's reset does, leaving the engines open.
func (c *shardCluster) rejoin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.revision++
	for i, node := range c.nodes {
		c.meshes[i].Close()
		mesh, err := node.Join(exchange.Assignment{Revision: c.revision, Self: i, Peers: c.addrs})
		if err != nil {
			c.t.Fatal(err)
		}
		c.meshes[i] = mesh
	}
}

// close closes every shard's engine and mesh.
func (c *shardCluster) close() {
	for i, eng := range c.engines {
		c.meshes[i].Close()
		if err := eng.Close(); err != nil {
			c.t.Error(err)
		}
	}
	c.meshes, c.engines, c.sessions = nil, nil, nil
}

// exec runs stmt on every shard at once and returns each shard's result
// and error.
func (c *shardCluster) exec(stmt string) ([]*Result, []error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := make([]*Result, len(c.sessions))
	errList := make([]error, len(c.sessions))
	var wg sync.WaitGroup
	for i, s := range c.sessions {
		wg.Go(func() { res[i], errList[i] = s.Exec(ctx, stmt, nil) })
	}
	wg.Wait()
	return res, errList
}

// each runs f on every shard at once and returns each shard's error.
func (c *shardCluster) each(f func(s *Session, e *Engine) error) []error {
	errList := make([]error, len(c.sessions))
	var wg sync.WaitGroup
	for i, s := range c.sessions {
		wg.Go(func() { errList[i] = f(s, c.engines[i]) })
	}
	wg.Wait()
	return errList
}

// copyIn runs COPY ... FROM STDIN with data on s.
func copyIn(s *Session, stmt, data string) error {
	res, err := s.Exec(context.Background(), stmt, nil)
	if err != nil {
		return err
	}
	_, err = s.CopyFrom(context.Background(), res.CopyIn, strings.NewReader(data))
	return err
}

// ingestOf turns "VALUES (1, 2), (3, 4)" of integers into a batch of
// inserts into table.
func ingestOf(t *testing.T, table, values string) *Ingest {
	in := &Ingest{}
	for _, tuple := range strings.Split(strings.TrimPrefix(values, "VALUES "), "), ") {
		var row zset.Row
		for _, f := range strings.Split(strings.Trim(tuple, "() "), ",") {
			f = strings.TrimSpace(f)
			if f == "NULL" {
				row = append(row, types.Null)
				continue
			}
			var n int64
			if _, err := fmt.Sscan(f, &n); err != nil {
				t.Fatalf("ingest value %q: %v", f, err)
			}
			row = append(row, types.MakeInt(types.Int4, n))
		}
		in.Changes = append(in.Changes, RowChange{Table: table, Op: Insert, Row: row})
	}
	return in
}

// rows returns the union of every shard's rows of query, printed as
// PostgreSQL prints them, sorted; it checks that each shard holds only
// rows of the buckets it owns when o is the relation read (nil: no check).
func (c *shardCluster) rows(query string, o func(*Engine) *object) []string {
	c.t.Helper()
	var all []string
	for i, s := range c.sessions {
		res, err := s.Exec(context.Background(), query, nil)
		if err != nil {
			c.t.Fatalf("shard %d: %s: %v", i, query, err)
		}
		if o != nil {
			rel := o(c.engines[i])
			for _, r := range res.Rows {
				b := splitRows(func(int) zset.Row { return r }, 1, rel.routeKey())[0]
				if owner(b, len(c.engines)) != i {
					c.t.Fatalf("shard %d holds a row of %s in bucket %d, which shard %d owns: %v", i, rel.name, b, owner(b, len(c.engines)), r)
				}
			}
		}
		all = append(all, resultLines(res)...)
	}
	slices.Sort(all)
	return all
}

// shardOracle runs a script on a cluster, a single node and PostgreSQL.
type shardOracle struct {
	t         *testing.T
	cluster   *shardCluster
	single    *Session
	pg        *pgconn.PgConn
	relations []string // tables and views, compared after each statement
	checks    []string // queries compared after each statement (CHECK)
	failed    int
}

func newShardOracle(t *testing.T, shards int, pebble bool) *shardOracle {
	return &shardOracle{t: t, cluster: newShardCluster(t, shards, pebble), single: OpenMemory().NewSession(), pg: oracleConn(t, "shards")}
}

// run executes stmt everywhere: PostgreSQL (as a plain view for a
// materialized view), the single node and every shard, and compares
// every relation afterwards. A statement PostgreSQL refuses must fail on
// every shard, on at least one with PostgreSQL's SQLSTATE, and on the
// single node with it.
func (o *shardOracle) run(stmt string) {
	t, ctx := o.t, context.Background()
	t.Helper()
	if q, ok := strings.CutPrefix(stmt, "CHECK "); ok {
		o.checks = append(o.checks, q)
		o.compare(stmt)
		return
	}
	pgStmt := stmt
	if rest, ok := strings.CutPrefix(stmt, "CREATE MATERIALIZED VIEW "); ok {
		pgStmt = "CREATE VIEW " + rest
		o.relations = append(o.relations, strings.Fields(rest)[0])
	} else if rest, ok := strings.CutPrefix(stmt, "CREATE TABLE "); ok {
		o.relations = append(o.relations, strings.Fields(rest)[0])
	}
	var pgErr, oneErr error
	var shardErrs []error
	switch {
	case strings.HasPrefix(stmt, "COPY "):
		// COPY t FROM STDIN, a newline, then its data.
		copyStmt, data, _ := strings.Cut(stmt, "\n")
		_, pgErr = o.pg.CopyFrom(ctx, strings.NewReader(data), copyStmt)
		oneErr = copyIn(o.single, copyStmt, data)
		shardErrs = o.cluster.each(func(s *Session, _ *Engine) error { return copyIn(s, copyStmt, data) })
	case strings.HasPrefix(stmt, "INGEST "):
		// INGEST t VALUES ...: the rows go in through Engine.Ingest.
		table, values, _ := strings.Cut(strings.TrimPrefix(stmt, "INGEST "), " ")
		_, pgErr = o.pg.Exec(ctx, "INSERT INTO "+table+" "+values).ReadAll()
		// Ingest coerces its rows in place: a batch of its own each.
		_, oneErr = o.single.eng.Ingest(ctx, ingestOf(t, table, values))
		ins := make([]*Ingest, len(o.cluster.engines))
		for i := range ins {
			ins[i] = ingestOf(t, table, values)
		}
		shardErrs = o.cluster.each(func(_ *Session, e *Engine) error {
			_, err := e.Ingest(ctx, ins[slices.Index(o.cluster.engines, e)])
			return err
		})
	default:
		_, pgErr = o.pg.Exec(ctx, pgStmt).ReadAll()
		_, oneErr = o.single.Exec(ctx, stmt, nil)
		_, shardErrs = o.cluster.exec(stmt)
	}
	if pgErr != nil {
		want := sqlState(pgErr)
		if errs.SQLState(oneErr) != want {
			t.Fatalf("%s: PostgreSQL: %v; single node: %v", stmt, pgErr, oneErr)
		}
		matched := false
		for i, err := range shardErrs {
			switch {
			case err == nil:
				t.Fatalf("%s: PostgreSQL: %v; shard %d succeeded", stmt, pgErr, i)
			case errs.SQLState(err) == want:
				matched = true
			case !errors.Is(err, failedElsewhere):
				t.Fatalf("%s: PostgreSQL: %v; shard %d: %v", stmt, pgErr, i, err)
			}
		}
		if !matched {
			t.Fatalf("%s: PostgreSQL: %v; no shard failed with %s: %v", stmt, pgErr, want, shardErrs)
		}
		o.failed++
	} else {
		if oneErr != nil {
			t.Fatalf("%s: single node: %v", stmt, oneErr)
		}
		for i, err := range shardErrs {
			if err != nil {
				t.Fatalf("%s: shard %d: %v", stmt, i, err)
			}
		}
	}
	o.compare(stmt)
}

// compare compares every relation, and the CHECK queries, with
// PostgreSQL and the single node.
func (o *shardOracle) compare(after string) {
	t := o.t
	t.Helper()
	queries := slices.Clone(o.checks)
	for _, rel := range o.relations {
		queries = append(queries, "SELECT * FROM "+rel)
	}
	for i, q := range queries {
		want, err := pgLines(o.pg, q)
		if err != nil {
			t.Fatalf("PostgreSQL: %s: %v", q, err)
		}
		var owned func(*Engine) *object
		if i >= len(o.checks) {
			rel := o.relations[i-len(o.checks)]
			owned = func(e *Engine) *object { return e.mu.cat.lookup(rel) }
		}
		got := o.cluster.rows(q, owned)
		if !slices.Equal(got, want) {
			t.Fatalf("after %q, %s differs from PostgreSQL:\nshards:\n  %s\nPostgreSQL:\n  %s",
				after, q, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
		sameAsSingle(t, o.single, after, q, got)
	}
}

// pgLines returns a query's rows in PostgreSQL, sorted.
func pgLines(pg *pgconn.PgConn, q string) ([]string, error) {
	res, err := pg.Exec(context.Background(), q).ReadAll()
	if err != nil {
		return nil, err
	}
	return pgLinesOf(res[0].Rows), nil
}

// shardScript is the fixed part of the script: tables with and without
// a primary key, grouped aggregates, a global aggregate, a join,
// DISTINCT, a view over a view, and views created after their tables
// hold rows (backfills); updates that move rows to other buckets, and
// statements that fail on one shard only (a duplicate key).
var shardScript = []string{
	"CREATE TABLE t (k int PRIMARY KEY, g int, v int)",
	"CREATE TABLE u (g int, name text)",
	"CREATE MATERIALIZED VIEW agg AS SELECT g, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi FROM t GROUP BY g",
	"CREATE MATERIALIZED VIEW total AS SELECT count(*) AS n, sum(v) AS s FROM t",
	"CREATE MATERIALIZED VIEW joined AS SELECT t.k, t.v, u.name FROM t JOIN u ON t.g = u.g",
	"CREATE MATERIALIZED VIEW names AS SELECT DISTINCT name FROM u",
	"CREATE MATERIALIZED VIEW bykey AS SELECT u.name, t.k, t.v FROM u JOIN t ON u.g = t.k",
	"INSERT INTO t VALUES (1, 1, 10), (2, 1, 20), (3, 2, 30), (4, 3, 40), (5, NULL, 50), (6, 2, NULL)",
	"INSERT INTO u VALUES (1, 'a'), (2, 'b'), (2, 'b'), (3, 'c'), (NULL, 'n')",
	"CREATE INDEX t_g ON t (g)",
	"CHECK SELECT * FROM t WHERE g = 1",
	"CHECK SELECT k, v + 1 AS w FROM t WHERE v > 20 AND g IS NOT NULL ORDER BY k",
	"CHECK SELECT * FROM agg WHERE g = 2",
	"CHECK SELECT name, k FROM joined WHERE name <> 'a'",
	"CREATE MATERIALIZED VIEW late AS SELECT g, avg(v) AS a, count(*) AS n FROM t WHERE v > 5 GROUP BY g",
	"CREATE MATERIALIZED VIEW sizes AS SELECT n, count(*) AS groups FROM agg GROUP BY n",
	"CREATE MATERIALIZED VIEW late_join AS SELECT u.name, count(*) AS n, sum(t.v) AS s FROM u LEFT JOIN t ON t.g = u.g GROUP BY u.name",
	"UPDATE t SET v = v + 1 WHERE g = 1",
	"UPDATE t SET k = k + 100 WHERE k <= 3",
	"UPDATE u SET name = 'z' WHERE g = 2",
	"INSERT INTO t VALUES (7, 1, 70), (101, 9, 9)",
	"UPDATE t SET k = 4 WHERE k = 5",
	"DELETE FROM t WHERE k = 4",
	"DELETE FROM u WHERE name = 'z'",
	"INSERT INTO t VALUES (8, 3, 80), (9, 3, 90), (10, 4, 100)",
	"DELETE FROM t WHERE v > 85",
	"INSERT INTO u VALUES (3, 'c'), (4, 'd')",
	"INSERT INTO t VALUES (8, 2, 1), (30, 2, 30) ON CONFLICT (k) DO UPDATE SET v = excluded.v + t.v",
	"INSERT INTO t VALUES (7, 2, 1), (31, 2, 31) ON CONFLICT (k) DO NOTHING",
	"COPY t FROM STDIN\n11\t1\t11\n12\t2\t12\n13\t\\N\t13\n14\t4\t14\n",
	"TRUNCATE u",
	"COPY u FROM STDIN\n1\ta\n5\te\n2\tb\n2\tb\n",
	"COPY t FROM STDIN\n15\t1\t15\n11\t1\t99\n",
	"INGEST t VALUES (20, 1, 20), (21, 2, 21), (22, NULL, 22)",
	"INGEST t VALUES (23, 1, 23), (20, 3, 30)",
}

// shardDML is a random insert, update or delete of t or u.
func shardDML(rng *rand.Rand) string {
	val := func(n int) string {
		if rng.IntN(8) == 0 {
			return "NULL"
		}
		return fmt.Sprint(rng.IntN(n))
	}
	switch rng.IntN(7) {
	case 0, 1:
		var rows []string
		for n := 1 + rng.IntN(4); n > 0; n-- {
			rows = append(rows, fmt.Sprintf("(%d, %s, %s)", rng.IntN(40), val(5), val(100)))
		}
		return "INSERT INTO t VALUES " + strings.Join(rows, ", ")
	case 2:
		return fmt.Sprintf("INSERT INTO u VALUES (%s, '%c')", val(5), 'a'+rng.IntN(4))
	case 3:
		return fmt.Sprintf("UPDATE t SET v = v + %d WHERE g = %d", rng.IntN(5), rng.IntN(5))
	case 4:
		// One row: PostgreSQL checks a unique key row by row, this
		// engine at the statement's end, which agree on one row.
		return fmt.Sprintf("UPDATE t SET k = %d WHERE k = %d", rng.IntN(60), rng.IntN(40))
	case 5:
		return fmt.Sprintf("DELETE FROM t WHERE k %% 5 = %d", rng.IntN(5))
	default:
		return fmt.Sprintf("UPDATE u SET g = %s WHERE name = '%c'", val(5), 'a'+rng.IntN(4))
	}
}

func runShardOracle(t *testing.T, shards int, pebble bool, random int) {
	o := newShardOracle(t, shards, pebble)
	for _, stmt := range shardScript {
		o.run(stmt)
	}
	rng := rand.New(rand.NewPCG(uint64(shards), 13))
	if testing.Short() {
		random /= 4
	}
	for i := range random {
		if pebble && i == random/2 {
			// The shards restart from their stores, on a new assignment
			// revision, and go on.
			o.cluster.close()
			o.cluster.open()
		}
		o.run(shardDML(rng))
	}
	if o.failed == 0 {
		t.Fatal("no statement failed: the script no longer tests a failure on one shard")
	}
	// Epochs agree: every shard committed the same ones.
	for i, e := range o.cluster.engines {
		if e.Epoch() != o.cluster.engines[0].Epoch() {
			t.Fatalf("shard %d is at epoch %d, shard 0 at %d", i, e.Epoch(), o.cluster.engines[0].Epoch())
		}
	}
	t.Logf("%d shards: %d statements, %d failed everywhere, epoch %d",
		shards, len(shardScript)+random, o.failed, o.cluster.engines[0].Epoch())
}

func TestShardOracleTwo(t *testing.T)   { runShardOracle(t, 2, false, 80) }
func TestShardOracleThree(t *testing.T) { runShardOracle(t, 3, false, 80) }
func TestShardOraclePebble(t *testing.T) {
	runShardOracle(t, 3, true, 30)
}

// TestShardRefusals: what shard mode does not do yet fails with 0A000 on
// every shard, and the shards go on agreeing afterwards.
func TestShardRefusals(t *testing.T) {
	c := newShardCluster(t, 2, false)
	must := c.must
	must("CREATE TABLE t (k int PRIMARY KEY, g int, v int)")
	must("CREATE TABLE u (g int, name text)")
	must("CREATE TABLE e (at timestamptz)")
	must("CREATE MATERIALIZED VIEW agg AS SELECT g, count(*) AS n FROM t GROUP BY g")
	must("INSERT INTO t VALUES (1, 1, 1), (2, 2, 2), (3, 1, 3)")
	for _, stmt := range []string{
		"INSERT INTO t SELECT k + 10, g, v FROM t",
		"UPDATE t SET v = 0 WHERE g IN (SELECT g FROM u)",
		"DELETE FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.g = t.g)",
		"SELECT count(*) FROM t",
		"SELECT t.k, u.name FROM t JOIN u ON t.g = u.g",
		"SELECT DISTINCT g FROM t",
		"SELECT * FROM t LIMIT 1",
		"SELECT * FROM agg AS OF EPOCH 4",
		"SUBSCRIBE agg",
		"CREATE UNIQUE INDEX t_v ON t (v)",
		"CREATE TABLE w (k int PRIMARY KEY, c int UNIQUE)",
		"ALTER TABLE t ADD COLUMN extra int",
		"CREATE TABLE t2 AS SELECT * FROM t",
		"INSERT INTO t VALUES (1, 5, 5) ON CONFLICT (k) DO UPDATE SET k = 50",
		"CREATE MATERIALIZED VIEW recent AS SELECT * FROM e WHERE at > now() - interval '1 hour'",
	} {
		for i, err := range c.execErrs(stmt) {
			if errs.SQLState(err) != "0A000" || !strings.Contains(err.Error(), "shard mode") {
				t.Errorf("%s: shard %d: want 0A000 naming shard mode, got %v", stmt, i, err)
			}
		}
	}
	if err := c.engines[0].VerifyViews(); errs.SQLState(err) != "0A000" {
		t.Errorf("VerifyViews: want 0A000, got %v", err)
	}
	for _, s := range c.sessions {
		if _, err := s.Exec(context.Background(), "BEGIN", nil); err != nil {
			t.Fatal(err)
		}
	}
	for i, err := range c.execErrs("INSERT INTO t VALUES (9, 9, 9)") {
		if errs.SQLState(err) != "0A000" {
			t.Errorf("a write in a block: shard %d: %v", i, err)
		}
	}
	must("ROLLBACK")
	// The shards still step together, and reads of one relation work.
	must("INSERT INTO t VALUES (4, 2, 4)")
	if got, want := c.rows("SELECT * FROM agg", nil), []string{"1 | 2", "2 | 2"}; !slices.Equal(got, want) {
		t.Fatalf("agg: %v, want %v", got, want)
	}
	if got := c.rows("SELECT k FROM t WHERE v > 1 ORDER BY k", nil); !slices.Equal(got, []string{"2", "3", "4"}) {
		t.Fatalf("t: %v", got)
	}
}

// must runs stmt on every shard and fails the test unless it succeeds
// on all of them.
func (c *shardCluster) must(stmt string) {
	c.t.Helper()
	if err := c.execAll(stmt); err != nil {
		c.t.Fatal(err)
	}
}

// execAll runs stmt on every shard and returns the first shard's error.
func (c *shardCluster) execAll(stmt string) error {
	for i, err := range c.execErrs(stmt) {
		if err != nil {
			return fmt.Errorf("%s: shard %d: %w", stmt, i, err)
		}
	}
	return nil
}

// execErrs is exec's errors.
func (c *shardCluster) execErrs(stmt string) []error {
	_, errList := c.exec(stmt)
	return errList
}

func TestShardOptionsChecked(t *testing.T) {
	for _, sh := range []*Shard{
		{Member: 2, Members: 2, Mesh: func(uint64) (*exchange.Mesh, error) { return nil, nil }},
		{Member: 0, Members: 0, Mesh: func(uint64) (*exchange.Mesh, error) { return nil, nil }},
		{Member: 0, Members: 1},
	} {
		if _, err := Open(NewMemoryStore(), Options{Shard: sh}); err == nil {
			t.Errorf("Open accepted shard %+v", *sh)
		}
	}
}

// TestShardStepFailure: a view's step that fails on the shard holding
// the row fails the statement on every shard, with the owner's SQLSTATE,
// and commits nothing; once the shards join a new assignment they go on.
func TestShardStepFailure(t *testing.T) {
	c := newShardCluster(t, 3, false)
	must := c.must
	must("CREATE TABLE t (k int PRIMARY KEY, v int)")
	must("CREATE MATERIALIZED VIEW q AS SELECT k, 100 / v AS r FROM t")
	must("CREATE MATERIALIZED VIEW n AS SELECT count(*) AS n FROM t")
	must("INSERT INTO t VALUES (1, 10), (2, 20), (3, 50)")
	epoch := c.engines[0].Epoch()
	for i, err := range c.execErrs("INSERT INTO t VALUES (4, 0)") {
		if errs.SQLState(err) != "22012" {
			t.Errorf("shard %d: want 22012, got %v", i, err)
		}
	}
	for i, e := range c.engines {
		if e.Epoch() != epoch {
			t.Errorf("shard %d committed epoch %d of a failed statement", i, e.Epoch())
		}
	}
	// The mesh has failed: writes fail on every shard until they join a
	// new assignment.
	for i, err := range c.execErrs("INSERT INTO t VALUES (6, 6)") {
		if err == nil {
			t.Errorf("shard %d wrote on a failed mesh", i)
		}
	}
	c.rejoin()
	must("INSERT INTO t VALUES (5, 5)")
	if got, want := c.rows("SELECT * FROM q", nil), []string{"1 | 10", "2 | 5", "3 | 2", "5 | 20"}; !slices.Equal(got, want) {
		t.Fatalf("q: %v, want %v", got, want)
	}
	if got := c.rows("SELECT * FROM n", nil); !slices.Equal(got, []string{"4"}) {
		t.Fatalf("n: %v", got)
	}
}

// TestShardOracleLarge: statements and backfills past the single node's
// chunk sizes (its epoch and backfill chunks of 16,384 rows), which the
// shards step in one piece, agree with PostgreSQL and the single node.
func TestShardOracleLarge(t *testing.T) {
	o := newShardOracle(t, 2, false)
	var data strings.Builder
	for k := range 40000 {
		fmt.Fprintf(&data, "%d\t%d\t%d\n", k, k%997, k%13)
	}
	for _, stmt := range []string{
		"CREATE TABLE t (k int PRIMARY KEY, g int, v int)",
		"CREATE MATERIALIZED VIEW agg AS SELECT g, count(*) AS n, sum(v) AS s FROM t GROUP BY g",
		"COPY t FROM STDIN\n" + data.String(),
		"CREATE MATERIALIZED VIEW late AS SELECT v, count(*) AS n, max(k) AS top FROM t GROUP BY v",
		"CREATE MATERIALIZED VIEW late_distinct AS SELECT DISTINCT g % 10 AS d FROM t",
		"UPDATE t SET v = v + 1 WHERE g < 500",
		"DELETE FROM t WHERE k % 3 = 0",
	} {
		o.run(stmt)
	}
}
