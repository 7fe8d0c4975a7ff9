package runtime

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// The gather oracle tests run the shard oracle's script on a cluster of
// shard engines, a single node and PostgreSQL, then answer ad-hoc
// queries that combine a sharded relation's rows through a Gather over
// the shards: each answer equals PostgreSQL's and the single node's (in
// order, where the query orders its rows totally), and a read that fixes
// a table's key asks only the owners of its keys' buckets.

// gatherQueries are the ad-hoc reads compared; ordered says the query's
// ORDER BY orders every row, so that the order is compared too.
var gatherQueries = []struct {
	q       string
	ordered bool
}{
	{q: "SELECT count(*), sum(v), min(v), max(v) FROM t"},
	{q: "SELECT g, count(*) AS n, sum(v) AS s, avg(v) AS a FROM t GROUP BY g"},
	{q: "SELECT count(*) FROM u"},
	{q: "SELECT t.k, t.v, u.name FROM t JOIN u ON t.g = u.g"},
	{q: "SELECT u.name, count(t.k) AS n, sum(t.v) AS s FROM u LEFT JOIN t ON t.g = u.g GROUP BY u.name"},
	{q: "SELECT a.k, b.k FROM t a JOIN t b ON a.g = b.g AND a.k < b.k"},
	{q: "SELECT DISTINCT g FROM t"},
	{q: "SELECT DISTINCT name FROM u"},
	{q: "SELECT count(DISTINCT g) FROM t"},
	{q: "SELECT k, v FROM t ORDER BY k LIMIT 3", ordered: true},
	{q: "SELECT k FROM t ORDER BY v DESC NULLS LAST, k LIMIT 4 OFFSET 1", ordered: true},
	{q: "SELECT g, count(*) AS n FROM t GROUP BY g ORDER BY n DESC, g NULLS FIRST", ordered: true},
	{q: "SELECT * FROM t LIMIT 100"},
	{q: "SELECT k FROM t WHERE g IN (SELECT g FROM u WHERE name <> 'a')"},
	{q: "SELECT name FROM u WHERE EXISTS (SELECT 1 FROM t WHERE t.g = u.g AND t.v > 20)"},
	{q: "SELECT name FROM u WHERE NOT EXISTS (SELECT 1 FROM t WHERE t.g = u.g)"},
	{q: "SELECT k, (SELECT max(v) FROM t) - v AS gap FROM t WHERE v IS NOT NULL"},
	{q: "SELECT * FROM (SELECT g, count(*) AS n FROM t GROUP BY g) s WHERE n > 1"},
	{q: "SELECT g FROM t UNION SELECT g FROM u"},
	{q: "SELECT g FROM t EXCEPT ALL SELECT g FROM u"},
	{q: "SELECT sum(n) AS n, count(*) AS groups FROM agg"},
	{q: "SELECT * FROM joined ORDER BY k, v, name LIMIT 2", ordered: true},
	{q: "SELECT count(*) FROM names"},
	{q: "SELECT agg.g, agg.n, total.n FROM agg, total"},
	{q: "SELECT * FROM t WHERE k = 7"},
	{q: "SELECT v FROM t WHERE k IN (7, 11, 12)"},
	{q: "SELECT t.k, u.name FROM t JOIN u ON t.g = u.g WHERE t.k = 11"},
	{q: "SELECT * FROM t WHERE k BETWEEN 5 AND 12"},
	{q: "SELECT * FROM agg WHERE g = 2"},
	{q: "SELECT name, k FROM joined WHERE k IN (7, 12) AND name <> 'a'"},
	{q: "SELECT relname FROM pg_class WHERE relname IN ('t', 'u', 'agg') ORDER BY relname", ordered: true},
	{q: "SELECT count(*) FROM t JOIN pg_class c ON c.relname = 't'"},
	{q: "SELECT 1 + 1 AS two"},
}

// gatherOracle runs the shard script on a cluster of shards (their
// stores in memory or on Pebble) and compares every gathered query, then
// again after random writes.
func gatherOracle(t *testing.T, shards int, pebble bool, random int) {
	o := newShardOracle(t, shards, pebble)
	for _, stmt := range shardScript {
		o.run(stmt)
	}
	g, err := NewGather(o.cluster.engines)
	if err != nil {
		t.Fatal(err)
	}
	compareGathered(t, o, g)
	checkPointReads(t, g, o.cluster)
	rng := rand.New(rand.NewPCG(uint64(shards), 17))
	for range random {
		o.run(shardDML(rng))
	}
	compareGathered(t, o, g)
}

// compareGathered compares every gathered query with PostgreSQL and the
// single node.
func compareGathered(t *testing.T, o *shardOracle, g *Gather) {
	t.Helper()
	ctx := context.Background()
	for _, c := range gatherQueries {
		res, _, err := g.Query(ctx, c.q)
		if err != nil {
			t.Fatalf("gather: %s: %v", c.q, err)
		}
		got := resultLines(res)
		pgRes, err := o.pg.Exec(ctx, c.q).ReadAll()
		if err != nil {
			t.Fatalf("PostgreSQL: %s: %v", c.q, err)
		}
		var want []string
		for _, row := range pgRes[0].Rows {
			want = append(want, pgLinesOf([][][]byte{row})...)
		}
		one, err := o.single.Exec(ctx, c.q, nil)
		if err != nil {
			t.Fatalf("single node: %s: %v", c.q, err)
		}
		single := resultLines(one)
		if !c.ordered {
			slices.Sort(got)
			slices.Sort(want)
			slices.Sort(single)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s differs from PostgreSQL:\ngather:\n  %s\nPostgreSQL:\n  %s", c.q, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
		if !slices.Equal(got, single) {
			t.Errorf("%s differs from the single node:\ngather:\n  %s\nsingle node:\n  %s", c.q, strings.Join(got, "\n  "), strings.Join(single, "\n  "))
		}
	}
}

// checkPointReads checks that a read fixing t's primary key asks only
// the owners of its keys' buckets, once each, and that a read of every
// row asks every shard; a join of such a read with u asks every shard
// for u too.
func checkPointReads(t *testing.T, g *Gather, c *shardCluster) {
	ctx := context.Background()
	ownerOf := func(k int64) int {
		b := splitRows(func(int) zset.Row { return zset.Row{types.MakeInt(types.Int4, k)} }, 1, []int{0})[0]
		return owner(b, len(c.engines))
	}
	for _, read := range []struct {
		q    string
		keys []int64
		all  int64 // requests to every shard (for u, or t not by key)
	}{
		{q: "SELECT * FROM t WHERE k = 7", keys: []int64{7}},
		{q: "SELECT * FROM t WHERE k = 1000", keys: []int64{1000}},
		{q: "SELECT v FROM t WHERE k IN (7, 11, 12)", keys: []int64{7, 11, 12}},
		{q: "SELECT count(*) FROM t WHERE k = 11 AND v > 0", keys: []int64{11}},
		{q: "SELECT t.k, u.name FROM t JOIN u ON t.g = u.g WHERE t.k = 30", keys: []int64{30}, all: 1},
		// Not by key (OR derives no key ranges): every shard.
		{q: "SELECT count(*) FROM t WHERE k = 11 OR k = 30", all: 1},
		{q: "SELECT sum(v) FROM t WHERE g = 1", all: 1},
	} {
		want := make([]int64, len(c.engines))
		for i := range want {
			want[i] = read.all
		}
		for _, k := range read.keys {
			want[ownerOf(k)] = read.all + 1
		}
		before := g.Asked()
		if _, _, err := g.Query(ctx, read.q); err != nil {
			t.Fatalf("%s: %v", read.q, err)
		}
		after := g.Asked()
		for i := range after {
			after[i] -= before[i]
		}
		if !slices.Equal(after, want) {
			t.Errorf("%s asked the shards %v times each, want %v", read.q, after, want)
		}
	}
}

func TestGatherOracleTwo(t *testing.T)    { gatherOracle(t, 2, false, 40) }
func TestGatherOracleThree(t *testing.T)  { gatherOracle(t, 3, false, 40) }
func TestGatherOraclePebble(t *testing.T) { gatherOracle(t, 3, true, 20) }

// TestGatherRefusals: what a gathered read does not do fails with a
// precise error, and a Gather over engines that are not one cluster's
// shards in member order is refused.
func TestGatherRefusals(t *testing.T) {
	c := newShardCluster(t, 2, false)
	c.must("CREATE TABLE t (k int PRIMARY KEY, v int)")
	c.must("CREATE MATERIALIZED VIEW n AS SELECT count(*) AS n FROM t")
	c.must("INSERT INTO t VALUES (1, 1), (2, 2)")
	g, err := NewGather(c.engines)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for q, state := range map[string]string{
		"SELECT * FROM n AS OF EPOCH 3":   "0A000",
		"SUBSCRIBE n":                     "0A000",
		"INSERT INTO t VALUES (3, 3)":     "0A000",
		"SELECT 1; SELECT 2":              "0A000",
		"SELECT * FROM t WHERE k = $1":    "0A000",
		"SELECT * INTO t2 FROM t":         "0A000",
		"SELECT * FROM nowhere":           "42P01",
		"SELECT FROM WHERE":               "42601",
		"SELECT k / (v - v) FROM t":       "22012",
		"SELECT count(*) FROM t GROUP BY": "42601",
	} {
		if _, _, err := g.Query(ctx, q); errs.SQLState(err) != state {
			t.Errorf("%s: want %s, got %v", q, state, err)
		}
	}
	res, epoch, err := g.Query(ctx, "SELECT sum(v) FROM t")
	if err != nil || len(res.Rows) != 1 || res.Rows[0][0].Int() != 3 {
		t.Fatalf("after the refusals: %v, %v", res, err)
	}
	if epoch != c.engines[0].Epoch() || epoch != c.engines[1].Epoch() {
		t.Errorf("read at epoch %d, the shards are at %d and %d", epoch, c.engines[0].Epoch(), c.engines[1].Epoch())
	}
	if _, err := NewGather([]*Engine{c.engines[1], c.engines[0]}); err == nil {
		t.Error("NewGather accepted the shards out of member order")
	}
	if _, err := NewGather(c.engines[:1]); err == nil {
		t.Error("NewGather accepted one shard of two")
	}
	if _, err := NewGather([]*Engine{OpenMemory()}); err == nil {
		t.Error("NewGather accepted an engine not in shard mode")
	}
	if _, err := NewGather(nil); err == nil {
		t.Error("NewGather accepted no shards")
	}
}

// TestGatherOneEpoch: reads that run while the shards commit statements
// see each statement whole or not at all, although its rows live on
// different shards: every statement inserts a row of v = 1 and one of
// v = -1, so that every read at one epoch has an even count and a zero
// sum.
func TestGatherOneEpoch(t *testing.T) {
	c := newShardCluster(t, 3, false)
	c.must("CREATE TABLE t (k int PRIMARY KEY, v int)")
	g, err := NewGather(c.engines)
	if err != nil {
		t.Fatal(err)
	}
	const statements = 60
	done := make(chan error, 1)
	go func() {
		for i := range statements {
			if err := c.execAll(fmt.Sprintf("INSERT INTO t VALUES (%d, 1), (%d, -1)", i, i+1000)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	ctx := context.Background()
	reads, last := 0, uint64(0)
	for finished := false; !finished; reads++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished = true
		default:
		}
		res, epoch, err := g.Query(ctx, "SELECT count(*), coalesce(sum(v), 0) FROM t")
		if err != nil {
			t.Fatal(err)
		}
		n, sum := res.Rows[0][0].Int(), res.Rows[0][1].Int()
		if n%2 != 0 || sum != 0 {
			t.Fatalf("read %d saw %d rows summing to %d: a statement in part", reads, n, sum)
		}
		if epoch < last {
			t.Fatalf("read %d at epoch %d, after a read at %d", reads, epoch, last)
		}
		last = epoch
		if finished && n != 2*statements {
			t.Fatalf("the last read saw %d rows, want %d", n, 2*statements)
		}
	}
	t.Logf("%d reads during %d statements", reads, statements)
}
