package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"strconv"

	"github.com/rockstream/rockstream/internal/cluster"
)

// Faults are the per-tick and per-step probabilities of the simulated
// failures.
type Faults struct {
	Drop      float64 // a message is lost
	Duplicate float64 // a message arrives twice
	MaxDelay  int64   // a message is delayed by up to this many ticks
	Crash     float64 // per step: a random node crashes
	Pause     float64 // per tick: a random worker stops (SIGSTOP) for a while
	EtcdCut   float64 // per tick: a random worker loses etcd for a while
	EtcdFail  float64 // an etcd request fails (and may have taken effect)
	StoreFail float64 // an object store request fails
}

// DefaultFaults is the fault mix the seeded runs use.
func DefaultFaults() Faults {
	return Faults{Drop: 0.05, Duplicate: 0.05, MaxDelay: 3, Crash: 0.004,
		Pause: 0.01, EtcdCut: 0.01, EtcdFail: 0.02, StoreFail: 0.02}
}

// HarshFaults is a mix with four times the losses and crashes and longer
// delays.
func HarshFaults() Faults {
	return Faults{Drop: 0.2, Duplicate: 0.2, MaxDelay: 8, Crash: 0.02,
		Pause: 0.05, EtcdCut: 0.05, EtcdFail: 0.1, StoreFail: 0.1}
}

// Crash is a scripted crash: Node goes down at Tick for DownFor ticks.
type Crash struct {
	Tick    int64
	Node    cluster.NodeID
	DownFor int64
}

// Bug plants a protocol bug for the tests that show the simulator finds
// it. The bugs live here, in the simulator's delivery, never in the state
// machines: each makes a worker behave as if it lacked one of its checks.
type Bug uint8

const (
	// NoBug runs the protocol as built.
	NoBug Bug = iota
	// BugAcceptOldRevision stamps a message from an older assignment with
	// the receiver's revision, as if the receiver did not refuse it.
	BugAcceptOldRevision
	// BugNoSelfFence hides the passing of time from a worker cut off from
	// etcd, as if it did not fence itself when its lease ran out.
	BugNoSelfFence
	// BugApplyBeforeCommit tells a worker that the epoch it is asked to
	// prepare is already committed, as if it applied on prepare.
	BugApplyBeforeCommit
)

// Config describes one simulated run.
type Config struct {
	Seed    int64
	Workers int
	// Coordinators is the number of coordinator candidates (0 means one);
	// they elect one leader through etcd.
	Coordinators int
	// Ticks is how long faults are injected; Heal is how long the run goes
	// on without faults afterwards, at the end of which a write sent at the
	// start of the healing must be acknowledged.
	Ticks, Heal int64
	Faults      Faults
	Crashes     []Crash
	// Cuts are scripted losses of etcd: Node cannot reach etcd from Tick
	// for DownFor ticks.
	Cuts []Crash
	Bug  Bug
	// Trace, when set, receives one line per event and action.
	Trace io.Writer
}

// Protocol timing, in ticks.
var (
	coordConfig  = cluster.CoordinatorConfig{EpochEvery: 2, CheckpointEvery: 4, PollEvery: 3, Resend: 3}
	workerConfig = cluster.WorkerConfig{LeaseTTL: 8, RenewEvery: 2}
)

// Result is what a run reached.
type Result struct {
	Committed cluster.Epoch
	Acked     int
	// Assignments counts the assignments written: the first and one per
	// membership change.
	Assignments int
	// Terms counts the coordinators elected; Deposed counts the actions a
	// coordinator asked for after its term had ended in etcd (a zombie's).
	Terms, Deposed int
}

type node struct {
	id          cluster.NodeID
	incarnation int
	// term counts the coordinator machines a candidate process has run.
	term        int
	up          bool
	downUntil   int64
	pausedUntil int64
	etcdCutTill int64
	etcdCutFrom int64
	coord       *cluster.Coordinator
	worker      *cluster.Worker
	disk        cluster.Disk

	// A coordinator candidate's election (election.go): its lease, when
	// it last renewed it, and its leader key's revision while it leads.
	candidate bool
	elect     cluster.LeaseID
	renewed   int64
	leaderRev int64
}

type local struct {
	to          cluster.NodeID
	incarnation int
	term        int
	ev          cluster.Event
}

type simulation struct {
	cfg    Config
	rng    *rand.Rand
	now    int64
	faults bool
	etcd   *etcd
	store  *objectStore
	net    *network
	nodes  map[cluster.NodeID]*node
	order  []cluster.NodeID
	// candidates and workers partition order.
	candidates, workers []cluster.NodeID
	queue               []local
	client              client
	check               checker
	result              Result
}

// Run runs one seeded simulation and returns the first violated invariant
// as an error naming the seed, tick and invariant.
func Run(cfg Config) (Result, error) {
	s := newSimulation(cfg)
	err := s.run()
	if err != nil {
		return s.result, fmt.Errorf("seed %d, tick %d: %w", cfg.Seed, s.now, err)
	}
	return s.result, nil
}

func newSimulation(cfg Config) *simulation {
	rng := rand.New(rand.NewSource(cfg.Seed))
	s := &simulation{cfg: cfg, rng: rng, etcd: newEtcd(), store: newObjectStore(),
		net: &network{rng: rng}, nodes: map[cluster.NodeID]*node{}}
	s.etcd.txn(nil, []put{{key: keyCommitted, value: "0"}, {key: keyCheckpoint, value: "0"}})
	s.check.init(s)
	s.candidates = []cluster.NodeID{cluster.CoordinatorID}
	if cfg.Coordinators > 1 {
		s.candidates = nil
		for i := 1; i <= cfg.Coordinators; i++ {
			s.candidates = append(s.candidates, cluster.CoordinatorID+cluster.NodeID(strconv.Itoa(i)))
		}
	}
	for i := 1; i <= cfg.Workers; i++ {
		s.workers = append(s.workers, cluster.NodeID("w"+strconv.Itoa(i)))
	}
	s.order = append(append(s.order, s.candidates...), s.workers...)
	for i, id := range s.order {
		s.nodes[id] = &node{id: id, candidate: i < len(s.candidates)}
	}
	return s
}

const (
	keyCommitted  = "/rockstream/committed"
	keyCheckpoint = "/rockstream/checkpoint"
	keyAssignment = "/rockstream/assignment"
	prefixWorkers = "/rockstream/workers/"
)

func (s *simulation) tracef(format string, args ...any) {
	if s.cfg.Trace != nil {
		fmt.Fprintf(s.cfg.Trace, "t=%-3d "+format+"\n", append([]any{s.now}, args...)...)
	}
}

func (s *simulation) run() error {
	for _, id := range s.order {
		s.start(s.nodes[id])
	}
	if err := s.drain(); err != nil {
		return err
	}
	end := s.cfg.Ticks + s.cfg.Heal
	var probe uint64
	for s.now = 1; s.now <= end; s.now++ {
		s.faults = s.now <= s.cfg.Ticks
		if s.now == s.cfg.Ticks+1 {
			s.heal()
			probe = s.client.write(s, s.now)
		}
		if err := s.tick(); err != nil {
			return err
		}
	}
	if probe != 0 && !s.client.acked[probe] {
		return fmt.Errorf("liveness: write %d sent when faults stopped was not acknowledged within %d ticks", probe, s.cfg.Heal)
	}
	if s.cfg.Heal > 0 && !s.check.quiescent {
		return errors.New("liveness: the workers never all served the commit frontier after faults stopped")
	}
	s.result.Acked = len(s.client.acked)
	s.result.Committed = s.check.committed
	return nil
}

// heal ends every fault: crashed nodes restart, pauses and etcd cuts end.
func (s *simulation) heal() {
	if s.cfg.Ticks > 0 {
		s.tracef("faults stop")
	}
	for _, id := range s.order {
		n := s.nodes[id]
		n.pausedUntil, n.etcdCutTill = 0, 0
		if !n.up {
			s.start(n)
		}
	}
}

func (s *simulation) tick() error {
	s.etcd.expire(s.now)
	for _, c := range s.cfg.Crashes {
		if c.Tick == s.now {
			s.crash(s.nodes[c.Node], c.DownFor)
		}
	}
	for _, c := range s.cfg.Cuts {
		if n := s.nodes[c.Node]; c.Tick == s.now {
			n.etcdCutFrom, n.etcdCutTill = s.now, s.now+c.DownFor
			s.tracef("%s cut off from etcd until t=%d", n.id, n.etcdCutTill)
		}
	}
	for _, id := range s.order {
		n := s.nodes[id]
		if !n.up && s.now >= n.downUntil {
			s.start(n)
		}
	}
	if s.faults {
		s.tickFaults()
	}
	s.client.resend(s)
	if s.rng.Float64() < 0.6 {
		for i := s.rng.Intn(3); i >= 0; i-- {
			s.client.write(s, s.now)
		}
	}
	for _, id := range s.order {
		if n := s.nodes[id]; n.up && s.now >= n.pausedUntil {
			if n.candidate {
				s.campaign(n)
				if err := s.drain(); err != nil {
					return err
				}
				if n.coord == nil {
					continue
				}
			}
			now := s.now
			if s.cfg.Bug == BugNoSelfFence && n.worker != nil && now < n.etcdCutTill {
				now = n.etcdCutFrom
			}
			s.deliver(n, cluster.Event{Kind: cluster.EvTick, Now: now})
			if err := s.drain(); err != nil {
				return err
			}
		}
	}
	for {
		e, ok := s.net.takeDue(s.now, s.held)
		if !ok {
			return nil
		}
		if err := s.receive(e); err != nil {
			return err
		}
	}
}

// held reports whether messages to id wait: a paused process reads none.
func (s *simulation) held(id cluster.NodeID) bool {
	n := s.nodes[id]
	return n != nil && n.up && s.now < n.pausedUntil
}

func (s *simulation) tickFaults() {
	f := s.cfg.Faults
	if len(s.workers) == 0 {
		return
	}
	if f.Pause > 0 && s.rng.Float64() < f.Pause {
		n := s.nodes[s.order[s.rng.Intn(len(s.order))]]
		n.pausedUntil = s.now + 1 + s.rng.Int63n(2*workerConfig.LeaseTTL)
		s.tracef("%s paused until t=%d", n.id, n.pausedUntil)
	}
	if f.EtcdCut > 0 && s.rng.Float64() < f.EtcdCut {
		n := s.nodes[s.order[s.rng.Intn(len(s.order))]]
		n.etcdCutFrom, n.etcdCutTill = s.now, s.now+1+s.rng.Int63n(2*workerConfig.LeaseTTL)
		s.tracef("%s cut off from etcd until t=%d", n.id, n.etcdCutTill)
	}
}

func (s *simulation) receive(e envelope) error {
	if e.msg.To == cluster.ClientID {
		return s.client.ack(s, e.msg)
	}
	n := s.nodes[e.node]
	if n == nil || !n.up || (e.toIncarnation >= 0 && e.toIncarnation != n.incarnation) {
		return nil
	}
	if n.coord == nil && n.worker == nil {
		// A candidate that does not lead refuses the connection.
		if e.msg.Kind == cluster.MsgWrite {
			s.tracef("%s refuses %s: not the leader", n.id, e.msg)
			s.client.refuse(e.msg.Write)
		}
		return nil
	}
	msg := s.plantBug(n, e.msg)
	s.deliver(n, cluster.Event{Kind: cluster.EvRecv, Msg: msg})
	return s.drain()
}

func (s *simulation) plantBug(n *node, m cluster.Message) cluster.Message {
	if n.coord != nil {
		if s.cfg.Bug == BugAcceptOldRevision && m.Kind != cluster.MsgWrite && m.Rev < n.coord.Rev() {
			m.Rev = n.coord.Rev()
		}
		return m
	}
	switch s.cfg.Bug {
	case BugAcceptOldRevision:
		if m.Rev < n.worker.Rev() {
			m.Rev = n.worker.Rev()
		}
	case BugApplyBeforeCommit:
		if m.Kind == cluster.MsgPrepare && m.Committed < m.Epoch {
			m.Committed = m.Epoch
		}
	}
	return m
}

// deliver queues ev for n's current incarnation.
func (s *simulation) deliver(n *node, ev cluster.Event) {
	s.queue = append(s.queue, local{to: n.id, incarnation: n.incarnation, term: n.term, ev: ev})
}

// drain steps nodes through their queued events, performing their actions,
// until none is left; any node may crash between two steps.
func (s *simulation) drain() error {
	for len(s.queue) > 0 {
		if s.faults && s.cfg.Faults.Crash > 0 && s.rng.Float64() < s.cfg.Faults.Crash {
			s.crash(s.nodes[s.order[s.rng.Intn(len(s.order))]], 1+s.rng.Int63n(10))
		}
		l := s.queue[0]
		s.queue = s.queue[1:]
		n := s.nodes[l.to]
		if !n.up || n.incarnation != l.incarnation || n.term != l.term {
			continue
		}
		if l.ev.Kind == cluster.EvRecv {
			s.tracef("%s <- %s", n.id, l.ev.Msg)
		}
		var actions []cluster.Action
		switch {
		case n.coord != nil:
			n.coord.Step(l.ev)
			actions = n.coord.Ready()
		case n.worker != nil:
			n.worker.Step(l.ev)
			actions = n.worker.Ready()
		}
		for _, a := range actions {
			if err := s.perform(n, a); err != nil {
				return err
			}
		}
		if err := s.check.step(s); err != nil {
			return err
		}
	}
	return nil
}

func (s *simulation) start(n *node) {
	n.up = true
	n.incarnation++
	n.downUntil, n.pausedUntil, n.etcdCutTill = 0, 0, 0
	s.tracef("%s starts (incarnation %d)", n.id, n.incarnation)
	if n.candidate {
		n.coord, n.elect, n.leaderRev = nil, 0, 0
		s.campaign(n)
		return
	}
	n.worker = cluster.NewWorker(n.id, workerConfig, n.disk)
	for _, a := range n.worker.Ready() {
		_ = s.perform(n, a)
	}
}

func (s *simulation) crash(n *node, downFor int64) {
	if !n.up {
		return
	}
	n.up = false
	n.downUntil = s.now + downFor
	n.coord, n.worker = nil, nil
	n.elect, n.leaderRev = 0, 0 // its lease lives on in etcd until it expires
	s.tracef("%s crashes, down until t=%d", n.id, n.downUntil)
}

func (s *simulation) send(from cluster.NodeID, m cluster.Message) {
	e := envelope{msg: m, node: m.To, toIncarnation: -1}
	if m.To == cluster.CoordinatorID {
		c := s.coordinatorNode()
		e.node = c.id
		if m.Kind == cluster.MsgWrite {
			e.toIncarnation = c.incarnation
		}
	}
	f := Faults{}
	if s.faults {
		f = s.cfg.Faults
	}
	dropped, copies := s.net.send(e, s.now, f)
	if m.Kind == cluster.MsgWrite {
		s.client.sent(m.Write.ID, copies)
	}
	switch {
	case dropped:
		s.tracef("%s (lost)", m)
	case copies > 1:
		s.tracef("%s (duplicated)", m)
	}
}

// fail decides whether a request to a service fails.
func (s *simulation) fail(p float64) bool {
	return s.faults && p > 0 && s.rng.Float64() < p
}

var errUnavailable = errors.New("unavailable")

func (s *simulation) perform(n *node, a cluster.Action) error {
	switch a.Kind {
	case cluster.ActSend:
	case cluster.ActWriteAssignment, cluster.ActCommit, cluster.ActRecordCheckpoint:
		s.tracef("%s: %s and leader key rev=%d", n.id, a, n.leaderRev)
	default:
		s.tracef("%s: %s", n.id, a)
	}
	if err := s.check.action(s, n, a); err != nil {
		return err
	}
	if n.coord != nil && !s.leads(n) {
		s.result.Deposed++
	}
	switch a.Kind {
	case cluster.ActSend:
		s.send(n.id, a.Msg)
	case cluster.ActReadCluster, cluster.ActWriteAssignment, cluster.ActCommit,
		cluster.ActRecordCheckpoint, cluster.ActRegister, cluster.ActKeepAlive:
		s.etcdRequest(n, a)
	case cluster.ActAppendInput:
		data, _ := json.Marshal(a.Writes)
		ev := cluster.Event{Kind: cluster.EvInputAppended, Epoch: a.Epoch}
		if s.fail(s.cfg.Faults.StoreFail) {
			ev.Err = errUnavailable
			if s.rng.Intn(2) == 0 {
				s.store.putIfAbsent(cluster.InputKey(a.Epoch), data)
			}
		} else {
			stored, created := s.store.putIfAbsent(cluster.InputKey(a.Epoch), data)
			ev.OK = created
			_ = json.Unmarshal(stored, &ev.Writes)
		}
		s.deliver(n, ev)
	case cluster.ActReadInput, cluster.ActGetObject:
		key, kind := a.Key, cluster.EvObjectGot
		if a.Kind == cluster.ActReadInput {
			key, kind = cluster.InputKey(a.Epoch), cluster.EvInputRead
		}
		ev := cluster.Event{Kind: kind, Epoch: a.Epoch, Key: a.Key, Tag: a.Rev}
		data, ok := s.store.get(key)
		switch {
		case s.fail(s.cfg.Faults.StoreFail):
			ev.Err = errUnavailable
		case !ok:
			ev.Err = fmt.Errorf("%s: not found", key)
		default:
			ev.OK, ev.Data = true, data
		}
		s.deliver(n, ev)
	case cluster.ActPutObject:
		ev := cluster.Event{Kind: cluster.EvObjectPut, Key: a.Key, Tag: a.Rev}
		if s.fail(s.cfg.Faults.StoreFail) {
			ev.Err = errUnavailable
		} else {
			s.store.put(a.Key, a.Data)
			ev.OK = true
		}
		s.deliver(n, ev)
	case cluster.ActDiskPrepare:
		n.disk.Prepared = &cluster.Prepared{Epoch: a.Epoch, Delta: a.Delta}
	case cluster.ActDiskApply:
		if n.disk.State == nil {
			n.disk.State = cluster.Batch{}
		}
		cluster.Merge(n.disk.State, a.Delta)
		n.disk.Applied = a.Epoch
		n.disk.Prepared = nil
	case cluster.ActDiskReset:
		n.disk = cluster.Disk{State: a.State, Applied: a.Epoch}
	}
	return nil
}
