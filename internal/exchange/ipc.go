package exchange

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// recordBytes is the size a record batch of an IPC stream grows to before
// the next one starts (by the rows' estimated size), so that a large
// batch is many moderate record batches.
const recordBytes = 1 << 20

// EncodeBatch appends to dst the encoding of b: its column layout, then
// the Arrow IPC stream — the schema message, record batches of b's
// entries in order, the end-of-stream marker (docs/format/exchange.md).
// An empty batch is no bytes at all.
func EncodeBatch(dst []byte, b zset.Batch) ([]byte, error) {
	if len(b) == 0 {
		return dst, nil
	}
	cols, err := layoutOf(b)
	if err != nil {
		return dst, err
	}
	schema := schemaOf(cols)
	est := 1 << 10
	for _, e := range b {
		est += rowSize(e.Row)
	}
	buf := bytes.NewBuffer(slices.Grow(appendLayout(dst, cols), est))
	mem := memory.DefaultAllocator
	w := ipc.NewWriter(buf, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	for start := 0; start < len(b); {
		end, size := start, 0
		for end < len(b) && (end == start || size < recordBytes) {
			size += rowSize(b[end].Row)
			end++
		}
		rec, err := recordOf(mem, schema, cols, b[start:end])
		if err != nil {
			return dst, err
		}
		err = w.Write(rec)
		rec.Release()
		if err != nil {
			return dst, fmt.Errorf("exchange: writing Arrow IPC: %w", err)
		}
		start = end
	}
	if err := w.Close(); err != nil {
		return dst, fmt.Errorf("exchange: writing Arrow IPC: %w", err)
	}
	return buf.Bytes(), nil
}

// rowSize estimates the bytes row takes in Arrow: a word per value plus
// the bytes of its strings.
func rowSize(row zset.Row) int {
	n := 8 * (len(row) + 1)
	for _, v := range row {
		n += len(v.Str())
	}
	return n
}

// endOfStream is the Arrow IPC stream's end marker: a continuation token
// and a zero length.
var endOfStream = []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}

// DecodeBatch decodes an Arrow IPC stream EncodeBatch wrote. Values never
// refer to data's memory. Malformed input, whatever it holds, gives an
// error of SQLSTATE 08P01 and never a panic.
func DecodeBatch(data []byte) (b zset.Batch, err error) {
	if len(data) == 0 {
		return nil, nil
	}
	defer func() {
		// The Arrow reader trusts the offsets it reads; a corrupt stream
		// can make it index out of range.
		if r := recover(); r != nil {
			b, err = nil, malformed("corrupt Arrow IPC stream: %v", r)
		}
	}()
	cols, data, err := parseLayout(data)
	if err != nil {
		return nil, err
	}
	// The schema message must be the one the layout makes: Arrow's reader
	// sizes what it allocates by the schema's counts without checking
	// them. The stream must end with its end-of-stream marker, or a
	// stream cut at a message boundary would read as a shorter one.
	if !bytes.HasPrefix(data, schemaMessage(cols)) {
		return nil, malformed("the Arrow schema message does not match the column layout")
	}
	if !bytes.HasSuffix(data, endOfStream) {
		return nil, malformed("truncated Arrow IPC stream: no end-of-stream marker")
	}
	in := bytes.NewReader(data)
	// Lengths read from the stream size the allocations, so they may not
	// exceed the stream's own. (ipc.NewReader does not pass its size
	// limits on to its message reader; this reader is given them.)
	limit := int64(len(data))
	mem := ipc.WithAllocator(memory.DefaultAllocator)
	r, err := ipc.NewReaderFromMessageReader(
		ipc.NewMessageReader(in, mem, ipc.WithMetadataSizeLimit(limit), ipc.WithBodySizeLimit(limit)), mem)
	if err != nil {
		return nil, malformed("corrupt Arrow IPC stream: %v", err)
	}
	defer r.Release()
	for r.Next() {
		rec := r.RecordBatch()
		// Each row takes at least its weight's 8 bytes.
		if rec.NumRows() < 0 || rec.NumRows() > limit/8 {
			return nil, malformed("a record batch of %d rows in %d bytes", rec.NumRows(), limit)
		}
		if b, err = appendEntries(b, rec, cols); err != nil {
			return nil, err
		}
	}
	if err := r.Err(); err != nil {
		return nil, malformed("corrupt Arrow IPC stream: %v", err)
	}
	if in.Len() != 0 {
		return nil, malformed("%d bytes after the Arrow IPC stream's end", in.Len())
	}
	return b, nil
}

// The layout's column flags.
const (
	layoutRowEncoded = 1
	layoutAllNull    = 2
)

// appendLayout appends the column layout: the column count, then each
// column's kind and flags.
func appendLayout(dst []byte, cols []column) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(cols)))
	for _, c := range cols {
		var flags byte
		if c.rowEncoded {
			flags |= layoutRowEncoded
		}
		if c.allNull {
			flags |= layoutAllNull
		}
		dst = append(dst, byte(c.kind), flags)
	}
	return dst
}

// parseLayout reads the column layout at the start of data and returns
// the columns and the rest of data.
func parseLayout(data []byte) ([]column, []byte, error) {
	n, k := binary.Uvarint(data)
	if k <= 0 || n > uint64(len(data)-k)/2 {
		return nil, nil, malformed("corrupt column layout")
	}
	data = data[k:]
	cols := make([]column, n)
	for j := range cols {
		kind, flags := types.Kind(data[2*j]), data[2*j+1]
		c := columnOf(kind, flags == layoutAllNull)
		var want byte
		if c.rowEncoded {
			want = layoutRowEncoded
		} else if c.allNull {
			want = layoutAllNull
		}
		if flags != want || (c.allNull && kind != types.KindNull) {
			return nil, nil, malformed("column %d: kind %d with layout flags %#x", j, kind, flags)
		}
		cols[j] = c
	}
	return cols, data[2*n:], nil
}

// schemaMessage returns the Arrow IPC schema message of cols, as an IPC
// writer writes it.
func schemaMessage(cols []column) []byte {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schemaOf(cols)))
	if err := w.Close(); err != nil {
		panic(fmt.Sprintf("exchange: writing a schema: %v", err))
	}
	return bytes.TrimSuffix(buf.Bytes(), endOfStream)
}
