package gateway

import (
	"context"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/sql/split"
	"github.com/rockstream/rockstream/internal/zset"
)

// flushEvery bounds how many DataRow messages are buffered before they are
// written out, so that a large result does not sit in memory twice.
const flushEvery = 256

// isFatal reports whether err ends the connection rather than the
// statement.
func isFatal(err error) bool {
	var pe *protocolError
	var fe *fatalError
	return errors.Is(err, errClose) || errors.Is(err, errAdminShutdown) ||
		errors.Is(err, errIdleTimeout) || errors.As(err, &pe) || errors.As(err, &fe)
}

// simpleQuery runs a Query message as PostgreSQL does (see
// runtime/implicit.go): every statement is parsed before any runs, and a
// syntax error anywhere runs none but reports itself; several statements
// share one implicit transaction block, which commits when the message
// ends without error and rolls back at the first error, where the message
// stops.
func (c *conn) simpleQuery(q string) error {
	// A Query message ends a pipeline of the extended protocol not yet
	// synced: its implicit block is the message's, ended with it.
	c.pipelined = false
	stmts, bad := runtime.ParseMessage(q)
	// A Query message drops the unnamed prepared statement and portal.
	delete(c.stmts, "")
	delete(c.portals, "")
	if len(stmts) == 0 {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return c.readyForQuery()
	}
	if bad != nil {
		// Run alone, the statement reports its syntax error as any
		// failed statement does.
		stmts = []*runtime.Statement{bad}
	}
	c.sess.BeginMessage(len(stmts) > 1)
	for _, st := range stmts {
		err := c.runSimple(st)
		if err == nil {
			continue
		}
		if isFatal(err) {
			return err
		}
		c.sess.FailTransaction()
		c.be.Send(errorResponse(err, "ERROR", utf8.RuneCountInString(q[:st.Offset])))
		break
	}
	if err := c.endMessage(); err != nil {
		if isFatal(err) {
			return err
		}
		c.be.Send(errorResponse(err, "ERROR", 0))
	}
	c.endOfTransaction()
	return c.readyForQuery()
}

// endMessage ends the Query message's implicit transaction block, if one
// is open: the commit's error, if any, is the message's.
func (c *conn) endMessage() error {
	ctx, done := c.statementContext()
	defer done()
	_, err := c.run(ctx, func(ctx context.Context) (*runtime.Result, error) {
		return nil, c.sess.EndMessage(ctx)
	})
	return err
}

// run runs a statement (or the end of an implicit block) under ctx while
// watching its client (watch.go), and returns the error its client sees.
// When the client went away meanwhile, the connection ends (errClose),
// whether the statement was canceled or had completed first (then it is
// kept, as a statement whose result could not be sent).
func (c *conn) run(ctx context.Context, exec func(context.Context) (*runtime.Result, error)) (*runtime.Result, error) {
	wctx, stop := c.watchClient(ctx, watchStatement)
	res, err := exec(wctx)
	gone := stop()
	if err != nil {
		c.srv.errors.Add(1)
		if gone != nil {
			c.srv.canceled.Add(1)
			return nil, gone
		}
		return nil, c.statementError(ctx, err)
	}
	if gone != nil {
		closeResult(res)
		return nil, gone
	}
	return res, nil
}

// closeResult releases what a result not to be sent holds.
func closeResult(res *runtime.Result) {
	if res == nil {
		return
	}
	if res.CopyOut != nil {
		res.CopyOut.Close()
	}
	if res.Subscription != nil {
		res.Subscription.Close()
	}
}

// endOfTransaction drops the portals when no transaction block is open:
// portals live until the end of the transaction that created them.
func (c *conn) endOfTransaction() {
	if c.sess.TxnStatus() == 'I' {
		clear(c.portals)
	}
}

// runSimple runs one statement of a Query message and sends its result.
func (c *conn) runSimple(st *runtime.Statement) error {
	ctx, done := c.statementContext()
	defer done()
	c.srv.queries.Add(1)
	res, err := c.run(ctx, func(ctx context.Context) (*runtime.Result, error) {
		return c.sess.ExecStreaming(ctx, st)
	})
	if err != nil {
		return err
	}
	switch {
	case res.Stream != nil:
		return c.sendStream(ctx, res)
	case res.CopyIn != nil:
		return c.copyIn(ctx, res.CopyIn)
	case res.CopyOut != nil:
		return c.copyOut(ctx, res)
	case res.Subscription != nil:
		return c.subscribe(ctx, res, nil, true)
	}
	if res.Columns != nil {
		c.be.Send(rowDescription(res.Columns, nil))
		if err := c.sendRows(newRowEncoder(res.Columns, nil, c.sess.Zone()), res.Rows); err != nil {
			return err
		}
	}
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(res.Tag)})
	return nil
}

// sendStream sends a streamed query's rows as they are produced, then its
// CommandComplete. A failure part way (the statement canceled, the
// client gone, an error in a row) ends the rows sent so far with the
// ErrorResponse, as PostgreSQL's does.
func (c *conn) sendStream(ctx context.Context, res *runtime.Result) error {
	defer res.Stream.Close()
	c.be.Send(rowDescription(res.Columns, nil))
	enc := newRowEncoder(res.Columns, nil, c.sess.Zone())
	for {
		rows, err := res.Stream.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			c.srv.errors.Add(1)
			return c.statementError(ctx, err)
		}
		if err := c.sendRows(enc, rows); err != nil {
			return err
		}
		// The rows go out as they are made: a client reading slowly
		// holds the statement back, not the server's memory.
		if err := c.flush(); err != nil {
			return err
		}
	}
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(res.Stream.Tag())})
	return nil
}

// sendRows sends rows as DataRow messages, flushing now and then.
func (c *conn) sendRows(enc *rowEncoder, rows []zset.Row) error {
	for i, row := range rows {
		m, err := enc.encode(row)
		if err != nil {
			return err
		}
		c.be.Send(m)
		if (i+1)%flushEvery == 0 {
			if err := c.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func splitStatements(q string) []split.Statement { return split.Statements(q) }
