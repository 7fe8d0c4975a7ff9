package diff

import (
	"context"
	"runtime/debug"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/exchange"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// Steps across processes. A step may run on the processes of a cluster,
// one worker each, meeting through Peers instead of the in-process hub:
// member i of m members is worker i of m. Each member runs its own
// instance of the circuit over its part of the input deltas (any rows:
// the exchanges move every row to the owner of its key), in its own
// store; its exchanges are Peers.Exchange calls and its agreements
// Peers.Max, which every member makes with the same keys in the same
// order. Member i owns the buckets b with zset.BucketOwner(b, m) == i,
// the contiguous ranges [ceil(i·256/m), ceil((i+1)·256/m)). These are
// exactly the ranges internal/cluster's balanced placement (cluster.Place)
// gives the members in the order of their IDs, so member i is the i-th
// ID; an assignment that places buckets otherwise (a bucket moved on its
// own) is not one a mesh step can serve.
//
// A member's part of a delta may hold any rows; the parts sum to the
// step's delta. A row inserted on one member and deleted on another in
// the same step is evaluated on both by the filters and projections
// before the first exchange, so an expression that fails on it fails the
// step where Step over the consolidated sum, which cancels the row, does
// not; a caller splitting a relation's delta by the bucket of its key, as
// the store keeps a table's rows, never splits a row so.
//
// Invariants:
//   - The sum over the members of their outputs equals Step's output on
//     one worker over the sum of their deltas, and each member's writes
//     are exactly the writes of that Step to the keys of the buckets it
//     owns (operator state is keyed by its routing key's bucket,
//     ops.Prefix, and the exchanges put every key on its bucket's owner).
//     So when every member's store holds the one-worker store restricted
//     to its buckets, it does after the step too: the union of the
//     members' stores is the one-worker store, and no two share a key.
//   - Every member passes every exchange, even with empty deltas: a mesh
//     step never runs on one worker because its part is small (MinRows
//     does not apply).
//   - On error a member writes nothing to its store and aborts the mesh
//     (Peers.Abort), so that the others' steps fail promptly instead of
//     waiting for parts it will not send. A member commits its writes
//     only after a closing agreement that every member finished its
//     step, so a member's failure anywhere before it passes its part of
//     that agreement leaves every store as it was. What the agreement
//     cannot settle is left to the epoch protocol's two phases: a member
//     that fails after its part went out (its peers lost, its context
//     ended, while it waits for theirs), or whose store fails while it
//     commits, may leave the others committed and itself not.
//   - A circuit whose lookup joins read a stored relation by a key in
//     another order than the join's (a composite primary key listed in a
//     different order in the join) refuses to step on a mesh: the
//     relation's rows are on the owner of the bucket of their key, its
//     probes on the owner of the bucket of the join key, and those differ.
//     Every other lookup reads the bucket the exchange routes its probe
//     to, which its member owns.
//
// Exchange keys (docs/format/exchange.md, "Keys of a circuit's step"):
// Key.Epoch is Parallelism.Epoch; Key.Scope the circuit's scope (0 for
// the outer circuit, a recursive query's node + 1 for its body); Key.Node
// the node whose inputs are exchanged (-1: a recursive query's own
// exchange of rows; -2: an agreement); Key.Iteration use·inputs + input,
// where use counts the exchanges of the same scope and node earlier in
// the step (a recursive body's run once per iteration) and input is the
// routed input's index (for an agreement, the number of agreements
// before it in the step).

// Peers is how the processes of a cluster meet in a step: *exchange.Mesh
// implements it. Its calls are made one at a time, by the step.
type Peers interface {
	// Self is this member's index, Members the number of members.
	Self() int
	Members() int
	// Exchange sends out[p] to member p, for every member, and returns
	// what each member sent this one for key, by member.
	Exchange(ctx context.Context, key exchange.Key, out []zset.Batch) ([]zset.Batch, error)
	// Max returns the largest value the members passed for key.
	Max(ctx context.Context, key exchange.Key, local int64) (int64, error)
	// Abort fails this member's part of the step with err and tells the
	// others, whose pending and later calls fail.
	Abort(err error)
}

var _ Peers = (*exchange.Mesh)(nil)

// meshNodeAgree is the Key.Node of an agreement (a recursive query's
// own exchange of rows has -1, its boxKey's node).
const meshNodeAgree = -2

// stepMesh is StepParallel over p.Peers: this member's part of the step.
func (c *Circuit) stepMesh(ctx context.Context, st state.Store, deltas map[string]zset.Batch, p Parallelism) (out zset.Batch, err error) {
	peers := p.Peers
	members, me := peers.Members(), peers.Self()
	if members <= 1 {
		return c.Step(ctx, st, deltas)
	}
	if c.meshRefusal != nil {
		peers.Abort(c.meshRefusal)
		return nil, c.meshRefusal
	}
	in := make(map[string]zset.Batch, len(c.relations))
	for _, rel := range c.relations {
		d, err := c.inputOf(rel, deltas[rel])
		if err != nil {
			peers.Abort(err)
			return nil, err
		}
		in[rel] = d
	}
	m := &meshMeeting{ctx: ctx, peers: peers, epoch: p.Epoch, n: members, inPlace: c.placedByKey(),
		uses: map[meshUse]int32{}, got: map[meshUse][]zset.Batch{}}
	ov := state.NewOverlay(st)
	defer func() {
		if r := recover(); r != nil {
			err = errs.Newf(errs.Internal, "internal error in member %d's part of the step: %v\n%s", me, r, debug.Stack())
		}
		if err != nil {
			ov.Discard()
			peers.Abort(err)
			out = nil
		}
	}()
	if out, err = c.stepWorker(ctx, ov, in, m, me, 0); err != nil {
		return nil, err
	}
	// Every member finished: only then does any write.
	if _, err = m.maxOf(me, 0); err != nil {
		return nil, err
	}
	return out, ov.Commit()
}

// meshUse names one routed input of one exchange of a mesh step.
type meshUse struct {
	x boxKey
	k int
}

// meshMeeting is the meeting of a mesh step, for this member.
type meshMeeting struct {
	ctx     context.Context
	peers   Peers
	epoch   uint64
	n       int
	inPlace map[int][]bool
	// uses counts the exchanges of each input so far, and got holds what
	// the last one received until receive takes it.
	uses   map[meshUse]int32
	got    map[meshUse][]zset.Batch
	agreed int32
}

func (m *meshMeeting) workers() int { return m.n }

func (m *meshMeeting) placed(node int) []bool { return m.inPlace[node] }

// send exchanges the parts of input k at once: the mesh's exchange is
// its own barrier, so wait has nothing left to do.
func (m *meshMeeting) send(x boxKey, inputs, k, _ int, parts []zset.Batch) error {
	u := meshUse{x, k}
	use := m.uses[u]
	m.uses[u] = use + 1
	key := exchange.Key{Epoch: m.epoch, Scope: int32(x.scope), Node: int32(x.node), Iteration: use*int32(inputs) + int32(k)}
	got, err := m.peers.Exchange(m.ctx, key, parts)
	if err != nil {
		return err
	}
	m.got[u] = got
	return nil
}

func (m *meshMeeting) wait() error { return nil }

func (m *meshMeeting) receive(x boxKey, _, k, _ int, parts []zset.Batch) {
	u := meshUse{x, k}
	copy(parts, m.got[u])
	delete(m.got, u)
}

func (m *meshMeeting) maxOf(_ int, v int64) (int64, error) {
	key := exchange.Key{Epoch: m.epoch, Node: meshNodeAgree, Iteration: m.agreed}
	m.agreed++
	return m.peers.Max(m.ctx, key, v)
}
