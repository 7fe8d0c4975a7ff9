package sim

import (
	"encoding/json"
	"fmt"

	"github.com/rockstream/rockstream/internal/cluster"
)

// checker holds the simulator's ground truth and checks the invariants
// after every step: the committed input log evaluated from scratch is what
// every worker's state must equal.
type checker struct {
	committed   cluster.Epoch
	prefix      []cluster.Batch // prefix[e]: the batch evaluation of epochs 1..e
	epochOf     map[uint64]cluster.Epoch
	assignments map[cluster.Revision]*cluster.Assignment
	quiescent   bool
	// owners is scratch space of step: who serves each bucket, per
	// revision served.
	owners []revOwners
}

type revOwners struct {
	rev   cluster.Revision
	owner [cluster.NumBuckets]cluster.NodeID
}

// ownersAt returns the cleared-per-step owner table of rev.
func (c *checker) ownersAt(rev cluster.Revision) *[cluster.NumBuckets]cluster.NodeID {
	for i := range c.owners {
		if c.owners[i].rev == rev {
			return &c.owners[i].owner
		}
	}
	if len(c.owners) < cap(c.owners) {
		c.owners = c.owners[:len(c.owners)+1]
	} else {
		c.owners = append(c.owners, revOwners{})
	}
	o := &c.owners[len(c.owners)-1]
	o.rev, o.owner = rev, [cluster.NumBuckets]cluster.NodeID{}
	return &o.owner
}

func (c *checker) init(s *simulation) {
	c.prefix = []cluster.Batch{{}}
	c.epochOf = map[uint64]cluster.Epoch{}
	c.assignments = map[cluster.Revision]*cluster.Assignment{}
}

// extend follows etcd's commit frontier: it must not move back, every
// committed epoch must be in the input log, and no write may be in two.
func (c *checker) extend(s *simulation) error {
	now := s.committed()
	if now < c.committed {
		return fmt.Errorf("commit frontier moved back from %d to %d", c.committed, now)
	}
	for e := c.committed + 1; e <= now; e++ {
		data, ok := s.store.get(cluster.InputKey(e))
		if !ok {
			return fmt.Errorf("epoch %d committed without an input log entry", e)
		}
		var writes []cluster.Write
		if err := json.Unmarshal(data, &writes); err != nil {
			return fmt.Errorf("input log entry %d: %v", e, err)
		}
		next := cluster.Batch{}
		cluster.Merge(next, c.prefix[e-1])
		for _, w := range writes {
			if prev, dup := c.epochOf[w.ID]; dup {
				return fmt.Errorf("write %d committed twice, in epochs %d and %d", w.ID, prev, e)
			}
			c.epochOf[w.ID] = e
		}
		cluster.Evaluate(next, writes, nil)
		c.prefix = append(c.prefix, next)
		c.committed = e
	}
	return nil
}

// step checks every invariant over the whole simulated cluster.
func (c *checker) step(s *simulation) error {
	if err := c.extend(s); err != nil {
		return err
	}
	for _, id := range s.candidates {
		if co := s.nodes[id]; co.coord != nil && co.coord.Committed() > c.committed {
			return fmt.Errorf("coordinator %s believes epoch %d committed, etcd holds %d", id, co.coord.Committed(), c.committed)
		}
	}
	c.owners = c.owners[:0]
	for _, id := range s.workers {
		n := s.nodes[id]
		if n.disk.Applied > c.committed {
			return fmt.Errorf("%s's disk holds epoch %d, beyond committed %d", id, n.disk.Applied, c.committed)
		}
		if !n.up {
			continue
		}
		w := n.worker
		if w.Applied() > c.committed {
			return fmt.Errorf("%s applied epoch %d, beyond committed %d", id, w.Applied(), c.committed)
		}
		owned, serving := w.Serving()
		if !serving {
			continue
		}
		truth, ok := c.assignments[w.Rev()]
		if !ok || truth != w.Assignment() && truth.Owner != w.Assignment().Owner {
			return fmt.Errorf("%s serves an assignment at revision %d that etcd never held", id, w.Rev())
		}
		byRev := c.ownersAt(w.Rev())
		for b, mine := range owned {
			if !mine {
				continue
			}
			if other := byRev[b]; other != "" {
				return fmt.Errorf("bucket %d owned by %s and %s at revision %d", b, other, id, w.Rev())
			}
			byRev[b] = id
		}
		if diff := ownedDiff(w.State(), c.prefix[w.Applied()], &owned); diff != "" {
			return fmt.Errorf("%s's state at epoch %d differs from the batch evaluation of the input log: %s", id, w.Applied(), diff)
		}
	}
	return c.checkUnion(s)
}

// checkUnion checks the views end to end: when every member of etcd's
// assignment serves it at the commit frontier, the union of their states
// is the batch evaluation of everything committed.
func (c *checker) checkUnion(s *simulation) error {
	v, ok := s.etcd.get(keyAssignment)
	if !ok {
		return nil
	}
	rev := cluster.Revision(v.modRev)
	asg := c.assignments[rev]
	union := cluster.Batch{}
	for _, id := range cluster.SortedIDs(asg.Members) {
		n := s.nodes[id]
		if !n.up || n.worker.Rev() != rev || n.worker.Applied() != c.committed {
			return nil
		}
		if _, serving := n.worker.Serving(); !serving {
			return nil
		}
		cluster.Merge(union, n.worker.State())
	}
	if diff := batchDiff(union, c.prefix[c.committed]); diff != "" {
		return fmt.Errorf("the workers' union at epoch %d differs from the batch evaluation: %s", c.committed, diff)
	}
	if !s.faults {
		c.quiescent = true
	}
	return nil
}

// action checks what a worker does against etcd: a worker whose lease has
// expired prepares, applies, uploads and reports nothing.
func (c *checker) action(s *simulation, n *node, a cluster.Action) error {
	if n.worker == nil {
		return nil
	}
	effect := false
	switch a.Kind {
	case cluster.ActDiskPrepare, cluster.ActDiskApply, cluster.ActDiskReset, cluster.ActPutObject:
		effect = true
	case cluster.ActSend:
		effect = a.Msg.Kind == cluster.MsgPrepared || a.Msg.Kind == cluster.MsgReady ||
			a.Msg.Kind == cluster.MsgCheckpointDone
	}
	if !effect {
		return nil
	}
	if _, live := s.etcd.leaseExpiry(n.worker.Lease()); !live {
		return fmt.Errorf("%s acted with its lease %d expired: %s", n.id, n.worker.Lease(), a)
	}
	return nil
}

// ownedDiff is batchDiff against want restricted to the owned buckets.
func ownedDiff(got, want cluster.Batch, owned *[cluster.NumBuckets]bool) string {
	n := 0
	for k, v := range want {
		if !owned[cluster.BucketOf(k)] {
			continue
		}
		n++
		if got[k] != v {
			return fmt.Sprintf("%s is %d, want %d", k, got[k], v)
		}
	}
	if len(got) != n {
		for k, v := range got {
			if _, ok := want[k]; !ok || !owned[cluster.BucketOf(k)] {
				return fmt.Sprintf("%s is %d, want absent", k, v)
			}
		}
	}
	return ""
}

// batchDiff describes how got differs from want, "" when equal.
func batchDiff(got, want cluster.Batch) string {
	for k, v := range want {
		if got[k] != v {
			return fmt.Sprintf("%s is %d, want %d", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			return fmt.Sprintf("%s is %d, want absent", k, v)
		}
	}
	return ""
}

// client sends writes to the coordinator and records acknowledgements; an
// acknowledged write must be in a committed epoch when the ack arrives.
type client struct {
	next  uint64
	acked map[uint64]bool
	// inFlight counts the copies of each write the network carries; a
	// write all of whose copies a candidate that does not lead refused was
	// taken by no coordinator, so the client knows to send it again, at the
	// next tick (refused). A write of which a copy may have been taken is
	// never sent again: its fate is unknown to the client.
	inFlight map[uint64]int
	refused  []cluster.Write
}

func (c *client) sent(id uint64, copies int) {
	if c.inFlight == nil {
		c.inFlight = map[uint64]int{}
	}
	c.inFlight[id] += copies
}

// refuse records the refusal of one copy of w.
func (c *client) refuse(w cluster.Write) {
	if c.inFlight[w.ID]--; c.inFlight[w.ID] == 0 {
		c.refused = append(c.refused, w)
	}
}

func (c *client) resend(s *simulation) {
	refused := c.refused
	c.refused = nil
	for _, w := range refused {
		s.send(cluster.ClientID, cluster.Message{Kind: cluster.MsgWrite, From: cluster.ClientID, To: cluster.CoordinatorID, Write: w})
	}
}

func (c *client) write(s *simulation, now int64) uint64 {
	c.next++
	w := cluster.Write{ID: c.next, Key: fmt.Sprintf("k%d", s.rng.Intn(12)), Delta: int64(s.rng.Intn(9)) - 4}
	if w.Delta == 0 {
		w.Delta = 5
	}
	s.send(cluster.ClientID, cluster.Message{Kind: cluster.MsgWrite, From: cluster.ClientID, To: cluster.CoordinatorID, Write: w})
	return w.ID
}

func (c *client) ack(s *simulation, m cluster.Message) error {
	if c.acked == nil {
		c.acked = map[uint64]bool{}
	}
	s.tracef("client <- %s", m)
	if err := s.check.extend(s); err != nil {
		return err
	}
	for _, id := range m.WriteIDs {
		if _, ok := s.check.epochOf[id]; !ok {
			return fmt.Errorf("write %d acknowledged but in no committed epoch", id)
		}
		c.acked[id] = true
	}
	return nil
}
