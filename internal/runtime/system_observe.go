package runtime

import (
	"net"
	"strconv"
	"time"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// The system relations that show what the engine is doing: its sessions,
// its materialized views' sizes and its frontier. docs/operations.md
// documents their columns.

// observedRelation returns the observability relation called name, or
// nil.
func (c *catalog) observedRelation(name string) *object {
	var cols []plan.Column
	var rows func(r state.Reader) (zset.Batch, error)
	switch name {
	case "rockstream_catalog.sessions":
		cols, rows = sessionColumns, func(state.Reader) (zset.Batch, error) { return sessionRows(c.eng), nil }
	case "rockstream_catalog.views":
		cols, rows = viewInfoColumns, func(r state.Reader) (zset.Batch, error) { return viewInfoRows(r, c) }
	case "rockstream_catalog.frontiers":
		cols, rows = frontierColumns, func(state.Reader) (zset.Batch, error) { return frontierRows(c.eng), nil }
	case "rockstream_catalog.progress":
		cols, rows = progressColumns, func(state.Reader) (zset.Batch, error) { return progressRows(c.eng), nil }
	case "rockstream_catalog.workers":
		cols, rows = workerColumns, func(state.Reader) (zset.Batch, error) { return workerRows(c.eng.Workers()), nil }
	case "rockstream_catalog.shards":
		cols, rows = shardColumns, func(state.Reader) (zset.Batch, error) { return shardRows(c.eng.Shards()), nil }
	default:
		return nil
	}
	if c.eng == nil {
		// A catalog being recovered has no engine yet; nothing reads it.
		return nil
	}
	return &object{name: name, kind: sql.Table, cols: cols, system: rows}
}

var sessionColumns = []plan.Column{
	{Name: "id", Type: types.Of(types.Int8)},
	{Name: "user_name", Type: types.Of(types.Text)},
	{Name: "database", Type: types.Of(types.Text)},
	{Name: "application_name", Type: types.Of(types.Text)},
	{Name: "client_addr", Type: types.Of(types.Text)},
	{Name: "client_port", Type: types.Of(types.Int4)},
	{Name: "state", Type: types.Of(types.Text)},
	{Name: "query", Type: types.Of(types.Text)},
	{Name: "query_start", Type: types.Of(types.TimestampTZ)},
	{Name: "backend_start", Type: types.Of(types.TimestampTZ)},
}

func sessionRows(e *Engine) zset.Batch {
	var out zset.Batch
	for _, s := range e.Sessions() {
		addr, port := types.Null, types.Null
		if s.Client.Addr != nil {
			host, p, err := net.SplitHostPort(s.Client.Addr.String())
			if err != nil {
				host = s.Client.Addr.String()
			}
			addr = types.MakeText(host)
			if n, err := strconv.Atoi(p); err == nil {
				port = types.MakeInt(types.Int4, int64(n))
			}
		}
		out = append(out, zset.Entry{Row: zset.Row{
			types.MakeInt(types.Int8, int64(s.ID)),
			textOrNull(s.Client.User), textOrNull(s.Client.Database),
			types.MakeText(s.Client.ApplicationName),
			addr, port,
			types.MakeText(string(s.State)),
			types.MakeText(s.Query),
			timeOrNull(s.QueryStart), timeOrNull(s.BackendStart),
		}, Weight: 1})
	}
	return out
}

var viewInfoColumns = []plan.Column{
	{Name: "view_name", Type: types.Of(types.Text)},
	{Name: "row_count", Type: types.Of(types.Int8)},
	{Name: "last_change_epoch", Type: types.Of(types.Int8)},
}

// ViewInfo describes one materialized view's state.
type ViewInfo struct {
	Name string
	// Rows is the number of rows in the view (count(*) over it).
	Rows int64
	// LastChange is the last epoch that changed the view's contents, and
	// 0 when none is within the change-log retention horizon.
	LastChange uint64
}

// viewInfos returns every materialized view of cat as stored in r, in
// creation order.
func viewInfos(r state.Reader, cat *catalog) ([]ViewInfo, error) {
	var out []ViewInfo
	for _, v := range cat.matviewsInOrder() {
		n, err := viewRows(r, v)
		if err != nil {
			return nil, err
		}
		last, _, err := lastChange(r, v.id)
		if err != nil {
			return nil, err
		}
		out = append(out, ViewInfo{Name: v.name, Rows: n, LastChange: last})
	}
	return out, nil
}

// Views returns every materialized view's committed state, in creation
// order.
func (e *Engine) Views() ([]ViewInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return viewInfos(currentReader{e.mu.store, e}, e.mu.cat)
}

func viewInfoRows(r state.Reader, c *catalog) (zset.Batch, error) {
	infos, err := viewInfos(r, c)
	if err != nil {
		return nil, err
	}
	var out zset.Batch
	for _, v := range infos {
		last := types.Null
		if v.LastChange != 0 {
			last = types.MakeInt(types.Int8, int64(v.LastChange))
		}
		out = append(out, zset.Entry{Row: zset.Row{
			types.MakeText(v.Name), types.MakeInt(types.Int8, v.Rows), last,
		}, Weight: 1})
	}
	return out, nil
}

var frontierColumns = []plan.Column{
	{Name: "shard", Type: types.Of(types.Int4)},
	{Name: "committed_epoch", Type: types.Of(types.Int8)},
	{Name: "durable_epoch", Type: types.Of(types.Int8)},
}

// frontierRows returns one row per shard; a single-node engine is one
// shard, numbered 0.
func frontierRows(e *Engine) zset.Batch {
	st := e.Stats()
	durable := types.Null
	if st.Durable {
		durable = types.MakeInt(types.Int8, int64(st.DurableEpoch))
	}
	return zset.Batch{{Row: zset.Row{
		types.MakeInt(types.Int4, 0), types.MakeInt(types.Int8, int64(st.Epoch)), durable,
	}, Weight: 1}}
}

// ObjectCounts returns how many tables, materialized views and views the
// committed catalog holds.
func (e *Engine) ObjectCounts() (tables, matviews, views int) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	for _, o := range e.mu.cat.byName {
		switch o.kind {
		case sql.Table:
			tables++
		case sql.MaterializedView:
			matviews++
		case sql.View:
			views++
		}
	}
	return tables, matviews, views
}

// showFrontier answers SHOW rockstream.frontier: the last committed epoch.
func (s *Session) showFrontier() *Result {
	return &Result{
		Columns: []Column{{Name: "rockstream.frontier", Type: types.Of(types.Text)}},
		Rows:    []zset.Row{{types.MakeText(strconv.FormatUint(s.eng.obs.epoch.Load(), 10))}},
		Tag:     "SHOW",
	}
}

func textOrNull(s string) types.Value {
	if s == "" {
		return types.Null
	}
	return types.MakeText(s)
}

func timeOrNull(t time.Time) types.Value {
	if t.IsZero() {
		return types.Null
	}
	return types.MakeTimestampTZ(t.UnixMicro())
}
