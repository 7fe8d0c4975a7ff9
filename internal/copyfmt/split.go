package copyfmt

import (
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
)

// splitLine splits d.line into fields.
func (d *Decoder) splitLine() error {
	d.fieldBuf = d.fieldBuf[:0]
	d.fields = d.fields[:0]
	if d.opts.Format == CSV {
		return d.splitCSV()
	}
	return d.splitText()
}

// splitText splits a text-format line at unescaped delimiters and undoes
// the backslash escapes. A field whose raw text is the NULL string is
// NULL.
func (d *Decoder) splitText() error {
	line, delim := d.line, d.opts.Delimiter
	pos := 0
	for {
		start := pos
		outStart := len(d.fieldBuf)
		foundDelim, sawNonASCII := false, false
		end := pos
		for {
			end = pos
			if pos >= len(line) {
				break
			}
			c := line[pos]
			pos++
			if c == delim {
				foundDelim = true
				break
			}
			if c == '\\' {
				if pos >= len(line) {
					break
				}
				c = line[pos]
				pos++
				switch {
				case c >= '0' && c <= '7':
					val := int(c - '0')
					for k := 0; k < 2 && pos < len(line) && line[pos] >= '0' && line[pos] <= '7'; k++ {
						val = val<<3 + int(line[pos]-'0')
						pos++
					}
					c = byte(val)
					if c == 0 || c >= 0x80 {
						sawNonASCII = true
					}
				case c == 'x':
					if pos < len(line) && isHex(line[pos]) {
						val := hexValue(line[pos])
						pos++
						if pos < len(line) && isHex(line[pos]) {
							val = val<<4 + hexValue(line[pos])
							pos++
						}
						c = byte(val)
						if c == 0 || c >= 0x80 {
							sawNonASCII = true
						}
					}
				case c == 'b':
					c = '\b'
				case c == 'f':
					c = '\f'
				case c == 'n':
					c = '\n'
				case c == 'r':
					c = '\r'
				case c == 't':
					c = '\t'
				case c == 'v':
					c = '\v'
				}
			}
			d.fieldBuf = append(d.fieldBuf, c)
		}
		f := field{start: outStart, end: len(d.fieldBuf)}
		if string(line[start:end]) == d.opts.Null {
			f.null = true
		} else if sawNonASCII {
			if err := types.CheckUTF8(d.fieldBuf[outStart:]); err != nil {
				return errs.WithWhere(err, d.where(true))
			}
		}
		d.fields = append(d.fields, f)
		if !foundDelim {
			return nil
		}
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexValue(c byte) int {
	switch {
	case c >= 'a':
		return int(c-'a') + 10
	case c >= 'A':
		return int(c-'A') + 10
	}
	return int(c - '0')
}

// splitCSV splits a CSV line at delimiters outside quotes and undoes the
// quoting. An unquoted field whose text is the NULL string is NULL.
func (d *Decoder) splitCSV() error {
	line := d.line
	delim, quote, escape := d.opts.Delimiter, d.opts.Quote, d.opts.Escape
	pos := 0
	for {
		start := pos
		outStart := len(d.fieldBuf)
		foundDelim, sawQuote := false, false
		end := pos
	scan:
		for {
			// Outside quotes.
			for {
				end = pos
				if pos >= len(line) {
					break scan
				}
				c := line[pos]
				pos++
				if c == delim {
					foundDelim = true
					break scan
				}
				if c == quote {
					sawQuote = true
					break
				}
				d.fieldBuf = append(d.fieldBuf, c)
			}
			// Inside quotes.
			for {
				end = pos
				if pos >= len(line) {
					return d.lineError(true, "unterminated CSV quoted field")
				}
				c := line[pos]
				pos++
				if c == escape && pos < len(line) && (line[pos] == escape || line[pos] == quote) {
					d.fieldBuf = append(d.fieldBuf, line[pos])
					pos++
					continue
				}
				if c == quote {
					break
				}
				d.fieldBuf = append(d.fieldBuf, c)
			}
		}
		f := field{start: outStart, end: len(d.fieldBuf)}
		if !sawQuote && string(line[start:end]) == d.opts.Null {
			f.null = true
		}
		d.fields = append(d.fields, f)
		if !foundDelim {
			return nil
		}
	}
}

// matchHeader checks HEADER MATCH: the header line must name the columns.
func (d *Decoder) matchHeader() error {
	if err := d.splitLine(); err != nil {
		return err
	}
	if len(d.fields) != len(d.cols) {
		return d.lineError(true, "wrong number of fields in header line: got %d, expected %d", len(d.fields), len(d.cols))
	}
	for i, c := range d.cols {
		f := d.fields[i]
		if f.null {
			return d.lineError(true, "column name mismatch in header line field %d: got null value (%s), expected %s", i+1, quoted(d.opts.Null), quoted(c.Name))
		}
		if got := string(d.fieldBuf[f.start:f.end]); got != c.Name {
			return d.lineError(true, "column name mismatch in header line field %d: got %s, expected %s", i+1, quoted(got), quoted(c.Name))
		}
	}
	return nil
}
