package control

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rockstream/rockstream/internal/cluster"
)

// StoreConfig sets the store's lease length and request bound.
type StoreConfig struct {
	// LeaseTTL is the lifetime of the leases ActRegister grants, rounded
	// up to whole seconds (etcd's unit); etcd may raise it to its least
	// TTL. A worker's WorkerConfig.LeaseTTL must not exceed it.
	LeaseTTL time.Duration
	// RequestTimeout bounds each request; a request that has not answered
	// by then has an unknown outcome. Zero means 2 s.
	RequestTimeout time.Duration
}

// Leadership is a coordinator's hold on the election: its leader key and
// that key's create revision. A conditional write of the coordinator
// succeeds only while the key exists with that create revision, so a
// deposed coordinator's writes fail.
type Leadership struct {
	Key string
	Rev int64
}

// Store performs the etcd actions of the cluster's state machines over
// clientv3, and returns their result events with the meaning the machines
// expect: OK false without Err is a definite refusal (a condition did not
// hold, a lease is gone), Err set is an unknown outcome (the request may
// have taken effect).
type Store struct {
	cli  *clientv3.Client
	keys Keys
	cfg  StoreConfig

	mu struct {
		sync.Mutex
		leader *Leadership // nil unless the coordinator holds the election
	}
}

// NewStore returns a store of the cluster whose keys are keys.
func NewStore(cli *clientv3.Client, keys Keys, cfg StoreConfig) *Store {
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = 2 * time.Second
	}
	return &Store{cli: cli, keys: keys, cfg: cfg}
}

// Keys is the store's key layout.
func (s *Store) Keys() Keys { return s.keys }

// SetLeader makes the coordinator's writes conditional on l; nil makes
// them fail.
func (s *Store) SetLeader(l *Leadership) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.leader = l
}

func (s *Store) leader() *Leadership {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.leader
}

// LeaseSeconds is the TTL, in etcd's whole seconds, of the leases the
// store grants.
func (s *Store) LeaseSeconds() int64 {
	return ttlSeconds(s.cfg.LeaseTTL)
}

// Bootstrap creates the commit frontier and checkpoint pointer at epoch 0
// unless they exist; the commit transaction compares the frontier's value,
// so it must exist before the first commit.
func (s *Store) Bootstrap(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	_, err := s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(s.keys.Committed()), "=", 0)).
		Then(clientv3.OpPut(s.keys.Committed(), "0"), clientv3.OpPut(s.keys.Checkpoint(), "0")).
		Commit()
	if err != nil {
		return fmt.Errorf("control: bootstrap %s: %w", s.keys.Prefix(), err)
	}
	return nil
}

// Perform performs one etcd action of node's machine and returns its
// result event. It panics on an action that is not an etcd request: that
// is a host's bug.
func (s *Store) Perform(ctx context.Context, node cluster.NodeID, a cluster.Action) cluster.Event {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	switch a.Kind {
	case cluster.ActReadCluster:
		if node == cluster.CoordinatorID {
			// The coordinator learns nothing from etcd once it is deposed,
			// so a deposed one cannot seal an epoch past the frontier it
			// knew when its term ended (the writes' outcome rests on it).
			l := s.leader()
			if l == nil {
				return cluster.Event{Kind: cluster.EvClusterRead, Err: errNotLeading}
			}
			ev, _ := s.readCluster(ctx, l)
			return ev
		}
		ev, _ := s.readCluster(ctx, nil)
		return ev
	case cluster.ActWriteAssignment:
		ev := cluster.Event{Kind: cluster.EvAssignmentWritten}
		data, err := EncodeAssignment(a.Assignment)
		if err != nil {
			ev.Err = err
			return ev
		}
		var rev int64
		ev.OK, rev, ev.Err = s.coordinatorTxn(ctx, a.Rev, nil, clientv3.OpPut(s.keys.Assignment(), string(data)))
		ev.Rev = cluster.Revision(rev)
		return ev
	case cluster.ActCommit:
		ev := cluster.Event{Kind: cluster.EvCommitted, Epoch: a.Epoch}
		prev := clientv3.Compare(clientv3.Value(s.keys.Committed()), "=", encodeEpoch(a.Epoch-1))
		ev.OK, _, ev.Err = s.coordinatorTxn(ctx, a.Rev, &prev, clientv3.OpPut(s.keys.Committed(), encodeEpoch(a.Epoch)),
			clientv3.OpPut(s.keys.CommittedAt(), encodeCommitTime(a.Epoch, time.Now())))
		return ev
	case cluster.ActRecordCheckpoint:
		ev := cluster.Event{Kind: cluster.EvCheckpointRecorded, Epoch: a.Epoch}
		ev.OK, _, ev.Err = s.coordinatorTxn(ctx, a.Rev, nil, clientv3.OpPut(s.keys.Checkpoint(), encodeEpoch(a.Epoch)))
		return ev
	case cluster.ActRegister:
		return s.register(ctx, node, a.SentAt)
	case cluster.ActKeepAlive:
		ev := cluster.Event{Kind: cluster.EvRenewed, Lease: a.Lease, SentAt: a.SentAt}
		_, err := s.cli.KeepAliveOnce(ctx, clientv3.LeaseID(a.Lease))
		switch {
		case err == nil:
			ev.OK = true
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			// The lease is gone: a definite answer, not a failure.
		default:
			ev.Err = fmt.Errorf("control: renew lease %x: %w", a.Lease, err)
		}
		return ev
	}
	panic(fmt.Sprintf("control: %s is not an etcd action", a))
}

// coordinatorTxn runs op if the assignment's revision is still rev, the
// extra condition holds and the coordinator still leads. It returns
// whether the conditions held and the revision after the transaction.
func (s *Store) coordinatorTxn(ctx context.Context, rev cluster.Revision, extra *clientv3.Cmp, ops ...clientv3.Op) (bool, int64, error) {
	l := s.leader()
	if l == nil {
		return false, 0, nil // not sent: refused, definitely not applied
	}
	cmps := []clientv3.Cmp{
		clientv3.Compare(clientv3.ModRevision(s.keys.Assignment()), "=", int64(rev)),
		clientv3.Compare(clientv3.CreateRevision(l.Key), "=", l.Rev),
	}
	if extra != nil {
		cmps = append(cmps, *extra)
	}
	resp, err := s.cli.Txn(ctx).If(cmps...).Then(ops...).Commit()
	if err != nil {
		return false, 0, fmt.Errorf("control: etcd transaction: %w", err)
	}
	return resp.Succeeded, resp.Header.Revision, nil
}

// errNotLeading fails a coordinator's read while it does not lead.
var errNotLeading = errors.New("control: this coordinator does not lead (its election key is gone)")

// readCluster reads membership, assignment, frontier, checkpoint pointer
// and the frontier's commit time in one transaction, so that they are of
// one revision; with l, only while l's election key exists (otherwise it
// fails with errNotLeading).
func (s *Store) readCluster(ctx context.Context, l *Leadership) (cluster.Event, CommitTime) {
	ev := cluster.Event{Kind: cluster.EvClusterRead}
	var at CommitTime
	txn := s.cli.Txn(ctx)
	if l != nil {
		txn = txn.If(clientv3.Compare(clientv3.CreateRevision(l.Key), "=", l.Rev))
	}
	resp, err := txn.Then(
		clientv3.OpGet(s.keys.Members(), clientv3.WithPrefix()),
		clientv3.OpGet(s.keys.Assignment()),
		clientv3.OpGet(s.keys.Committed()),
		clientv3.OpGet(s.keys.Checkpoint()),
		clientv3.OpGet(s.keys.CommittedAt()),
	).Commit()
	if err != nil {
		ev.Err = fmt.Errorf("control: read cluster: %w", err)
		return ev, at
	}
	if !resp.Succeeded {
		ev.Err = errNotLeading
		return ev, at
	}
	ev.Members = map[cluster.NodeID]cluster.LeaseID{}
	for _, kv := range resp.Responses[0].GetResponseRange().Kvs {
		id := cluster.NodeID(strings.TrimPrefix(string(kv.Key), s.keys.Members()))
		l, err := strconv.ParseInt(string(kv.Value), 10, 64)
		if err != nil || l != kv.Lease {
			ev.Err = fmt.Errorf("control: membership key %s holds %q, not its lease %d", kv.Key, kv.Value, kv.Lease)
			return ev, at
		}
		ev.Members[id] = cluster.LeaseID(l)
	}
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) == 1 {
		if ev.Assignment, err = DecodeAssignment(kvs[0].Value); err != nil {
			ev.Err = err
			return ev, at
		}
		ev.Rev = cluster.Revision(kvs[0].ModRevision)
	}
	if kvs := resp.Responses[2].GetResponseRange().Kvs; len(kvs) == 1 {
		if ev.Committed, err = decodeEpoch(s.keys.Committed(), kvs[0].Value); err != nil {
			ev.Err = err
			return ev, at
		}
	}
	if kvs := resp.Responses[3].GetResponseRange().Kvs; len(kvs) == 1 {
		if ev.Checkpoint, err = decodeEpoch(s.keys.Checkpoint(), kvs[0].Value); err != nil {
			ev.Err = err
			return ev, at
		}
	}
	if kvs := resp.Responses[4].GetResponseRange().Kvs; len(kvs) == 1 {
		if at, err = decodeCommitTime(s.keys.CommittedAt(), kvs[0].Value); err != nil {
			ev.Err = err
			return ev, at
		}
	}
	return ev, at
}

// register grants a lease and binds node's membership key to it.
func (s *Store) register(ctx context.Context, node cluster.NodeID, sentAt int64) cluster.Event {
	ev := cluster.Event{Kind: cluster.EvRegistered, SentAt: sentAt}
	g, err := s.cli.Grant(ctx, s.LeaseSeconds())
	if err != nil {
		ev.Err = fmt.Errorf("control: grant a lease for %s: %w", node, err)
		return ev
	}
	_, err = s.cli.Put(ctx, s.keys.Member(node), strconv.FormatInt(int64(g.ID), 10), clientv3.WithLease(g.ID))
	if err != nil {
		// The lease expires by itself if the revoke fails too.
		rctx, cancel := context.WithTimeout(context.Background(), s.cfg.RequestTimeout)
		_, _ = s.cli.Revoke(rctx, g.ID)
		cancel()
		ev.Err = fmt.Errorf("control: register %s: %w", node, err)
		return ev
	}
	ev.Lease = cluster.LeaseID(g.ID)
	return ev
}
