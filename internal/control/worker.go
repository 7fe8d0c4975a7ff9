package control

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/rockstream/rockstream/internal/cluster"
)

// WorkerHostConfig configures a worker host.
type WorkerHostConfig struct {
	// ID is the worker's node ID, its membership key's name.
	ID cluster.NodeID
	// LeaseTTL is how long after sending a renewal the worker still
	// serves: its self-fencing deadline. It must not exceed the store's
	// lease TTL, so that the worker fences itself no later than etcd
	// expires its lease; the difference is the margin for the host's
	// delays between deciding and acting.
	LeaseTTL time.Duration
	// RenewEvery is how often the lease is renewed; less than LeaseTTL.
	RenewEvery time.Duration
	// Tick is how often the machine's clock advances when nothing else
	// happens; zero means 10 ms. It bounds how late a fence is noticed
	// when the worker is otherwise idle.
	Tick time.Duration
	// Logger receives the host's log lines; nil discards them.
	Logger *slog.Logger
	// Observe, when set, is called in the host's loop before each action
	// is performed, with the lease the machine holds at that moment (0
	// once it has fenced itself). It must not block.
	Observe func(lease cluster.LeaseID, a cluster.Action)
}

// WorkerHost drives a cluster.Worker: its lease and membership in etcd
// through a Store, the input log and checkpoints through Objects, messages
// through a Network and its prepared records and state on a Disk.
type WorkerHost struct {
	cfg   WorkerHostConfig
	mcfg  cluster.WorkerConfig
	host  *host
	query chan func()
	// machine is the running incarnation, read and written only by the
	// goroutine of Run (queries run there).
	machine *cluster.Worker
}

// NewWorkerHost returns a host of worker cfg.ID; Run starts it.
func NewWorkerHost(cfg WorkerHostConfig, store *Store, objects Objects, net Network, disk Disk) (*WorkerHost, error) {
	if cfg.ID == "" || cfg.ID == cluster.CoordinatorID || cfg.ID == cluster.ClientID {
		return nil, fmt.Errorf("control: invalid worker ID %q", cfg.ID)
	}
	if cfg.RenewEvery <= 0 || cfg.RenewEvery >= cfg.LeaseTTL {
		return nil, fmt.Errorf("control: worker %s: renewal interval %s must be positive and less than the lease TTL %s", cfg.ID, cfg.RenewEvery, cfg.LeaseTTL)
	}
	if etcdTTL := time.Duration(store.LeaseSeconds()) * time.Second; cfg.LeaseTTL > etcdTTL {
		return nil, fmt.Errorf("control: worker %s: lease TTL %s exceeds etcd's %s; the worker would serve past its lease", cfg.ID, cfg.LeaseTTL, etcdTTL)
	}
	h := newHost(cfg.ID, store, objects, net, cfg.Tick, cfg.Logger)
	h.disk = disk
	h.observe = cfg.Observe
	return &WorkerHost{
		cfg:   cfg,
		mcfg:  cluster.WorkerConfig{LeaseTTL: ticks(cfg.LeaseTTL), RenewEvery: ticks(cfg.RenewEvery)},
		host:  h,
		query: make(chan func()),
	}, nil
}

// Deliver hands the host a message addressed to its worker; it never
// blocks (a Receiver for LocalNetwork.Attach).
func (w *WorkerHost) Deliver(m cluster.Message) { w.host.deliver(m) }

// Run runs a new incarnation of the worker, starting from its disk, until
// ctx ends; it returns an error if a disk write fails. Stopping does not
// revoke the lease: the membership lasts until etcd expires it, as after a
// crash.
func (w *WorkerHost) Run(ctx context.Context) error {
	d, err := w.host.disk.Load()
	if err != nil {
		return err
	}
	w.machine = cluster.NewWorker(w.cfg.ID, w.mcfg, d)
	w.host.expired = func() bool {
		return w.machine.Lease() != 0 && w.host.now() >= w.machine.Deadline()
	}
	return w.host.run(ctx, w.machine, w.machine.Lease, nil, w.query)
}

// WorkerStatus is a worker's state as its machine holds it.
type WorkerStatus struct {
	Phase   string
	Lease   cluster.LeaseID
	Rev     cluster.Revision
	Serving bool
	Owned   [cluster.NumBuckets]bool
	Applied cluster.Epoch
	State   cluster.Batch
}

// Status reads the running worker's state; it fails if the worker does
// not answer before ctx ends (it is not running).
func (w *WorkerHost) Status(ctx context.Context) (WorkerStatus, error) {
	return inspect(ctx, w.query, func() WorkerStatus {
		m := w.machine
		owned, serving := m.Serving()
		st := WorkerStatus{Phase: m.Phase(), Lease: m.Lease(), Rev: m.Rev(), Serving: serving,
			Owned: owned, Applied: m.Applied(), State: cluster.Batch{}}
		cluster.Merge(st.State, m.State())
		return st
	})
}

// inspect runs read inside a host's loop, where the machine may be read,
// and returns its result.
func inspect[T any](ctx context.Context, query chan<- func(), read func() T) (T, error) {
	var zero T
	done := make(chan T, 1)
	select {
	case query <- func() { done <- read() }:
	case <-ctx.Done():
		return zero, fmt.Errorf("control: host not answering: %w", ctx.Err())
	}
	return <-done, nil
}
