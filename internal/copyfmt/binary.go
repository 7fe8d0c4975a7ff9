package copyfmt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
)

// The binary format (PostgreSQL's "COPY BINARY"): an 11-byte signature, a
// 32-bit flags word (bit 16: OIDs, which is not supported; other bits of
// the high half are critical and must be zero), a 32-bit header-extension
// length and that many bytes; then per tuple a 16-bit field count and per
// field a 32-bit length (-1 for NULL) followed by the value in its type's
// binary representation; and a 16-bit -1 as the trailer. Every integer is
// big-endian.
var binarySignature = []byte("PGCOPY\n\xff\r\n\x00")

func appendBinaryHeader(dst []byte) []byte {
	dst = append(dst, binarySignature...)
	return append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
}

func (e *Encoder) appendBinaryRow(dst []byte, row []types.Value) ([]byte, error) {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(row)))
	for i, v := range row {
		if v.IsNull() {
			dst = binary.BigEndian.AppendUint32(dst, 0xffffffff)
			continue
		}
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		var err error
		if dst, err = types.AppendBinary(dst, v, e.cols[i].Type); err != nil {
			return nil, err
		}
		binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	}
	return dst, nil
}

// binaryError is a 22P04 error about the binary data.
func binaryError(msg string) error { return errs.New(errs.BadCopyFileFormat, msg) }

// readBinaryHeader reads and checks the file header.
func (d *Decoder) readBinaryHeader() error {
	var sig [11]byte
	if _, err := io.ReadFull(d.r, sig[:]); err != nil || !bytes.Equal(sig[:], binarySignature) {
		return binaryError("COPY file signature not recognized")
	}
	flags, ok := d.readInt32()
	if !ok {
		return binaryError("invalid COPY file header (missing flags)")
	}
	if flags&(1<<16) != 0 {
		return binaryError("invalid COPY file header (WITH OIDS)")
	}
	if uint32(flags)&^(1<<16)>>16 != 0 {
		return binaryError("unrecognized critical flags in COPY file header")
	}
	ext, ok := d.readInt32()
	if !ok || ext < 0 {
		return binaryError("invalid COPY file header (missing length)")
	}
	if n, _ := io.CopyN(io.Discard, d.r, int64(ext)); n != int64(ext) {
		return binaryError("invalid COPY file header (wrong length)")
	}
	return nil
}

func (d *Decoder) readInt32() (int32, bool) {
	b, ok := d.readFixed(4)
	if !ok {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(b)), true
}

// readFixed returns the next n bytes (n no larger than the read buffer),
// valid until the next read, and false when the data ends first. It reads
// in place: a per-row array handed to io.ReadFull would escape to the heap
// and cost an allocation per field.
func (d *Decoder) readFixed(n int) ([]byte, bool) {
	b, err := d.r.Peek(n)
	if err != nil {
		return nil, false
	}
	_, _ = d.r.Discard(n)
	return b, true
}

// nextBinary reads one binary tuple.
func (d *Decoder) nextBinary() ([]types.Value, error) {
	if !d.started {
		d.started = true
		if err := d.readBinaryHeader(); err != nil {
			return nil, err
		}
	}
	d.lineNo++
	b, ok := d.readFixed(2)
	if !ok {
		// The data may end without a trailer, as PostgreSQL allows.
		d.ended = true
		return nil, io.EOF
	}
	count := int16(binary.BigEndian.Uint16(b))
	if count == -1 {
		d.ended = true
		if _, err := d.r.ReadByte(); err == nil {
			return nil, errs.WithWhere(binaryError("received copy data after EOF marker"), d.where(false))
		}
		return nil, io.EOF
	}
	if int(count) != len(d.cols) {
		return nil, errs.WithWhere(errs.Newf(errs.BadCopyFileFormat, "row field count is %d, expected %d", count, len(d.cols)), d.where(false))
	}
	row := d.newRow()
	for i, col := range d.cols {
		where := func() string { return fmt.Sprintf("COPY %s, line %d, column %s", d.rel, d.lineNo, col.Name) }
		size, ok := d.readInt32()
		switch {
		case !ok:
			return nil, errs.WithWhere(binaryError("unexpected EOF in COPY data"), where())
		case size == -1:
			row[i] = types.Null
			continue
		case size < 0:
			return nil, errs.WithWhere(binaryError("invalid field size"), where())
		}
		field, ok := d.readField(int(size))
		if !ok {
			return nil, errs.WithWhere(binaryError("unexpected EOF in COPY data"), where())
		}
		v, err := types.ParseBinary(field, col.Type)
		if err != nil {
			return nil, errs.WithWhere(err, where())
		}
		row[i] = v
	}
	return row, nil
}

// readField returns the next size bytes of the data, valid until the next
// read, and false when the data ends first. A field that fits the read
// buffer is read in place; a larger one is copied into a buffer that
// grows with the data that arrives, so that a corrupt length cannot make
// it allocate more than the input.
func (d *Decoder) readField(size int) ([]byte, bool) {
	if size <= d.r.Size() {
		b, err := d.r.Peek(size)
		if err != nil {
			return nil, false
		}
		_, _ = d.r.Discard(size)
		return b, true
	}
	d.big.Reset()
	if n, _ := io.CopyN(&d.big, d.r, int64(size)); n != int64(size) {
		return nil, false
	}
	return d.big.Bytes(), true
}

// newRow returns a row for the next tuple, carved from a block of rows
// allocated at once; a row is never reused, since the caller keeps it.
func (d *Decoder) newRow() []types.Value {
	n := len(d.cols)
	if len(d.rows) < n {
		d.rows = make([]types.Value, n*max(1, 4096/max(n, 1)))
	}
	row := d.rows[:n:n]
	d.rows = d.rows[n:]
	return row
}
