package runtime

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/copyfmt"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/memgov"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/sql/ext"
	"github.com/rockstream/rockstream/internal/sql/pgparse"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// copySpec is a parsed COPY ... FROM STDIN: the table, as the catalog
// had it when the statement was parsed, the columns the data carries and
// the data's options.
type copySpec struct {
	table   *object
	targets []int // the table's column indexes, in the data's order
	opts    copyfmt.Options
}

var errCopyFile = errs.New(errs.FeatureNotSupported, "COPY to or from a file is not supported; use COPY ... FROM STDIN or TO STDOUT")

// execCopy runs a COPY statement PostgreSQL's parser understands.
func (s *Session) execCopy(ctx context.Context, c *pg.CopyStmt, paramText []*string) (*Result, error) {
	if c.Filename != "" || c.IsProgram {
		return nil, errCopyFile
	}
	if c.IsFrom {
		return s.copyIn(ctx, c)
	}
	if c.Query != nil {
		if c.Query.GetSelectStmt() == nil {
			return nil, errs.Newf(errs.FeatureNotSupported, "COPY (%s) TO is not supported; COPY takes a SELECT", stmtName(c.Query))
		}
		if len(c.Attlist) > 0 {
			return nil, errs.New(errs.FeatureNotSupported, "COPY (query) TO does not take a column list")
		}
		res, err := s.execSelect(ctx, c.Query, paramText)
		if err != nil {
			return nil, err
		}
		return copyOutRows(c.Options, res, s.Zone())
	}
	r, cat, done, err := s.readView(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := cat.checkDatabase(c.Relation); err != nil {
		return nil, err
	}
	name := qualifiedName(c.Relation.Schemaname, c.Relation.Relname)
	o := cat.resolve(name)
	switch {
	case o == nil:
		return nil, errs.Newf(errs.UndefinedTable, "relation %q does not exist", name)
	case o.kind == sql.View:
		return nil, errs.Newf(errs.WrongObjectType, "cannot copy from view %q; try the COPY (SELECT ...) TO variant", name)
	}
	idx, err := copyColumns(o, c.Attlist)
	if err != nil {
		return nil, err
	}
	all, err := relationAt(ctx, r, o, asOfNow)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	for _, i := range idx {
		res.Columns = append(res.Columns, Column{Name: o.cols[i].Name, Type: o.cols[i].Type})
	}
	for _, e := range all {
		row := make(zset.Row, len(idx))
		for j, i := range idx {
			row[j] = e.Row[i]
		}
		for k := int64(0); k < e.Weight; k++ {
			res.Rows = append(res.Rows, row)
		}
	}
	return copyOutRows(c.Options, res, s.Zone())
}

// copyColumns resolves a COPY column list to column indexes; no list
// means every column.
func copyColumns(o *object, list []*pg.Node) ([]int, error) {
	var idx []int
	if len(list) == 0 {
		for i := range o.cols {
			idx = append(idx, i)
		}
		return idx, nil
	}
	for _, n := range list {
		name := n.GetString_().GetSval()
		i, err := o.columnIndex(name)
		if err != nil {
			return nil, err
		}
		for _, j := range idx {
			if j == i {
				return nil, errs.Newf(errs.DuplicateColumn, "column %q specified more than once", name)
			}
		}
		idx = append(idx, i)
	}
	return idx, nil
}

// copyIn checks a COPY ... FROM STDIN and announces its data.
func (s *Session) copyIn(ctx context.Context, c *pg.CopyStmt) (*Result, error) {
	if c.WhereClause != nil {
		return nil, errs.New(errs.FeatureNotSupported, "COPY FROM ... WHERE is not supported; copy into a table and filter in a view")
	}
	_, cat, done, err := s.readView(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := cat.checkDatabase(c.Relation); err != nil {
		return nil, err
	}
	name := qualifiedName(c.Relation.Schemaname, c.Relation.Relname)
	o := cat.resolve(name)
	switch {
	case o == nil:
		return nil, errs.Newf(errs.UndefinedTable, "relation %q does not exist", name)
	case o.kind == sql.MaterializedView:
		return nil, errs.Newf(errs.WrongObjectType, "cannot copy to materialized view %q", name)
	case o.kind == sql.View:
		return nil, errs.Newf(errs.WrongObjectType, "cannot copy to view %q", name)
	case o.system != nil:
		return nil, systemRelationError(o, "copy to")
	}
	targets, err := copyColumns(o, c.Attlist)
	if err != nil {
		return nil, err
	}
	cols := make([]string, len(targets))
	for j, i := range targets {
		cols[j] = o.cols[i].Name
	}
	opts, err := copyOptions(c.Options, cols, true)
	if err != nil {
		return nil, err
	}
	opts.Zone = s.datedZone()
	return &Result{CopyIn: &CopyIn{
		Binary:  opts.Format == copyfmt.Binary,
		Columns: len(targets),
		spec:    &copySpec{table: o, targets: targets, opts: opts},
	}}, nil
}

// CopyFrom reads the data of a COPY ... FROM STDIN announced by in and
// inserts its rows into the table atomically: all of them, or none when any
// row fails to parse or insert. It returns the "COPY n" result.
//
// The rows are one statement: outside a transaction block they commit as
// one autocommit write through the group committer, inside one they join
// the block. The data is read and parsed before the write begins, so a
// slow client holds no lock. When the data is malformed, CopyFrom returns
// as soon as it finds the fault without reading the rest; the caller
// discards what the client still sends, up to its CopyDone or CopyFail.
func (s *Session) CopyFrom(ctx context.Context, in *CopyIn, data io.Reader) (res *Result, err error) {
	defer func() { s.copyDone(res, err) }()
	ctx, acct := s.openAccount(ctx)
	defer acct.Close()
	res, err = guard(s.eng, func() (*Result, error) { return s.copyFrom(ctx, in, data) })
	if err != nil {
		s.failStatement(err)
	}
	return res, statementError(ctx, err)
}

func (s *Session) copyFrom(ctx context.Context, in *CopyIn, data io.Reader) (*Result, error) {
	if in == nil || in.spec == nil {
		return nil, errs.New(errs.Internal, "internal error: CopyFrom without a COPY FROM STDIN")
	}
	spec := in.spec
	o := spec.table
	clock := s.clock()
	fcols := make([]copyfmt.Column, len(spec.targets))
	for j, i := range spec.targets {
		fcols[j] = copyfmt.Column{Name: o.cols[i].Name, Type: o.cols[i].Type}
	}
	dec := copyfmt.NewDecoder(data, spec.opts, o.name, fcols)
	// A line's bytes are split into a field buffer and made a value, and
	// the row's write copies the value again: the line needs room for
	// those copies of it, and for the buffers it outgrew.
	dec.SetGrow(func(size int64) error { return memgov.From(ctx).Fits(copyLineCopies * size) })
	var rows []zset.Row
	var lines []int64 // the line each row came from, for error context
	for {
		vals, err := dec.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, s.failStatement(err)
		}
		row, err := o.ownRow(spec.targets, vals, clock)
		if err != nil {
			return nil, s.failStatement(errs.WithWhere(err, dec.Where()))
		}
		if err := memgov.From(ctx).Reserve(copyRowBytes(row)); err != nil {
			return nil, s.failStatement(errs.WithWhere(err, dec.Where()))
		}
		if len(rows) == cap(rows) {
			// Doubled: append's growth of a large slice, a quarter at a
			// time, copied a million-row COPY's rows about four times.
			rows, lines = slices.Grow(rows, len(rows)+64), slices.Grow(lines, len(lines)+64)
		}
		rows = append(rows, row)
		lines = append(lines, dec.Line())
		if err := ctx.Err(); err != nil {
			return nil, s.failStatement(err)
		}
	}
	return s.statement(ctx, func() (*Result, error) {
		if s.txn.readOnlyTxn() {
			return nil, errs.New(errs.ReadOnlyTransaction, "cannot execute COPY FROM in a read-only transaction")
		}
		var n int
		err := s.writeStatement(ctx, func(st state.Store, w *epochWrite) (*catalog, error) {
			if cur := w.cat.lookup(o.name); cur != o {
				return nil, errs.Newf(errs.UndefinedTable, "table %q was dropped or changed while its COPY data was read", o.name)
			}
			affected, err := insertFullRows(ctx, st, w, o, rows, nil, nil, 0)
			if errs.CodeOf(err) == errs.UniqueViolation {
				if i := firstDuplicate(st, o, rows); i >= 0 {
					err = errs.WithWhere(err, fmt.Sprintf("COPY %s, line %d", o.name, lines[i]))
				}
			}
			n = len(affected)
			return nil, err
		}, false)
		if err != nil {
			return nil, err
		}
		return &Result{Tag: fmt.Sprintf("COPY %d", n)}, nil
	})
}

// firstDuplicate returns the index of the first row whose primary key an
// earlier row or a stored row already has, or -1: the row a unique
// violation is reported at.
func firstDuplicate(st state.Reader, o *object, rows []zset.Row) int {
	keyOf, prefix := o.keyOf(), o.rowsPrefix()
	seen := map[string]bool{}
	for i, r := range rows {
		k := keyOf(nil, prefix, r)
		if seen[string(k)] {
			return i
		}
		seen[string(k)] = true
		if _, found, err := st.Get(k); err == nil && found {
			return i
		}
	}
	return -1
}

// CopyFail abandons a COPY ... FROM STDIN whose client sent CopyFail
// with msg: nothing is inserted, and inside a transaction block the block
// fails, as in PostgreSQL.
func (s *Session) CopyFail(msg string) (err error) {
	defer func() { s.copyDone(nil, err) }()
	return s.failStatement(errs.Newf(errs.QueryCanceled, "COPY from stdin failed: %s", msg))
}

// failStatement marks an open transaction block failed by err and returns
// err.
func (s *Session) failStatement(err error) error {
	if s.txn != nil {
		s.txn.Fail()
	}
	return err
}

// copyOutRows returns the CopyOut of a COPY TO of res's rows, or of its
// stream's.
func copyOutRows(options []*pg.Node, res *Result, zone types.Zone) (*Result, error) {
	names := make([]string, len(res.Columns))
	for i, c := range res.Columns {
		names[i] = c.Name
	}
	opts, err := copyOptions(options, names, false)
	if err != nil {
		return nil, err
	}
	opts.Zone = zone
	if st := res.Stream; st != nil {
		// A streamed query's rows are encoded as the stream makes them.
		return &Result{CopyOut: newCopyOut(opts, res.Columns, st.Next, func() { _ = st.Close() })}, nil
	}
	rows := res.Rows
	return &Result{CopyOut: newCopyOut(opts, res.Columns, func(context.Context) ([]zset.Row, error) {
		if rows == nil {
			return nil, io.EOF
		}
		out := rows
		rows = nil
		return out, nil
	}, func() {})}, nil
}

// newCopyOut returns a CopyOut that encodes the rows next returns (until
// io.EOF) with opts: the header first, then one payload per row, then the
// trailer.
func newCopyOut(opts copyfmt.Options, cols []Column, next func(context.Context) ([]zset.Row, error), release func()) *CopyOut {
	fcols := make([]copyfmt.Column, len(cols))
	for i, c := range cols {
		fcols[i] = copyfmt.Column{Name: c.Name, Type: c.Type}
	}
	enc := copyfmt.NewEncoder(opts, fcols)
	out := &CopyOut{Binary: opts.Format == copyfmt.Binary, Columns: len(cols), Close: release}
	var pending []zset.Row
	started, ended := false, false
	out.Next = func(ctx context.Context) ([]byte, error) {
		if !started {
			started = true
			if h := enc.AppendHeader(nil); len(h) > 0 {
				return h, nil
			}
		}
		for len(pending) == 0 {
			if ended {
				return nil, io.EOF
			}
			rows, err := next(ctx)
			if err == io.EOF {
				ended = true
				if t := enc.AppendTrailer(nil); len(t) > 0 {
					return t, nil
				}
				return nil, io.EOF
			}
			if err != nil {
				return nil, err
			}
			pending = rows
		}
		row := pending[0]
		pending = pending[1:]
		b, err := enc.AppendRow(nil, row)
		if err != nil {
			return nil, err
		}
		out.rows++
		return b, nil
	}
	return out
}

// execCopyExt runs COPY (SUBSCRIBE ...) TO STDOUT and COPY (query AS OF
// EPOCH n) TO STDOUT.
func (s *Session) execCopyExt(ctx context.Context, st ext.Statement, paramText []*string) (*Result, error) {
	tree, err := pgparse.Parse("COPY rockstream_copy TO STDOUT " + st.Query)
	if err != nil || len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetCopyStmt() == nil {
		return nil, errs.Newf(errs.SyntaxError, "syntax error in the options of COPY: %q", strings.TrimSpace(st.Query))
	}
	c := tree.Stmts[0].Stmt.GetCopyStmt()
	if c.Filename != "" || c.IsProgram {
		return nil, errCopyFile
	}
	switch st.Inner.Kind {
	case ext.AsOfEpoch:
		res, err := s.execSelectAsOf(ctx, st.Inner.Query, st.Inner.Epoch, paramText)
		if err != nil {
			return nil, err
		}
		return copyOutRows(c.Options, res, s.Zone())
	case ext.Subscribe:
		res, err := s.execSubscribe(*st.Inner)
		if err != nil {
			return nil, err
		}
		names := make([]string, len(res.Columns))
		for i, col := range res.Columns {
			names[i] = col.Name
		}
		opts, err := copyOptions(c.Options, names, false)
		if err != nil {
			res.Subscription.Close()
			return nil, err
		}
		opts.Zone = s.Zone()
		sub := res.Subscription
		return &Result{CopyOut: newCopyOut(opts, res.Columns, sub.Next, sub.Close)}, nil
	}
	return nil, errs.New(errs.Internal, "internal error: COPY of an unexpected statement")
}
