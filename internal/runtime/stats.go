package runtime

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rockstream/rockstream/internal/storage"
)

// observer is what an engine knows about itself for operators: its
// sessions and its counters. It never takes Engine.mu, so it may be read
// while a read or a commit holds it.
type observer struct {
	sessions sessionRegistry

	// epoch mirrors Engine.mu.epoch, for readers that must not take
	// Engine.mu.
	epoch atomic.Uint64
	// recovered is the epoch the engine recovered at Open.
	recovered uint64
	// lastCommit is when the last epoch committed (or the engine
	// opened), in Unix nanoseconds; commitTimes when each of the last
	// epochs committed (observe_console.go).
	lastCommit  atomic.Int64
	commitTimes commitTimes
	// durability is how the store commits; durableStore is false for a
	// store in memory.
	durability   storage.Durability
	durableStore bool
	// storageHealth is the store's Degraded, when it has one: why it
	// does not accept writes, since when, and whether it serves reads.
	storageHealth func() storage.Degradation

	mu struct {
		sync.Mutex
		epochsCommitted uint64
		commitSeconds   histogram
		statements      map[string]uint64 // by statementKind
		errors          map[string]uint64 // by SQLSTATE class
		rowsWritten     map[string]uint64 // by "insert", "update", "delete"
	}
}

// init records the state the engine opened with.
func (o *observer) init(store Store, epoch uint64) {
	o.epoch.Store(epoch)
	o.recovered = epoch
	o.lastCommit.Store(time.Now().UnixNano())
	if d, ok := store.(interface{ Durability() storage.Durability }); ok {
		o.durableStore = true
		o.durability = d.Durability()
	}
	if h, ok := store.(interface{ Degraded() storage.Degradation }); ok {
		o.storageHealth = h.Degraded
	}
	o.mu.commitSeconds = newHistogram(commitBuckets)
	o.mu.statements = map[string]uint64{}
	o.mu.errors = map[string]uint64{}
	o.mu.rowsWritten = map[string]uint64{}
}

// committed records a committed epoch and how long its commit took.
func (o *observer) committed(epoch uint64, d time.Duration) {
	o.epoch.Store(epoch)
	now := time.Now()
	o.lastCommit.Store(now.UnixNano())
	o.commitTimes.add(epoch, now)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.mu.epochsCommitted++
	o.mu.commitSeconds.observe(d.Seconds())
}

// statementDone counts a statement that ended with the command tag tag or
// the error err.
func (o *observer) statementDone(query, tag string, err error) {
	kind := statementKind(query, tag)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.mu.statements[kind]++
	if err != nil {
		o.mu.errors[sqlstateClass(err)]++
		return
	}
	if op, n, ok := rowsAffected(tag); ok {
		o.mu.rowsWritten[op] += n
	}
}

// copyDone counts the end of a COPY FROM STDIN's data, whose statement
// statementDone already counted.
func (o *observer) copyDone(tag string, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err != nil {
		o.mu.errors[sqlstateClass(err)]++
		return
	}
	if op, n, ok := rowsAffected(tag); ok {
		o.mu.rowsWritten[op] += n
	}
}

// rowsAffected reads the row count of an INSERT, UPDATE, DELETE or COPY
// command tag ("INSERT 0 3", "UPDATE 2", "COPY 5").
func rowsAffected(tag string) (string, uint64, bool) {
	word, rest, ok := strings.Cut(tag, " ")
	if !ok {
		return "", 0, false
	}
	var op string
	switch word {
	case "INSERT":
		op = "insert"
	case "UPDATE":
		op = "update"
	case "DELETE":
		op = "delete"
	case "COPY":
		op = "copy"
	default:
		return "", 0, false
	}
	n, err := strconv.ParseUint(rest[strings.LastIndexByte(rest, ' ')+1:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return op, n, true
}

// commitBuckets are the upper bounds, in seconds, of the commit duration
// histogram: from 100µs (a commit without fsync) to 10s (a stalled disk).
var commitBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// histogram counts observations in fixed buckets.
type histogram struct {
	bounds []float64
	counts []uint64 // counts[i]: observations ≤ bounds[i] and > bounds[i-1]; the last is above every bound
	count  uint64
	sum    float64
}

func newHistogram(bounds []float64) histogram {
	return histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i]++
	h.count++
	h.sum += v
}

// Histogram is a snapshot of a histogram of durations in seconds.
type Histogram struct {
	// Bounds are the buckets' upper bounds, ascending.
	Bounds []float64
	// Cumulative[i] counts the observations ≤ Bounds[i].
	Cumulative []uint64
	Count      uint64
	Sum        float64
}

func (h *histogram) snapshot() Histogram {
	s := Histogram{Bounds: h.bounds, Cumulative: make([]uint64, len(h.bounds)), Count: h.count, Sum: h.sum}
	var c uint64
	for i := range h.bounds {
		c += h.counts[i]
		s.Cumulative[i] = c
	}
	return s
}

// Stats is a snapshot of an engine's counters.
type Stats struct {
	// Epoch is the last committed epoch; RecoveredEpoch the one the engine
	// opened at.
	Epoch          uint64
	RecoveredEpoch uint64
	// DurableEpoch is the last epoch known to survive a machine crash:
	// Epoch with sync durability, RecoveredEpoch with relaxed durability
	// (its commits are not synced), and 0 with Durable false.
	DurableEpoch uint64
	Durable      bool
	// EpochsCommitted counts the epochs committed since Open, and
	// CommitSeconds how long each took to write and sync.
	EpochsCommitted uint64
	CommitSeconds   Histogram
	// Statements counts the statements run, by kind (select, insert,
	// update, delete, ddl, transaction, setting, explain, copy, subscribe,
	// other); Errors the failed ones by SQLSTATE class; RowsWritten the
	// rows that successful INSERT, UPDATE, DELETE and COPY FROM statements
	// reported, by "insert", "update", "delete" and "copy" (also those of
	// transaction blocks later rolled back, as PostgreSQL's n_tup_*
	// counters).
	Statements  map[string]uint64
	Errors      map[string]uint64
	RowsWritten map[string]uint64
	// Sessions is the number of open sessions.
	Sessions int
	// StorageProblem says why the storage does not accept writes (the
	// disk is full, a failed commit stopped it); empty when it does.
	// StorageProblemSince is when that began, and StorageReadsServed
	// whether reads are served meanwhile (while the disk is full) or
	// refused too (a failed write stopped the storage).
	StorageProblem      string
	StorageProblemSince time.Time
	StorageReadsServed  bool
}

// Stats returns a snapshot of the engine's counters.
func (e *Engine) Stats() Stats {
	o := &e.obs
	s := Stats{
		Epoch:          o.epoch.Load(),
		RecoveredEpoch: o.recovered,
		Durable:        o.durableStore,
		Sessions:       o.sessions.count(),
	}
	if o.durableStore {
		s.DurableEpoch = s.Epoch
		if o.durability == storage.Relaxed {
			s.DurableEpoch = o.recovered
		}
	}
	if o.storageHealth != nil {
		if g := o.storageHealth(); g.Problem != nil {
			s.StorageProblem = g.Problem.Error()
			s.StorageProblemSince, s.StorageReadsServed = g.Since, g.ReadsServed
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	s.EpochsCommitted = o.mu.epochsCommitted
	s.CommitSeconds = o.mu.commitSeconds.snapshot()
	s.Statements = copyCounts(o.mu.statements)
	s.Errors = copyCounts(o.mu.errors)
	s.RowsWritten = copyCounts(o.mu.rowsWritten)
	return s
}

func copyCounts(m map[string]uint64) map[string]uint64 {
	out := make(map[string]uint64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// StorageMetrics returns the metrics of a durable engine's store, and
// false for an engine in memory.
func (e *Engine) StorageMetrics() (storage.Metrics, bool) {
	e.mu.RLock()
	st := e.mu.store
	e.mu.RUnlock()
	m, ok := st.(interface{ Metrics() storage.Metrics })
	if !ok {
		return storage.Metrics{}, false
	}
	return m.Metrics(), true
}

// appliedAt returns the last committed epoch and when it committed (when
// the engine opened, for the epoch it recovered).
func (o *observer) appliedAt() (uint64, time.Time) {
	return o.epoch.Load(), time.Unix(0, o.lastCommit.Load())
}
