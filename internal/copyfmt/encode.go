package copyfmt

import (
	"github.com/rockstream/rockstream/internal/types"
)

// Encoder writes rows in one COPY format, as PostgreSQL's COPY TO does.
type Encoder struct {
	opts Options
	cols []Column
	// scratch holds one value's text before it is escaped or quoted.
	scratch []byte
}

// NewEncoder returns an encoder of rows of cols. opts must have been
// normalized.
func NewEncoder(opts Options, cols []Column) *Encoder {
	return &Encoder{opts: opts, cols: cols}
}

// AppendHeader appends what precedes the rows: the binary file header, or
// the header line of column names when the options ask for one; nothing
// otherwise.
func (e *Encoder) AppendHeader(dst []byte) []byte {
	switch {
	case e.opts.Format == Binary:
		return appendBinaryHeader(dst)
	case e.opts.Header == NoHeader:
		return dst
	}
	for i, c := range e.cols {
		if i > 0 {
			dst = append(dst, e.opts.Delimiter)
		}
		if e.opts.Format == CSV {
			dst = e.appendCSV(dst, []byte(c.Name), false)
		} else {
			dst = e.appendText(dst, []byte(c.Name))
		}
	}
	return append(dst, '\n')
}

// AppendRow appends one row.
func (e *Encoder) AppendRow(dst []byte, row []types.Value) ([]byte, error) {
	if e.opts.Format == Binary {
		return e.appendBinaryRow(dst, row)
	}
	for i, v := range row {
		if i > 0 {
			dst = append(dst, e.opts.Delimiter)
		}
		if v.IsNull() {
			dst = append(dst, e.opts.Null...)
			continue
		}
		e.scratch = types.AppendFormatZone(e.scratch[:0], v, e.cols[i].Type, e.opts.Zone)
		if e.opts.Format == CSV {
			force := e.opts.ForceQuoteAll || (e.opts.ForceQuote != nil && e.opts.ForceQuote[i])
			dst = e.appendCSV(dst, e.scratch, force)
		} else {
			dst = e.appendText(dst, e.scratch)
		}
	}
	return append(dst, '\n'), nil
}

// AppendTrailer appends what follows the rows: the binary trailer; nothing
// for text and CSV.
func (e *Encoder) AppendTrailer(dst []byte) []byte {
	if e.opts.Format == Binary {
		return append(dst, 0xff, 0xff)
	}
	return dst
}

// appendText appends s escaped as the text format's CopyAttributeOutText
// does: backslash, the delimiter and the control characters with a short
// escape are backslashed; other bytes are written as they are.
func (e *Encoder) appendText(dst, s []byte) []byte {
	delim := e.opts.Delimiter
	for _, c := range s {
		if c < 0x20 {
			var esc byte
			switch c {
			case '\b':
				esc = 'b'
			case '\f':
				esc = 'f'
			case '\n':
				esc = 'n'
			case '\r':
				esc = 'r'
			case '\t':
				esc = 't'
			case '\v':
				esc = 'v'
			default:
				if c != delim {
					dst = append(dst, c)
					continue
				}
				esc = c
			}
			dst = append(dst, '\\', esc)
			continue
		}
		if c == '\\' || c == delim {
			dst = append(dst, '\\')
		}
		dst = append(dst, c)
	}
	return dst
}

// appendCSV appends s as a CSV field, quoted when force is set, when s is
// the NULL text, when it holds the delimiter, the quote or a line break,
// or when it is `\.` alone on a line.
func (e *Encoder) appendCSV(dst, s []byte, force bool) []byte {
	o := &e.opts
	quote := force || string(s) == o.Null
	if !quote {
		if len(e.cols) == 1 && string(s) == `\.` {
			quote = true
		}
		for _, c := range s {
			if c == o.Delimiter || c == o.Quote || c == '\n' || c == '\r' {
				quote = true
				break
			}
		}
	}
	if !quote {
		return append(dst, s...)
	}
	dst = append(dst, o.Quote)
	for _, c := range s {
		if c == o.Quote || c == o.Escape {
			dst = append(dst, o.Escape)
		}
		dst = append(dst, c)
	}
	return append(dst, o.Quote)
}
