package runtime

import (
	"encoding/binary"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
)

// Read-only accessors for observers of a running engine (the web console
// and the metrics of internal/admin): the catalog with its lineage, each
// materialized view's circuit with the state and the rows of each of its
// operators, and the connectors' status. Each answer is read under the
// engine's read lock from the committed state, like a query; nothing here
// writes.

// CatalogInfo is the committed catalog at one epoch.
type CatalogInfo struct {
	// Epoch is the last committed epoch, the frontier every relation is
	// consistent at.
	Epoch uint64
	// Relations are the tables, materialized views and views, by name.
	Relations []RelationInfo
	// Connectors are the sources and sinks, by name.
	Connectors []ConnectorInfo
}

// RelationInfo describes one table, materialized view or view.
type RelationInfo struct {
	Name string
	// Kind is "table", "materialized view" or "view".
	Kind    string
	Columns []ColumnInfo
	// Definition is a view's defining SELECT as written; empty for a
	// table.
	Definition string
	// Reads are the relations a view's definition names; ReadBy the
	// views whose definitions name this relation. Both by name.
	Reads, ReadBy []string
	// Sources are the sources writing a table, Sinks the sinks reading a
	// materialized view, by name.
	Sources, Sinks []string
	// Rows is a materialized view's row count; -1 for other relations
	// (counting a table's rows means reading it).
	Rows int64
	// Created is the epoch that created a materialized view (0 when not
	// known) and LastChange the last epoch that changed it (0 when none
	// is within the change-log retention).
	Created, LastChange uint64
}

// ColumnInfo is one column of a relation.
type ColumnInfo struct {
	Name, Type string
}

// ConnectorInfo is one source or sink with its status.
type ConnectorInfo struct {
	Name string
	Sink bool
	// Connector is its kind (kafka, postgres-cdc, ...), Target what it
	// writes or reads, Options its options with secrets redacted.
	Connector, Target, Options string
	// Running is false when no process of this engine runs it; Status
	// is then empty but for State ("stopped" or "paused").
	Running bool
	Status  ConnectorStatus
}

// Catalog returns the committed catalog with the lineage between its
// relations and the status of its connectors.
func (e *Engine) Catalog() (CatalogInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	cat := e.mu.cat
	r := currentReader{e.mu.store, e}
	info := CatalogInfo{Epoch: e.obs.epoch.Load()}
	readBy := map[string][]string{}
	for _, o := range cat.byName {
		for _, d := range o.deps {
			readBy[d] = append(readBy[d], o.name)
		}
	}
	sources, sinks := map[string][]string{}, map[string][]string{}
	for _, sp := range cat.connectorList() {
		switch {
		case sp.Sink:
			sinks[sp.Target] = append(sinks[sp.Target], sp.Name)
		default:
			for _, t := range append(append([]string(nil), sp.Tables...), sp.Target) {
				if t != "" {
					sources[t] = append(sources[t], sp.Name)
				}
			}
		}
	}
	for _, o := range cat.byName {
		ri := RelationInfo{Name: o.name, Kind: o.kindName(), Definition: o.sqlText, Rows: -1,
			Reads: uniqueSorted(o.deps), ReadBy: uniqueSorted(readBy[o.name]),
			Sources: uniqueSorted(sources[o.name]), Sinks: uniqueSorted(sinks[o.name])}
		for _, c := range o.cols {
			ri.Columns = append(ri.Columns, ColumnInfo{Name: c.Name, Type: c.Type.String()})
		}
		if o.kind == sql.MaterializedView {
			n, err := viewRows(r, o)
			if err != nil {
				return CatalogInfo{}, err
			}
			last, _, err := lastChange(r, o.id)
			if err != nil {
				return CatalogInfo{}, err
			}
			ri.Rows, ri.Created, ri.LastChange = n, o.created, last
		}
		info.Relations = append(info.Relations, ri)
	}
	sort.Slice(info.Relations, func(i, j int) bool { return info.Relations[i].Name < info.Relations[j].Name })
	for _, sp := range cat.connectorList() {
		ci := ConnectorInfo{Name: sp.Name, Sink: sp.Sink, Connector: sp.Connector, Target: sp.Target, Options: sp.Redacted()}
		switch {
		case sp.IntoSchema != "":
			ci.Target = "schema " + sp.IntoSchema
		case sp.AllTables:
			ci.Target = "all tables"
		case len(sp.Tables) > 0:
			ci.Target = strings.Join(sp.Tables, ", ")
		}
		ci.Status.State, ci.Status.Lag = "stopped", -1
		if sp.Paused {
			ci.Status.State = "paused"
		}
		if st, ok := e.connectorStatus(sp.Name); ok {
			ci.Running, ci.Status = true, st
			ci.Status.LastError = sp.RedactText(st.LastError)
		}
		info.Connectors = append(info.Connectors, ci)
	}
	return info, nil
}

func uniqueSorted(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	out := append([]string(nil), names...)
	sort.Strings(out)
	n := 0
	for i, s := range out {
		if i == 0 || s != out[n-1] {
			out[n] = s
			n++
		}
	}
	return out[:n]
}

// The state counts read the stored keys under the engine's read lock,
// which a commit waits for, so each is bounded: beyond its limit the
// counts are lower bounds and Complete is false. StateScanLimit bounds
// ViewCircuit, which reads one view when asked; MetricsStateScanLimit
// bounds each view of ViewStates, which reads every view at every
// scrape, one view at a time.
const (
	StateScanLimit        = 1 << 20
	MetricsStateScanLimit = 1 << 17
)

// StateSize is the stored state of a circuit or of one of its operators.
type StateSize struct {
	Keys, Bytes int64
}

// CircuitInfo is a materialized view's circuit, as a graph.
type CircuitInfo struct {
	View string
	// Epoch is the committed epoch the view is consistent at; LastChange
	// the last epoch that changed it (0: none within the change-log
	// retention).
	Epoch, LastChange uint64
	// Rows is the view's row count.
	Rows      int64
	Operators []OperatorInfo
	// State is the circuit's whole operator state; Complete is false
	// when counting it stopped at StateScanLimit keys.
	State    StateSize
	Complete bool
	// Explain is the circuit's EXPLAIN INCREMENTAL text.
	Explain string
}

// OperatorInfo is one operator of a circuit with the state it keeps.
type OperatorInfo struct {
	diff.Operator
	State StateSize
}

// ViewCircuit returns the circuit of the materialized view name with the
// stored state of each of its operators. A name that is not a
// materialized view fails with 42P01 or 42809.
func (e *Engine) ViewCircuit(name string) (CircuitInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	o := e.mu.cat.byName[strings.TrimPrefix(name, "public.")]
	switch {
	case o == nil:
		return CircuitInfo{}, errs.Newf(errs.UndefinedTable, "relation %q does not exist", name)
	case o.kind != sql.MaterializedView || o.circuit == nil:
		return CircuitInfo{}, errs.Newf(errs.WrongObjectType, "%q is a %s: only a materialized view has a circuit", name, o.kindName())
	}
	r := currentReader{e.mu.store, e}
	info := CircuitInfo{View: o.name, Epoch: e.obs.epoch.Load(), Explain: displayExplain(o.circuit.Explain())}
	var err error
	if info.Rows, err = viewRows(r, o); err != nil {
		return CircuitInfo{}, err
	}
	if info.LastChange, _, err = lastChange(r, o.id); err != nil {
		return CircuitInfo{}, err
	}
	ops := o.circuit.Operators()
	perOp, total, complete, err := operatorState(r, o.id, len(ops), StateScanLimit)
	if err != nil {
		return CircuitInfo{}, err
	}
	info.State, info.Complete = total, complete
	for i, op := range ops {
		info.Operators = append(info.Operators, OperatorInfo{Operator: op, State: perOp[i]})
	}
	return info, nil
}

// ViewState is one materialized view's stored operator state.
type ViewState struct {
	Name  string
	State StateSize
	// Complete is false when counting stopped at StateScanLimit keys.
	Complete bool
	// RowsProcessed counts the rows the view's circuit emitted (its
	// root operator) since the engine opened.
	RowsProcessed uint64
}

// ViewStates returns the stored state of every materialized view, in
// creation order, each counted up to MetricsStateScanLimit keys under a
// read lock of its own, so that commits wait for one view's count at
// most. A view dropped meanwhile is left out.
func (e *Engine) ViewStates() ([]ViewState, error) {
	e.mu.RLock()
	views := e.mu.cat.matviewsInOrder()
	e.mu.RUnlock()
	var out []ViewState
	for _, o := range views {
		if o.circuit == nil {
			continue
		}
		ops := o.circuit.Operators()
		e.mu.RLock()
		if e.mu.cat.byName[o.name] != o {
			e.mu.RUnlock()
			continue
		}
		_, total, complete, err := operatorState(currentReader{e.mu.store, e}, o.id, len(ops), MetricsStateScanLimit)
		e.mu.RUnlock()
		if err != nil {
			return nil, err
		}
		vs := ViewState{Name: o.name, State: total, Complete: complete}
		for _, op := range ops {
			if op.Root {
				vs.RowsProcessed = op.Rows
			}
		}
		out = append(out, vs)
	}
	return out, nil
}

// operatorState counts the keys and bytes (key and value) of the
// operator state of the materialized view with id, per operator of its
// circuit of n operators, reading at most limit keys (complete is false
// when it stopped there). A state key is relPrefix(nsOpState, id) |
// bucket | operator id (4 bytes) | ... (ops.Prefix); the keys of nested
// circuits count for the operator holding them.
func operatorState(r state.Reader, id uint64, n, limit int) ([]StateSize, StateSize, bool, error) {
	prefix := relPrefix(nsOpState, id)
	perOp := make([]StateSize, n)
	var total StateSize
	complete := true
	err := r.Scan(prefix, state.PrefixEnd(prefix), func(k, v []byte) bool {
		if total.Keys >= int64(limit) {
			complete = false
			return false
		}
		size := int64(len(k) + len(v))
		total.Keys++
		total.Bytes += size
		if rest := k[len(prefix):]; len(rest) >= 5 {
			if op := int(binary.BigEndian.Uint32(rest[1:5])); op < n {
				perOp[op].Keys++
				perOp[op].Bytes += size
			}
		}
		return true
	})
	return perOp, total, complete, err
}

// LastCommit returns when the engine last committed an epoch (advanced
// its frontier), or when it opened if it has not committed since.
func (e *Engine) LastCommit() time.Time { return e.obs.lastCommitTime() }

func (o *observer) lastCommitTime() time.Time { return time.Unix(0, o.lastCommit.Load()) }

// CommitTime returns when epoch committed, and false when it committed
// before the engine opened or too long ago to be remembered (more than
// commitTimesKept epochs before the last).
func (e *Engine) CommitTime(epoch uint64) (time.Time, bool) { return e.obs.commitTimes.at(epoch) }

// commitTimesKept is how many of the last epochs' commit times an engine
// remembers.
const commitTimesKept = 4096

// commitTimes remembers when each of the last commitTimesKept epochs
// committed, in a ring ordered by epoch (epochs only grow).
type commitTimes struct {
	mu     sync.Mutex
	epochs []uint64
	times  []time.Time
	next   int // the slot the next epoch takes once the ring is full
}

func (c *commitTimes) add(epoch uint64, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.epochs) < commitTimesKept {
		c.epochs = append(c.epochs, epoch)
		c.times = append(c.times, t)
		return
	}
	c.epochs[c.next], c.times[c.next] = epoch, t
	c.next = (c.next + 1) % commitTimesKept
}

func (c *commitTimes) at(epoch uint64) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.epochs)
	// The ring from its oldest slot (next) is in epoch order.
	i := sort.Search(n, func(i int) bool { return c.epochs[(c.next+i)%n] >= epoch })
	if i == n || c.epochs[(c.next+i)%n] != epoch {
		return time.Time{}, false
	}
	return c.times[(c.next+i)%n], true
}
