package ops

import (
	"bytes"
	"context"

	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// Distinct turns a multiset into a set: a row is in the output once when
// its accumulated weight is positive. Rows are compared with SQL's =, so
// NUMERIC 1.0 and 1.00 are one row; the one emitted is the smallest
// representation present (see class.go). State: each representation's
// accumulated weight,
//
//	prefix(row) | EncodeKey(row) | 0x01 | EncodeRow(row) → varint(weight)
//
// prefix(row) being the operator's prefix in the bucket of EncodeKey(row),
// the key its input is routed by.
//
// Only rows in the delta are examined: a row is emitted (+1) when its
// class's weight goes from ≤ 0 to > 0 and retracted (−1) for the reverse
// (or re-emitted when the representative changes). Weights may be negative
// (a Distinct over a difference); only the sign of the total matters.
type Distinct struct {
	prefix *bucketed
	enc    []byte
	key    []byte
	rep    []byte
	oldRep []byte
	cls    classScan
}

// NewDistinct returns a Distinct keeping its counts under prefix.
func NewDistinct(prefix Prefix) *Distinct {
	d := &Distinct{prefix: prefix.expand()}
	d.cls.init()
	return d
}

// Step implements Operator.
func (d *Distinct) Step(ctx context.Context, st state.Store, in []zset.Batch) (zset.Batch, error) {
	var out zset.Batch
	for i, e := range in[0] {
		if err := Interrupted(ctx, i); err != nil {
			return nil, err
		}
		d.enc = zset.EncodeKey(d.enc[:0], e.Row...)
		d.key = append(append(append(d.key[:0], d.prefix.of(d.enc)...), d.enc...), repSep)
		if err := d.cls.load(st, d.key); err != nil {
			return nil, err
		}
		oldTotal, first, err := d.cls.summary()
		if err != nil {
			return nil, err
		}
		d.oldRep = d.oldRep[:0]
		if oldTotal > 0 {
			d.oldRep = append(d.oldRep, d.cls.rep(first)...)
		}
		d.rep = zset.EncodeRow(d.rep[:0], e.Row)
		if _, err := d.cls.add(st, d.key, d.rep, e.Weight); err != nil {
			return nil, err
		}
		newTotal, first, err := d.cls.summary()
		if err != nil {
			return nil, err
		}
		var newRep []byte
		if newTotal > 0 {
			newRep = d.cls.rep(first)
		}
		if oldTotal > 0 && newTotal > 0 && bytes.Equal(d.oldRep, newRep) {
			continue
		}
		if oldTotal > 0 {
			row, err := zset.DecodeRow(d.oldRep)
			if err != nil {
				return nil, err
			}
			out = append(out, zset.Entry{Row: row, Weight: -1})
		}
		if newTotal > 0 {
			row := e.Row
			if !bytes.Equal(newRep, d.rep) {
				if row, err = zset.DecodeRow(newRep); err != nil {
					return nil, err
				}
			}
			out = append(out, zset.Entry{Row: row, Weight: 1})
		}
	}
	return zset.Consolidate(out)
}
