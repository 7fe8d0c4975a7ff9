// Package connectors runs the sources and sinks defined in an engine's
// catalog. The engine stores definitions (CREATE SOURCE, CREATE SINK); a
// Manager, started by whoever owns the engine, follows the catalog and
// runs each definition that is not paused in a goroutine of its own:
//
//   - a runner runs until its context ends or it fails; a failed runner is
//     restarted after an exponential backoff, its error kept in the
//     status;
//   - DROP, PAUSE and the manager's Close cancel the runner's context and
//     wait for it to return, so nothing of a dropped connector keeps
//     running;
//   - after a DROP (or a DROP and CREATE under the same name), once the
//     runner has returned and before any new runner of that name starts,
//     the kind's Drop hook releases what the connector holds outside
//     RockStream (a replication slot). It is best effort: a failure is
//     logged, and a connector dropped while no manager runs keeps its
//     external resources;
//   - exactly-once is the runner's business and rests on the engine: a
//     source commits its progress in the epoch that applies its records
//     (runtime.Engine.Ingest), a sink commits the epoch it delivered in
//     the external system's own transaction. A runner killed at any point
//     resumes from what was committed.
//
// Each kind of connector registers itself (Register) with its option
// validation (connectors/spec) and its runners.
package connectors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/rockstream/rockstream/internal/connectors/spec"
	"github.com/rockstream/rockstream/internal/runtime"
)

// Runner runs one source or sink until ctx ends (then it returns ctx's
// error or nil) or it fails.
type Runner func(ctx context.Context, env *Env) error

// Env is what a runner gets.
type Env struct {
	Engine *runtime.Engine
	Spec   *spec.Spec
	Status *Status
}

// Kind is a kind of connector: its option validation and its runners (nil
// for a direction it does not support).
type Kind struct {
	spec.Kind
	RunSource, RunSink Runner
	// Drop, when set, releases what a dropped connector holds outside
	// RockStream. It runs after the connector's runner has returned.
	Drop func(ctx context.Context, s *spec.Spec) error
}

var runners struct {
	sync.RWMutex
	kinds map[string]Kind
}

// Register adds a kind of connector.
func Register(k Kind) {
	k.Source = k.RunSource != nil
	k.Sink = k.RunSink != nil
	spec.Register(k.Kind)
	runners.Lock()
	defer runners.Unlock()
	if runners.kinds == nil {
		runners.kinds = map[string]Kind{}
	}
	runners.kinds[k.Name] = k
}

func lookup(name string) (Kind, bool) {
	runners.RLock()
	defer runners.RUnlock()
	k, ok := runners.kinds[name]
	return k, ok
}

// Options tunes a Manager.
type Options struct {
	// MinBackoff and MaxBackoff bound the wait before a failed runner is
	// restarted; 0 means 200ms and 30s.
	MinBackoff, MaxBackoff time.Duration
	// Logger gets one line per change of a connector's state
	// (statelog.go); nil means slog.Default().
	Logger *slog.Logger
}

// Manager runs an engine's connectors.
type Manager struct {
	eng    *runtime.Engine
	opts   Options
	cancel context.CancelFunc
	done   chan struct{}

	mu struct {
		sync.Mutex
		// running holds the connectors that have a runner, by name.
		running map[string]*instance
		// status holds every connector's status, by name, running or
		// not.
		status map[string]*Status
	}
}

// instance is one running connector.
type instance struct {
	spec   *spec.Spec
	cancel context.CancelFunc
	done   chan struct{}
}

// Start begins running eng's connectors and keeps following its catalog
// until Close.
func Start(eng *runtime.Engine, opts Options) *Manager {
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 200 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{eng: eng, opts: opts, cancel: cancel, done: make(chan struct{})}
	m.mu.running = map[string]*instance{}
	m.mu.status = map[string]*Status{}
	eng.SetConnectorStatus(m.status)
	specs, rev := eng.Connectors()
	m.reconcile(specs)
	go m.follow(ctx, rev)
	return m
}

// Close stops every connector and waits for their runners to return. Call
// it before closing the engine.
func (m *Manager) Close() error {
	m.cancel()
	<-m.done
	m.stopAll()
	m.eng.SetConnectorStatus(nil)
	return nil
}

func (m *Manager) follow(ctx context.Context, rev uint64) {
	defer close(m.done)
	for {
		specs, next, err := m.eng.WaitConnectors(ctx, rev)
		if err != nil {
			return
		}
		rev = next
		m.reconcile(specs)
	}
}

// reconcile starts the connectors of specs that should run and are not
// running, and stops those running that should not. The connectors whose
// definition is gone are released (Kind.Drop) after their runner stopped
// and before a new definition of the same name starts.
func (m *Manager) reconcile(specs []*spec.Spec) {
	want := map[string]*spec.Spec{}
	for _, s := range specs {
		want[s.Name] = s
	}
	m.mu.Lock()
	var stop []*instance
	for name, in := range m.mu.running {
		s := want[name]
		if s == nil || s.Paused || s.Created != in.spec.Created {
			stop = append(stop, in)
			delete(m.mu.running, name)
		}
	}
	var dropped []*spec.Spec
	for name, st := range m.mu.status {
		if s := want[name]; s == nil || s.Created != st.spec.Created {
			dropped = append(dropped, st.spec)
			delete(m.mu.status, name)
		}
	}
	m.mu.Unlock()
	// Stop and release outside the lock: a runner may be blocked on the
	// engine, a release on the external system.
	for _, in := range stop {
		in.cancel()
		<-in.done
	}
	for _, s := range dropped {
		m.logDropped(s)
		m.release(s)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, s := range want {
		st := m.mu.status[name]
		if st == nil {
			st = newStatus(s)
			st.eng = m.eng
			m.mu.status[name] = st
		}
		if s.Paused {
			// Nothing measures how far behind a paused connector falls.
			st.setLogger(m.opts.Logger)
			st.setState("paused")
			st.logChange()
			st.SetLag(-1)
			continue
		}
		if m.mu.running[name] == nil {
			ctx, cancel := context.WithCancel(context.Background())
			in := &instance{spec: s, cancel: cancel, done: make(chan struct{})}
			m.mu.running[name] = in
			go m.run(ctx, in, st)
		}
	}
}

// stopAll stops every runner without releasing anything: the connectors
// still exist and resume at the next start.
func (m *Manager) stopAll() {
	m.mu.Lock()
	running := m.mu.running
	m.mu.running = map[string]*instance{}
	m.mu.Unlock()
	for _, in := range running {
		in.cancel()
		<-in.done
	}
}

// releaseTimeout bounds how long a dropped connector's release may take.
const releaseTimeout = 30 * time.Second

// release runs the Drop hook of a dropped connector's kind.
func (m *Manager) release(s *spec.Spec) {
	k, ok := lookup(s.Connector)
	if !ok || k.Drop == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if err := k.Drop(ctx, s); err != nil {
		m.opts.Logger.Warn("releasing a dropped connector", "name", s.Name, "connector", s.Connector, "error", s.RedactText(err.Error()))
	}
}

// run runs one connector, restarting it after failures.
func (m *Manager) run(ctx context.Context, in *instance, st *Status) {
	defer close(in.done)
	st.setLogger(m.opts.Logger)
	backoff := m.opts.MinBackoff
	for {
		st.setState("starting")
		st.logChange()
		err := m.runOnce(ctx, in.spec, st)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errors.New("the connector stopped")
		}
		st.fail(in.spec.RedactText(err.Error()))
		st.failed()
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff *= 2
		if backoff > m.opts.MaxBackoff {
			backoff = m.opts.MaxBackoff
		}
	}
}

// runOnce runs the connector's runner once, turning a panic into an error
// so that a bad record cannot take the server down.
func (m *Manager) runOnce(ctx context.Context, s *spec.Spec, st *Status) (err error) {
	k, ok := lookup(s.Connector)
	run := k.RunSource
	if s.Sink {
		run = k.RunSink
	}
	if !ok || run == nil {
		return fmt.Errorf("this server has no %s connector %q", s.What(), s.Connector)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the %s failed: %v", s.What(), r)
		}
	}()
	return run(ctx, &Env{Engine: m.eng, Spec: s, Status: st})
}

// status reports a connector's status to the engine's system relations.
func (m *Manager) status(name string) (runtime.ConnectorStatus, bool) {
	m.mu.Lock()
	st := m.mu.status[name]
	m.mu.Unlock()
	if st == nil {
		return runtime.ConnectorStatus{}, false
	}
	return st.snapshot(), true
}

// Status is a running connector's status, updated by its runner.
type Status struct {
	// spec is the definition the status belongs to.
	spec *spec.Spec
	// eng, when set, gets the state changes for its audit log (audit.go).
	eng *runtime.Engine
	// audited is the last state (and error) recorded there.
	audited struct {
		sync.Mutex
		state, err string
	}

	mu struct {
		sync.Mutex
		state     string
		lag       int64
		records   int64
		errors    int64
		lastError string
		// failures counts the runner's failures; log, logged and
		// loggedErr are where and what logChange last logged
		// (statelog.go).
		failures          int64
		log               *slog.Logger
		logged, loggedErr string
		// The throughput is records over the time between the last two
		// samples.
		sampleAt      time.Time
		sampleRecords int64
		rate          float64
	}
}

func newStatus(def *spec.Spec) *Status {
	s := &Status{spec: def}
	s.mu.state = "starting"
	s.mu.lag = -1
	s.mu.sampleAt = time.Now()
	return s
}

func (s *Status) setState(state string) {
	s.mu.Lock()
	s.mu.state = state
	s.mu.Unlock()
	s.audit(state, "")
}

// Running marks the connector running: connected and making progress.
func (s *Status) Running() {
	s.setState("running")
	s.logChange()
}

func (s *Status) fail(msg string) {
	s.mu.Lock()
	s.mu.state = "failed"
	s.mu.lastError = msg
	s.mu.Unlock()
	s.audit("failed", msg)
}

// Report adds records handled and records rejected; err, when not nil,
// becomes the last error.
func (s *Status) Report(records, rejected int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.records += records
	s.mu.errors += rejected
	if err != nil {
		s.mu.lastError = err.Error()
	}
}

// SetLag records how far behind the upstream the connector is; -1 when
// unknown.
func (s *Status) SetLag(lag int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.lag = lag
}

// Counts returns the records and errors counted so far.
func (s *Status) Counts() (records, errors int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.records, s.mu.errors
}

func (s *Status) snapshot() runtime.ConnectorStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if d := now.Sub(s.mu.sampleAt); d >= time.Second {
		s.mu.rate = float64(s.mu.records-s.mu.sampleRecords) / d.Seconds()
		s.mu.sampleAt = now
		s.mu.sampleRecords = s.mu.records
	}
	return runtime.ConnectorStatus{State: s.mu.state, Lag: s.mu.lag, Throughput: s.mu.rate,
		Records: s.mu.records, Errors: s.mu.errors, LastError: s.mu.lastError, Failures: s.mu.failures}
}
