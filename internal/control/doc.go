// Package control runs the cluster's state machines (package cluster) on
// real services: etcd for membership, leases, the election, the bucket
// assignment and the commit frontier; object storage for the epoch input
// log and checkpoints; a Network for messages; a worker's Disk for its
// prepared records and state.
//
//   - StartEmbedded runs a single-node etcd on loopback inside the process
//     (the control role's default); Connect reaches it or an external
//     cluster with clientv3. etcd's own logs go to slog, errors only by
//     default.
//   - Store performs the machines' etcd actions (ActReadCluster,
//     ActWriteAssignment, ActCommit, ActRecordCheckpoint, ActRegister,
//     ActKeepAlive) under the key layout of docs/format/cluster-etcd.md and
//     returns their result events.
//   - CoordinatorHost campaigns with clientv3/concurrency and, while it
//     leads, drives a cluster.Coordinator; WorkerHost drives a
//     cluster.Worker. Both feed their machine a real clock in ticks of
//     TickUnit.
//   - GRPCNetwork carries the machines' messages between processes: one
//     gRPC endpoint per process, advertised in etcd; LocalNetwork does it
//     within one. Client submits writes to the leading CoordinatorHost
//     and waits for their acknowledgements as the protocol's client node;
//     WriteOutcome finds, from a submission's Receipt, whether a write
//     whose acknowledgement did not come is committed, certainly never
//     will be, or is still unknown; ReadStatus reads etcd and asks every
//     worker's endpoint for its report; a coordinator host passes its
//     decisions, each with the reading that triggered it, to
//     CoordinatorHostConfig.Decide.
//   - ObjectStoreLocation and OpenObjects configure the object store from
//     ROCKSTREAM_OBJECT_STORE_* (s3://) or a local directory (file://).
//
// Invariants:
//   - Every write of the coordinator is one etcd transaction conditioned
//     on the assignment's modification revision (the fencing token) and on
//     the leader key's create revision, and the commit also on committed
//     being e-1: a coordinator whose election key is gone, or whose
//     revision moved, changes nothing. Its reads are conditioned on the
//     leader key too: a deposed coordinator learns no frontier past the
//     one of its term's end, so it can seal no epoch past the next one.
//   - A write is taken by one term of one coordinator host only
//     (CoordinatorHost.Submit, into the machine of the term leading then;
//     writes arriving as messages are dropped), so only that term can
//     seal it; this and the rule above are what a certain "not committed"
//     of WriteOutcome rests on.
//   - A result event has OK false without Err only when etcd answered that
//     a condition failed or a lease is gone; any other failure (a timeout,
//     a lost connection) is Err: the outcome is unknown and the machine
//     resolves it by reading again, as the simulator's half-applied
//     failures require.
//   - A worker's lease is renewed only by ActKeepAlive, one KeepAliveOnce
//     per action, never by clientv3's keepalive stream: the machine
//     decides when to renew and counts its deadline from the renewal's
//     send time. The worker's LeaseTTL is at most etcd's, its clock is
//     brought up to date before every event, and the host begins no action
//     with an effect (a disk write, an upload, a prepared, ready or
//     checkpoint report) once its clock has passed the machine's deadline,
//     so the worker stops no later than etcd expires the lease. An action
//     begun just before the deadline may finish after it; the difference
//     between the two TTLs is the margin for that.
//   - A host performs messages and disk writes in the order the machine
//     asked for them (a prepared record is durable before it is reported);
//     etcd and object store requests run in one lane each, in order, so a
//     request that hangs blocks neither the clock nor self-fencing. A
//     failed disk write stops the worker host, as a crash would.
//   - GRPCNetwork.Send never blocks: each destination has a bounded queue
//     and one stream; a full queue drops and a failed stream is reopened,
//     losing what it carried, as is one whose destination's address moved
//     (looked up every 250 ms: a new coordinator elected). Nothing relies
//     on delivery: the machines resend, and fence by the revision every
//     message carries.
//   - Client submits each write once: a write not acknowledged in time
//     has an unknown outcome, since resending it could commit it twice;
//     WriteOutcome settles it.
package control
