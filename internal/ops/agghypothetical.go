package ops

import (
	"bytes"

	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// The hypothetical-set aggregates rank, dense_rank, percent_rank and
// cume_dist(args) WITHIN GROUP (ORDER BY keys) place a hypothetical row
// (the direct arguments, constant per group) among the group's rows. They
// keep the group's rows' sort keys, NULLs included and placed by NULLS
// FIRST/LAST, with their counts:
//
//	'a' | aggregate index | EncodeKey(group values) | sort key → varint(count)
//
// where the sort key is, per ORDER BY key, a NULL flag byte and the value
// encoded ascending or descending (aggordered.go's appendOrderKey); rows
// equal on every key share an entry. The group's state row keeps the
// count of rows, the current result and a cursor (rankCursor) at the
// hypothetical row's key: how many rows sort before it, which every input
// row sorting before it moves by its weight, and for dense_rank how many
// distinct keys do, which changes when a key's count crosses zero (one
// read per input row). A change to a group recomputes the result from the
// cursor and the count of the hypothetical row's peers (one read). The
// first time, or when the hypothetical row changed (it may depend on how
// the group values are written), it reads the entries before the
// hypothetical row instead (cost: that many distinct keys):
//
//	rank         = 1 + rows before
//	dense_rank   = 1 + distinct keys before
//	percent_rank = rows before / rows (0 over no rows)
//	cume_dist    = (rows before or equal + 1) / (rows + 1)
//
// as PostgreSQL's final functions compute them; over no rows rank and
// dense_rank are 1, percent_rank 0 and cume_dist 1.

// hypothetical reports whether the aggregate is a hypothetical-set one.
func (s *aggSpec) hypothetical() bool {
	return s.fn == fnRank || s.fn == fnDenseRank || s.fn == fnPercentRank || s.fn == fnCumeDist
}

// hypotheticalKey appends the sort key of one input row.
func (s *aggSpec) hypotheticalKey(dst []byte, row zset.Row) ([]byte, error) {
	for _, k := range s.call.Order {
		x, err := k.Expr.Eval(row)
		if err != nil {
			return nil, err
		}
		dst = appendOrderKey(dst, k, x)
	}
	return dst, nil
}

// takeHypothetical folds w copies of a row with sort key okey into the
// aggregate's count and arrangement.
func (a *Aggregate) takeHypothetical(st state.Store, s *aggSpec, acc *accum, gkey, okey []byte, w int64) error {
	if err := addCount(&acc.rows, w); err != nil {
		return err
	}
	if err := moveCursors(acc.cursors, okey, w); err != nil {
		return err
	}
	if s.fn == fnDenseRank && len(acc.cursors) == 1 {
		// The cursor's count is the number of distinct keys before the
		// hypothetical row: it changes when a key's count crosses zero.
		if c := &acc.cursors[0]; c.valid && bytes.Compare(okey, c.key) < 0 {
			a.key2 = append(append(append(a.key2[:0], s.prefix.of(gkey)...), gkey...), okey...)
			raw, ok, err := st.Get(a.key2)
			if err != nil {
				return err
			}
			var old int64
			if ok {
				if old, _, err = readWeight(raw); err != nil {
					return err
				}
			}
			switch now := old + w; {
			case old <= 0 && now > 0:
				c.count++
			case old > 0 && now <= 0:
				c.count--
			}
		}
	}
	return a.arrangeOrdered(st, s, acc, gkey, okey, w)
}

// hypotheticalEmpty is the result over no rows.
func (s *aggSpec) hypotheticalEmpty() types.Value {
	switch s.fn {
	case fnPercentRank:
		return types.MakeFloat8(0)
	case fnCumeDist:
		return types.MakeFloat8(1)
	}
	return types.MakeInt(types.Int8, 1)
}

// hypotheticalValue computes the aggregate's result over the group's
// arrangement, placing the row of direct arguments evaluated over the
// group's values gvals.
func (a *Aggregate) hypotheticalValue(st state.Store, s *aggSpec, gkey []byte, gvals []types.Value, acc *accum) (types.Value, error) {
	if acc.rows == 0 {
		return s.hypotheticalEmpty(), nil
	}
	a.arrKey = append(append(a.arrKey[:0], s.prefix.of(gkey)...), gkey...)
	a.key2 = append(a.key2[:0], a.arrKey...)
	for i, k := range s.call.Order {
		x, err := s.call.Direct[i].Eval(gvals)
		if err != nil {
			return types.Null, err
		}
		a.key2 = appendOrderKey(a.key2, k, x)
	}
	hkey := a.key2[len(a.arrKey):]
	if len(acc.cursors) != 1 {
		acc.cursors = append(acc.cursors[:0], rankCursor{})
	}
	c := &acc.cursors[0]
	before, distinct := c.before, c.count
	if !c.valid || !bytes.Equal(c.key, hkey) {
		var scanErr error
		before, distinct = 0, 0
		err := st.Scan(a.arrKey, a.key2, func(_, v []byte) bool {
			w, _, err := readWeight(v)
			if err != nil {
				scanErr = err
				return false
			}
			if w > 0 {
				before += w
				distinct++
			}
			return true
		})
		if err == nil {
			err = scanErr
		}
		if err != nil {
			return types.Null, err
		}
		*c = rankCursor{valid: true, key: append([]byte(nil), hkey...), before: before, count: distinct}
	}
	n := acc.rows
	switch s.fn {
	case fnRank:
		return types.MakeInt(types.Int8, before+1), nil
	case fnDenseRank:
		return types.MakeInt(types.Int8, distinct+1), nil
	case fnPercentRank:
		return types.MakeFloat8(float64(before) / float64(n)), nil
	}
	peers := int64(0)
	raw, ok, err := st.Get(a.key2)
	if err != nil {
		return types.Null, err
	}
	if ok {
		if peers, _, err = readWeight(raw); err != nil {
			return types.Null, err
		}
	}
	return types.MakeFloat8(float64(before+peers+1) / float64(n+1)), nil
}
