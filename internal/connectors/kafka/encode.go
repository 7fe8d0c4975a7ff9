package kafka

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// appendRow appends a row as a JSON object of its columns: numbers and
// booleans as JSON numbers and booleans (numeric exactly as written, NaN
// and infinities as strings), jsonb as the JSON value it holds, NULL as
// null, everything else as the string PostgreSQL would print.
func appendRow(dst []byte, cols []runtime.Column, row zset.Row) []byte {
	if row == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '{')
	for i, c := range cols {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, c.Name)
		dst = append(dst, ':')
		dst = appendValue(dst, c.Type, row[i])
	}
	return append(dst, '}')
}

func appendValue(dst []byte, t types.Type, v types.Value) []byte {
	if v.IsNull() {
		return append(dst, "null"...)
	}
	s := types.Format(v, t)
	switch t.ID {
	case types.Int2, types.Int4, types.Int8:
		return append(dst, s...)
	case types.Bool:
		return strconv.AppendBool(dst, v.Bool())
	case types.Jsonb:
		return append(dst, s...) // jsonb's text is its JSON

	case types.Float4, types.Float8, types.Numeric:
		if strings.ContainsAny(s, "NI") {
			return appendString(dst, s)
		}
		return append(dst, s...)
	}
	return appendString(dst, s)
}

func appendString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s)
	return append(dst, b...)
}

// appendKey appends the JSON object of a row's key columns.
func appendKey(dst []byte, cols []runtime.Column, key []int, row zset.Row) []byte {
	dst = append(dst, '{')
	for j, i := range key {
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, cols[i].Name)
		dst = append(dst, ':')
		dst = appendValue(dst, cols[i].Type, row[i])
	}
	return append(dst, '}')
}
