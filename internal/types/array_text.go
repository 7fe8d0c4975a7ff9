package types

import (
	"errors"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
)

// Array text input and output, as PostgreSQL's array_in and array_out.
//
// Output is {e1,e2,...} with NULL for NULL elements, one level of braces
// per dimension ({{1,2},{3,4}}), preceded by the dimension decoration
// "[lo:hi][lo:hi]=" when some lower bound is not 1; an element is
// double-quoted, with " and \ escaped by a backslash, when it is empty, is
// NULL in any case, or contains a brace, a quote, a backslash, a comma or
// white space. Input accepts what array_in accepts: white space around
// elements, quoted and backslash-escaped elements, unquoted NULL (any
// case) for NULL, sub-arrays of equal lengths at each level, up to
// MaxArrayDims levels, and an optional dimension decoration that must
// agree with the braces and sets the lower bounds.

// arrayDelim is the element delimiter of every supported element type
// (PostgreSQL's typdelim; only box uses another).
const arrayDelim = ','

// isArraySpace is PostgreSQL's array_isspace: the ASCII white space that
// array_in skips and array_out quotes.
func isArraySpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}

// appendArrayText appends array_out's text of the array v of type t.
func appendArrayText(dst []byte, v Value, t Type, z Zone) []byte {
	et := t.Elem()
	if !t.ID.IsArray() {
		et = Of(v.kind.Elem())
	}
	dims, lbs := v.ArrayShape()
	if len(dims) == 0 {
		return append(dst, "{}"...)
	}
	if !allLowerBoundsOne(lbs) {
		dst = append(appendArrayDims(dst, dims, lbs), '=')
	}
	// idx counts the subscripts (from 0) of the element written next; a
	// brace opens for each level whose subscript is 0 and closes for
	// each that is at its end.
	idx := make([]int, len(dims))
	var scratch []byte
	for i, e := range v.Elems() {
		open := len(dims)
		for open > 0 && idx[open-1] == 0 {
			open--
		}
		if i > 0 {
			dst = append(dst, arrayDelim)
		}
		for range len(dims) - open {
			dst = append(dst, '{')
		}
		if e.IsNull() {
			dst = append(dst, "NULL"...)
		} else {
			scratch = AppendFormatZone(scratch[:0], e, et, z)
			dst = appendArrayElement(dst, scratch)
		}
		for l := len(dims) - 1; l >= 0; l-- {
			if idx[l]++; idx[l] < dims[l] {
				break
			}
			idx[l] = 0
			dst = append(dst, '}')
		}
	}
	return dst
}

// appendArrayElement appends one element's text, quoted when array_out
// quotes it.
func appendArrayElement(dst, text []byte) []byte {
	if !elementNeedsQuotes(text) {
		return append(dst, text...)
	}
	dst = append(dst, '"')
	for _, c := range text {
		if c == '"' || c == '\\' {
			dst = append(dst, '\\')
		}
		dst = append(dst, c)
	}
	return append(dst, '"')
}

func elementNeedsQuotes(text []byte) bool {
	if len(text) == 0 || strings.EqualFold(string(text), "NULL") {
		return true
	}
	for _, c := range text {
		if c == '"' || c == '\\' || c == '{' || c == '}' || c == arrayDelim || isArraySpace(c) {
			return true
		}
	}
	return false
}

// malformedArray is array_in's 22P02 error.
func malformedArray(s string) error {
	return errs.Newf(errs.InvalidTextRep, "malformed array literal: %s", quoteInput(s))
}

// parseArray is array_in for the array type t: the structure is checked
// first (as PostgreSQL's ArrayCount does), then each element is read and
// passed to the element type's input function.
func parseArray(t Type, s string, z Zone) (Value, error) {
	p := 0
	lower, upper, err := parseArrayDims(s, &p)
	if err != nil {
		return Null, err
	}
	ndim := len(lower)
	if ndim == 0 {
		if p >= len(s) || s[p] != '{' {
			return Null, malformedArray(s)
		}
	} else {
		if !strings.HasPrefix(s[p:], "=") {
			return Null, malformedArray(s)
		}
		p++
		for p < len(s) && isArraySpace(s[p]) {
			p++
		}
		if p >= len(s) || s[p] != '{' {
			return Null, malformedArray(s)
		}
	}
	dims, err := countArray(s[p:])
	if err != nil {
		return Null, err
	}
	if ndim > 0 {
		if len(dims) != ndim {
			return Null, malformedArray(s)
		}
		for i, d := range dims {
			if d != upper[i]-lower[i]+1 {
				return Null, malformedArray(s)
			}
		}
	} else {
		lower = make([]int, len(dims))
		for i := range lower {
			lower[i] = 1
		}
	}
	et := t.Elem()
	count := 1
	for _, d := range dims {
		count *= d
	}
	if len(dims) == 0 {
		count = 0
	}
	if err := CheckArrayShape(dims, lower); err != nil {
		return Null, err
	}
	elems := make([]Value, 0, count)
	if len(dims) > 0 {
		err = readArrayElements(s[p:], func(text string, null bool) error {
			if null {
				elems = append(elems, Null)
				return nil
			}
			v, err := ParseZone(et, text, z)
			elems = append(elems, v)
			return err
		})
		if err != nil {
			return Null, err
		}
	}
	return MakeArrayShape(valueKindOf(et.ID), elems, dims, lower), nil
}

// parseArrayDims reads the optional "[lo:hi]" decorations before the
// braces, advancing *p past them and the white space around them. It
// returns the bounds of each.
func parseArrayDims(s string, p *int) (lower, upper []int, err error) {
	for {
		for *p < len(s) && isArraySpace(s[*p]) {
			*p++
		}
		if *p >= len(s) || s[*p] != '[' {
			return lower, upper, nil
		}
		if len(lower) >= MaxArrayDims {
			return nil, nil, tooManyDims(len(lower) + 1)
		}
		*p++
		num := func() (int, bool) {
			q := *p
			for q < len(s) && (s[q] >= '0' && s[q] <= '9' || s[q] == '-' || s[q] == '+') {
				q++
			}
			if q == *p {
				return 0, false
			}
			n := atoiPrefix(s[*p:q])
			*p = q
			return n, true
		}
		lo, hi := 1, 0
		n, ok := num()
		if !ok {
			return nil, nil, malformedArray(s)
		}
		if *p < len(s) && s[*p] == ':' {
			lo = n
			*p++
			if n, ok = num(); !ok {
				return nil, nil, malformedArray(s)
			}
		}
		hi = n
		if *p >= len(s) || s[*p] != ']' {
			return nil, nil, malformedArray(s)
		}
		*p++
		if hi < lo {
			return nil, nil, errs.New(errs.ArraySubscriptError, "upper bound cannot be less than lower bound")
		}
		lower, upper = append(lower, lo), append(upper, hi)
	}
}

// atoiPrefix is C's atoi as glibc's behaves on 64-bit machines: the
// longest valid integer prefix (0 if none) as strtol reads it, saturating
// at the int64 limits, then truncated to a 32-bit int.
func atoiPrefix(s string) int {
	end := 0
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, err := strconv.ParseInt(s[:end], 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0
	}
	return int(int32(n))
}

// The states of countArray's scan, as PostgreSQL's ArrayCount names them.
type arrayParseState uint8

const (
	arrayNoLevel arrayParseState = iota
	arrayLevelStarted
	arrayElemStarted
	arrayQuotedElemStarted
	arrayQuotedElemCompleted
	arrayElemDelimited
	arrayLevelCompleted
	arrayLevelDelimited
)

// countArray checks the brace structure of body (which starts with '{')
// as PostgreSQL's ArrayCount does and returns the length of each
// dimension, outermost first (none for an empty array). Its errors quote
// body, as ArrayCount's do.
func countArray(body string) (dims []int, err error) {
	ndim := 0
	state := arrayNoLevel
	inQuotes, empty := false, true
	nest := 0
	// elems[l] counts the elements of the current sub-array at level l;
	// last[l] is the count of the previous sibling, which must match.
	var elems, last []int
	i := 0
	for ; ; i++ {
		if state == arrayElemStarted || state == arrayQuotedElemStarted {
			empty = false
		}
		if i >= len(body) {
			return nil, malformedArray(body)
		}
		c := body[i]
		switch {
		case c == '\\':
			if state != arrayLevelStarted && state != arrayElemStarted &&
				state != arrayQuotedElemStarted && state != arrayElemDelimited {
				return nil, malformedArray(body)
			}
			if state != arrayQuotedElemStarted {
				state = arrayElemStarted
			}
			if i+1 >= len(body) {
				return nil, malformedArray(body)
			}
			i++
		case c == '"':
			if state != arrayLevelStarted && state != arrayQuotedElemStarted && state != arrayElemDelimited {
				return nil, malformedArray(body)
			}
			inQuotes = !inQuotes
			if inQuotes {
				state = arrayQuotedElemStarted
			} else {
				state = arrayQuotedElemCompleted
			}
		case inQuotes:
		case c == '{':
			if state != arrayNoLevel && state != arrayLevelStarted && state != arrayLevelDelimited {
				return nil, malformedArray(body)
			}
			if nest >= MaxArrayDims {
				return nil, tooManyDims(nest + 1)
			}
			state = arrayLevelStarted
			nest++
			if nest > ndim {
				ndim = nest
				elems = append(elems, 0)
				last = append(last, 0)
			}
			elems[nest-1] = 0
		case c == '}':
			if state != arrayElemStarted && state != arrayQuotedElemCompleted && state != arrayLevelCompleted &&
				!(nest == 1 && state == arrayLevelStarted) {
				return nil, malformedArray(body)
			}
			// The level's last element (if any) ends here.
			if state != arrayLevelStarted {
				elems[nest-1]++
			}
			state = arrayLevelCompleted
			nest--
			l := nest
			if last[l] != 0 && elems[l] != last[l] {
				return nil, malformedArray(body)
			}
			last[l] = elems[l]
			if nest == 0 {
				goto done
			}
		case c == arrayDelim:
			if state != arrayElemStarted && state != arrayQuotedElemCompleted && state != arrayLevelCompleted {
				return nil, malformedArray(body)
			}
			if state == arrayLevelCompleted {
				state = arrayLevelDelimited
			} else {
				state = arrayElemDelimited
			}
			elems[nest-1]++
		case isArraySpace(c):
		default:
			if state != arrayLevelStarted && state != arrayElemStarted && state != arrayElemDelimited {
				return nil, malformedArray(body)
			}
			state = arrayElemStarted
		}
	}
done:
	for _, c := range []byte(body[i+1:]) {
		if !isArraySpace(c) {
			return nil, malformedArray(body)
		}
	}
	if empty {
		return nil, nil
	}
	return last[:ndim], nil
}

// readArrayElements calls emit with each element of an array body
// already checked by countArray, as PostgreSQL's ReadArrayStr reads them:
// quotes and backslashes removed, leading and trailing unquoted white
// space dropped, null set for an unquoted, unescaped NULL (any case). The
// braces of inner levels are skipped, so every element of a
// multidimensional array is read too.
func readArrayElements(body string, emit func(text string, null bool) error) error {
	var buf []byte
	i, nest := 1, 1 // past '{'
	for {
		buf = buf[:0]
		inQuotes, leading, quoted := false, true, false
		end := 0 // length of buf up to its last significant byte
		for {
			c := body[i]
			if c == '\\' {
				buf = append(buf, body[i+1])
				i += 2
				leading, quoted = false, true
				end = len(buf)
				continue
			}
			if c == '"' {
				inQuotes = !inQuotes
				if inQuotes {
					leading = false
				} else {
					end = len(buf)
				}
				quoted = true
				i++
				continue
			}
			if inQuotes {
				buf = append(buf, c)
				i++
				continue
			}
			if c == '{' {
				nest++
				i++
				continue
			}
			if c == '}' && nest > 1 {
				nest--
				i++
				continue
			}
			if c == '}' || c == arrayDelim {
				break
			}
			if isArraySpace(c) {
				if !leading {
					buf = append(buf, c)
				}
				i++
				continue
			}
			buf = append(buf, c)
			leading = false
			end = len(buf)
			i++
		}
		text := string(buf[:end])
		if err := emit(text, !quoted && strings.EqualFold(text, "NULL")); err != nil {
			return err
		}
		if body[i] == '}' {
			return nil
		}
		i++
	}
}
