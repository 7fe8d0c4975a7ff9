package cluster

import (
	"encoding/json"
	"fmt"
)

// CoordinatorConfig sets the coordinator's pacing, in ticks and epochs.
type CoordinatorConfig struct {
	// EpochEvery is the least number of ticks between sealing epochs.
	EpochEvery int64
	// CheckpointEvery makes every epoch divisible by it a barrier
	// checkpoint; it bounds how much of the input log a reset replays.
	CheckpointEvery Epoch
	// PollEvery is how often etcd is read for membership changes.
	PollEvery int64
	// Resend is how often unanswered requests to workers are sent again.
	Resend int64
}

type coordPhase uint8

const (
	coordReading    coordPhase = iota // waiting for the first etcd read
	coordAssigning                    // a new assignment is being written
	coordResetting                    // workers are resetting to a checkpoint
	coordRunning                      // epochs are sealed, prepared, committed
	coordCheckpoint                   // a barrier checkpoint is being taken
)

var coordPhaseNames = [...]string{"reading", "assigning", "resetting", "running", "checkpoint"}

func (p coordPhase) String() string { return coordPhaseNames[p] }

// epochRound is the epoch in flight: sealed, then appended, then prepared
// by every worker, then committed.
type epochRound struct {
	epoch      Epoch
	writes     []Write
	appending  bool
	appended   bool
	prepared   map[NodeID]bool
	committing bool
}

// checkpointRound collects the workers' uploads of one barrier checkpoint.
type checkpointRound struct {
	epoch     Epoch
	keys      map[NodeID]string
	putting   bool
	put       bool
	recording bool
}

// Coordinator is the pure state machine of the elected coordinator. Feed it
// events with Step and take the actions it asks for with Ready; it keeps no
// clock, starts no goroutine and does no I/O.
//
// Invariants it keeps:
//   - it asks etcd to commit epoch e only when every member of the current
//     assignment has reported prepared(e) under the current revision, and
//     only as a transaction conditioned on that revision and on committed
//     being e-1;
//   - it acknowledges a write only after etcd has confirmed (or a later read
//     shows) the commit of the epoch holding it;
//   - it seals an epoch only from writes of its own incarnation, and adopts
//     an input log entry an earlier incarnation left for the same epoch
//     instead of overwriting it;
//   - it starts no epoch while workers reset or a checkpoint is taken.
type Coordinator struct {
	cfg CoordinatorConfig
	now int64

	phase      coordPhase
	rev        Revision
	asg        *Assignment
	committed  Epoch
	checkpoint Epoch

	members  map[NodeID]LeaseID
	reading  bool
	lastPoll int64
	proposed *Assignment
	ready    map[NodeID]bool
	lastSeal int64
	lastSend int64
	pending  []Write
	seen     map[uint64]bool
	round    *epochRound
	ckpt     *checkpointRound

	out []Action
}

// NewCoordinator starts a coordinator incarnation; its first action reads
// the cluster's state from etcd.
func NewCoordinator(cfg CoordinatorConfig) *Coordinator {
	c := &Coordinator{cfg: cfg, seen: map[uint64]bool{}}
	c.read()
	return c
}

// Ready returns the actions asked for since the last call.
func (c *Coordinator) Ready() []Action {
	out := c.out
	c.out = nil
	return out
}

// Phase names what the coordinator is doing, for traces.
func (c *Coordinator) Phase() string { return c.phase.String() }

// Rev is the assignment revision the coordinator works under.
func (c *Coordinator) Rev() Revision { return c.rev }

// Committed is the commit frontier the coordinator knows of.
func (c *Coordinator) Committed() Epoch { return c.committed }

// Step feeds one event.
func (c *Coordinator) Step(ev Event) {
	switch ev.Kind {
	case EvTick:
		c.now = ev.Now
		c.tick()
	case EvRecv:
		c.recv(ev.Msg)
	case EvClusterRead:
		c.clusterRead(ev)
	case EvAssignmentWritten:
		c.assignmentWritten(ev)
	case EvInputAppended:
		c.inputAppended(ev)
	case EvCommitted:
		c.commitResult(ev)
	case EvObjectPut:
		c.manifestPut(ev)
	case EvCheckpointRecorded:
		c.checkpointRecorded(ev)
	}
}

func (c *Coordinator) emit(a Action) { c.out = append(c.out, a) }

func (c *Coordinator) send(kind MsgKind, to NodeID, m Message) {
	m.Kind, m.From, m.To = kind, CoordinatorID, to
	m.Rev, m.Committed, m.Checkpoint = c.rev, c.committed, c.checkpoint
	c.emit(Action{Kind: ActSend, Msg: m})
}

func (c *Coordinator) read() {
	c.reading = true
	c.lastPoll = c.now
	c.emit(Action{Kind: ActReadCluster})
}

// busyInEtcd reports whether a conditional etcd write is outstanding; the
// coordinator decides nothing new until it knows its outcome.
func (c *Coordinator) busyInEtcd() bool {
	return c.phase == coordAssigning || (c.round != nil && c.round.committing) ||
		(c.ckpt != nil && c.ckpt.recording)
}

func (c *Coordinator) tick() {
	if !c.reading && c.now-c.lastPoll >= c.cfg.PollEvery {
		c.read()
	}
	resend := c.now-c.lastSend >= c.cfg.Resend
	if resend {
		c.lastSend = c.now
	}
	switch c.phase {
	case coordResetting:
		if resend {
			c.sendResets()
		}
	case coordRunning:
		if c.asg == nil {
			break
		}
		if c.round == nil && len(c.pending) > 0 && c.now-c.lastSeal >= c.cfg.EpochEvery {
			c.seal()
		}
		if c.round != nil && !c.round.appended && !c.round.appending {
			c.append()
		}
		if resend && c.round != nil && c.round.appended && !c.round.committing {
			c.sendPrepares()
		}
		if resend && c.round == nil {
			for _, id := range SortedIDs(c.asg.Members) {
				c.send(MsgApply, id, Message{})
			}
		}
	case coordCheckpoint:
		c.advanceCheckpoint(resend)
	}
}

func (c *Coordinator) recv(m Message) {
	if m.Kind == MsgWrite {
		if !c.seen[m.Write.ID] {
			c.seen[m.Write.ID] = true
			c.pending = append(c.pending, m.Write)
		}
		return
	}
	if m.Rev != c.rev || c.asg == nil {
		return // from another assignment: refused
	}
	if _, member := c.asg.Members[m.From]; !member {
		return
	}
	switch m.Kind {
	case MsgReady:
		if c.phase == coordResetting {
			c.ready[m.From] = true
			if len(c.ready) == len(c.asg.Members) {
				c.phase = coordRunning
			}
		}
	case MsgPrepared:
		r := c.round
		// A report counts only once this incarnation knows the epoch's
		// final input log entry: a report of an earlier incarnation's
		// round for the same epoch is about that same entry, since an
		// entry is never overwritten, but the writes to acknowledge are
		// known only from the append's result.
		if c.phase != coordRunning || r == nil || !r.appended || m.Epoch != r.epoch || r.committing {
			return
		}
		r.prepared[m.From] = true
		if len(r.prepared) == len(c.asg.Members) {
			r.committing = true
			c.emit(Action{Kind: ActCommit, Epoch: r.epoch, Rev: c.rev})
		}
	case MsgCheckpointDone:
		if c.phase == coordCheckpoint && m.Epoch == c.ckpt.epoch {
			c.ckpt.keys[m.From] = m.Key
			c.advanceCheckpoint(false)
		}
	}
}

func (c *Coordinator) clusterRead(ev Event) {
	c.reading = false
	if ev.Err != nil {
		return
	}
	c.members = ev.Members
	if c.round != nil && ev.Committed >= c.round.epoch && !c.round.committing {
		// A commit whose outcome was unknown has taken effect.
		c.committedRound()
	}
	if c.phase == coordReading {
		c.rev, c.asg = ev.Rev, ev.Assignment
		c.committed, c.checkpoint = ev.Committed, ev.Checkpoint
		c.phase = coordRunning
		if c.asg != nil && SameMembers(c.asg.Members, c.members) {
			// A new incarnation does not know whether every member has
			// finished its reset to this assignment: ask again; those that
			// have answer ready at once.
			c.phase = coordResetting
			c.ready = map[NodeID]bool{}
			c.sendResets()
			return
		}
	}
	if c.busyInEtcd() {
		return
	}
	if c.asg != nil && SameMembers(c.asg.Members, c.members) {
		return
	}
	if len(c.members) == 0 {
		return
	}
	// Membership changed: place the buckets on the live workers.
	a := Place(c.members)
	c.proposed = &a
	c.phase = coordAssigning
	c.emit(Action{Kind: ActWriteAssignment, Assignment: &a, Rev: c.rev})
}

func (c *Coordinator) assignmentWritten(ev Event) {
	if c.phase != coordAssigning {
		return
	}
	if ev.Err != nil || !ev.OK {
		// Outcome unknown or revision moved: start over from a fresh read.
		c.phase = coordReading
		c.round, c.ckpt = nil, nil
		c.read()
		return
	}
	c.rev, c.asg = ev.Rev, c.proposed
	c.proposed = nil
	c.ckpt = nil
	if c.round != nil {
		// The epoch in flight keeps its sealed input but must be prepared
		// again under the new assignment.
		c.round.prepared = map[NodeID]bool{}
	}
	c.phase = coordResetting
	c.ready = map[NodeID]bool{}
	c.sendResets()
}

func (c *Coordinator) sendResets() {
	for _, id := range SortedIDs(c.asg.Members) {
		if !c.ready[id] {
			c.send(MsgReset, id, Message{Assignment: c.asg})
		}
	}
}

func (c *Coordinator) seal() {
	c.lastSeal = c.now
	c.round = &epochRound{epoch: c.committed + 1, writes: c.pending, prepared: map[NodeID]bool{}}
	c.pending = nil
	c.append()
}

func (c *Coordinator) append() {
	c.round.appending = true
	c.emit(Action{Kind: ActAppendInput, Epoch: c.round.epoch, Writes: c.round.writes})
}

func (c *Coordinator) inputAppended(ev Event) {
	r := c.round
	if r == nil || ev.Epoch != r.epoch {
		return
	}
	r.appending = false
	if ev.Err != nil {
		return // retried on the next tick
	}
	if !ev.OK {
		// An earlier incarnation sealed this epoch: its input is final, so
		// adopt it and seal this incarnation's writes in a later epoch.
		// A retried append may find its own writes there.
		stored := map[uint64]bool{}
		for _, w := range ev.Writes {
			stored[w.ID] = true
		}
		var mine []Write
		for _, w := range r.writes {
			if !stored[w.ID] {
				mine = append(mine, w)
			}
		}
		c.pending = append(mine, c.pending...)
		r.writes = ev.Writes
	}
	r.appended = true
	if c.phase == coordRunning {
		c.sendPrepares()
	}
}

func (c *Coordinator) sendPrepares() {
	for _, id := range SortedIDs(c.asg.Members) {
		if !c.round.prepared[id] {
			c.send(MsgPrepare, id, Message{Epoch: c.round.epoch})
		}
	}
}

func (c *Coordinator) commitResult(ev Event) {
	r := c.round
	if r == nil || ev.Epoch != r.epoch || !r.committing {
		return
	}
	r.committing = false
	switch {
	case ev.Err != nil:
		// Unknown outcome: the next read tells whether it took effect.
		r.prepared = map[NodeID]bool{}
		c.read()
	case !ev.OK:
		c.phase = coordReading
		c.round, c.ckpt = nil, nil
		c.read()
	default:
		c.committedRound()
	}
}

// committedRound acts on the commit of the epoch in flight: acknowledge its
// writes, tell the workers, and take a barrier checkpoint when one is due.
func (c *Coordinator) committedRound() {
	r := c.round
	c.round = nil
	c.committed = r.epoch
	if len(r.writes) > 0 {
		ids := make([]uint64, len(r.writes))
		for i, w := range r.writes {
			ids[i] = w.ID
		}
		c.emit(Action{Kind: ActSend, Msg: Message{Kind: MsgAck, From: CoordinatorID, To: ClientID, WriteIDs: ids}})
	}
	if c.asg == nil {
		return
	}
	for _, id := range SortedIDs(c.asg.Members) {
		c.send(MsgApply, id, Message{})
	}
	if c.phase == coordRunning && c.cfg.CheckpointEvery > 0 && r.epoch%c.cfg.CheckpointEvery == 0 {
		c.phase = coordCheckpoint
		c.ckpt = &checkpointRound{epoch: r.epoch, keys: map[NodeID]string{}}
		c.advanceCheckpoint(true)
	}
}

// ManifestKey is the object key of the cluster checkpoint manifest of e.
func ManifestKey(e Epoch) string { return fmt.Sprintf("checkpoint/%08d/manifest", e) }

// InputKey is the object key of the input log entry of e.
func InputKey(e Epoch) string { return fmt.Sprintf("input/%08d", e) }

func (c *Coordinator) advanceCheckpoint(resend bool) {
	k := c.ckpt
	if len(k.keys) < len(c.asg.Members) {
		if resend {
			for _, id := range SortedIDs(c.asg.Members) {
				if _, done := k.keys[id]; !done {
					c.send(MsgCheckpoint, id, Message{Epoch: k.epoch})
				}
			}
		}
		return
	}
	switch {
	case !k.put && !k.putting:
		keys := make([]string, 0, len(k.keys))
		for _, id := range SortedIDs(k.keys) {
			keys = append(keys, k.keys[id])
		}
		data, _ := json.Marshal(keys)
		k.putting = true
		c.emit(Action{Kind: ActPutObject, Key: ManifestKey(k.epoch), Data: data})
	case k.put && !k.recording:
		k.recording = true
		c.emit(Action{Kind: ActRecordCheckpoint, Epoch: k.epoch, Rev: c.rev})
	}
}

func (c *Coordinator) manifestPut(ev Event) {
	k := c.ckpt
	if k == nil || ev.Key != ManifestKey(k.epoch) {
		return
	}
	k.putting = false
	k.put = ev.Err == nil
	c.advanceCheckpoint(false)
}

func (c *Coordinator) checkpointRecorded(ev Event) {
	k := c.ckpt
	if k == nil || ev.Epoch != k.epoch {
		return
	}
	k.recording = false
	switch {
	case ev.Err != nil:
		// Retried on the next tick; recording the same pointer twice is
		// harmless.
	case !ev.OK:
		c.phase = coordReading
		c.round, c.ckpt = nil, nil
		c.read()
	default:
		c.checkpoint = k.epoch
		c.ckpt = nil
		c.phase = coordRunning
	}
}
