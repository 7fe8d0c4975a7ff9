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
	t        *testing.T
	engines  []*Engine
	sessions []*Session
}

func newShardCluster(t *testing.T, n int, pebble bool) *shardCluster {
	t.Helper()
	nodes := make([]*exchange.Node, n)
	addrs := make([]string, n)
	for i := range nodes {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if nodes[i], err = exchange.Listen(lis, exchange.Options{}); err != nil {
			t.Fatal(err)
		}
		addrs[i] = nodes[i].Addr()
	}
	c := &shardCluster{t: t}
	for i, node := range nodes {
		mesh, err := node.Join(exchange.Assignment{Revision: 1, Self: i, Peers: addrs})
		if err != nil {
			t.Fatal(err)
		}
		var store Store = NewMemoryStore()
		if pebble {
			db, err := storage.Open(storage.Options{Dir: t.TempDir(), Logger: quietLog, Durability: storage.Relaxed})
			if err != nil {
				t.Fatal(err)
			}
			store = db
		}
		eng, err := Open(store, Options{Shard: &Shard{Member: i, Members: n,
			Mesh: func(uint64) (*exchange.Mesh, error) { return mesh, nil }}})
		if err != nil {
			t.Fatal(err)
		}
		c.engines = append(c.engines, eng)
		c.sessions = append(c.sessions, eng.NewSession())
		t.Cleanup(func() {
			mesh.Close()
			if err := eng.Close(); err != nil {
				t.Error(err)
			}
			if err := node.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	return c
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

// resultLines returns a result's rows as PostgreSQL prints them.
func resultLines(res *Result) []string {
	var rows []string
	for _, r := range res.Rows {
		vals := make([]string, len(r))
		for i, v := range r {
			vals[i] = "NULL"
			if !v.IsNull() {
				vals[i] = types.Format(v, res.Columns[i].Type)
			}
		}
		rows = append(rows, strings.Join(vals, " | "))
	}
	return rows
}

// shardOracle runs a script on a cluster, a single node and PostgreSQL.
type shardOracle struct {
	t         *testing.T
	cluster   *shardCluster
	single    *Session
	pg        *pgconn.PgConn
	relations []string // tables and views, compared after each statement
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
	pgStmt := stmt
	if rest, ok := strings.CutPrefix(stmt, "CREATE MATERIALIZED VIEW "); ok {
		pgStmt = "CREATE VIEW " + rest
		o.relations = append(o.relations, strings.Fields(rest)[0])
	} else if rest, ok := strings.CutPrefix(stmt, "CREATE TABLE "); ok {
		o.relations = append(o.relations, strings.Fields(rest)[0])
	}
	_, pgErr := o.pg.Exec(ctx, pgStmt).ReadAll()
	_, oneErr := o.single.Exec(ctx, stmt, nil)
	_, shardErrs := o.cluster.exec(stmt)
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

func (o *shardOracle) compare(after string) {
	t := o.t
	t.Helper()
	for _, rel := range o.relations {
		q := "SELECT * FROM " + rel
		want, err := pgLines(o.pg, q)
		if err != nil {
			t.Fatalf("PostgreSQL: %s: %v", q, err)
		}
		got := o.cluster.rows(q, func(e *Engine) *object { return e.mu.cat.lookup(rel) })
		if !slices.Equal(got, want) {
			t.Fatalf("after %q, %s differs from PostgreSQL:\nshards:\n  %s\nPostgreSQL:\n  %s",
				after, rel, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
		res, err := o.single.Exec(context.Background(), q, nil)
		if err != nil {
			t.Fatalf("single node: %s: %v", q, err)
		}
		one := resultLines(res)
		slices.Sort(one)
		if !slices.Equal(got, one) {
			t.Fatalf("after %q, %s differs from the single node:\nshards:\n  %s\nsingle node:\n  %s",
				after, rel, strings.Join(got, "\n  "), strings.Join(one, "\n  "))
		}
	}
}

// pgLines returns a query's rows in PostgreSQL, sorted.
func pgLines(pg *pgconn.PgConn, q string) ([]string, error) {
	res, err := pg.Exec(context.Background(), q).ReadAll()
	if err != nil {
		return nil, err
	}
	var rows []string
	for _, row := range res[0].Rows {
		vals := make([]string, len(row))
		for i, v := range row {
			vals[i] = "NULL"
			if v != nil {
				vals[i] = string(v)
			}
		}
		rows = append(rows, strings.Join(vals, " | "))
	}
	slices.Sort(rows)
	return rows, nil
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
	"INSERT INTO t VALUES (1, 1, 10), (2, 1, 20), (3, 2, 30), (4, 3, 40), (5, NULL, 50), (6, 2, NULL)",
	"INSERT INTO u VALUES (1, 'a'), (2, 'b'), (2, 'b'), (3, 'c'), (NULL, 'n')",
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
	for range random {
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
