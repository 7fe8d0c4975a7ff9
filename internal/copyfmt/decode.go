package copyfmt

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
)

// eolStyle is the line break the data uses, fixed by its first line as
// PostgreSQL fixes it: every later line must end the same way.
type eolStyle uint8

const (
	eolUnknown eolStyle = iota
	eolNL               // \n
	eolCR               // \r
	eolCRNL             // \r\n
)

// Decoder reads rows from COPY data.
type Decoder struct {
	r    *bufio.Reader
	opts Options
	rel  string
	cols []Column

	// lineNo is PostgreSQL's cur_lineno: the number of the line (or binary
	// tuple) being read, the header being line 1.
	lineNo int64
	eol    eolStyle
	// started is set once the header (text, CSV) or file header (binary)
	// has been read.
	started bool
	// ended is set once the data has ended.
	ended bool

	// line is the current line without its line break; fieldBuf holds
	// the values split from it, fields their bounds.
	line     []byte
	fieldBuf []byte
	fields   []field

	// big holds a binary field larger than the read buffer; rows is the
	// unused rest of the block binary rows are carved from.
	big  bytes.Buffer
	rows []types.Value

	// grow, when set, is told of each growth of the line buffer, and
	// fails the read when it returns an error (SetGrow).
	grow func(size int64) error
}

// SetGrow makes the decoder call grow with its line buffer's new size in
// bytes each time the buffer grows, before it reads on: a line of one
// huge field grows it, and grow (a memory governor) can stop the read by
// returning an error, which the read returns.
func (d *Decoder) SetGrow(grow func(size int64) error) { d.grow = grow }

// grew reports the line buffer's size when it grew from capacity before.
func (d *Decoder) grew(before int) error {
	if d.grow == nil || cap(d.line) == before {
		return nil
	}
	return d.grow(int64(cap(d.line)))
}

// field is one value of a line: fieldBuf[start:end], or NULL.
type field struct {
	start, end int
	null       bool
}

// NewDecoder returns a decoder of COPY data read from r, for rows of cols
// of the relation named rel (named in error context lines). opts must have
// been normalized.
func NewDecoder(r io.Reader, opts Options, rel string, cols []Column) *Decoder {
	return &Decoder{r: bufio.NewReaderSize(r, 64<<10), opts: opts, rel: rel, cols: cols}
}

// Line returns the number of the line (binary: tuple) last read, counted
// as PostgreSQL counts them for error messages.
func (d *Decoder) Line() int64 { return d.lineNo }

// Next returns the next row, or io.EOF after the last. The row is the
// caller's: the decoder never writes to it again. After an error the
// decoder must not be used again.
func (d *Decoder) Next() ([]types.Value, error) {
	if d.ended {
		return nil, io.EOF
	}
	if d.opts.Format == Binary {
		return d.nextBinary()
	}
	if !d.started {
		d.started = true
		if d.opts.Header != NoHeader {
			d.lineNo++
			end, err := d.readLine()
			if err != nil {
				return nil, err
			}
			if d.opts.Header == HeaderMatch {
				if err := d.matchHeader(); err != nil {
					return nil, err
				}
			}
			if end {
				return nil, d.finish()
			}
		}
	}
	d.lineNo++
	end, err := d.readLine()
	if err != nil {
		return nil, err
	}
	if end && len(d.line) == 0 {
		return nil, d.finish()
	}
	row, err := d.parseLine()
	if err != nil {
		return nil, err
	}
	if end {
		d.ended = true
	}
	return row, nil
}

// finish marks the data ended and discards whatever follows the end of
// data, as PostgreSQL ignores the rest of the stream after `\.`.
func (d *Decoder) finish() error {
	d.ended = true
	if _, err := io.Copy(io.Discard, d.r); err != nil {
		return err
	}
	return io.EOF
}

// Where returns the context line PostgreSQL gives an error about the row
// last read as a whole (a constraint violation): the relation, the line
// number and, for text and CSV, the line.
func (d *Decoder) Where() string { return d.where(d.opts.Format != Binary) }

// where returns the context line of an error about the line as a whole.
func (d *Decoder) where(withText bool) string {
	if withText {
		return fmt.Sprintf("COPY %s, line %d: %s", d.rel, d.lineNo, quoted(limitPrintout(string(d.line))))
	}
	return fmt.Sprintf("COPY %s, line %d", d.rel, d.lineNo)
}

// lineError returns a 22P04 error about the current line.
func (d *Decoder) lineError(withText bool, format string, args ...any) error {
	return errs.WithWhere(errs.Newf(errs.BadCopyFileFormat, format, args...), d.where(withText))
}

// quoted double-quotes s as PostgreSQL's messages do: verbatim.
func quoted(s string) string { return `"` + s + `"` }

// limitPrintout cuts s as PostgreSQL's limit_printout_length does: to 100
// bytes, not splitting a character, followed by "...".
func limitPrintout(s string) string {
	const max = 100
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// readLine reads one line into d.line, without its line break (a CSV line
// may span several physical lines inside quotes). It reports end when the
// data ended: at the end of the input or at the end-of-data marker `\.`;
// d.line then holds whatever preceded the end.
func (d *Decoder) readLine() (end bool, err error) {
	d.line = d.line[:0]
	csv := d.opts.Format == CSV
	quote, escape := d.opts.Quote, d.opts.Escape
	if escape == quote {
		// The quote doubled is then just two toggles.
		escape = 0
	}
	inQuote, lastWasEsc, first := false, false, true
	for {
		c, err := d.r.ReadByte()
		if err == io.EOF {
			return true, d.checkEncoding()
		}
		if err != nil {
			return false, err
		}
		if csv {
			if inQuote && c == escape {
				lastWasEsc = !lastWasEsc
			}
			if c == quote && !lastWasEsc {
				inQuote = !inQuote
			}
			if c != escape {
				lastWasEsc = false
			}
			embedded := byte('\r')
			if d.eol == eolNL {
				embedded = '\n'
			}
			if inQuote && c == embedded {
				d.lineNo++
			}
		}
		if c == '\r' && (!csv || !inQuote) {
			if err := d.endCR(csv); err != nil {
				return false, err
			}
			return false, d.checkEncoding()
		}
		if c == '\n' && (!csv || !inQuote) {
			if d.eol == eolCR || d.eol == eolCRNL {
				if csv {
					return false, d.lineError(false, "unquoted newline found in data")
				}
				return false, d.lineError(false, "literal newline found in data")
			}
			d.eol = eolNL
			return false, d.checkEncoding()
		}
		if c == '\\' && (!csv || first) {
			next, perr := d.r.Peek(1)
			if perr != nil {
				// A backslash at the very end of the data ends the line.
				d.line = append(d.line, c)
				return true, d.checkEncoding()
			}
			if next[0] == '.' {
				isEnd, err := d.endOfData(csv)
				if err != nil {
					return false, err
				}
				if isEnd {
					return true, d.checkEncoding()
				}
			} else if !csv {
				// In text, the character after a backslash is data even
				// when it is a line break.
				before := cap(d.line)
				d.line = append(d.line, c, next[0])
				if err := d.grew(before); err != nil {
					return false, err
				}
				_, _ = d.r.ReadByte()
				first = false
				continue
			}
		}
		before := cap(d.line)
		d.line = append(d.line, c)
		if err := d.grew(before); err != nil {
			return false, err
		}
		first = false
	}
}

// endCR handles a carriage return that ends a line.
func (d *Decoder) endCR(csv bool) error {
	next, err := d.r.Peek(1)
	nl := err == nil && next[0] == '\n'
	switch d.eol {
	case eolUnknown:
		if nl {
			_, _ = d.r.ReadByte()
			d.eol = eolCRNL
		} else {
			d.eol = eolCR
		}
	case eolCRNL:
		if !nl {
			return d.literalCR(csv)
		}
		_, _ = d.r.ReadByte()
	case eolNL:
		return d.literalCR(csv)
	}
	return nil
}

func (d *Decoder) literalCR(csv bool) error {
	if csv {
		return d.lineError(false, "unquoted carriage return found in data")
	}
	return d.lineError(false, "literal carriage return found in data")
}

// endOfData decides whether the `\.` that follows (the backslash has been
// read) is the end-of-data marker, as PostgreSQL 15's CopyReadLineText
// does: it must be followed by the data's line break. In text a corrupt
// marker is an error; in CSV it is data. When it is the marker, the
// marker and its line break are consumed.
func (d *Decoder) endOfData(csv bool) (bool, error) {
	ahead, _ := d.r.Peek(4) // '.', then up to two line-break bytes
	at := func(i int) byte {
		if i < len(ahead) {
			return ahead[i]
		}
		return 0
	}
	notEnd := func(msg string) (bool, error) {
		if csv {
			return false, nil
		}
		return false, d.lineError(false, "%s", msg)
	}
	i := 1
	if d.eol == eolCRNL {
		switch c2 := at(i); {
		case c2 == '\n':
			return notEnd("end-of-copy marker does not match previous newline style")
		case c2 != '\r':
			return notEnd("end-of-copy marker corrupt")
		}
		i++
	}
	c2 := at(i)
	if c2 != '\r' && c2 != '\n' {
		return notEnd("end-of-copy marker corrupt")
	}
	if (d.eol == eolNL && c2 != '\n') || (d.eol == eolCRNL && c2 != '\n') || (d.eol == eolCR && c2 != '\r') {
		return false, d.lineError(false, "end-of-copy marker does not match previous newline style")
	}
	if _, err := d.r.Discard(i + 1); err != nil {
		return false, err
	}
	if _, err := io.Copy(io.Discard, d.r); err != nil {
		return false, err
	}
	return true, nil
}

// checkEncoding fails unless the line just read is valid UTF-8 without
// zero bytes, as the server encoding requires.
func (d *Decoder) checkEncoding() error {
	if err := types.CheckUTF8(d.line); err != nil {
		return errs.WithWhere(err, d.where(false))
	}
	return nil
}

// parseLine splits the current line into values and converts them to the
// columns' types.
func (d *Decoder) parseLine() ([]types.Value, error) {
	if err := d.splitLine(); err != nil {
		return nil, err
	}
	if len(d.fields) > len(d.cols) {
		return nil, d.lineError(true, "extra data after last expected column")
	}
	row := d.newRow()
	for i, col := range d.cols {
		if i >= len(d.fields) {
			return nil, d.lineError(true, "missing data for column %s", quoted(col.Name))
		}
		f := d.fields[i]
		s := string(d.fieldBuf[f.start:f.end])
		null := f.null
		if d.opts.Format == CSV {
			switch {
			case null && d.opts.ForceNotNull != nil && d.opts.ForceNotNull[i]:
				s, null = d.opts.Null, false
			case !null && d.opts.ForceNull != nil && d.opts.ForceNull[i] && s == d.opts.Null:
				null = true
			}
		}
		if null {
			row[i] = types.Null
			continue
		}
		v, err := types.ParseZone(col.Type, s, d.opts.Zone)
		if err != nil {
			return nil, errs.WithWhere(err, fmt.Sprintf("COPY %s, line %d, column %s: %s", d.rel, d.lineNo, col.Name, quoted(limitPrintout(s))))
		}
		row[i] = v
	}
	return row, nil
}
