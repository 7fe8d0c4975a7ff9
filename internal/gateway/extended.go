package gateway

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// statement is a prepared statement of the extended query protocol.
type statement struct {
	prep *runtime.Prepared
	// empty is set for a statement with no SQL in it (EmptyQueryResponse).
	empty bool
	// desc is the RowDescription last sent for a portal of the
	// statement, of the columns descCols in the formats descFormats:
	// a client that binds and describes each execution (libpq's
	// PQsendQueryPrepared) is sent the same one again.
	desc        *pgproto3.RowDescription
	descCols    []runtime.Column
	descFormats []int16
}

// portalDescription returns the RowDescription of cols in formats for a
// portal of st, the one sent last when they are the same.
func (st *statement) portalDescription(cols []runtime.Column, formats []int16) *pgproto3.RowDescription {
	if st.desc == nil || len(cols) != len(st.descCols) || len(cols) > 0 && &cols[0] != &st.descCols[0] ||
		!slices.Equal(formats, st.descFormats) {
		st.desc, st.descCols, st.descFormats = rowDescription(cols, formats), cols, slices.Clone(formats)
	}
	return st.desc
}

// maxParams is how many parameters the protocol's messages can count
// (Parse, Bind and ParameterDescription count them in 16 bits).
const maxParams = 1<<16 - 1

// portal is a statement bound to its parameters, run by Execute.
type portal struct {
	stmt    *statement
	params  []types.Value
	formats []int16 // result column formats; nil when the statement has no rows
	// resultFormats are the format codes Bind asked for, expanded when
	// the statement's columns are known only once it runs.
	resultFormats []int16

	// Set once the portal has run.
	ran  bool
	res  *runtime.Result
	next int  // next row to send
	sent bool // a previous Execute sent part of the rows
	done bool // every row was sent and CommandComplete too
	// For a result that is a stream (res.Stream), the rows of its last
	// chunk not sent yet, and whether the stream has ended
	// (extstream.go).
	pending []zset.Row
	ended   bool
}

// extendedError sends err for an extended-protocol message and discards
// the messages that follow until Sync. As any error, it fails an open
// transaction block.
func (c *conn) extendedError(err error) error {
	if isFatal(err) {
		return err
	}
	c.sess.FailTransaction()
	c.be.Send(errorResponse(err, "ERROR", 0))
	c.skipToSync = true
	return nil
}

func (c *conn) parse(m *pgproto3.Parse) error {
	if m.Name != "" {
		if _, exists := c.stmts[m.Name]; exists {
			return c.extendedError(errs.Newf(errs.DuplicatePrepared, "prepared statement %q already exists", m.Name))
		}
	}
	declared := make([]types.Type, len(m.ParameterOIDs))
	for i, oid := range m.ParameterOIDs {
		if oid == 0 {
			declared[i] = types.Of(types.Unknown)
			continue
		}
		t, ok := types.TypeByOID(oid)
		if !ok {
			return c.extendedError(errs.Newf(errs.FeatureNotSupported, "parameter $%d has type OID %d, which RockStream does not support", i+1, oid))
		}
		declared[i] = t
	}
	p, err := c.sess.Prepare(m.Query, declared)
	if err != nil {
		return c.extendedError(err)
	}
	c.stmts[m.Name] = &statement{prep: p, empty: isEmptyQuery(m.Query)}
	c.be.Send(&pgproto3.ParseComplete{})
	return nil
}

// isEmptyQuery reports whether q holds no statement.
func isEmptyQuery(q string) bool {
	for _, r := range q {
		if r != ' ' && r != '\t' && r != '\n' && r != '\r' && r != ';' {
			return len(splitStatements(q)) == 0
		}
	}
	return true
}

func (c *conn) lookupStatement(name string) (*statement, error) {
	st, ok := c.stmts[name]
	if !ok {
		if name == "" {
			return nil, errs.New(errs.InvalidStatementName, "unnamed prepared statement does not exist")
		}
		return nil, errs.Newf(errs.InvalidStatementName, "prepared statement %q does not exist", name)
	}
	return st, nil
}

func (c *conn) lookupPortal(name string) (*portal, error) {
	p, ok := c.portals[name]
	if !ok {
		return nil, errs.Newf(errs.InvalidCursorName, "portal %q does not exist", name)
	}
	return p, nil
}

// formatCodes expands a Bind message's format codes to n values: none
// means text for all, one applies to all.
func formatCodes(codes []int16, n int, what string) ([]int16, error) {
	out := make([]int16, n)
	switch len(codes) {
	case 0:
	case 1:
		for i := range out {
			out[i] = codes[0]
		}
	case n:
		copy(out, codes)
	default:
		if what == "result" {
			return nil, errs.Newf(errs.ProtocolViolation, "bind message has %d result formats but query has %d columns", len(codes), n)
		}
		return nil, errs.Newf(errs.ProtocolViolation, "bind message has %d %s formats but %d %ss", len(codes), what, n, what)
	}
	for _, f := range out {
		if f != formatText && f != formatBinary {
			return nil, errs.Newf(errs.ProtocolViolation, "unsupported format code: %d", f)
		}
	}
	return out, nil
}

func (c *conn) bind(m *pgproto3.Bind) error {
	st, err := c.lookupStatement(m.PreparedStatement)
	if err != nil {
		return c.extendedError(err)
	}
	if m.DestinationPortal != "" {
		if _, exists := c.portals[m.DestinationPortal]; exists {
			return c.extendedError(errs.Newf(errs.DuplicateCursor, "cursor %q already exists", m.DestinationPortal))
		}
	}
	pt := st.prep.ParamTypes
	if len(m.Parameters) != len(pt) {
		return c.extendedError(errs.Newf(errs.ProtocolViolation, "bind message supplies %d parameters, but prepared statement %q requires %d", len(m.Parameters), m.PreparedStatement, len(pt)))
	}
	pf, err := formatCodes(m.ParameterFormatCodes, len(pt), "parameter")
	if err != nil {
		return c.extendedError(err)
	}
	// Parameters are decoded at Bind, as PostgreSQL does, from their
	// format into values of their types, which the statement runs with.
	params := make([]types.Value, len(pt))
	for i, raw := range m.Parameters {
		if raw == nil {
			continue
		}
		var v types.Value
		if pf[i] == formatBinary {
			v, err = types.ParseBinary(raw, pt[i])
			err = types.BindParameterError(err, i+1)
		} else {
			v, err = c.sess.DecodeParam(context.Background(), pt[i], string(raw))
		}
		if err != nil {
			return c.extendedError(err)
		}
		params[i] = v
	}
	p := &portal{stmt: st, params: params, resultFormats: append([]int16(nil), m.ResultFormatCodes...)}
	if cols := st.prep.Columns; cols != nil {
		if p.formats, err = formatCodes(m.ResultFormatCodes, len(cols), "result"); err != nil {
			return c.extendedError(err)
		}
	}
	c.portals[m.DestinationPortal] = p
	c.be.Send(&pgproto3.BindComplete{})
	return nil
}

func (c *conn) describe(m *pgproto3.Describe) error {
	switch m.ObjectType {
	case 'S':
		st, err := c.lookupStatement(m.Name)
		if err != nil {
			return c.extendedError(err)
		}
		if n := len(st.prep.ParamTypes); n > maxParams {
			// The ParameterDescription message cannot say so many
			// (PostgreSQL sends one that is malformed).
			return c.extendedError(errs.Newf(errs.ProtocolViolation, "prepared statement %q has %d parameters, more than the %d a ParameterDescription message can describe", m.Name, n, maxParams))
		}
		oids := make([]uint32, len(st.prep.ParamTypes))
		for i, t := range st.prep.ParamTypes {
			oids[i] = t.OID()
		}
		c.be.Send(&pgproto3.ParameterDescription{ParameterOIDs: oids})
		if st.prep.Columns == nil {
			c.be.Send(&pgproto3.NoData{})
		} else {
			c.be.Send(rowDescription(st.prep.Columns, nil))
		}
	case 'P':
		p, err := c.lookupPortal(m.Name)
		if err != nil {
			return c.extendedError(err)
		}
		cols := p.stmt.prep.Columns
		if p.stmt.prep.RowsUnknown {
			// Only running the statement tells its rows (a FETCH's are
			// its cursor's); the result waits in the portal for Execute.
			if !p.ran {
				ctx, done := c.statementContext()
				err := c.startPortal(ctx, p)
				done()
				if err != nil {
					return c.extendedError(err)
				}
			}
			cols = nil
			if p.res.CopyIn == nil && p.res.CopyOut == nil {
				cols = p.res.Columns
			}
		}
		if cols == nil {
			c.be.Send(&pgproto3.NoData{})
		} else {
			if p.formats == nil {
				if p.formats, err = formatCodes(p.resultFormats, len(cols), "result"); err != nil {
					return c.extendedError(err)
				}
			}
			c.be.Send(p.stmt.portalDescription(cols, p.formats))
		}
	default:
		return c.extendedError(errs.Newf(errs.ProtocolViolation, "invalid DESCRIBE message subtype %d", m.ObjectType))
	}
	return nil
}

func (c *conn) closeObject(m *pgproto3.Close) error {
	switch m.ObjectType {
	case 'S':
		delete(c.stmts, m.Name)
	case 'P':
		delete(c.portals, m.Name)
	default:
		return c.extendedError(errs.Newf(errs.ProtocolViolation, "invalid CLOSE message subtype %d", m.ObjectType))
	}
	c.be.Send(&pgproto3.CloseComplete{})
	return nil
}

func (c *conn) sync() error {
	if c.pipelined {
		c.pipelined = false
		if err := c.endMessage(); err != nil {
			if isFatal(err) {
				return err
			}
			c.be.Send(errorResponse(err, "ERROR", 0))
		}
	}
	c.endOfTransaction()
	return c.readyForQuery()
}

// beginPipeline places the statement a portal is about to run among the
// statements executed before the next Sync, which PostgreSQL runs as one
// transaction. When that Sync has already arrived, right after the
// message being handled, the statement is alone and runs as any statement
// outside a block does (its own transaction, through the group
// committer); otherwise the statements until Sync share an implicit
// block, which Sync commits, or rolls back after an error.
func (c *conn) beginPipeline() {
	if c.pipelined || c.sess.TxnStatus() != 'I' || c.syncFollows() {
		return
	}
	c.pipelined = true
	c.sess.BeginMessage(true)
}

// syncFollows reports whether the message after the one being handled
// has arrived already and is a Sync: the next pending message, read
// while a statement ran, or else the next in the frame reader.
func (c *conn) syncFollows() bool {
	if len(c.pending) > 0 {
		_, ok := c.pending[0].(*pgproto3.Sync)
		return ok
	}
	return c.frames.syncFollows()
}

// execute runs a portal (the first time) and sends up to MaxRows of its
// rows (0: all); PortalSuspended says more remain.
func (c *conn) execute(m *pgproto3.Execute) error {
	p, err := c.lookupPortal(m.Portal)
	if err != nil {
		return c.extendedError(err)
	}
	if p.stmt.empty {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return nil
	}
	// One statement context covers running the portal and streaming its
	// rows (as PostgreSQL's statement_timeout covers the Execute); COPY
	// and SUBSCRIBE move their data under one of their own (stream).
	ctx, done := c.statementContext()
	if !p.ran {
		if err := c.startPortal(ctx, p); err != nil {
			done()
			return c.extendedError(err)
		}
	}
	res := p.res
	if !p.done && res.Stream != nil {
		defer done()
		return c.executeStream(ctx, p, m.MaxRows)
	}
	done()
	if !p.done && (res.CopyIn != nil || res.CopyOut != nil || res.Subscription != nil) {
		p.done = true
		if err := c.stream(res, p.formats, false); err != nil {
			return c.extendedError(err)
		}
		return nil
	}
	if res.Columns == nil || p.done {
		// Executing a completed portal again returns no more rows.
		tag := res.Tag
		if p.done {
			tag = retag(tag, 0)
		}
		p.done = true
		c.commandComplete(tag)
		return nil
	}
	rows := res.Rows[p.next:]
	// As PostgreSQL, a portal that sent as many rows as asked is
	// suspended, even when no row remains.
	suspended := m.MaxRows > 0 && uint32(len(rows)) >= m.MaxRows
	if suspended {
		rows = rows[:m.MaxRows]
	}
	if err := c.sendRows(c.portalEncoder(res.Columns, p.formats, c.sess.Zone()), rows); err != nil {
		return c.extendedError(err)
	}
	p.next += len(rows)
	if suspended {
		p.sent = true
		c.be.Send(&pgproto3.PortalSuspended{})
		return nil
	}
	tag := res.Tag
	if p.sent {
		// The count is of the rows this Execute sent.
		tag = retag(tag, len(rows))
	}
	p.done = true
	c.commandComplete(tag)
	return nil
}

// startPortal runs the portal's statement; its result waits in the
// portal for Execute. Streams (COPY, SUBSCRIBE, a query's rows sent as
// they are produced) have started but move no data yet.
func (c *conn) startPortal(ctx context.Context, p *portal) error {
	c.beginPipeline()
	c.srv.queries.Add(1)
	res, err := c.run(ctx, func(ctx context.Context) (*runtime.Result, error) {
		return c.sess.ExecPreparedStreaming(ctx, p.stmt.prep, p.params)
	})
	if err != nil {
		return err
	}
	p.ran, p.res = true, res
	if !p.stmt.prep.RowsUnknown && !sameColumns(p.stmt.prep.Columns, res.Columns) {
		p.done = true
		return errs.New(errs.FeatureNotSupported, "cached plan must not change result type")
	}
	if p.formats == nil && res.Columns != nil {
		f, err := formatCodes(p.resultFormats, len(res.Columns), "result")
		if err != nil {
			return err
		}
		p.formats = f
	}
	return nil
}

// sameColumns reports whether a result has the columns the statement was
// described with (their number and types; a statement described as
// returning no rows returns none).
func sameColumns(described, got []runtime.Column) bool {
	if (described == nil) != (got == nil) || len(described) != len(got) {
		return false
	}
	for i := range described {
		if described[i].Type.ID != got[i].Type.ID {
			return false
		}
	}
	return true
}

// retag replaces the row count at the end of a command tag.
func retag(tag string, n int) string {
	i := strings.LastIndexByte(tag, ' ')
	if i < 0 {
		return tag
	}
	if _, err := strconv.Atoi(tag[i+1:]); err != nil {
		return tag
	}
	return tag[:i+1] + strconv.Itoa(n)
}
