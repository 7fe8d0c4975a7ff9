package sim

import (
	"github.com/rockstream/rockstream/internal/cluster"
)

// Coordinator candidates and their election, as package control's
// CoordinatorHost runs them on etcd: each candidate process holds a lease,
// renews it every electionRenewEvery ticks and campaigns by creating the
// leader key bound to it (a transaction that succeeds only while the key
// is absent). The winner runs a new coordinator machine for the term; its
// etcd writes are conditioned on the leader key's revision, so a deposed
// leader changes nothing. A leader learns that its term ended only when a
// renewal fails: until then, paused or cut off from etcd, it goes on as a
// zombie, sending messages under its revision.
var (
	electionTTL        = workerConfig.LeaseTTL
	electionRenewEvery = workerConfig.RenewEvery
)

// leaderKey holds the elected candidate's node id, bound to its lease.
const leaderKey = "/rockstream/leader"

// campaign is a candidate's election step at a tick: renew its lease
// when due (resigning if the lease has expired), take a new lease when it
// has none, and campaign while it does not lead. A candidate cut off from
// etcd can do none of it.
func (s *simulation) campaign(n *node) {
	if s.now < n.etcdCutTill {
		return
	}
	if n.elect != 0 && s.now-n.renewed >= electionRenewEvery {
		if !s.etcd.keepAlive(n.elect, s.now) {
			n.elect = 0
			if n.coord != nil {
				s.tracef("%s's election lease expired: its term ends", n.id)
				s.endTerm(n)
			}
		}
		n.renewed = s.now
	}
	if n.elect == 0 {
		n.elect = s.etcd.grant(s.now, electionTTL)
		n.renewed = s.now
	}
	if n.coord != nil {
		return
	}
	ok, rev := s.etcd.txn([]compare{{key: leaderKey, modRev: 0}},
		[]put{{key: leaderKey, value: string(n.id), lease: n.elect}})
	if !ok {
		return
	}
	n.leaderRev = rev
	s.result.Terms++
	s.tracef("%s elected (leader key rev %d)", n.id, rev)
	n.coord = cluster.NewCoordinator(coordConfig)
	for _, a := range n.coord.Ready() {
		_ = s.perform(n, a)
	}
}

// endTerm drops a candidate's coordinator machine; the events queued for
// it do not reach a later term's. Writes in flight to the process reach
// the next term's machine, or are refused while it does not lead.
func (s *simulation) endTerm(n *node) {
	n.coord, n.leaderRev = nil, 0
	n.term++
}

// leaderCondition is the condition every write of a coordinator carries:
// its leader key still exists at the revision it won it with.
func (s *simulation) leaderCondition(n *node) compare {
	return compare{key: leaderKey, modRev: n.leaderRev}
}

// coordinatorNode is where a message to the coordinator goes: the
// candidate etcd names as leader, or, while faults last, now and then a
// random candidate, as a sender with a stale view of the election would
// reach. Without a leader it goes to a random candidate, which drops it
// unless it runs a coordinator.
func (s *simulation) coordinatorNode() *node {
	if len(s.candidates) == 1 {
		return s.nodes[s.candidates[0]]
	}
	if v, ok := s.etcd.get(leaderKey); ok && !(s.faults && s.rng.Float64() < 0.1) {
		return s.nodes[cluster.NodeID(v.value)]
	}
	return s.nodes[s.candidates[s.rng.Intn(len(s.candidates))]]
}

// leads reports whether etcd still holds n's leader key.
func (s *simulation) leads(n *node) bool {
	v, ok := s.etcd.get(leaderKey)
	return ok && n.leaderRev != 0 && v.modRev == n.leaderRev
}
