package sim

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/internal/cluster"
)

// etcdRequest performs a node's etcd request. A worker cut off from etcd
// gets errors; any request may fail at random, and a failed write takes
// effect half of the time (its response was lost).
func (s *simulation) etcdRequest(n *node, a cluster.Action) {
	cut := s.now < n.etcdCutTill
	failed := cut || s.fail(s.cfg.Faults.EtcdFail)
	applies := !cut && (!failed || s.rng.Intn(2) == 0)
	var ev cluster.Event
	switch a.Kind {
	case cluster.ActReadCluster:
		ev = s.readCluster()
	case cluster.ActWriteAssignment:
		ev = cluster.Event{Kind: cluster.EvAssignmentWritten}
		if applies {
			data, _ := json.Marshal(a.Assignment)
			ev.OK, ev.Rev = s.etcdTxn(
				[]compare{s.leaderCondition(n), {key: keyAssignment, modRev: int64(a.Rev)}},
				[]put{{key: keyAssignment, value: string(data)}})
			if ev.OK {
				s.check.assignments[ev.Rev] = a.Assignment
				s.result.Assignments++
			}
		}
	case cluster.ActCommit:
		ev = cluster.Event{Kind: cluster.EvCommitted, Epoch: a.Epoch}
		if applies {
			ev.OK, _ = s.etcdTxn(
				[]compare{s.leaderCondition(n), {key: keyAssignment, modRev: int64(a.Rev)},
					{key: keyCommitted, byValue: true, value: strconv.FormatUint(uint64(a.Epoch-1), 10)}},
				[]put{{key: keyCommitted, value: strconv.FormatUint(uint64(a.Epoch), 10)}})
		}
	case cluster.ActRecordCheckpoint:
		ev = cluster.Event{Kind: cluster.EvCheckpointRecorded, Epoch: a.Epoch}
		if applies {
			ev.OK, _ = s.etcdTxn(
				[]compare{s.leaderCondition(n), {key: keyAssignment, modRev: int64(a.Rev)}},
				[]put{{key: keyCheckpoint, value: strconv.FormatUint(uint64(a.Epoch), 10)}})
		}
	case cluster.ActRegister:
		ev = cluster.Event{Kind: cluster.EvRegistered, SentAt: a.SentAt}
		if applies {
			l := s.etcd.grant(s.now, workerConfig.LeaseTTL)
			s.etcd.txn(nil, []put{{key: prefixWorkers + string(n.id), value: strconv.FormatInt(int64(l), 10), lease: l}})
			ev.Lease = l
		}
	case cluster.ActKeepAlive:
		ev = cluster.Event{Kind: cluster.EvRenewed, Lease: a.Lease, SentAt: a.SentAt}
		if applies {
			ev.OK = s.etcd.keepAlive(a.Lease, s.now)
		}
	}
	if failed {
		ev.Err = errUnavailable
		ev.OK = false
	}
	s.deliver(n, ev)
}

func (s *simulation) etcdTxn(cmps []compare, puts []put) (bool, cluster.Revision) {
	ok, rev := s.etcd.txn(cmps, puts)
	return ok, cluster.Revision(rev)
}

func (s *simulation) readCluster() cluster.Event {
	ev := cluster.Event{Kind: cluster.EvClusterRead, Members: map[cluster.NodeID]cluster.LeaseID{}}
	for _, k := range s.etcd.rangePrefix(prefixWorkers) {
		v, _ := s.etcd.get(k)
		l, _ := strconv.ParseInt(v.value, 10, 64)
		ev.Members[cluster.NodeID(strings.TrimPrefix(k, prefixWorkers))] = cluster.LeaseID(l)
	}
	if v, ok := s.etcd.get(keyAssignment); ok {
		ev.Rev = cluster.Revision(v.modRev)
		ev.Assignment = s.check.assignments[ev.Rev] // decoded when written
		if ev.Assignment == nil {
			var a cluster.Assignment
			_ = json.Unmarshal([]byte(v.value), &a)
			ev.Assignment = &a
		}
	}
	ev.Committed = s.committed()
	v, _ := s.etcd.get(keyCheckpoint)
	c, _ := strconv.ParseUint(v.value, 10, 64)
	ev.Checkpoint = cluster.Epoch(c)
	return ev
}

// committed is the commit frontier etcd holds.
func (s *simulation) committed() cluster.Epoch {
	v, _ := s.etcd.get(keyCommitted)
	c, _ := strconv.ParseUint(v.value, 10, 64)
	return cluster.Epoch(c)
}
