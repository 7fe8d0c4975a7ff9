package runtime

import (
	"context"
	"io"
	"strconv"
	"sync"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/memgov"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql/ext"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// RowStream is the result of an ad-hoc query that is sent as it is
// produced (Session.ExecStreaming): a scan with filters and projections,
// perhaps under a LIMIT. The relation is read, within its key ranges,
// when the statement runs, as for any query; its rows are then filtered
// and projected a chunk at a time, as the caller asks for them, so that
// the result is never held whole and a LIMIT stops the work when it is
// reached.
type RowStream struct {
	// scan, when not nil, makes the rows (a query over a scan:
	// streamQuery; it points to scanState), and next and more are nil.
	scan      *scanStream
	scanState scanStream
	// next returns the next chunk's rows, io.EOF after the last.
	next func(ctx context.Context) ([]zset.Row, error)
	// more reports whether next may return rows yet.
	more func() bool
	// close, when not nil, releases what the stream holds (a spilled
	// sort's runs, spillsort.go).
	close func() error
	sess  *Session
	rows  int64
}

// Close releases what the stream holds once it is no longer read: at its
// end, after an error, or when its reader gives up. Closing twice does
// nothing.
func (r *RowStream) Close() error {
	if r == nil || r.close == nil {
		return nil
	}
	c := r.close
	r.close = nil
	return c()
}

// A RowStream filters and projects at most streamChunk input rows at a
// time, fewer when its rows are wide: it aims at streamChunkBytes of
// output per chunk.
const (
	streamChunk      = 4096
	streamChunkBytes = 4 << 20
)

// rowsBytes estimates the memory of rows.
func rowsBytes(rows []zset.Row) int64 {
	var n int64
	for _, r := range rows {
		n += entryBytes + int64(len(r))*valueBytes
		for _, v := range r {
			n += int64(len(v.Str()))
		}
	}
	return n
}

// Next returns the next rows of the result, at least one, and io.EOF
// after the last. When ctx ends it stops with the cancellation's error
// (57014, or the *errs.Error given as ctx's cause); its memory is the
// governor's as a statement's is. A failure inside a transaction block
// fails the block.
func (r *RowStream) Next(ctx context.Context) (rows []zset.Row, err error) {
	ctx, acct := r.sess.openAccount(ctx)
	defer acct.Close()
	defer func() {
		if p := recover(); p != nil {
			rows, err = nil, errs.Newf(errs.Internal, "internal error: %v", p)
		}
		if err != nil && err != io.EOF {
			err = statementError(ctx, err)
			r.sess.FailTransaction()
		}
	}()
	for {
		var rows []zset.Row
		var err error
		if r.scan != nil {
			rows, err = r.scan.next(ctx)
		} else {
			rows, err = r.next(ctx)
		}
		if err != nil {
			return nil, err
		}
		if len(rows) > 0 {
			r.rows += int64(len(rows))
			return rows, nil
		}
	}
}

// More reports whether Next may return more rows; false means that it
// returns io.EOF. A stream that cannot tell (no more func) says true,
// and its Next then answers.
func (r *RowStream) More() bool {
	if r.scan != nil {
		return r.scan.more()
	}
	return r.more == nil || r.more()
}

// Tag returns the statement's command tag for the rows Next returned.
func (r *RowStream) Tag() string { return "SELECT " + strconv.FormatInt(r.rows, 10) }

// linearScan returns the single relation p reads when p is a chain of
// filters and projections over a scan, with at most a LIMIT on top (no
// ORDER BY): a plan whose result can be made a chunk of input at a time.
func linearScan(p plan.Node) (limit *plan.Limit, ok bool) {
	if l, isLimit := p.(*plan.Limit); isLimit {
		limit, p = l, l.Input
	}
	for {
		switch n := p.(type) {
		case *plan.Scan:
			return limit, true
		case *plan.Filter:
			p = n.Input
		case *plan.Project:
			p = n.Input
		default:
			return nil, false
		}
	}
}

// streamQuery returns the RowStream of query plan p when it can be made
// one (linearScan) over a stored relation, reading the relation's rows
// now from r; ok is false when it cannot.
func (s *Session) streamQuery(ctx context.Context, r state.Reader, cat *catalog, p plan.Node) (rs *RowStream, ok bool, err error) {
	limit, ok := linearScan(p)
	if !ok || limit != nil && limit.Count == 0 {
		return nil, false, nil
	}
	c, err := queryCircuit(ctx, p)
	if err != nil {
		return nil, false, err
	}
	rel, one := c.SoleRelation()
	if !one {
		return nil, false, nil
	}
	o := cat.lookup(rel)
	if o == nil || o.system != nil {
		return nil, false, nil
	}
	var input zset.Batch
	par := cat.parallelism()
	if ranges, ranged := condRanges(o, keptScanConds(ctx, p, o)); ranged {
		input, err = relationRangesAt(ctx, r, o, asOfNow, ranges, par)
	} else {
		input, err = readContentsOn(ctx, r, o, par)
	}
	if err != nil {
		return nil, true, err
	}
	rs = &RowStream{sess: s}
	st := &rs.scanState
	*st = scanStream{c: c, name: o.name, input: input, left: -1, size: 256}
	if limit != nil {
		st.skip, st.left = limit.Offset, limit.Count
	}
	rs.scan = st
	return rs, true, nil
}

// scanStream makes a RowStream's rows from the rows read of one relation,
// stepping the query's circuit over a chunk of them at a time.
type scanStream struct {
	c     *diff.Circuit
	name  string // the relation's, the circuit's input
	input zset.Batch
	// skip are the rows still to skip (OFFSET), left the rows still to
	// return (LIMIT; -1: all).
	skip, left int64
	// size is the next chunk's input rows: at first 256, before the
	// rows' width is known.
	size int
}

// stepInputs holds empty input maps of one relation for scanStream's
// steps: a circuit's Step does not keep its input map.
var stepInputs = sync.Pool{New: func() any { return make(map[string]zset.Batch, 1) }}

func (st *scanStream) more() bool { return len(st.input) > 0 && st.left != 0 }

func (st *scanStream) next(ctx context.Context) ([]zset.Row, error) {
	if len(st.input) == 0 || st.left == 0 {
		st.input = nil
		return nil, io.EOF
	}
	chunk := st.input[:min(st.size, len(st.input))]
	st.input = st.input[len(chunk):]
	if err := memgov.From(ctx).Grow(batchBytes(chunk)); err != nil {
		return nil, err
	}
	in := stepInputs.Get().(map[string]zset.Batch)
	in[st.name] = chunk
	out, err := st.c.Step(ctx, queryState(ctx), in)
	clear(in)
	stepInputs.Put(in)
	if err != nil {
		return nil, err
	}
	var rows []zset.Row
	for _, e := range out {
		if e.Weight < 0 {
			return nil, errs.New(errs.Internal, "internal error: query result has a negative weight")
		}
		for i := int64(0); i < e.Weight && st.left != 0; i++ {
			if st.skip > 0 {
				st.skip--
				continue
			}
			rows = append(rows, e.Row)
			if st.left > 0 {
				st.left--
			}
		}
	}
	if b := rowsBytes(rows); b > 0 {
		st.size = int(min(streamChunk, max(16, int64(len(chunk))*streamChunkBytes/b)))
	} else {
		st.size = streamChunk
	}
	return rows, nil
}

type streamingKey struct{}

// streamingWanted reports whether the statement running under ctx may
// return a RowStream.
func streamingWanted(ctx context.Context) bool { return ctx.Value(streamingKey{}) != nil }

// ExecStreaming is ExecStatement for a caller that sends a query's rows
// as they are produced: when st is a SELECT whose plan allows it (see
// RowStream), the Result holds a Stream instead of Rows, and its Tag is
// the stream's once the stream has ended. The caller reads the stream
// under a context that it cancels as it would the statement's, and
// drops it when done. Any other statement runs as ExecStatement runs it.
func (s *Session) ExecStreaming(ctx context.Context, st *Statement) (*Result, error) {
	if st.ext.Kind == ext.None && st.err == nil && st.tree != nil && len(st.tree.Stmts) == 1 {
		if sel := st.tree.Stmts[0].Stmt.GetSelectStmt(); sel != nil && sel.IntoClause == nil {
			ctx = context.WithValue(ctx, streamingKey{}, true)
		}
	}
	return s.ExecStatement(ctx, st, nil)
}

// ExecPreparedStreaming is ExecPrepared for a caller that sends a query's
// rows as they are produced, as ExecStreaming is ExecStatement's: a
// prepared SELECT whose plan allows it returns a Result holding a Stream.
func (s *Session) ExecPreparedStreaming(ctx context.Context, p *Prepared, params []types.Value) (*Result, error) {
	return s.ExecPrepared(context.WithValue(ctx, streamingKey{}, true), p, params)
}
