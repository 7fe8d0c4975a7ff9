package rockstream

import (
	"context"
	"io"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/types"
)

// Statements that stream (COPY FROM STDIN, COPY TO STDOUT, SUBSCRIBE) have
// their own methods, which move the data; Exec refuses them with a message
// naming the method to use.

// streamingError closes a streaming result that Exec cannot deliver and
// says which method can.
func streamingError(res *runtime.Result) error {
	switch {
	case res.CopyIn != nil:
		return errs.New(errs.FeatureNotSupported, "COPY ... FROM STDIN needs its data: run it from a PostgreSQL client (psql's \\copy, a driver's copy) or with Session.CopyFrom")
	case res.CopyOut != nil:
		res.CopyOut.Close()
		return errs.New(errs.FeatureNotSupported, "COPY ... TO STDOUT streams its data: run it from a PostgreSQL client or with Session.CopyTo")
	case res.Subscription != nil:
		res.Subscription.Close()
		return errs.New(errs.FeatureNotSupported, "SUBSCRIBE streams its rows: run it from a PostgreSQL client (COPY (SUBSCRIBE ...) TO STDOUT in psql) or with Session.Subscribe")
	}
	return nil
}

// CopyFrom runs one COPY ... FROM STDIN statement, reading its data from
// r. The rows are inserted atomically: all of them, or none.
func (s *Session) CopyFrom(ctx context.Context, sql string, r io.Reader) (*Result, error) {
	res, err := s.copyFrom(ctx, sql, r)
	return res, publicError(err)
}

func (s *Session) copyFrom(ctx context.Context, sql string, r io.Reader) (*Result, error) {
	res, err := s.s.Exec(ctx, sql, nil)
	if err != nil {
		return nil, err
	}
	if res.CopyIn == nil {
		_ = streamingError(res)
		return nil, errs.New(errs.SyntaxError, "CopyFrom runs COPY ... FROM STDIN")
	}
	res, err = s.s.CopyFrom(ctx, res.CopyIn, r)
	if err != nil {
		return nil, err
	}
	return publicResult(res, s.s.Zone()), nil
}

// CopyTo runs one COPY ... TO STDOUT statement (also COPY (SUBSCRIBE ...)
// TO STDOUT, which runs until ctx ends), writing its data to w.
func (s *Session) CopyTo(ctx context.Context, sql string, w io.Writer) (*Result, error) {
	res, err := s.copyTo(ctx, sql, w)
	return res, publicError(err)
}

func (s *Session) copyTo(ctx context.Context, sql string, w io.Writer) (*Result, error) {
	res, err := s.s.Exec(ctx, sql, nil)
	if err != nil {
		return nil, err
	}
	out := res.CopyOut
	if out == nil {
		_ = streamingError(res)
		return nil, errs.New(errs.SyntaxError, "CopyTo runs COPY ... TO STDOUT")
	}
	defer out.Close()
	for {
		p, err := out.Next(ctx)
		if err == io.EOF {
			return &Result{Tag: out.Tag()}, nil
		}
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(p); err != nil {
			return nil, err
		}
	}
}

// Subscription is a running SUBSCRIBE: the view's snapshot, then its
// changes as they commit. It is not safe for concurrent use, except that
// Close may be called while Next waits.
type Subscription struct {
	// Columns describes the rows: epoch, [progressed,] diff and the
	// view's columns.
	Columns []Column
	sub     *runtime.Subscription
	cols    []runtime.Column
	zone    types.Zone // the session time zone its rows are shown in
}

// Subscribe runs one SUBSCRIBE statement.
func (s *Session) Subscribe(ctx context.Context, sql string) (*Subscription, error) {
	res, err := s.subscribe(ctx, sql)
	return res, publicError(err)
}

func (s *Session) subscribe(ctx context.Context, sql string) (*Subscription, error) {
	res, err := s.s.Exec(ctx, sql, nil)
	if err != nil {
		return nil, err
	}
	if res.Subscription == nil {
		_ = streamingError(res)
		return nil, errs.New(errs.SyntaxError, "Subscribe runs SUBSCRIBE")
	}
	return &Subscription{Columns: publicResult(res, types.UTCZone).Columns, sub: res.Subscription, cols: res.Columns, zone: s.s.Zone()}, nil
}

// Next waits for the next rows and returns them in PostgreSQL's text
// format (nil for NULL). It returns io.EOF once the subscription or the
// instance is closed, and ctx's error when ctx ends first.
func (sub *Subscription) Next(ctx context.Context) ([][]*string, error) {
	rows, err := sub.sub.Next(ctx)
	if err != nil {
		return nil, streamError(ctx, err)
	}
	return publicResult(&runtime.Result{Columns: sub.cols, Rows: rows}, sub.zone).Rows, nil
}

// Close ends the subscription.
func (sub *Subscription) Close() { sub.sub.Close() }
