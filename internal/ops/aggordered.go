package ops

import (
	"strings"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// string_agg(value, delimiter [ORDER BY ...]) and array_agg(value [ORDER
// BY ...]) keep their group's input in an arrangement ordered as the result
// lists it:
//
//	'a' | aggregate index | EncodeKey(group values) | sort key → varint(count)
//
// where the sort key is, for each ORDER BY key, a NULL flag byte and
// (unless NULL) the value encoded ascending or descending, then the value
// itself (EncodeKey) and, for string_agg, the delimiter, which break ties
// between rows equal on the ORDER BY keys (and order the input when there
// is no ORDER BY). A key encodes a value's equality class, so for
// array_agg over kinds whose key loses the exact representation (numeric
// scale, float -0, interval fields) the value's row encoding (EncodeRow)
// follows, and the element comes back exactly. When a step changes a
// group's arrangement, the group's result is rebuilt by one scan of it:
// the values in order, each repeated as often as it occurs (once per
// equality class with DISTINCT) — for string_agg each preceded by the
// delimiter of its own row except the first. The current result is kept
// in the group's state row so that it can be retracted. Cost: O(group
// size) per changed group per step, and the array or string itself in the
// state row.

// NULL flag bytes of an ORDER BY key: the smaller one sorts first.
const (
	orderFlagFirst byte = 0x01
	orderFlagLast  byte = 0x02
)

// orderedKey appends the sort key of one input row: the ORDER BY keys,
// then the value and the delimiter.
func (s *aggSpec) orderedKey(dst []byte, row zset.Row, v types.Value) ([]byte, error) {
	var one [1]types.Value
	for _, k := range s.call.Order {
		x, err := k.Expr.Eval(row)
		if err != nil {
			return nil, err
		}
		dst = appendOrderKey(dst, k, x)
	}
	if s.fn == fnArrayAgg {
		one[0] = v
		dst = zset.EncodeKey(dst, one[:]...)
		if keyLossy(v.Kind()) {
			dst = zset.EncodeRow(dst, one[:])
		}
		return dst, nil
	}
	delim, err := s.call.More[0].Eval(row)
	if err != nil {
		return nil, err
	}
	return zset.EncodeKey(dst, v, delim), nil
}

// appendOrderKey appends x's part of a sort key under ORDER BY key k: a
// NULL flag byte and, unless x is NULL, x encoded ascending or
// descending.
func appendOrderKey(dst []byte, k plan.SortKey, x types.Value) []byte {
	if x.IsNull() {
		if k.NullsFirst {
			return append(dst, orderFlagFirst)
		}
		return append(dst, orderFlagLast)
	}
	if k.NullsFirst {
		dst = append(dst, orderFlagLast)
	} else {
		dst = append(dst, orderFlagFirst)
	}
	if k.Desc {
		return zset.EncodeKeyDesc(dst, x)
	}
	return zset.EncodeKey(dst, x)
}

// keyLossy reports whether values of kind k have keys that encode their
// equality class rather than their exact representation.
func keyLossy(k types.Kind) bool {
	switch k {
	case types.Float4, types.Float8, types.Numeric, types.Interval, types.Jsonb:
		return true
	}
	return false
}

// arrangeOrdered adds w copies of a row's sort key to the group's
// arrangement.
func (a *Aggregate) arrangeOrdered(st state.Store, s *aggSpec, acc *accum, gkey, okey []byte, w int64) error {
	acc.dirty = true
	a.key2 = append(append(append(a.key2[:0], s.prefix.of(gkey)...), gkey...), okey...)
	var err error
	a.buf, err = addWeightAt(st, a.key2, w, a.buf)
	return err
}

// orderedValue rebuilds string_agg's or array_agg's result from the
// group's arrangement: NULL when it is empty.
func (a *Aggregate) orderedValue(st state.Store, s *aggSpec, gkey []byte) (types.Value, error) {
	a.arrKey = append(append(a.arrKey[:0], s.prefix.of(gkey)...), gkey...)
	plen := len(a.arrKey)
	var (
		b       strings.Builder
		elems   []types.Value
		class   []byte // array_agg DISTINCT: the previous value's key
		seen    bool
		scanErr error
	)
	fn := func(k, v []byte) bool {
		w, _, err := readWeight(v)
		if err != nil {
			scanErr = err
			return false
		}
		if w <= 0 {
			return true
		}
		rest := k[plen:]
		for _, ok := range s.call.Order {
			if len(rest) == 0 {
				scanErr = corrupt("string_agg key")
				return false
			}
			flag := rest[0]
			rest = rest[1:]
			if (flag == orderFlagFirst) == ok.NullsFirst {
				continue // a NULL key: no value follows its flag
			}
			if _, rest, err = zset.DecodeKeyValue(rest); err != nil {
				scanErr = err
				return false
			}
		}
		if s.call.Distinct {
			w = 1
		}
		if s.fn == fnArrayAgg {
			v, tail, err := zset.DecodeKeyValue(rest)
			if err == nil && keyLossy(v.Kind()) {
				var exact zset.Row
				if exact, err = zset.DecodeRow(tail); err == nil && len(exact) != 1 {
					err = corrupt("array_agg key")
				}
				if err == nil {
					v = exact[0]
				}
			}
			if err != nil {
				scanErr = err
				return false
			}
			if s.call.Distinct {
				// Equal values are adjacent; keep the first of each class.
				valueKey := rest[:len(rest)-len(tail)]
				if seen && string(valueKey) == string(class) {
					return true
				}
				class = append(class[:0], valueKey...)
			}
			for ; w > 0; w-- {
				elems = append(elems, v)
			}
			seen = true
			return true
		}
		vals, _, err := zset.DecodeKey(rest, 2)
		if err != nil {
			scanErr = err
			return false
		}
		for ; w > 0; w-- {
			if seen && !vals[1].IsNull() {
				b.WriteString(vals[1].Str())
			}
			b.WriteString(vals[0].Str())
			seen = true
		}
		return true
	}
	a.endKey = zset.KeyPrefixEnd(a.endKey[:0], a.arrKey)
	if err := st.Scan(a.arrKey, a.endKey, fn); err != nil {
		return types.Null, err
	}
	if scanErr != nil {
		return types.Null, scanErr
	}
	if !seen {
		return types.Null, nil
	}
	if s.fn == fnArrayAgg {
		if at := s.call.Arg.Type().ID; at.IsArray() {
			return types.AccumArrays(at.Elem(), elems)
		}
		return types.MakeArray(s.call.Arg.Type().ID, elems), nil
	}
	if s.result.ID == types.Bytea {
		return types.MakeBytea([]byte(b.String())), nil
	}
	return types.MakeText(b.String()), nil
}
