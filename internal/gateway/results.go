package gateway

import (
	"errors"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Format codes of the wire protocol.
const (
	formatText   int16 = 0
	formatBinary int16 = 1
)

// errorResponse converts err to an ErrorResponse of the given severity.
// offset is added to the error's position (the statement's place in a
// multi-statement query, in characters).
func errorResponse(err error, severity string, offset int) *pgproto3.ErrorResponse {
	var e *errs.Error
	if !errors.As(err, &e) {
		e = &errs.Error{Code: errs.Internal, SQLState: "XX000", Message: "internal error: " + err.Error()}
	}
	r := &pgproto3.ErrorResponse{
		Severity:            severity,
		SeverityUnlocalized: severity,
		Code:                e.SQLState,
		Message:             e.Message,
		Detail:              e.Detail,
		Hint:                e.Hint,
		Where:               e.Where,
	}
	if e.Position > 0 {
		r.Position = int32(e.Position + offset)
	}
	return r
}

func (c *conn) sendNotice(n runtime.Notice) {
	c.be.Send(&pgproto3.NoticeResponse{
		Severity:            n.Severity,
		SeverityUnlocalized: n.Severity,
		Code:                n.SQLState,
		Message:             n.Message,
	})
	// A notice may report the progress of a statement still running:
	// the client sees it now, not with the statement's answer.
	_ = c.be.Flush()
}

// rowDescription describes result columns; formats holds each column's
// format code (nil: all text).
func rowDescription(cols []runtime.Column, formats []int16) *pgproto3.RowDescription {
	fields := make([]pgproto3.FieldDescription, len(cols))
	for i, col := range cols {
		f := formatText
		if formats != nil {
			f = formats[i]
		}
		fields[i] = pgproto3.FieldDescription{
			Name:         []byte(col.Name),
			DataTypeOID:  typeOID(col.Type),
			DataTypeSize: typeSize(col.Type),
			TypeModifier: typeModifier(col.Type),
			Format:       f,
		}
	}
	return &pgproto3.RowDescription{Fields: fields}
}

// typeOID is the OID a column of type t is described with: an untyped
// literal's column is text, as PostgreSQL resolves it.
func typeOID(t types.Type) uint32 {
	if t.ID == types.Unknown {
		return types.Of(types.Text).OID()
	}
	return t.OID()
}

// typeSize is pg_type.typlen: the size of fixed-width types, -1 for
// variable-width ones.
func typeSize(t types.Type) int16 {
	switch t.ID {
	case types.Bool:
		return 1
	case types.Int2:
		return 2
	case types.Int4, types.Float4, types.Date:
		return 4
	case types.Int8, types.Float8, types.Timestamp, types.TimestampTZ, types.Time:
		return 8
	case types.TimeTZ:
		return 12
	case types.Interval:
		return 16
	}
	return -1
}

// typeModifier is the column's atttypmod as PostgreSQL reports it.
func typeModifier(t types.Type) int32 {
	switch t.ID {
	case types.Numeric:
		if t.Precision >= 0 {
			return (t.Precision<<16 | t.Scale&0x7ff) + 4
		}
	case types.Varchar:
		if t.Length >= 0 {
			return t.Length + 4
		}
	case types.Timestamp, types.TimestampTZ, types.Time, types.TimeTZ:
		if t.Precision >= 0 {
			return t.Precision
		}
	case types.Interval:
		if t.Precision >= 0 {
			// INTERVAL_TYPMOD(precision, INTERVAL_FULL_RANGE)
			return 0x7fff<<16 | t.Precision&0xffff
		}
	}
	return -1
}

// rowEncoder encodes rows into DataRow messages, reusing its buffers.
type rowEncoder struct {
	cols    []runtime.Column
	formats []int16 // nil: all text
	buf     []byte
	ends    []int
	vals    [][]byte
	// zone is the session time zone timestamptz text is shown in; the
	// binary format does not depend on it.
	zone types.Zone
	// row is the DataRow encode returns.
	row pgproto3.DataRow
}

func newRowEncoder(cols []runtime.Column, formats []int16, zone types.Zone) *rowEncoder {
	return &rowEncoder{cols: cols, formats: formats, vals: make([][]byte, len(cols)), zone: zone}
}

// maxKeptRowBuffer is the largest row buffer portalEncoder keeps for the
// next statement: a row of more makes a new encoder.
const maxKeptRowBuffer = 64 << 10

// portalEncoder returns the connection's row encoder for an Execute's
// rows, set to cols, formats and zone: one Execute at a time uses it,
// and it keeps its buffers from one to the next.
func (c *conn) portalEncoder(cols []runtime.Column, formats []int16, zone types.Zone) *rowEncoder {
	e := c.enc
	if e == nil || cap(e.buf) > maxKeptRowBuffer {
		e = &rowEncoder{}
		c.enc = e
	}
	e.cols, e.formats, e.zone = cols, formats, zone
	if cap(e.vals) < len(cols) {
		e.vals = make([][]byte, len(cols))
	}
	e.vals = e.vals[:len(cols)]
	return e
}

// commandComplete sends CommandComplete with tag, through a message
// kept by the connection (Send encodes it at once).
func (c *conn) commandComplete(tag string) {
	c.complete.CommandTag = append(c.complete.CommandTag[:0], tag...)
	c.be.Send(&c.complete)
}

// encode returns the DataRow of row, valid until the next call.
func (e *rowEncoder) encode(row zset.Row) (*pgproto3.DataRow, error) {
	e.buf, e.ends = e.buf[:0], e.ends[:0]
	for i, v := range row {
		if v.IsNull() {
			e.ends = append(e.ends, -1)
			continue
		}
		t := e.cols[i].Type
		if t.ID == types.Unknown {
			t = types.Of(types.Text)
		}
		if e.formats != nil && e.formats[i] == formatBinary {
			var err error
			if e.buf, err = types.AppendBinary(e.buf, v, t); err != nil {
				return nil, err
			}
		} else {
			e.buf = types.AppendFormatZone(e.buf, v, t, e.zone)
		}
		e.ends = append(e.ends, len(e.buf))
	}
	start := 0
	for i, end := range e.ends {
		if end < 0 {
			e.vals[i] = nil
			continue
		}
		e.vals[i] = e.buf[start:end:end]
		if e.vals[i] == nil {
			// An empty value, not NULL.
			e.vals[i] = []byte{}
		}
		start = end
	}
	e.row.Values = e.vals[:len(row)]
	return &e.row, nil
}
