package runtime

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/memgov"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql/ext"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// Reads at the frontier, the gateway's side (docs/cluster.md, "Reads at
// the frontier"): a Gather answers an ad-hoc SELECT over the engines of
// a cluster's shards, as one node holding every shard's rows answers it.
// Invariants:
//
//   - The query is bound once, against the catalog of the first shard;
//     every shard holds the whole catalog (the same statements ran on
//     each, in the same order), so a relation has the same name, id and
//     columns on every shard.
//   - Each scan of a sharded relation becomes a request to the shards for
//     their rows of it: the union of the parts is the relation, since a
//     row lives on the owner of its bucket only. When the scan's filters
//     fix the relation's routing key (the key ranges a single node
//     reads, keyrange.go, each within one bucket), only the owners of
//     those buckets are asked, for those ranges. A system relation is
//     whole on each shard and is read from the first.
//   - The rest of the query (joins, aggregates, DISTINCT, subqueries,
//     ORDER BY, LIMIT) runs here, as the single node's ad-hoc query
//     path runs it: the query's circuit steps once over the gathered
//     rows, and Sort, Limit and the Project between them at the top are
//     applied to its result.
//   - A read is at one epoch: it holds every shard's read view, and
//     answers only when all of them are at the same committed epoch (in
//     lockstep they are, between statements); while a statement commits
//     on some shards and not yet on others, it lets go and tries again
//     for up to gatherWait, then fails with 40001. The answer is
//     at the frontier, the newest epoch every shard has applied.
//
// Not handled: AS OF EPOCH (the shards keep their buckets' change logs,
// which a read at an earlier epoch would merge), SUBSCRIBE and streamed
// results (the rows are gathered whole), parameters, and reads in a
// transaction block; these are refused with 0A000. The shards are engines
// in this process: requests are calls, not messages.
type Gather struct {
	shards []*Engine
	// asked counts, per shard, the requests for a relation's rows that
	// shard answered.
	asked []atomic.Int64
}

// gatherWait bounds how long a read waits for the shards to reach a
// common epoch, trying again every gatherRetry.
const (
	gatherWait  = 5 * time.Second
	gatherRetry = time.Millisecond
)

// NewGather returns a Gather over shards, the engines of one cluster in
// the order of their member index.
func NewGather(shards []*Engine) (*Gather, error) {
	if len(shards) == 0 {
		return nil, errs.New(errs.InvalidParameterValue, "a gather needs at least one shard")
	}
	for i, e := range shards {
		if e == nil || e.shard == nil {
			return nil, errs.Newf(errs.InvalidParameterValue, "shard %d is not an engine in shard mode", i)
		}
		if e.shard.Member != i || e.shard.Members != len(shards) {
			return nil, errs.Newf(errs.InvalidParameterValue,
				"shard %d is member %d of %d, not member %d of %d", i, e.shard.Member, e.shard.Members, i, len(shards))
		}
	}
	return &Gather{shards: shards, asked: make([]atomic.Int64, len(shards))}, nil
}

// Asked returns how many requests for a relation's rows each shard has
// answered.
func (g *Gather) Asked() []int64 {
	out := make([]int64, len(g.asked))
	for i := range g.asked {
		out[i] = g.asked[i].Load()
	}
	return out
}

// shardView is one shard's committed state, held for a read.
type shardView struct {
	r     state.Reader
	cat   *catalog
	epoch uint64
}

// Query answers one SELECT over the shards at their common epoch, with
// the result one node holding every row returns, and reports that epoch.
func (g *Gather) Query(ctx context.Context, query string) (*Result, uint64, error) {
	views, release, err := g.hold(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer release()
	res, err := g.query(ctx, views, query)
	return res, views[0].epoch, err
}

// query answers query over the shards' views.
func (g *Gather) query(ctx context.Context, views []shardView, query string) (*Result, error) {
	if st := ext.Parse(query); st.Kind != ext.None {
		if st.Err != nil {
			return nil, st.Err
		}
		return nil, errs.New(errs.FeatureNotSupported, "a read across shards answers a plain SELECT only (not AS OF EPOCH, SUBSCRIBE or COPY)")
	}
	tree, err := parse(query)
	if err != nil {
		return nil, parseError(err)
	}
	if len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetSelectStmt() == nil {
		return nil, errs.New(errs.FeatureNotSupported, "a read across shards answers one SELECT")
	}
	n := tree.Stmts[0].Stmt
	if n.GetSelectStmt().IntoClause != nil {
		return nil, errs.New(errs.FeatureNotSupported, "SELECT INTO is a write, not a read across shards")
	}
	s := g.shards[0].NewSession()
	defer s.Close()
	cat := s.sessionCatalog(ctx, views[0].cat, views[0].r)
	b := newBinder(cat, nil, s.params())
	p, err := b.Query(n)
	if err != nil {
		return nil, err
	}
	if len(b.ParamTypes) > 0 {
		return nil, errs.New(errs.FeatureNotSupported, "a read across shards takes no parameters")
	}
	limitRecursion(p, s.recursionLimit())
	rows, err := g.run(ctx, views, cat, p)
	if err != nil {
		return nil, err
	}
	return &Result{Columns: outColumns(p.Columns()), Rows: rows, Tag: fmt.Sprintf("SELECT %d", len(rows))}, nil
}

// hold takes every shard's read view at one common epoch, and returns
// the function that lets them go.
func (g *Gather) hold(ctx context.Context) ([]shardView, func(), error) {
	views := make([]shardView, len(g.shards))
	release := func() {
		for _, e := range g.shards {
			e.readDone()
		}
	}
	deadline := time.Now().Add(gatherWait)
	for first := true; first || time.Now().Before(deadline); first = false {
		if !first {
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-time.After(gatherRetry):
			}
		}
		same := true
		for i, e := range g.shards {
			e.mu.RLock()
			views[i] = shardView{r: e.current, cat: e.mu.cat, epoch: e.mu.epoch}
			same = same && views[i].epoch == views[0].epoch
		}
		if same {
			return views, release, nil
		}
		release()
	}
	return nil, nil, errs.New(errs.SerializationFailure,
		"the shards did not reach a common epoch for the read; try again")
}

// run answers plan p over the shards' views, as runQuery answers it over
// one store: Limit, Sort and the Project above them at the top here, the
// rest as one step of the query's circuit over the gathered relations.
func (g *Gather) run(ctx context.Context, views []shardView, cat *catalog, p plan.Node) ([]zset.Row, error) {
	if rows, ok, err := runTop(ctx, p, func(in plan.Node) ([]zset.Row, error) {
		return g.run(ctx, views, cat, in)
	}); ok {
		return rows, err
	}
	c, err := queryCircuit(ctx, p)
	if err != nil {
		return nil, err
	}
	uses := scanUses(p)
	deltas := map[string]zset.Batch{}
	for _, name := range c.Relations() {
		if deltas[name], err = g.gatherRelation(ctx, views, cat, name, uses); err != nil {
			return nil, err
		}
		if err := memgov.From(ctx).Grow(batchBytes(deltas[name])); err != nil {
			return nil, err
		}
	}
	return stepQuery(ctx, c, cat, deltas)
}

// gatherRelation returns the rows of the circuit input name (a relation,
// or a view's shaped scan of one) that the query's scans of it can keep:
// the union of the parts of the shards that may hold them.
func (g *Gather) gatherRelation(ctx context.Context, views []shardView, cat *catalog, name string, uses map[string][][]plan.Expr) (zset.Batch, error) {
	o, pos := cat.input(name)
	if o == nil {
		return nil, errs.Newf(errs.Internal, "internal error: query reads unknown relation %q", name)
	}
	if o.system != nil {
		// Whole on every shard.
		g.asked[0].Add(1)
		return relationAt(ctx, views[0].r, o, asOfNow)
	}
	// Reads by key, without the shards' indexes: an index's ranges fall
	// in the buckets of its own key, not of the rows'.
	acc := scanAccess{}
	if pos == nil && !fullScansOnly.Load() {
		acc = chooseAccess(cat, o, uses[name], false)
	}
	asks := askedShards(acc, len(views))
	var all zset.Batch
	for i, ranges := range asks {
		if ranges == nil {
			continue
		}
		part, _ := views[i].cat.input(name)
		if part == nil || part.id != o.id {
			return nil, errs.Newf(errs.Internal, "internal error: shard %d has no relation %q of id %d", i, name, o.id)
		}
		g.asked[i].Add(1)
		par := views[i].cat.parallelism()
		var rows zset.Batch
		var err error
		switch {
		case pos != nil:
			rows, err = relationAt(ctx, views[i].r, part, asOfNow)
			rows = projectRows(rows, pos)
		case acc.ok:
			rows, err = relationRangesAt(ctx, views[i].r, part, asOfNow, ranges, par)
		default:
			rows, err = readContentsOn(ctx, views[i].r, part, par)
		}
		if err != nil {
			return nil, err
		}
		all = append(all, rows...)
	}
	return all, nil
}

// askedShards returns, for each of n shards, the key ranges to ask it
// for (nil: it is not asked; with acc not ok, any non-nil value asks for
// every row): a range within one bucket goes to that bucket's owner
// only, one across buckets to every shard.
func askedShards(acc scanAccess, n int) [][]keyRange {
	asks := make([][]keyRange, n)
	if !acc.ok {
		for i := range asks {
			asks[i] = []keyRange{}
		}
		return asks
	}
	for _, kr := range acc.ranges {
		if kr.bucket == allBuckets {
			for i := range asks {
				asks[i] = append(asks[i], kr)
			}
			continue
		}
		p := owner(uint8(kr.bucket), n)
		asks[p] = append(asks[p], kr)
	}
	return asks
}
