// Package cluster holds the pure state machines of the cluster's protocol:
// the coordinator's (membership, bucket placement, two-phase epochs,
// barrier checkpoints, failover) and the worker's (lease, reset and
// replay, prepare and apply, self-fencing). Neither keeps a clock, starts a
// goroutine or does I/O: the host feeds events (a tick with its time, a
// message, the result of an etcd, object store or disk request) through
// Step and performs the actions Ready returns, in order, feeding their
// results back as events — etcd raft's Ready/Advance style. Package sim is
// such a host, with fakes and faults; package control is the host on real
// etcd, object storage and gRPC between processes (the engine is not
// connected yet).
//
// The protocol, for epoch e under assignment revision r:
//
//  1. The coordinator seals its pending writes as e and appends them to
//     the input log, an if-absent put: an entry, once written, is final.
//  2. Each worker reads the entry, computes its buckets' batch, keeps it as
//     a durable prepared record and reports prepared(e, r).
//  3. When every member of the assignment has, the coordinator commits in
//     etcd: committed = e if the assignment's revision is still r and
//     committed is e-1. Only then are e's writes acknowledged.
//  4. Workers learn the frontier from any message of revision r and apply
//     their prepared batch.
//
// Every epoch divisible by CheckpointEvery is a barrier: workers upload
// their buckets' state, the coordinator writes a manifest and records it in
// etcd. A membership change (a lease expired, a worker registered under a
// new lease) makes the coordinator place the buckets again and write the
// assignment under a conditional transaction; its new etcd revision is the
// fencing token. Every member then resets to the last recorded checkpoint
// and replays the input log to the frontier before it serves.
//
// Invariants (checked by package sim after every step):
//   - a worker's state is the batch evaluation of the committed input log
//     up to its applied epoch, restricted to its buckets, and is never
//     ahead of the commit frontier in etcd;
//   - a write is acknowledged only when the epoch holding it is committed,
//     and no write is in two committed epochs;
//   - messages of an older revision are refused, and a worker serves only
//     an assignment that names its current lease;
//   - a worker whose lease may have expired (by its own clock, which runs
//     no later than etcd's) does nothing more under it.
package cluster
