// Package sim is the deterministic simulation of the cluster's protocol:
// coordinator candidates and N workers, the pure state machines of
// package cluster, run against a fake etcd (a linearizable key-value store
// with leases, revisions and conditional transactions), a fake object
// store (the input log and checkpoints) and a network that drops, delays,
// duplicates and reorders messages. The candidates elect a leader through
// etcd as package control's CoordinatorHost does (election.go); a leader
// cut off from etcd goes on as a zombie until a renewal fails. Every random choice comes from one
// seeded source, so a run is a function of its Config: a failing seed
// replays exactly (go test ./internal/sim -run 'TestSim$' -seed N prints
// its trace).
//
// Faults: any node crashes between any two steps and restarts later with
// only its disk; any node is paused (its process stopped) or cut off from
// etcd for a while; etcd requests fail, and a failed write takes effect
// half of the time; object store requests fail. After the faulty part of a
// run comes a healing part without faults.
//
// The views are a keyed sum per bucket, so their batch evaluation is a
// fold over the committed input log. Checked after every step:
//   - the commit frontier in etcd never moves back, every committed epoch
//     has its input log entry, and no write is in two committed epochs;
//   - an acknowledged write is in a committed epoch when its ack arrives
//     (so, with the above, no acknowledged write is lost or doubled);
//   - no worker's state or disk is ahead of the commit frontier;
//   - a serving worker serves an assignment etcd held at its revision, no
//     two workers serve one bucket at one revision, and its state equals
//     the batch evaluation of the log up to its applied epoch, restricted
//     to its buckets;
//   - when every member of etcd's assignment serves it at the frontier, the
//     union of their states equals the batch evaluation of everything
//     committed;
//   - a worker whose lease has expired in etcd prepares, applies, uploads
//     and reports nothing.
//
// And at the end (liveness): a write sent when faults stop is acknowledged
// within the healing part, and the workers reach the frontier together.
//
// Planted bugs (Config.Bug) live in the simulator's delivery, not in the
// state machines; the tests show that the checks above find each.
package sim
