package main

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"

	"github.com/rockstream/rockstream"
)

// This file prints result sets byte for byte as psql does with its default
// settings: the aligned format (border 1, ascii line style, no wrapping,
// NULL shown as an empty string) and the --csv format. Scripts written for
// psql can therefore diff RockStream's output against PostgreSQL's.

// PostgreSQL type OIDs that psql right-aligns (column_type_alignment in
// psql): the integer, floating-point, numeric, money and identifier types.
var rightAlignedOIDs = map[uint32]bool{
	20:   true, // int8
	21:   true, // int2
	23:   true, // int4
	26:   true, // oid
	28:   true, // xid
	29:   true, // cid
	700:  true, // float4
	701:  true, // float8
	790:  true, // money
	1700: true, // numeric
	5069: true, // xid8
}

// writeCSV prints res as psql --csv does: a header line of column names,
// then one line per row. A field is quoted only when it contains a comma, a
// double quote, CR or LF, or is exactly `\.`; NULL and the empty string both
// print as an empty field, as in psql.
func writeCSV(w io.Writer, res *rockstream.Result) error {
	var b strings.Builder
	for i, c := range res.Columns {
		if i > 0 {
			b.WriteByte(',')
		}
		writeCSVField(&b, c.Name)
	}
	b.WriteByte('\n')
	if len(res.Columns) > 0 {
		for _, row := range res.Rows {
			for i, v := range row {
				if i > 0 {
					b.WriteByte(',')
				}
				if v != nil {
					writeCSVField(&b, *v)
				}
			}
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeCSVField(b *strings.Builder, s string) {
	if !strings.ContainsAny(s, ",\"\r\n") && s != `\.` {
		b.WriteString(s)
		return
	}
	b.WriteByte('"')
	b.WriteString(strings.ReplaceAll(s, `"`, `""`))
	b.WriteByte('"')
}

// cellLines is a value split into display lines, each already escaped for
// the terminal (tabs expanded, control characters spelled out), with each
// line's display width.
type cellLines struct {
	text  []string
	width []int
}

// formatCell splits s at newlines and makes each line printable as psql's
// pg_wcsformat does: a tab advances to the next multiple of 8 columns, CR
// prints as \r, other ASCII control characters as \xNN, non-ASCII control
// characters as \uNNNN. Widths count East Asian wide characters as 2 and
// combining and format characters as 0.
func formatCell(s string) cellLines {
	var out cellLines
	var line strings.Builder
	lw := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			// Not UTF-8: pass the byte through as one column.
			line.WriteByte(s[i])
			lw++
			i++
			continue
		}
		switch w := runeWidth(r); {
		case r == '\n':
			out.text = append(out.text, line.String())
			out.width = append(out.width, lw)
			line.Reset()
			lw = 0
		case r == '\r':
			line.WriteString(`\r`)
			lw += 2
		case r == '\t':
			for {
				line.WriteByte(' ')
				lw++
				if lw%8 == 0 {
					break
				}
			}
		case w < 0 && size == 1:
			fmt.Fprintf(&line, `\x%02X`, r)
			lw += 4
		case w < 0:
			fmt.Fprintf(&line, `\u%04X`, r)
			lw += 6
		default:
			line.WriteString(s[i : i+size])
			lw += w
		}
		i += size
	}
	out.text = append(out.text, line.String())
	out.width = append(out.width, lw)
	return out
}

// runeWidth is the number of terminal columns r occupies, following
// PostgreSQL's ucs_wcwidth: -1 for control characters, 0 for NUL and for
// non-spacing (Mn, Me) and format (Cf) characters, 2 for East Asian wide
// and fullwidth characters, 1 otherwise.
func runeWidth(r rune) int {
	switch {
	case r == 0:
		return 0
	case r < 0x20 || (r >= 0x7f && r < 0xa0) || r > unicode.MaxRune:
		return -1
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// displayWidth is the width of s on a terminal when printed on one line,
// counting control characters as one column (psql's error cursor does the
// same).
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		if w := runeWidth(r); w > 0 {
			n += w
		} else {
			n++
		}
	}
	return n
}

// writeAligned prints res as psql's default aligned format does: centred
// column names, a rule, one line per row (more for values with newlines,
// continued with '+' marks), numbers right-aligned, then a "(N rows)"
// footer and a blank line.
func writeAligned(w io.Writer, res *rockstream.Result) error {
	ncol := len(res.Columns)
	headers := make([]cellLines, ncol)
	widths := make([]int, ncol)
	right := make([]bool, ncol)
	for i, c := range res.Columns {
		headers[i] = formatCell(c.Name)
		widths[i] = maxInt(widths[i], headers[i].width...)
		right[i] = rightAlignedOIDs[c.TypeOID]
	}
	var rows [][]cellLines
	if ncol > 0 {
		rows = make([][]cellLines, len(res.Rows))
		for r, row := range res.Rows {
			rows[r] = make([]cellLines, ncol)
			for i := 0; i < ncol; i++ {
				s := ""
				if i < len(row) && row[i] != nil {
					s = *row[i]
				}
				rows[r][i] = formatCell(s)
				widths[i] = maxInt(widths[i], rows[r][i].width...)
			}
		}
	}

	var b strings.Builder
	writeAlignedHeader(&b, headers, widths)
	b.WriteByte('-')
	for i, wd := range widths {
		if i > 0 {
			b.WriteString("-+-")
		}
		b.WriteString(strings.Repeat("-", wd))
	}
	b.WriteString("-\n")
	for _, row := range rows {
		writeAlignedRow(&b, row, widths, right)
	}
	if len(res.Rows) == 1 {
		b.WriteString("(1 row)\n")
	} else {
		fmt.Fprintf(&b, "(%d rows)\n", len(res.Rows))
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// writeAlignedHeader prints the column names centred in their columns; a
// name with newlines takes several lines, each but the last marked '+'.
func writeAlignedHeader(b *strings.Builder, headers []cellLines, widths []int) {
	remaining := len(headers)
	done := make([]bool, len(headers))
	for line := 0; remaining > 0; line++ {
		for i, h := range headers {
			b.WriteByte(' ')
			if !done[i] {
				pad := widths[i] - h.width[line]
				b.WriteString(strings.Repeat(" ", pad/2))
				b.WriteString(h.text[line])
				b.WriteString(strings.Repeat(" ", (pad+1)/2))
				if line == len(h.text)-1 {
					done[i] = true
					remaining--
				}
			} else {
				b.WriteString(strings.Repeat(" ", widths[i]))
			}
			if done[i] {
				b.WriteByte(' ')
			} else {
				b.WriteByte('+')
			}
			if i < len(headers)-1 {
				b.WriteByte('|')
			}
		}
		b.WriteByte('\n')
	}
}

// writeAlignedRow prints one row, using as many lines as its tallest value.
// The last column is not padded on the right unless a '+' continuation
// mark follows it, as in psql.
func writeAlignedRow(b *strings.Builder, row []cellLines, widths []int, right []bool) {
	last := len(row) - 1
	for line := 0; ; line++ {
		more := false
		for j, c := range row {
			b.WriteByte(' ')
			if line >= len(c.text) {
				if j < last {
					b.WriteString(strings.Repeat(" ", widths[j]))
					b.WriteString(" |")
				}
				continue
			}
			pad := widths[j] - c.width[line]
			continues := line+1 < len(c.text)
			more = more || continues
			if right[j] {
				b.WriteString(strings.Repeat(" ", pad))
				b.WriteString(c.text[line])
			} else {
				b.WriteString(c.text[line])
				if j < last || continues {
					b.WriteString(strings.Repeat(" ", pad))
				}
			}
			switch {
			case continues:
				b.WriteByte('+')
			case j < last:
				b.WriteByte(' ')
			}
			if j < last {
				b.WriteByte('|')
			}
		}
		b.WriteByte('\n')
		if !more {
			return
		}
	}
}

func maxInt(m int, xs ...int) int {
	for _, x := range xs {
		if x > m {
			m = x
		}
	}
	return m
}
