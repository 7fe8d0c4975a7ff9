package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/rockstream/rockstream/internal/cluster"
)

// TickUnit is the length of one tick of the state machines' clock under
// a host: their configurations (LeaseTTL, EpochEvery, ...) count in it.
const TickUnit = time.Millisecond

// ticks converts a duration to machine ticks, at least 1.
func ticks(d time.Duration) int64 {
	if t := int64(d / TickUnit); t > 0 {
		return t
	}
	return 1
}

// Queue bounds. A host's inbox drops messages past inboxSize (the
// protocol resends); a request that finds its lane full fails at once with
// errLaneFull, as a request etcd or the object store did not answer.
const (
	inboxSize = 1024
	laneSize  = 64
)

var errLaneFull = errors.New("control: too many requests in flight")

// machine is what a host drives: cluster.Coordinator or cluster.Worker.
type machine interface {
	Step(cluster.Event)
	Ready() []cluster.Action
}

// host is the loop shared by the coordinator and worker hosts: it feeds a
// machine ticks of a real clock, the messages of its inbox and the results
// of its requests, and performs the actions the machine asks for.
//
// Messages and local disk writes are performed in the loop, in the order
// the machine asked for them, so that a prepared record is durable before
// the report of it is sent. etcd requests and object store requests each
// run in a lane of their own, one at a time in order (as the simulator
// performs them), so a request that hangs delays neither the machine's
// clock nor its self-fencing.
type host struct {
	id      cluster.NodeID
	store   *Store
	objects Objects
	net     Network
	disk    Disk // nil on the coordinator
	tick    time.Duration
	log     *slog.Logger
	start   time.Time
	observe func(lease cluster.LeaseID, a cluster.Action)
	// observeEvent, when set, is called with every event but ticks before
	// the machine is fed it.
	observeEvent func(ev cluster.Event)
	// expired, on a worker, reports whether the clock has passed the
	// machine's lease deadline.
	expired func() bool

	inbox chan cluster.Message
}

func newHost(id cluster.NodeID, store *Store, objects Objects, net Network, tick time.Duration, log *slog.Logger) *host {
	if tick <= 0 {
		tick = 10 * time.Millisecond
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &host{id: id, store: store, objects: objects, net: net, tick: tick,
		log: log.With("node", string(id)), start: time.Now(), inbox: make(chan cluster.Message, inboxSize)}
}

// deliver queues a message for the machine; it drops it when the inbox is
// full.
func (h *host) deliver(m cluster.Message) {
	select {
	case h.inbox <- m:
	default:
	}
}

// now is the machines' clock: ticks since the host started.
func (h *host) now() int64 { return int64(time.Since(h.start) / TickUnit) }

// run is one machine's life under the host: until ctx ends, stop closes or
// a local disk write fails (the worker then stops as if it crashed).
// query runs functions inside the loop, where the machine may be read.
func (h *host) run(ctx context.Context, m machine, lease func() cluster.LeaseID, stop <-chan struct{}, query <-chan func()) error {
	ctx, cancel := context.WithCancel(ctx)
	var lanes sync.WaitGroup
	results := make(chan cluster.Event, 2*laneSize)
	etcdLane := make(chan cluster.Action, laneSize)
	objectLane := make(chan cluster.Action, laneSize)
	lanes.Add(2)
	go h.lane(ctx, &lanes, etcdLane, results, h.performEtcd)
	go h.lane(ctx, &lanes, objectLane, results, h.performObject)
	defer func() {
		cancel()
		lanes.Wait()
	}()

	ticker := time.NewTicker(h.tick)
	defer ticker.Stop()
	var local []cluster.Event // results decided in the loop itself
	perform := func() error {
		actions := m.Ready()
		for i := 0; i < len(actions); i++ {
			a := actions[i]
			if h.expired != nil && hasEffect(a) && h.expired() {
				// The clock passed the lease deadline while earlier actions
				// were performed (a slow disk): drop the rest, as a crash
				// would, and let the machine fence itself.
				h.log.Warn("lease deadline passed while acting; dropping actions", "dropped", len(actions)-i)
				m.Step(cluster.Event{Kind: cluster.EvTick, Now: h.now()})
				actions, i = m.Ready(), -1
				continue
			}
			if h.observe != nil {
				h.observe(lease(), a)
			}
			if err := h.perform(a, etcdLane, objectLane, &local); err != nil {
				return err
			}
		}
		return nil
	}
	if err := perform(); err != nil {
		return err
	}
	for {
		var ev cluster.Event
		if len(local) > 0 {
			ev, local = local[0], local[1:]
		} else {
			select {
			case <-ctx.Done():
				return nil
			case <-stop:
				return nil
			case f := <-query:
				f()
				continue
			case <-ticker.C:
				ev = cluster.Event{Kind: cluster.EvTick}
			case msg := <-h.inbox:
				ev = cluster.Event{Kind: cluster.EvRecv, Msg: msg}
			case ev = <-results:
			}
		}
		// The machine's clock is brought up to date before every event, so
		// that a worker past its lease deadline fences itself before it
		// acts on anything.
		m.Step(cluster.Event{Kind: cluster.EvTick, Now: h.now()})
		if err := perform(); err != nil {
			return err
		}
		if ev.Kind == cluster.EvTick {
			continue
		}
		if h.observeEvent != nil {
			h.observeEvent(ev)
		}
		m.Step(ev)
		if err := perform(); err != nil {
			return err
		}
	}
}

// hasEffect reports whether a changes state others rely on: a worker must
// not begin such an action past its lease deadline (the actions the
// simulator checks against expired leases).
func hasEffect(a cluster.Action) bool {
	switch a.Kind {
	case cluster.ActDiskPrepare, cluster.ActDiskApply, cluster.ActDiskReset, cluster.ActPutObject:
		return true
	case cluster.ActSend:
		k := a.Msg.Kind
		return k == cluster.MsgPrepared || k == cluster.MsgReady || k == cluster.MsgCheckpointDone
	}
	return false
}

// HasEffect reports whether a worker's action a changes state others rely
// on (a disk write, an upload, a prepared, ready or checkpoint report):
// what a worker must not begin once its lease may have expired.
func HasEffect(a cluster.Action) bool { return hasEffect(a) }

// lane performs the requests queued on it one at a time.
func (h *host) lane(ctx context.Context, wg *sync.WaitGroup, in <-chan cluster.Action, out chan<- cluster.Event, do func(context.Context, cluster.Action) cluster.Event) {
	defer wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case a := <-in:
			ev := do(ctx, a)
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}
}

func (h *host) perform(a cluster.Action, etcdLane, objectLane chan<- cluster.Action, local *[]cluster.Event) error {
	var lane chan<- cluster.Action
	switch a.Kind {
	case cluster.ActSend:
		h.net.Send(a.Msg)
		return nil
	case cluster.ActDiskPrepare:
		return h.diskErr(a, h.disk.Prepare(a.Epoch, a.Delta))
	case cluster.ActDiskApply:
		return h.diskErr(a, h.disk.Apply(a.Epoch, a.Delta))
	case cluster.ActDiskReset:
		return h.diskErr(a, h.disk.Reset(a.Epoch, a.State))
	case cluster.ActReadCluster, cluster.ActWriteAssignment, cluster.ActCommit,
		cluster.ActRecordCheckpoint, cluster.ActRegister, cluster.ActKeepAlive:
		lane = etcdLane
	case cluster.ActAppendInput, cluster.ActReadInput, cluster.ActPutObject, cluster.ActGetObject:
		lane = objectLane
	default:
		return fmt.Errorf("control: %s: unknown action %s", h.id, a)
	}
	select {
	case lane <- a:
	default:
		*local = append(*local, failedEvent(a, errLaneFull))
	}
	return nil
}

func (h *host) diskErr(a cluster.Action, err error) error {
	if err != nil {
		return fmt.Errorf("control: %s: %s: %w", h.id, a, err)
	}
	return nil
}

func (h *host) performEtcd(ctx context.Context, a cluster.Action) cluster.Event {
	ev := h.store.Perform(ctx, h.id, a)
	if ev.Err != nil {
		h.log.Debug("etcd request failed", "action", a.String(), "err", ev.Err)
	}
	return ev
}

// performObject performs an object store action. The input log entry is
// the JSON array of the epoch's writes, as the worker machine reads it.
func (h *host) performObject(ctx context.Context, a cluster.Action) cluster.Event {
	ev := failedEvent(a, nil)
	switch a.Kind {
	case cluster.ActAppendInput:
		data, err := json.Marshal(a.Writes)
		if err != nil {
			ev.Err = err
			break
		}
		stored, created, err := h.objects.PutIfAbsent(ctx, cluster.InputKey(a.Epoch), data)
		if err != nil {
			ev.Err = err
			break
		}
		if err := json.Unmarshal(stored, &ev.Writes); err != nil {
			ev.Err = fmt.Errorf("control: input log entry %d: %w", a.Epoch, err)
			break
		}
		ev.OK = created
	case cluster.ActReadInput, cluster.ActGetObject:
		key := a.Key
		if a.Kind == cluster.ActReadInput {
			key = cluster.InputKey(a.Epoch)
		}
		ev.Data, ev.Err = h.objects.Get(ctx, key)
		ev.OK = ev.Err == nil
	case cluster.ActPutObject:
		ev.Err = h.objects.Put(ctx, a.Key, a.Data)
		ev.OK = ev.Err == nil
	}
	if ev.Err != nil {
		h.log.Debug("object store request failed", "action", a.String(), "err", ev.Err)
	}
	return ev
}

// resultKinds maps each request to the kind of its result event.
var resultKinds = map[cluster.ActionKind]cluster.EventKind{
	cluster.ActReadCluster:      cluster.EvClusterRead,
	cluster.ActWriteAssignment:  cluster.EvAssignmentWritten,
	cluster.ActCommit:           cluster.EvCommitted,
	cluster.ActRecordCheckpoint: cluster.EvCheckpointRecorded,
	cluster.ActRegister:         cluster.EvRegistered,
	cluster.ActKeepAlive:        cluster.EvRenewed,
	cluster.ActAppendInput:      cluster.EvInputAppended,
	cluster.ActReadInput:        cluster.EvInputRead,
	cluster.ActPutObject:        cluster.EvObjectPut,
	cluster.ActGetObject:        cluster.EvObjectGot,
}

// failedEvent is the result event of a that reports err, with the fields
// the machine matches results by.
func failedEvent(a cluster.Action, err error) cluster.Event {
	return cluster.Event{Kind: resultKinds[a.Kind], Err: err, Epoch: a.Epoch, Key: a.Key, Tag: a.Rev, Lease: a.Lease, SentAt: a.SentAt}
}
