package gateway

import (
	"context"
	"errors"
	"io"
	"net"
	"reflect"
	"runtime/debug"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/runtime"
)

// stream moves the data of a streaming result (COPY, SUBSCRIBE) under
// a statement context of its own: a statement timeout, cancel request or
// shutdown ends it. describe sends a SUBSCRIBE's RowDescription first
// (the simple protocol).
func (c *conn) stream(res *runtime.Result, formats []int16, describe bool) error {
	ctx, done := c.statementContext()
	defer done()
	switch {
	case res.CopyIn != nil:
		return c.copyIn(ctx, res.CopyIn)
	case res.CopyOut != nil:
		return c.copyOut(ctx, res)
	}
	return c.subscribe(ctx, res, formats, describe)
}

// copyFailed is the error a CopyFail message turns into.
type copyFailed struct{ msg string }

func (e *copyFailed) Error() string { return "COPY from stdin failed: " + e.msg }

// copyIn runs COPY ... FROM STDIN: CopyInResponse, then the client's
// CopyData messages stream through a pipe into the session, which reads
// them as they arrive (nothing is buffered beyond one message), until
// CopyDone or CopyFail.
func (c *conn) copyIn(ctx context.Context, in *runtime.CopyIn) error {
	format := formatText
	if in.Binary {
		format = formatBinary
	}
	cols := make([]uint16, in.Columns)
	for i := range cols {
		cols[i] = uint16(format)
	}
	c.be.Send(&pgproto3.CopyInResponse{OverallFormat: byte(format), ColumnFormatCodes: cols})
	if err := c.flush(); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	c.copying = true
	defer func() { c.copying = false }()
	type outcome struct {
		res *runtime.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		var out outcome
		defer func() {
			if r := recover(); r != nil {
				// A fault in the COPY fails it, not the server.
				c.srv.log.Error("gateway: COPY panicked", "pid", c.pid, "panic", r, "stack", string(debug.Stack()))
				if testHookPanic != nil {
					testHookPanic(r)
				}
				out = outcome{err: &fatalError{errs.Newf(errs.Internal, "internal error: %v", r)}}
			}
			// Whatever the session did not read is discarded.
			pr.CloseWithError(errCopyEnded)
			done <- out
		}()
		out.res, out.err = c.sess.CopyFrom(ctx, in, pr)
	}()
	var clientErr error
loop:
	for {
		m, err := c.receive()
		if err != nil {
			pw.CloseWithError(err)
			<-done
			return err
		}
		switch m := m.(type) {
		case *pgproto3.CopyData:
			if _, err := pw.Write(m.Data); err != nil {
				// The session stopped reading: it failed.
				break loop
			}
		case *pgproto3.CopyDone:
			pw.Close()
			break loop
		case *pgproto3.CopyFail:
			clientErr = errs.New(errs.QueryCanceled, (&copyFailed{m.Message}).Error())
			pw.CloseWithError(clientErr)
			break loop
		case *pgproto3.Flush, *pgproto3.Sync:
			// Ignored during copy-in, as the protocol says.
		case *pgproto3.Terminate:
			pw.CloseWithError(errClose)
			<-done
			return errClose
		default:
			err := protocolErrorf("unexpected message type %T during COPY from stdin", m)
			pw.CloseWithError(err)
			<-done
			return err
		}
	}
	out := <-done
	if clientErr != nil {
		c.srv.errors.Add(1)
		return clientErr
	}
	if out.err != nil {
		c.srv.errors.Add(1)
		return c.statementError(ctx, out.err)
	}
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(out.res.Tag)})
	return nil
}

var errCopyEnded = errors.New("gateway: COPY ended")

// copyOut runs COPY ... TO STDOUT: CopyOutResponse, a CopyData message per
// payload, CopyDone and CommandComplete.
func (c *conn) copyOut(ctx context.Context, res *runtime.Result) error {
	out := res.CopyOut
	defer out.Close()
	format := formatText
	if out.Binary {
		format = formatBinary
	}
	cols := make([]uint16, out.Columns)
	for i := range cols {
		cols[i] = uint16(format)
	}
	c.be.Send(&pgproto3.CopyOutResponse{OverallFormat: byte(format), ColumnFormatCodes: cols})
	if err := c.flush(); err != nil {
		return err
	}
	err := c.pump(ctx, func(ctx context.Context) error {
		data, err := out.Next(ctx)
		if err == nil {
			c.be.Send(&pgproto3.CopyData{Data: data})
		}
		return err
	})
	if err != nil {
		return err
	}
	c.be.Send(&pgproto3.CopyDone{})
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(out.Tag())})
	return nil
}

// subscribe streams a SUBSCRIBE's rows as DataRow messages, flushed as they
// come, until the client cancels or goes away, the statement times out,
// or the engine ends the subscription (io.EOF: CommandComplete).
// describe sends the RowDescription first (the simple protocol).
func (c *conn) subscribe(ctx context.Context, res *runtime.Result, formats []int16, describe bool) error {
	sub := res.Subscription
	defer sub.Close()
	if describe {
		c.be.Send(rowDescription(res.Columns, formats))
		if err := c.flush(); err != nil {
			return err
		}
	}
	enc := newRowEncoder(res.Columns, formats, c.sess.Zone())
	err := c.pump(ctx, func(ctx context.Context) error {
		rows, err := sub.Next(ctx)
		if err != nil {
			return err
		}
		if err := c.sendRows(enc, rows); err != nil {
			return &sendError{err}
		}
		return nil
	})
	if err != nil {
		return err
	}
	tag := res.Tag
	if tag == "" {
		tag = "SUBSCRIBE"
	}
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
	return nil
}

// pump runs step, which produces and sends one piece of a result,
// flushing after each, until it returns io.EOF, while watchClient reads
// what the client sends meanwhile. A step's error (other than a
// sendError) is the statement's error; a failed send or flush ends the
// stream with that error.
func (c *conn) pump(ctx context.Context, step func(context.Context) error) error {
	ctx, stop := c.watchClient(ctx, watchStream)
	for {
		err := step(ctx)
		if errors.Is(err, io.EOF) {
			return stop()
		}
		var se *sendError
		switch {
		case errors.As(err, &se):
			stop()
			return se.err
		case err != nil:
			if werr := stop(); werr != nil {
				return werr
			}
			c.srv.errors.Add(1)
			return c.statementError(ctx, err)
		}
		if err := c.flush(); err != nil {
			stop()
			return err
		}
	}
}

// sendError is a step's failure to send to the client, not the
// statement's.
type sendError struct{ err error }

func (e *sendError) Error() string { return e.err.Error() }

// errClientGone cancels a stream whose client disconnected or terminated.
var errClientGone = errors.New("gateway: client went away")

// cloneMessage copies a received message, which is only valid until the
// backend's next read.
func cloneMessage(m pgproto3.FrontendMessage) (pgproto3.FrontendMessage, error) {
	b, err := m.Encode(nil)
	if err != nil {
		return nil, err
	}
	clone := reflect.New(reflect.TypeOf(m).Elem()).Interface().(pgproto3.FrontendMessage)
	if err := clone.Decode(b[5:]); err != nil {
		return nil, err
	}
	return clone, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
