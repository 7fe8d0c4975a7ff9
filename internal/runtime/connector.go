package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/rockstream/rockstream/internal/connectors/spec"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/sql/ext"
	"github.com/rockstream/rockstream/internal/sql/pgparse"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/storage"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Sources and sinks are catalog entries of their own: a definition
// (spec.Spec) kept under its name in the catalog's connectors map and
// durably as a record under connectorKey, written in the epoch of the
// statement that creates, alters or drops it. The engine only stores
// definitions; whoever owns the engine runs them (internal/connectors),
// following the catalog through WaitConnectors, and reports their status
// through SetConnectorStatus.

// connectorRecordKind tags connector records in their checksummed
// envelope.
const connectorRecordKind byte = 'K'

func connectorKey(name string) []byte {
	return append([]byte{nsMeta, 'c', 'o', 'n', 'n', '/'}, name...)
}

// ConnectorStatus is what the process running a source or sink reports.
type ConnectorStatus struct {
	// State is starting, running, paused, retrying or failed.
	State string
	// Lag is how far behind the upstream the connector is (records), or
	// -1 when unknown.
	Lag int64
	// Throughput is records per second over the last interval.
	Throughput float64
	// Records and Errors count records handled and records rejected since
	// the process started.
	Records, Errors int64
	// LastError is the last error, secrets removed; empty when none.
	LastError string
	// Failures counts the times the connector failed (and was
	// restarted) since the process started.
	Failures int64
}

// SetConnectorStatus installs the function that reports a connector's
// status in rockstream_catalog.sources and .sinks; nil removes it.
func (e *Engine) SetConnectorStatus(f func(name string) (ConnectorStatus, bool)) {
	e.connStatus.Store(&f)
}

func (e *Engine) connectorStatus(name string) (ConnectorStatus, bool) {
	p := e.connStatus.Load()
	if p == nil || *p == nil {
		return ConnectorStatus{}, false
	}
	return (*p)(name)
}

// Connectors returns the definitions of every source and sink, sorted by
// name, and the catalog revision they belong to.
func (e *Engine) Connectors() ([]*spec.Spec, uint64) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.mu.cat.connectorList(), e.mu.cat.revision
}

// WaitConnectors waits until the catalog's revision differs from rev and
// returns the definitions then. It returns ctx's error when ctx ends, and
// an AdminShutdown error when the engine closes.
func (e *Engine) WaitConnectors(ctx context.Context, rev uint64) ([]*spec.Spec, uint64, error) {
	for {
		e.mu.RLock()
		if e.mu.closed {
			e.mu.RUnlock()
			return nil, 0, errs.New(errs.AdminShutdown, "the engine is shutting down")
		}
		if e.mu.cat.revision != rev {
			defer e.mu.RUnlock()
			return e.mu.cat.connectorList(), e.mu.cat.revision, nil
		}
		wait := e.mu.committed
		e.mu.RUnlock()
		select {
		case <-wait:
		case <-e.stop:
			return nil, 0, errs.New(errs.AdminShutdown, "the engine is shutting down")
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	}
}

// Stopping returns a channel closed when the engine begins to close.
func (e *Engine) Stopping() <-chan struct{} { return e.stop }

func (c *catalog) connectorList() []*spec.Spec {
	out := make([]*spec.Spec, 0, len(c.connectors))
	for _, s := range c.connectors {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// connectorOn returns a connector that reads or writes relation name.
func (c *catalog) connectorOn(name string) *spec.Spec {
	for _, s := range c.connectorList() {
		if s.Target == name {
			return s
		}
		if v, ok := s.Option("error_table"); ok && v == name {
			return s
		}
		for _, t := range s.Tables {
			if t == name {
				return s
			}
		}
	}
	return nil
}

func (s *Session) execConnector(ctx context.Context, st ext.Statement) (*Result, error) {
	c := st.Connector
	if st.Kind != ext.ShowConnectors && s.txn.readOnlyTxn() {
		return nil, errs.Newf(errs.ReadOnlyTransaction, "cannot execute %s in a read-only transaction", connectorStmtName(st.Kind, c.Sink))
	}
	switch st.Kind {
	case ext.ShowConnectors:
		return s.showConnectors(c.Sink)
	case ext.CreateConnector:
		return s.ddl(ctx, func(store state.Store, w *epochWrite) (*catalog, *Result, error) {
			return createConnector(store, w, c)
		})
	case ext.AlterConnector:
		return s.ddl(ctx, func(store state.Store, w *epochWrite) (*catalog, *Result, error) {
			return alterConnector(store, w.cat, c)
		})
	case ext.DropConnector:
		return s.ddl(ctx, func(store state.Store, w *epochWrite) (*catalog, *Result, error) {
			return dropConnector(store, w.cat, c)
		})
	}
	return nil, errs.New(errs.FeatureNotSupported, "this connector statement is not supported")
}

// connectorStmtName names a connector statement as its command tag does.
func connectorStmtName(k ext.Kind, sink bool) string {
	verb := map[ext.Kind]string{ext.CreateConnector: "CREATE", ext.AlterConnector: "ALTER", ext.DropConnector: "DROP"}[k]
	return verb + " " + strings.ToUpper(connectorWord(sink))
}

func connectorWord(sink bool) string {
	if sink {
		return "sink"
	}
	return "source"
}

func createConnector(st state.Store, w *epochWrite, c *ext.ConnectorStmt) (*catalog, *Result, error) {
	cat := w.cat
	what := connectorWord(c.Sink)
	tag := "CREATE " + map[bool]string{false: "SOURCE", true: "SINK"}[c.Sink]
	if cat.shard() != nil {
		// A connector is a task of one node, not of every shard.
		return nil, nil, unsupportedInShard(tag)
	}
	if old := cat.connectors[c.Name]; old != nil {
		if c.IfNotExists {
			return nil, &Result{Tag: tag}, nil
		}
		return nil, nil, errs.Newf(errs.DuplicateTable, "%s %q already exists", old.What(), c.Name)
	}
	sp := &spec.Spec{Name: c.Name, Sink: c.Sink, Connector: c.Connector, Target: c.Into,
		IntoSchema: c.IntoSchema, Tables: c.ForTables, AllTables: c.AllTables, Created: w.epoch}
	if c.Sink {
		sp.Target = c.From
	}
	for _, o := range c.Options {
		sp.Options = append(sp.Options, spec.Option{Key: o.Key, Value: o.Value})
	}
	kind, ok := spec.Lookup(c.Connector)
	if !ok || (c.Sink && !kind.Sink) || (!c.Sink && !kind.Source) {
		return nil, nil, errs.Newf(errs.FeatureNotSupported, "there is no %s connector %q; the %s connectors are %v", what, c.Connector, what, connectorKinds(c.Sink))
	}
	if kind.Validate != nil {
		if err := kind.Validate(sp); err != nil {
			return nil, nil, errs.New(errs.InvalidParameterValue, sp.RedactText(err.Error()))
		}
	}
	next := cat.clone()
	if errTable, ok := sp.Option("error_table"); ok && !c.Sink {
		if next.lookup(errTable) == nil {
			var err error
			if next, err = createErrorTable(st, next, errTable); err != nil {
				return nil, nil, err
			}
		} else if err := ingestTarget(next.lookup(errTable), errTable); err != nil {
			return nil, nil, err
		}
	}
	if c.Sink {
		o := next.lookup(sp.Target)
		switch {
		case o == nil:
			return nil, nil, errs.Newf(errs.UndefinedTable, "relation %q does not exist", sp.Target)
		case o.kind != sql.MaterializedView:
			return nil, nil, errs.Newf(errs.WrongObjectType, "cannot create a sink from %s %q: a sink reads the change log of a materialized view", o.kindName(), sp.Target)
		}
	} else {
		targets := append([]string(nil), sp.Tables...)
		if sp.Target != "" {
			targets = append(targets, sp.Target)
		}
		for _, t := range targets {
			if err := ingestTarget(next.lookup(t), t); err != nil {
				return nil, nil, err
			}
		}
	}
	if next.connectors == nil {
		next.connectors = map[string]*spec.Spec{}
	}
	next.connectors[sp.Name] = sp
	if err := writeConnector(st, sp); err != nil {
		return nil, nil, err
	}
	return next, &Result{Tag: tag}, nil
}

func connectorKinds(sink bool) []string {
	var out []string
	for _, n := range spec.Kinds() {
		k, _ := spec.Lookup(n)
		if (sink && k.Sink) || (!sink && k.Source) {
			out = append(out, n)
		}
	}
	return out
}

// createErrorTable creates a source's error table.
func createErrorTable(st state.Store, cat *catalog, name string) (*catalog, error) {
	text := fmt.Sprintf("CREATE TABLE %s %s", quoteIdent(name), ErrorTableColumns)
	tree, err := pgparse.Parse(text)
	if err != nil {
		return nil, errs.Newf(errs.InvalidParameterValue, "error_table %q is not a valid table name", name)
	}
	next, _, err := createTable(st, cat, text, tree.Stmts[0].Stmt.GetCreateStmt())
	return next, err
}

func alterConnector(st state.Store, cat *catalog, c *ext.ConnectorStmt) (*catalog, *Result, error) {
	old := cat.connectors[c.Name]
	if old == nil || old.Sink != c.Sink {
		return nil, nil, errs.Newf(errs.UndefinedObject, "%s %q does not exist", connectorWord(c.Sink), c.Name)
	}
	tag := "ALTER " + map[bool]string{false: "SOURCE", true: "SINK"}[c.Sink]
	if old.Paused == c.Pause {
		return nil, &Result{Tag: tag}, nil
	}
	sp := *old
	sp.Paused = c.Pause
	next := cat.clone()
	next.connectors[sp.Name] = &sp
	return next, &Result{Tag: tag}, writeConnector(st, &sp)
}

func dropConnector(st state.Store, cat *catalog, c *ext.ConnectorStmt) (*catalog, *Result, error) {
	tag := "DROP " + map[bool]string{false: "SOURCE", true: "SINK"}[c.Sink]
	old := cat.connectors[c.Name]
	if old == nil || old.Sink != c.Sink {
		if c.IfExists {
			return nil, &Result{Tag: tag}, nil
		}
		return nil, nil, errs.Newf(errs.UndefinedObject, "%s %q does not exist", connectorWord(c.Sink), c.Name)
	}
	next := cat.clone()
	delete(next.connectors, c.Name)
	if err := st.Delete(connectorKey(c.Name)); err != nil {
		return nil, nil, err
	}
	if err := st.Delete(progressKey(c.Name)); err != nil {
		return nil, nil, err
	}
	return next, &Result{Tag: tag}, nil
}

func writeConnector(st state.Store, sp *spec.Spec) error {
	payload, err := json.Marshal(sp)
	if err != nil {
		return err
	}
	return st.Set(connectorKey(sp.Name), storage.EncodeRecord(connectorRecordKind, catalogRecordVersion, payload))
}

// recoverConnectors loads the connector records into cat.
func recoverConnectors(st state.Reader, cat *catalog) error {
	lo := connectorKey("")
	hi := append(append([]byte(nil), lo[:len(lo)-1]...), lo[len(lo)-1]+1)
	var rerr error
	err := st.Scan(lo, hi, func(k, v []byte) bool {
		kind, version, payload, err := storage.DecodeRecord(v)
		if err == nil && (kind != connectorRecordKind || version != catalogRecordVersion) {
			err = errs.Newf(errs.DataCorrupted, "has kind %q version %d, which this build does not read", kind, version)
		}
		var sp spec.Spec
		if err == nil {
			err = json.Unmarshal(payload, &sp)
		}
		if err != nil {
			rerr = errs.Newf(errs.DataCorrupted, "connector record %q: %v", k[len(lo):], err)
			return false
		}
		if cat.connectors == nil {
			cat.connectors = map[string]*spec.Spec{}
		}
		cat.connectors[sp.Name] = &sp
		return true
	})
	if err == nil {
		err = rerr
	}
	return err
}

// showConnectors answers SHOW SOURCES and SHOW SINKS.
func (s *Session) showConnectors(sink bool) (*Result, error) {
	s.eng.mu.RLock()
	defer s.eng.mu.RUnlock()
	rows, err := connectorRows(s.eng.mu.cat, sink)
	if err != nil {
		return nil, err
	}
	res := &Result{Columns: outColumns(connectorColumns), Tag: fmt.Sprintf("SELECT %d", len(rows))}
	for _, e := range rows {
		res.Rows = append(res.Rows, e.Row)
	}
	return res, nil
}

// dropTargetCheck fails when a source or sink reads or writes o.
func (c *catalog) dropTargetCheck(o *object) error {
	if sp := c.connectorOn(o.name); sp != nil {
		return errs.Newf(errs.DependentObjects, "cannot drop %s %s because %s %s uses it; drop the %s first",
			o.kindName(), o.name, sp.What(), sp.Name, sp.What())
	}
	return nil
}

// connectorRowsOf is the row source of a connector system relation.
func connectorRowsOf(c *catalog, sink bool) func(state.Reader) (zset.Batch, error) {
	return func(state.Reader) (zset.Batch, error) { return connectorRows(c, sink) }
}

// connectorColumns are the columns of rockstream_catalog.sources and
// rockstream_catalog.sinks, and of SHOW SOURCES and SHOW SINKS.
var connectorColumns = []plan.Column{
	{Name: "name", Type: types.Of(types.Text)},
	{Name: "connector", Type: types.Of(types.Text)},
	{Name: "target", Type: types.Of(types.Text)},
	{Name: "state", Type: types.Of(types.Text)},
	{Name: "lag", Type: types.Of(types.Int8)},
	{Name: "throughput", Type: types.Of(types.Float8)},
	{Name: "records", Type: types.Of(types.Int8)},
	{Name: "errors", Type: types.Of(types.Int8)},
	{Name: "last_error", Type: types.Of(types.Text)},
	{Name: "options", Type: types.Of(types.Text)},
}

// connectorRows lists the sources (or sinks) of c with their status. A
// connector that no process in this engine runs is "stopped" (or
// "paused"), with unknown counters.
func connectorRows(c *catalog, sink bool) (zset.Batch, error) {
	var out zset.Batch
	for _, sp := range c.connectorList() {
		if sp.Sink != sink {
			continue
		}
		target := sp.Target
		switch {
		case sp.IntoSchema != "":
			target = "schema " + sp.IntoSchema
		case sp.AllTables:
			target = "all tables"
		case len(sp.Tables) > 0:
			target = strings.Join(sp.Tables, ", ")
		}
		row := zset.Row{types.MakeText(sp.Name), types.MakeText(sp.Connector), types.MakeText(target),
			types.MakeText("stopped"), types.Null, types.Null, types.Null, types.Null, types.Null,
			types.MakeText(sp.Redacted())}
		if sp.Paused {
			row[3] = types.MakeText("paused")
		}
		if c.statusOf != nil {
			if st, ok := c.statusOf(sp.Name); ok {
				row[3] = types.MakeText(st.State)
				if st.Lag >= 0 {
					row[4] = types.MakeInt(types.Int8, st.Lag)
				}
				row[5] = types.MakeFloat8(st.Throughput)
				row[6] = types.MakeInt(types.Int8, st.Records)
				row[7] = types.MakeInt(types.Int8, st.Errors)
				if st.LastError != "" {
					row[8] = types.MakeText(sp.RedactText(st.LastError))
				}
			}
		}
		out = append(out, zset.Entry{Row: row, Weight: 1})
	}
	return out, nil
}
