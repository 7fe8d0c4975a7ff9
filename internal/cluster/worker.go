package cluster

import (
	"encoding/json"
	"fmt"
)

// WorkerConfig sets the worker's lease timing, in ticks.
type WorkerConfig struct {
	// LeaseTTL is the lifetime etcd gives the worker's lease.
	LeaseTTL int64
	// RenewEvery is how often the lease is renewed; less than LeaseTTL.
	RenewEvery int64
}

// Disk is what a worker keeps on its local disk across crashes: the state
// of the buckets it serves at epoch Applied and at most one prepared
// record.
type Disk struct {
	State    Batch
	Applied  Epoch
	Prepared *Prepared
}

// Prepared is a worker's prepared record: the batch of one epoch, run but
// not applied, and the revision it was prepared under.
type Prepared struct {
	Epoch Epoch
	Rev   Revision
	Delta Batch
}

type workerPhase uint8

const (
	workerUnregistered workerPhase = iota // no lease yet
	workerIdle                            // registered, serving no assignment
	workerLoading                         // reading a checkpoint
	workerCatchingUp                      // replaying the input log
	workerReady                           // serving its buckets
)

var workerPhaseNames = [...]string{"unregistered", "idle", "loading", "catching-up", "ready"}

func (p workerPhase) String() string { return workerPhaseNames[p] }

// Worker is the pure epoch state machine of one worker. Feed it events with
// Step and take the actions it asks for with Ready; it keeps no clock,
// starts no goroutine and does no I/O.
//
// Invariants it keeps:
//   - it refuses every message sent under a revision older than its own,
//     and serves an assignment only if it names its current lease;
//   - its state is never ahead of the commit frontier it has been told of:
//     a prepared batch is applied only once a message of its revision says
//     committed covers it, and replay reads only committed epochs;
//   - its own clock decides fencing: once a tick reaches the last renewal's
//     send time plus the TTL (no later than etcd's expiry), it prepares,
//     applies and uploads nothing more under that lease, and registers
//     again as a new member;
//   - its state is always the batch evaluation of the input log up to its
//     applied epoch, restricted to the buckets it serves.
type Worker struct {
	id  NodeID
	cfg WorkerConfig
	now int64

	phase        workerPhase
	lease        LeaseID
	registering  bool
	renewing     bool
	lastRenew    int64
	deadline     int64
	rev          Revision
	asg          *Assignment
	owned        [NumBuckets]bool
	state        Batch
	applied      Epoch
	prepared     *Prepared
	target       Epoch // the commit frontier this worker knows of
	reading      Epoch // the input log entry being read, or 0
	resetFrom    Epoch
	loadPending  int
	loadFailed   bool
	checkpointAt Epoch // a checkpoint upload in flight, or 0

	out []Action
}

// NewWorker starts a worker incarnation from its disk; it registers on its
// first tick, which gives it the time its lease starts from. A prepared record
// found there is not applied: the new incarnation registers as a new
// member, so the coordinator resets it before it serves anything.
func NewWorker(id NodeID, cfg WorkerConfig, disk Disk) *Worker {
	w := &Worker{id: id, cfg: cfg, state: Batch{}}
	for k, v := range disk.State {
		w.state[k] = v
	}
	w.applied = disk.Applied
	return w
}

// Ready returns the actions asked for since the last call.
func (w *Worker) Ready() []Action {
	out := w.out
	w.out = nil
	return out
}

// ID is the worker's node ID.
func (w *Worker) ID() NodeID { return w.id }

// Lease is the lease of the current registration, 0 before one is granted.
func (w *Worker) Lease() LeaseID { return w.lease }

// Deadline is the tick at which the worker fences itself unless a renewal
// succeeds first: the send time of the last successful renewal plus the
// TTL. It is meaningful only while Lease is not 0. A host uses it to hold
// back actions it has not performed yet once its clock passes it.
func (w *Worker) Deadline() int64 { return w.deadline }

// Rev is the assignment revision the worker serves, 0 for none.
func (w *Worker) Rev() Revision { return w.rev }

// Serving reports whether the worker has finished resetting and serves its
// buckets, and if so which.
func (w *Worker) Serving() (owned [NumBuckets]bool, ok bool) {
	return w.owned, w.phase == workerReady
}

// Assignment is the assignment the worker serves, nil for none.
func (w *Worker) Assignment() *Assignment { return w.asg }

// Applied is the epoch of the worker's state.
func (w *Worker) Applied() Epoch { return w.applied }

// State is the worker's state; the caller must not modify it.
func (w *Worker) State() Batch { return w.state }

// Phase names what the worker is doing, for traces.
func (w *Worker) Phase() string { return w.phase.String() }

func (w *Worker) emit(a Action) { w.out = append(w.out, a) }

func (w *Worker) send(kind MsgKind, m Message) {
	m.Kind, m.From, m.To, m.Rev = kind, w.id, CoordinatorID, w.rev
	m.Committed = w.applied
	w.emit(Action{Kind: ActSend, Msg: m})
}

func (w *Worker) register() {
	w.registering = true
	w.emit(Action{Kind: ActRegister, SentAt: w.now})
}

// Step feeds one event.
func (w *Worker) Step(ev Event) {
	if ev.Kind == EvTick {
		w.now = ev.Now
	}
	if w.lease != 0 && w.now >= w.deadline {
		w.fence()
	}
	switch ev.Kind {
	case EvTick:
		w.tick()
	case EvRegistered:
		w.registering = false
		if ev.Err == nil {
			w.lease = ev.Lease
			w.lastRenew = ev.SentAt
			w.deadline = ev.SentAt + w.cfg.LeaseTTL
			w.phase = workerIdle
		}
	case EvRenewed:
		w.renewed(ev)
	case EvRecv:
		if w.phase != workerUnregistered {
			w.recv(ev.Msg)
		}
	case EvInputRead:
		w.inputRead(ev)
	case EvObjectGot:
		w.objectGot(ev)
	case EvObjectPut:
		w.objectPut(ev)
	}
}

// fence stops serving: the lease may have expired in etcd, so another
// worker may own these buckets now. The worker registers again and waits
// for an assignment naming its new lease.
func (w *Worker) fence() {
	w.lease = 0
	w.phase = workerUnregistered
	w.rev, w.asg, w.owned = 0, nil, [NumBuckets]bool{}
	w.prepared = nil
	w.reading, w.renewing, w.checkpointAt = 0, false, 0
	w.target = 0
	if !w.registering {
		w.register()
	}
}

func (w *Worker) tick() {
	if w.phase == workerUnregistered {
		if !w.registering {
			w.register()
		}
		return
	}
	if !w.renewing && w.now-w.lastRenew >= w.cfg.RenewEvery {
		w.renewing = true
		w.emit(Action{Kind: ActKeepAlive, Lease: w.lease, SentAt: w.now})
	}
	if w.phase == workerLoading && w.loadFailed && w.loadPending == 0 {
		w.startLoad()
	}
	w.advance()
}

func (w *Worker) renewed(ev Event) {
	if ev.Lease != w.lease {
		return
	}
	w.renewing = false
	w.lastRenew = ev.SentAt
	switch {
	case ev.Err != nil:
		// Unreachable: keep the old deadline; the next tick tries again.
	case !ev.OK:
		w.fence()
	default:
		if d := ev.SentAt + w.cfg.LeaseTTL; d > w.deadline {
			w.deadline = d
		}
	}
}

func (w *Worker) recv(m Message) {
	if m.Rev < w.rev {
		return // from an older assignment: refused
	}
	if m.Kind == MsgReset {
		w.reset(m)
		return
	}
	if m.Rev != w.rev {
		return // a reset to that revision has not arrived yet
	}
	if m.Committed > w.target {
		w.target = m.Committed
	}
	switch m.Kind {
	case MsgPrepare:
		w.advance()
		if w.phase != workerReady {
			return
		}
		if w.prepared != nil && w.prepared.Epoch == m.Epoch {
			w.send(MsgPrepared, Message{Epoch: m.Epoch})
		} else if w.prepared == nil && m.Epoch == w.applied+1 && w.reading == 0 {
			w.readInput(m.Epoch)
		}
		return
	case MsgCheckpoint:
		w.advance()
		if w.phase == workerReady && w.applied == m.Epoch && w.checkpointAt == 0 {
			w.checkpointAt = m.Epoch
			data, _ := json.Marshal(w.state)
			w.emit(Action{Kind: ActPutObject, Key: w.checkpointKey(m.Epoch), Data: data, Rev: w.rev})
		}
		return
	}
	w.advance()
}

func (w *Worker) checkpointKey(e Epoch) string {
	return fmt.Sprintf("checkpoint/%08d/r%d-%s", e, w.rev, w.id)
}

func (w *Worker) reset(m Message) {
	if m.Assignment == nil || m.Assignment.Members[w.id] != w.lease {
		return // not an assignment of this registration
	}
	if m.Rev == w.rev {
		if w.phase == workerReady {
			w.send(MsgReady, Message{Epoch: w.applied})
		}
		return
	}
	w.rev, w.asg = m.Rev, m.Assignment
	w.owned = m.Assignment.Owned(w.id)
	w.prepared = nil
	w.target = m.Committed
	w.resetFrom = m.Checkpoint
	w.reading, w.checkpointAt = 0, 0
	w.startLoad()
}

func (w *Worker) startLoad() {
	w.state = Batch{}
	w.loadFailed = false
	w.loadPending = 0
	if w.resetFrom == 0 {
		w.applied = 0
		w.phase = workerCatchingUp
		w.advance()
		return
	}
	w.phase = workerLoading
	w.loadPending = 1
	w.emit(Action{Kind: ActGetObject, Key: ManifestKey(w.resetFrom), Rev: w.rev})
}

func (w *Worker) objectGot(ev Event) {
	if w.phase != workerLoading || ev.Tag != w.rev {
		return
	}
	w.loadPending--
	if ev.Err != nil {
		w.loadFailed = true
		return
	}
	if w.loadFailed {
		return
	}
	if ev.Key == ManifestKey(w.resetFrom) {
		var keys []string
		if err := json.Unmarshal(ev.Data, &keys); err != nil {
			w.loadFailed = true
			return
		}
		for _, k := range keys {
			w.loadPending++
			w.emit(Action{Kind: ActGetObject, Key: k, Rev: w.rev})
		}
	} else {
		var part Batch
		if err := json.Unmarshal(ev.Data, &part); err != nil {
			w.loadFailed = true
			return
		}
		for k, v := range part {
			if w.owned[BucketOf(k)] {
				w.state[k] = v
			}
		}
	}
	if w.loadPending == 0 {
		w.applied = w.resetFrom
		w.phase = workerCatchingUp
		w.advance()
	}
}

func (w *Worker) readInput(e Epoch) {
	w.reading = e
	w.emit(Action{Kind: ActReadInput, Epoch: e, Rev: w.rev})
}

// advance applies what the known commit frontier allows and keeps replay
// going; it finishes a reset once replay reaches the frontier.
func (w *Worker) advance() {
	if w.phase != workerReady && w.phase != workerCatchingUp {
		return
	}
	if p := w.prepared; p != nil && p.Epoch <= w.target {
		w.prepared = nil
		if p.Epoch == w.applied+1 {
			Merge(w.state, p.Delta)
			w.applied = p.Epoch
			w.emit(Action{Kind: ActDiskApply, Epoch: p.Epoch, Delta: p.Delta})
		}
	}
	if w.applied < w.target {
		if w.reading == 0 {
			w.readInput(w.applied + 1)
		}
		return
	}
	if w.phase == workerCatchingUp {
		w.phase = workerReady
		w.emit(Action{Kind: ActDiskReset, Epoch: w.applied, State: copyBatch(w.state)})
		w.send(MsgReady, Message{Epoch: w.applied})
	}
}

func (w *Worker) inputRead(ev Event) {
	if ev.Tag != w.rev || ev.Epoch != w.reading {
		return
	}
	w.reading = 0
	if ev.Err != nil || ev.Epoch != w.applied+1 {
		return // the next tick reads again, if still needed
	}
	var writes []Write
	if err := json.Unmarshal(ev.Data, &writes); err != nil {
		return
	}
	delta := Batch{}
	Evaluate(delta, writes, &w.owned)
	switch {
	case ev.Epoch <= w.target:
		// Committed: replay it.
		Merge(w.state, delta)
		w.applied = ev.Epoch
		if w.phase == workerReady {
			w.emit(Action{Kind: ActDiskApply, Epoch: ev.Epoch, Delta: delta})
		}
		w.advance()
	case w.phase == workerReady:
		w.prepared = &Prepared{Epoch: ev.Epoch, Rev: w.rev, Delta: delta}
		w.emit(Action{Kind: ActDiskPrepare, Epoch: ev.Epoch, Delta: delta})
		w.send(MsgPrepared, Message{Epoch: ev.Epoch})
	}
}

func (w *Worker) objectPut(ev Event) {
	if ev.Tag != w.rev || w.checkpointAt == 0 || ev.Key != w.checkpointKey(w.checkpointAt) {
		return
	}
	e := w.checkpointAt
	w.checkpointAt = 0
	if ev.Err == nil {
		w.send(MsgCheckpointDone, Message{Epoch: e, Key: ev.Key})
	}
}

func copyBatch(b Batch) Batch {
	c := make(Batch, len(b))
	for k, v := range b {
		c[k] = v
	}
	return c
}
