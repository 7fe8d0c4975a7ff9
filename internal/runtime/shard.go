package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/exchange"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Shard mode: the engine as one member of a cluster (docs/cluster.md,
// "Design: the engine in a cluster").
//
// Every member runs the same statements in the same order (the caller's
// duty: a statement withdrawn on one member alone, canceled while it
// waited for the committer, leaves the others waiting in its mesh calls
// until their contexts end). The catalog is whole on each, while a table
// or view keeps only the rows of the buckets the member owns
// (zset.BucketOwner(bucket, members) == member, the bucket of the row's
// routing key as keys.go computes it). The members meet on an exchange
// mesh. Invariants:
//
//   - A table write keeps the owned rows of the statement's rows: INSERT,
//     COPY and Ingest hand every member the whole batch, and each keeps
//     its part, so the primary key is checked where its row lives.
//     UPDATE and DELETE run over the owned rows; an updated row whose
//     routing key moves it to another member's bucket is sent there
//     through the mesh at the end of the statement (the outbox), and the
//     receiver checks its primary key.
//   - Every write statement is one epoch of its own (Options.MaxGroup is
//     1, no transaction blocks), and an epoch is committed on every
//     member even when it changed nothing here, so epoch numbers agree.
//   - Every statement makes the same mesh calls on every member, in the
//     same order, whatever its local rows: the outbox exchange, one
//     agreement on the statement's outcome (a statement that failed on
//     any member fails on all of them, and none commits it), then a step
//     of every materialized view in creation order, even with an empty
//     local delta, each on the mesh, and the routing of each view's
//     output by its stored key to the bucket's owner, so that a bucket's
//     view rows and change log live where the bucket lives. A backfill
//     steps in one piece (never chunked: the chunks would differ between
//     members).
//   - A statement that fails in a view's step fails on every member, and
//     leaves the mesh failed (exchange.Mesh.Abort): later statements fail
//     until Shard.Mesh returns the mesh of a new assignment, which every
//     member joins.
//   - Every mesh call has a key of its own: its epoch field is the
//     member's round, a count of the calls it made on that mesh, which
//     is the same on every member because they make the same calls. A
//     new mesh counts from zero, so that members whose counts parted
//     when a statement failed part way agree again.
//   - Reads return this member's part of a relation; what would need the
//     other members' rows to be right (AS OF EPOCH, SUBSCRIBE, statements
//     that read other relations while writing) is refused with 0A000.
//
// The circuits' operators read the relations they look up by key from
// the local store, which holds only a part of them, so in shard mode
// views are built without lookup joins (viewLookups).

// Shard places the engine in a cluster: this member's index among
// Members, and the mesh the members exchange rows on.
type Shard struct {
	// Member is this engine's index, 0 ≤ Member < Members.
	Member int
	// Members is how many engines share the buckets.
	Members int
	// Mesh returns the exchange mesh of the assignment that serves epoch,
	// joined by every member.
	Mesh func(epoch uint64) (*exchange.Mesh, error)
}

func (s *Shard) check() error {
	if s.Members < 1 || s.Member < 0 || s.Member >= s.Members {
		return fmt.Errorf("shard %d of %d: the member must be in [0, members)", s.Member, s.Members)
	}
	if s.Mesh == nil {
		return fmt.Errorf("shard %d of %d: no mesh", s.Member, s.Members)
	}
	return nil
}

// shardState is a shard-mode engine's side of the mesh. Only the write
// path uses it, one statement at a time under the write token.
type shardState struct {
	Shard
	// round counts the calls made on joined, the mesh of the last
	// statement (the epoch field of each call's key).
	round  atomic.Uint64
	joined *exchange.Mesh
	// mesh is the mesh of the statement being run; nil between them.
	mesh *exchange.Mesh
}

// Mesh-call scopes of the runtime's own calls; the circuits' exchanges
// (internal/diff) have their own keys, and every call's round differs.
const (
	scopeOutbox   int32 = -1
	scopeOutcome  int32 = -2
	scopeViewRows int32 = -3
)

// key returns the next mesh call's key.
func (sh *shardState) key(scope int32, node uint64) exchange.Key {
	return exchange.Key{Epoch: sh.round.Add(1), Scope: scope, Node: int32(node)}
}

// shard returns the engine's shard state when it runs in shard mode, else
// nil.
func (c *catalog) shard() *shardState {
	if c == nil || c.eng == nil {
		return nil
	}
	return c.eng.shard
}

// owns reports whether bucket b is this member's.
func (sh *shardState) owns(b uint8) bool { return owner(b, sh.Members) == sh.Member }

// ownedRows returns the rows of table o that are this member's, in order.
func (sh *shardState) ownedRows(o *object, rows []zset.Row) []zset.Row {
	buckets := splitRows(func(i int) zset.Row { return rows[i] }, len(rows), o.routeKey())
	kept := rows[:0:0]
	for i, b := range buckets {
		if sh.owns(b) {
			kept = append(kept, rows[i])
		}
	}
	return kept
}

// partition splits delta between the members by the routing key of
// relation o's stored rows, keeping its order.
func (sh *shardState) partition(o *object, delta zset.Batch) []zset.Batch {
	return splitDelta(delta, o.routeKey(), sh.Members)
}

// unsupportedInShard is the error of what shard mode does not do yet.
func unsupportedInShard(what string) error {
	return errs.Newf(errs.FeatureNotSupported, "%s is not supported in shard mode yet", what)
}

// errBlockWriteInShard refuses a write in a transaction block: in shard
// mode every write statement is an epoch of its own.
var errBlockWriteInShard = unsupportedInShard("a write in a transaction block")

// failedElsewhere is the error of a statement that succeeded on this
// member and failed on another: the other member reports why.
var failedElsewhere = errs.New(errs.FeatureNotSupported,
	"the statement failed on another shard of the cluster (that shard reports why); nothing of it was applied")

// runShardStatement runs one write statement in shard mode as epoch w:
// the statement's local part, its outbox, the agreement on its outcome
// and the step of every view. On error, nothing of w may be committed.
func (e *Engine) runShardStatement(ctx context.Context, w *epochWrite, fn writeFunc) error {
	sh := e.shard
	mesh, err := sh.Mesh(w.epoch)
	if err == nil && mesh == nil {
		err = errs.Newf(errs.Internal, "internal error: no exchange mesh for epoch %d", w.epoch)
	}
	if err != nil {
		return err
	}
	if mesh != sh.joined {
		sh.joined = mesh
		sh.round.Store(0)
	}
	sh.mesh = mesh
	defer func() { sh.mesh = nil }()
	w.deferViews, w.stepAll = true, true
	local, err := w.deliverOutbox(ctx, mesh, sh, w.run(fn))
	if err != nil {
		mesh.Abort(err)
		return err
	}
	var failed int64
	if local != nil {
		failed = 1
	}
	anyFailed, err := mesh.Max(ctx, sh.key(scopeOutcome, 0), failed)
	switch {
	case err != nil:
		// Canceled, or the mesh failed: the others must not wait.
		mesh.Abort(err)
		return err
	case local != nil:
		return local
	case anyFailed != 0:
		return failedElsewhere
	}
	if err := w.flush(ctx); err != nil {
		// The others may wait in a later step for this member's parts:
		// they fail too (a failed step has aborted the mesh already).
		mesh.Abort(err)
		return err
	}
	return nil
}

// outboxRow is a row a statement wrote for another member's bucket.
type outboxRow struct {
	table uint64
	row   zset.Row
}

// deliverOutbox sends the rows of the statement's outbox to their owners
// and writes the rows the other members sent here: one exchange, made by
// every member whether its statement failed (local) or not. It returns
// the statement's error (local, or the writing's here: a duplicate key)
// and, apart, the exchange's. Rows for one table arrive in the order of
// the members that sent them.
func (w *epochWrite) deliverOutbox(ctx context.Context, mesh *exchange.Mesh, sh *shardState, local error) (error, error) {
	out := make([]zset.Batch, sh.Members)
	if local == nil {
		for _, r := range w.outbox {
			o := w.cat.byID(r.table)
			if o == nil {
				local = errs.Newf(errs.Internal, "internal error: an outbox row of unknown table %d", r.table)
				break
			}
			b := splitRows(func(int) zset.Row { return r.row }, 1, o.routeKey())[0]
			p := owner(b, sh.Members)
			out[p] = append(out[p], zset.Entry{Row: append(zset.Row{tableIDValue(r.table)}, r.row...), Weight: 1})
		}
	}
	w.outbox = nil
	in, err := mesh.Exchange(ctx, sh.key(scopeOutbox, 0), out)
	if err != nil || local != nil {
		return local, err
	}
	byTable := map[uint64][]zset.Row{}
	var order []uint64
	for _, part := range in {
		for _, e := range part {
			id, ok := tableIDOf(e.Row)
			if !ok || e.Weight != 1 {
				return errs.New(errs.Internal, "internal error: a malformed outbox row from another shard"), nil
			}
			if _, seen := byTable[id]; !seen {
				order = append(order, id)
			}
			byTable[id] = append(byTable[id], e.Row[1:])
		}
	}
	for _, id := range order {
		o := w.cat.byID(id)
		if o == nil {
			return errs.Newf(errs.Internal, "internal error: another shard sent rows of unknown table %d", id), nil
		}
		rows := byTable[id]
		if err := w.run(func(st state.Store, w *epochWrite) (*catalog, error) {
			return nil, insertMovedRows(ctx, st, w, o, rows)
		}); err != nil {
			return err, nil
		}
	}
	return nil, nil
}

// tableIDValue and tableIDOf tag an outbox row with its table's id, its
// first column on the wire.
func tableIDValue(id uint64) types.Value { return types.MakeInt(types.Int8, int64(id)) }

func tableIDOf(row zset.Row) (uint64, bool) {
	if len(row) < 2 || row[0].Kind() != types.Int8 || row[0].Int() < 0 {
		return 0, false
	}
	return uint64(row[0].Int()), true
}

// insertMovedRows writes the rows of table o other members' UPDATE moved
// into this member's buckets: new keys, checked here, where they live.
func insertMovedRows(ctx context.Context, st state.Store, w *epochWrite, o *object, rows []zset.Row) error {
	if len(o.pk) > 0 {
		return insertNewKeys(ctx, st, w, o, rows)
	}
	return writeTable(ctx, st, w, o, rowsAsInsertions(make(zset.Batch, len(rows)), rows))
}

// keepOwned splits an update's new rows of table o: those of this
// member's buckets stay in the statement's delta, the others go to the
// epoch's outbox (weight copies each). It returns the delta kept and the
// new rows kept.
func (w *epochWrite) keepOwned(sh *shardState, o *object, matched zset.Batch, news []zset.Row) (zset.Batch, []zset.Row) {
	buckets := splitRows(func(i int) zset.Row { return news[i] }, len(news), o.routeKey())
	var delta zset.Batch
	var kept []zset.Row
	for i, e := range matched {
		delta = append(delta, zset.Entry{Row: e.Row, Weight: -e.Weight})
		nr := news[i]
		if sh.owns(buckets[i]) {
			delta = append(delta, zset.Entry{Row: nr, Weight: e.Weight})
			for range e.Weight {
				kept = append(kept, nr)
			}
			continue
		}
		for range e.Weight {
			w.outbox = append(w.outbox, outboxRow{table: o.id, row: nr})
		}
	}
	return delta, kept
}

// setsRoute reports whether the clause's DO UPDATE sets a column of o's
// routing key, which would move the row to another bucket.
func (oc *onConflict) setsRoute(o *object) bool {
	key := o.routeKey()
	for _, s := range oc.sets {
		if key == nil || slices.Contains(key, s.col) {
			return true
		}
	}
	return false
}

// stepParallelism is how a view's circuit steps in a statement: on one
// member, par; in shard mode, on the mesh, this member's part of the
// step, however small (MinRows 0), under a round of its own.
func (sh *shardState) stepParallelism(par diff.Parallelism) diff.Parallelism {
	if sh == nil || sh.mesh == nil {
		return par
	}
	par.Workers, par.MinRows = 1, 0
	par.Peers, par.Epoch = sh.mesh, sh.round.Add(1)
	return par
}

// routeViewRows sends the output of view v's step, this member's part of
// it, to the owners of its rows' buckets (by the view's stored key), and
// returns the rows of the buckets this member owns, in the order of the
// members that sent them. On one member it returns out.
func (sh *shardState) routeViewRows(ctx context.Context, v *object, out zset.Batch) (zset.Batch, error) {
	if sh == nil || sh.mesh == nil {
		return out, nil
	}
	in, err := sh.mesh.Exchange(ctx, sh.key(scopeViewRows, v.id), sh.partition(v, out))
	if err != nil {
		return nil, err
	}
	n := 0
	for _, p := range in {
		n += len(p)
	}
	mine := make(zset.Batch, 0, n)
	for _, p := range in {
		mine = append(mine, p...)
	}
	return zset.Consolidate(mine)
}

// shardReadable refuses, in shard mode, a query whose answer over this
// shard's rows is not this shard's part of the answer: one that combines
// rows of a bucketed relation (a join, an aggregate, DISTINCT, LIMIT,
// ...). Scans through filters, projections and sorts qualify: the union
// of the shards' answers is the answer, merged by order key where
// sorted.
func (c *catalog) shardReadable(p plan.Node) error {
	if c.shard() == nil {
		return nil
	}
	var combines string
	parted := false
	var walk func(n plan.Node)
	walk = func(n plan.Node) {
		switch x := n.(type) {
		case *plan.Scan:
			if o := c.lookup(x.Relation); o != nil && o.system == nil {
				parted = true
			}
		case *plan.Filter, *plan.Project, *plan.Sort, *plan.Values:
		default:
			if combines == "" {
				combines = strings.ToLower(strings.TrimPrefix(fmt.Sprintf("%T", n), "*plan."))
			}
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(p)
	if parted && combines != "" {
		return errs.Newf(errs.FeatureNotSupported,
			"a query that combines the rows of a sharded relation (%s) is not supported in shard mode yet: a shard answers with its own part of each relation", combines)
	}
	return nil
}
