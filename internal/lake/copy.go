package lake

import (
	"bytes"
	"encoding/binary"
	"strings"
)

// binarySignature starts every binary COPY stream.
const binarySignature = "PGCOPY\n\xff\r\n\x00"

// copyOutBuf renders rows as the CopyData messages PostgreSQL sends
// for COPY ... TO STDOUT, one row at a time as a scan produces them:
// text rows (tab-separated, \N or the NULL string, backslash escapes), or
// the binary format (signature, flags, extension length, then per row
// the field count and each field as length and bytes, then a -1
// trailer). PostgreSQL sends the binary header with the first row and
// the trailer alone. The messages are kept in chunks of up to about
// copyChunk bytes, so a big result is never copied to grow a buffer.
type copyOutBuf struct {
	f      copyFmt
	chunks [][]byte
	msgs   []copyRowAt
}

// copyRowAt is where one row's message is: chunk, start and end.
type copyRowAt struct{ chunk, start, end int32 }

const copyChunk = 64 << 10

// add renders one row; it keeps nothing of row.
func (c *copyOutBuf) add(row []Value) error {
	if n := len(c.chunks); n == 0 || len(c.chunks[n-1]) >= cap(c.chunks[n-1])-cap(c.chunks[n-1])/16 {
		// Chunks start small, for the many one-row scans, and double up
		// to copyChunk.
		size := 4 << 10
		if n > 0 {
			size = min(2*cap(c.chunks[n-1]), copyChunk)
		}
		c.chunks = append(c.chunks, make([]byte, 0, size))
	}
	ci := len(c.chunks) - 1
	b := c.chunks[ci]
	start := len(b)
	if !c.f.binary {
		for i, v := range row {
			if i > 0 {
				b = append(b, '\t')
			}
			if v.Null {
				b = append(b, c.f.nullStr...)
				continue
			}
			b = append(b, escapeCopyText(v.Text())...)
		}
		b = append(b, '\n')
	} else {
		if len(c.msgs) == 0 {
			b = appendBinaryHeader(b)
		}
		b = binary.BigEndian.AppendUint16(b, uint16(len(row)))
		for _, v := range row {
			if v.Null {
				b = binary.BigEndian.AppendUint32(b, 0xFFFFFFFF)
				continue
			}
			at := len(b)
			b = append(b, 0, 0, 0, 0)
			b = v.AppendBinary(b)
			binary.BigEndian.PutUint32(b[at:], uint32(len(b)-at-4))
		}
	}
	c.chunks[ci] = b
	c.msgs = append(c.msgs, copyRowAt{int32(ci), int32(start), int32(len(b))})
	return nil
}

// rows is the number of rows added.
func (c *copyOutBuf) rows() int { return len(c.msgs) }

// messages calls fn with each CopyData payload in order (the binary
// trailer last); fn must not keep the slices.
func (c *copyOutBuf) messages(fn func([]byte) error) error {
	for _, m := range c.msgs {
		if err := fn(c.chunks[m.chunk][m.start:m.end]); err != nil {
			return err
		}
	}
	if !c.f.binary {
		return nil
	}
	var trailer []byte
	if len(c.msgs) == 0 {
		trailer = appendBinaryHeader(trailer)
	}
	return fn(append(trailer, 0xFF, 0xFF))
}

func appendBinaryHeader(b []byte) []byte {
	b = append(b, binarySignature...)
	return append(b, 0, 0, 0, 0, 0, 0, 0, 0)
}

func escapeCopyText(s string) string {
	if !strings.ContainsAny(s, "\\\t\n\r\b\f\v") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\v':
			b.WriteString(`\v`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func copyError(format string, args ...any) *sqlError {
	return errorf(codeBadCopyFormat, format, args...)
}

// decodeCopyIn parses a whole COPY ... FROM STDIN stream into rows for
// the given columns. Any malformed input fails the whole COPY: nothing
// of it is stored.
func decodeCopyIn(data []byte, cols []Column, f copyFmt) ([][]Value, error) {
	if f.binary {
		return decodeBinaryCopy(data, cols)
	}
	return decodeTextCopy(data, cols, f.nullStr)
}

func decodeBinaryCopy(data []byte, cols []Column) ([][]Value, error) {
	if len(data) < len(binarySignature)+8 || string(data[:len(binarySignature)]) != binarySignature {
		return nil, copyError("COPY file signature not recognized")
	}
	p := data[len(binarySignature):]
	flags := binary.BigEndian.Uint32(p)
	if flags&(1<<16) != 0 {
		return nil, copyError("COPY file with OIDs is not supported")
	}
	if flags&^uint32(0xFFFF) != 0 {
		return nil, copyError("unrecognized critical flags in COPY file header")
	}
	ext := binary.BigEndian.Uint32(p[4:])
	p = p[8:]
	if uint64(len(p)) < uint64(ext) {
		return nil, copyError("invalid COPY file header (wrong length)")
	}
	p = p[ext:]
	var rows [][]Value
	for {
		if len(p) < 2 {
			return nil, copyError("unexpected EOF in COPY data")
		}
		n := int16(binary.BigEndian.Uint16(p))
		p = p[2:]
		if n == -1 {
			if len(p) != 0 {
				return nil, copyError("received copy data after EOF marker")
			}
			return rows, nil
		}
		if int(n) != len(cols) {
			return nil, copyError("row field count is %d, expected %d", n, len(cols))
		}
		row := make([]Value, len(cols))
		for i, c := range cols {
			if len(p) < 4 {
				return nil, copyError("unexpected EOF in COPY data")
			}
			l := int32(binary.BigEndian.Uint32(p))
			p = p[4:]
			if l == -1 {
				row[i] = nullOf(c.Type)
				continue
			}
			if l < 0 || int(l) > len(p) {
				return nil, copyError("unexpected EOF in COPY data")
			}
			v, err := decodeBinary(c.Type, p[:l])
			if err != nil {
				return nil, err
			}
			row[i] = v
			p = p[l:]
		}
		rows = append(rows, row)
	}
}

func decodeTextCopy(data []byte, cols []Column, nullStr string) ([][]Value, error) {
	var rows [][]Value
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if string(line) == `\.` {
			break
		}
		fields := strings.Split(string(line), "\t")
		if len(fields) < len(cols) {
			return nil, copyError("missing data for column %q", cols[len(fields)].Name)
		}
		if len(fields) > len(cols) {
			return nil, copyError("extra data after last expected column")
		}
		row := make([]Value, len(cols))
		for i, raw := range fields {
			if raw == nullStr {
				row[i] = nullOf(cols[i].Type)
				continue
			}
			s, err := unescapeCopyText(raw)
			if err != nil {
				return nil, err
			}
			v, err := parseText(cols[i].Type, s)
			if err != nil {
				return nil, err
			}
			row[i] = v
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func unescapeCopyText(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch n := s[i]; n {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'x':
			j := i + 1
			var v byte
			for ; j < len(s) && j < i+3 && isHex(s[j]); j++ {
				v = v*16 + hexVal(s[j])
			}
			if j == i+1 {
				b.WriteByte('x')
				continue
			}
			b.WriteByte(v)
			i = j - 1
		default:
			if n >= '0' && n <= '7' {
				j := i
				var v byte
				for ; j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7'; j++ {
					v = v*8 + (s[j] - '0')
				}
				b.WriteByte(v)
				i = j - 1
				continue
			}
			b.WriteByte(n)
		}
	}
	return b.String(), nil
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// copyColumns returns the column definitions a COPY FROM reads.
func copyColumns(t *Table, idx []int) []Column {
	out := make([]Column, len(idx))
	for i, c := range idx {
		out[i] = t.Cols[c]
	}
	return out
}
