package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/rockstream/rockstream/internal/cluster"
)

// CoordinatorHostConfig configures a coordinator host.
type CoordinatorHostConfig struct {
	// Name is the candidate's value in the election (an address, say).
	Name string
	// SessionTTL is the lease of the election session, rounded up to
	// seconds: how long a coordinator that stopped renewing still leads.
	SessionTTL time.Duration
	// EpochEvery, PollEvery, Resend and CheckpointEvery are the
	// coordinator machine's pacing (cluster.CoordinatorConfig).
	EpochEvery, PollEvery, Resend time.Duration
	CheckpointEvery               cluster.Epoch
	// Tick is how often the machine's clock advances; zero means 10 ms.
	Tick time.Duration
	// Logger receives the host's log lines; nil discards them.
	Logger *slog.Logger
	// Decide, when set, receives each decision of the coordinator with the
	// reading that triggered it (for the audit log), in the host's loop:
	// it should not take long. Commits are passed at the first of each
	// assignment and then every CommitEvery epochs (default 100).
	Decide      func(Decision)
	CommitEvery cluster.Epoch
}

// CoordinatorHost campaigns in the etcd election and, while it leads,
// drives a cluster.Coordinator with a Store whose writes are conditioned
// on its leadership. When it loses the election it drops the machine and
// campaigns again; each leadership term runs a new incarnation.
type CoordinatorHost struct {
	cfg   CoordinatorHostConfig
	mcfg  cluster.CoordinatorConfig
	cli   *clientv3.Client
	host  *host
	query chan func()
	// machine is the incarnation of the current term, nil between terms,
	// and term that term's leader key revision; read and written only by
	// the goroutine of Run.
	machine *cluster.Coordinator
	termRev int64
	// leading is set while a term runs, for Submit to refuse at once
	// between terms.
	leading atomic.Bool
}

// NewCoordinatorHost returns a coordinator host; Run starts it. The
// network must deliver messages to cluster.CoordinatorID to the host that
// leads (Deliver); messages reaching a host that does not lead are lost.
func NewCoordinatorHost(cfg CoordinatorHostConfig, cli *clientv3.Client, store *Store, objects Objects, net Network) (*CoordinatorHost, error) {
	if cfg.EpochEvery <= 0 || cfg.PollEvery <= 0 || cfg.Resend <= 0 {
		return nil, errors.New("control: coordinator pacing (EpochEvery, PollEvery, Resend) must be positive")
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 5 * time.Second
	}
	return &CoordinatorHost{
		cfg: cfg,
		mcfg: cluster.CoordinatorConfig{EpochEvery: ticks(cfg.EpochEvery), PollEvery: ticks(cfg.PollEvery),
			Resend: ticks(cfg.Resend), CheckpointEvery: cfg.CheckpointEvery},
		cli:   cli,
		host:  newHost(cluster.CoordinatorID, store, objects, net, cfg.Tick, cfg.Logger),
		query: make(chan func()),
	}, nil
}

// Deliver hands the host a message addressed to the coordinator; it never
// blocks. Writes are not taken this way (they are dropped): they come
// through Submit, which hands them to one term's machine.
func (c *CoordinatorHost) Deliver(m cluster.Message) {
	if m.Kind == cluster.MsgWrite {
		return
	}
	c.host.deliver(m)
}

// Receipt says which term took a set of writes: the create revision of
// its leader key, and the commit frontier its machine knew when it took
// them. The writes can be in no input log entry at or below After, and in
// none sealed by another term.
type Receipt struct {
	Term  int64         `json:"term"`
	After cluster.Epoch `json:"after_epoch"`
}

// ErrNotLeading is Submit's error when the host does not lead.
var ErrNotLeading = errors.New("control: this coordinator does not lead the cluster")

// Submit hands writes to the machine of the current term and returns
// its receipt; it fails with ErrNotLeading unless the host leads (and
// answers) before ctx ends. A write is taken by at most one term: a term
// that ends forgets the writes it did not seal, and no later term of
// this host sees them.
func (c *CoordinatorHost) Submit(ctx context.Context, writes []cluster.Write) (Receipt, error) {
	type taken struct {
		r  Receipt
		ok bool
	}
	if !c.leading.Load() {
		return Receipt{}, ErrNotLeading
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	t, err := inspect(ctx, c.query, func() taken {
		if c.machine == nil {
			return taken{}
		}
		for _, w := range writes {
			c.machine.Step(cluster.Event{Kind: cluster.EvRecv, Msg: cluster.Message{Kind: cluster.MsgWrite, From: cluster.ClientID, To: cluster.CoordinatorID, Write: w}})
		}
		return taken{Receipt{Term: c.termRev, After: c.machine.Committed()}, true}
	})
	if err != nil || !t.ok {
		return Receipt{}, ErrNotLeading
	}
	return t.r, nil
}

// Run campaigns and leads until ctx ends; then it resigns.
func (c *CoordinatorHost) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		if err := c.term(ctx); err != nil && ctx.Err() == nil {
			c.host.log.Warn("coordinator term ended", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(c.host.tick):
			}
		}
	}
	return nil
}

// term wins the election once and leads until the session ends.
func (c *CoordinatorHost) term(ctx context.Context) error {
	// The session outlives ctx by its Close, which revokes its lease: a
	// stopping coordinator resigns at once rather than after the TTL.
	sctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := concurrency.NewSession(c.cli, concurrency.WithTTL(int(ttlSeconds(c.cfg.SessionTTL))), concurrency.WithContext(sctx))
	if err != nil {
		return fmt.Errorf("control: election session: %w", err)
	}
	defer s.Close()
	e := concurrency.NewElection(s, c.host.store.Keys().Election())
	if err := e.Campaign(ctx, c.cfg.Name); err != nil {
		return fmt.Errorf("control: campaign: %w", err)
	}
	store := c.host.store
	store.SetLeader(&Leadership{Key: e.Key(), Rev: e.Rev()})
	defer store.SetLeader(nil)
	if err := store.Bootstrap(ctx); err != nil {
		return err
	}
	c.host.log.Info("coordinator elected", "leader_key", e.Key(), "leader_rev", e.Rev())
	decide := c.cfg.Decide
	if decide == nil {
		decide = func(Decision) {}
	}
	decide(Decision{Kind: "elected", OK: true, Detail: fmt.Sprintf("%s leads with election key %s (term %d)", c.cfg.Name, e.Key(), e.Rev()),
		Reading: fmt.Sprintf("won the election at etcd revision %d", e.Rev())})
	d := newDecisions(c.cfg.CommitEvery)
	// The term's commits, each timed when it was asked of etcd: a commit
	// that succeeded took effect while the term led, however late its
	// answer is read.
	var commits int
	var asked, lastCommit time.Time
	c.host.observe = func(_ cluster.LeaseID, a cluster.Action) {
		if a.Kind == cluster.ActCommit {
			asked = time.Now()
		}
		for _, x := range d.action(a) {
			decide(x)
		}
	}
	c.host.observeEvent = func(ev cluster.Event) {
		if ev.Kind == cluster.EvCommitted && ev.OK && ev.Err == nil {
			commits++
			lastCommit = asked
		}
		for _, x := range d.event(ev) {
			decide(x)
		}
	}
	c.machine, c.termRev = cluster.NewCoordinator(c.mcfg), e.Rev()
	c.leading.Store(true)
	defer func() {
		c.leading.Store(false)
		c.machine, c.termRev = nil, 0
	}()
	err = c.host.run(ctx, c.machine, func() cluster.LeaseID { return 0 }, s.Done(), c.query)
	if err == nil && ctx.Err() == nil {
		err = errors.New("control: election session ended")
	}
	last := "none"
	if commits > 0 {
		last = lastCommit.UTC().Format(time.RFC3339Nano)
	}
	decide(Decision{Kind: "term ended", OK: true, Epoch: c.machine.Committed(),
		Detail:  fmt.Sprintf("term %d ended after %d commits, the last asked of etcd at %s: this control commits nothing more under it", e.Rev(), commits, last),
		Reading: termEndReading(ctx, err)})
	return err
}

// termEndReading says why a term ended.
func termEndReading(ctx context.Context, err error) string {
	if ctx.Err() != nil {
		return "the control process is stopping; it resigns"
	}
	return fmt.Sprintf("the election session ended: %v", err)
}

func ttlSeconds(d time.Duration) int64 {
	s := int64((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}

// CoordinatorStatus is what the leading coordinator's machine holds.
type CoordinatorStatus struct {
	Phase     string
	Rev       cluster.Revision
	Committed cluster.Epoch
	// Term is the create revision of the leader key it leads under.
	Term int64
}

// Status reads the leading coordinator's state; it fails if the host does
// not lead (or does not answer) before ctx ends.
func (c *CoordinatorHost) Status(ctx context.Context) (CoordinatorStatus, error) {
	return inspect(ctx, c.query, func() CoordinatorStatus {
		return CoordinatorStatus{Phase: c.machine.Phase(), Rev: c.machine.Rev(), Committed: c.machine.Committed(), Term: c.termRev}
	})
}
