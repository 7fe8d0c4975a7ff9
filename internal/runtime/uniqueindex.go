package runtime

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// UNIQUE indexes. A unique index is a secondary index (index.go) whose
// keys no two rows of its table share: rows whose key holds a NULL are
// exempt (NULLs are distinct), unless the index is NULLS NOT DISTINCT.
//
// Invariants:
//   - The check runs after the statement's delta has been applied to the
//     index, in the statement's overlay (indexWritten): it sees the
//     committed rows, the earlier statements of the transaction block and
//     the statement's own rows, and the rows the statement removes are
//     gone. A key is a duplicate when the weights of its entries sum past
//     one. A violation fails the statement (23505), whose writes are then
//     discarded: the committed store never holds a duplicate.
//   - So the check is of the statement's end state, as for a DEFERRABLE
//     INITIALLY IMMEDIATE constraint: an UPDATE that swaps two keys
//     passes, where PostgreSQL's row-by-row check of a non-deferrable
//     index may fail it.
//   - Only tables have unique indexes; every write path of a table (INSERT,
//     UPDATE, DELETE, COPY, connectors, ingestion) goes through
//     indexWritten.

// uniqueWord is "UNIQUE " for a unique index, "" for another.
func (ix *index) uniqueWord() string {
	if ix.unique {
		return "UNIQUE "
	}
	return ""
}

// nullsClause is " NULLS NOT DISTINCT" for an index whose NULLs are equal.
func (ix *index) nullsClause() string {
	if ix.nullsNotDistinct {
		return " NULLS NOT DISTINCT"
	}
	return ""
}

// checkUnique fails with PostgreSQL's 23505 when delta, just applied to
// o's rows and to ix, gave one of its inserted rows' keys to two rows.
func checkUnique(st state.Reader, o *object, ix *index, delta zset.Batch) error {
	row, err := duplicateKey(st, o, ix, delta)
	if err != nil || row == nil {
		return err
	}
	return ix.violation(o, row)
}

// violation is PostgreSQL's 23505 for row, whose key in ix another row
// of o holds.
func (ix *index) violation(o *object, row zset.Row) error {
	e := errs.Newf(errs.UniqueViolation, "duplicate key value violates unique constraint %q", ix.name).(*errs.Error)
	e.Detail = fmt.Sprintf("Key %s already exists.", ix.keyText(o, row))
	return e
}

// checkUniqueBuild is checkUnique for rows just written to ix while it is
// built, with the error of PostgreSQL's CREATE UNIQUE INDEX.
func checkUniqueBuild(st state.Reader, o *object, ix *index, rows zset.Batch) error {
	row, err := duplicateKey(st, o, ix, rows)
	if err != nil || row == nil {
		return err
	}
	e := errs.Newf(errs.UniqueViolation, "could not create unique index %q", ix.name).(*errs.Error)
	e.Detail = fmt.Sprintf("Key %s is duplicated.", ix.keyText(o, row))
	return e
}

// duplicateKey returns the first row of delta with a positive weight
// whose key in ix more than one stored row holds, or nil.
func duplicateKey(st state.Reader, o *object, ix *index, delta zset.Batch) (zset.Row, error) {
	if !ix.unique {
		return nil, nil
	}
	var seen map[string]bool
	if len(delta) > 1 {
		seen = make(map[string]bool, len(delta))
	}
	var key []byte
rows:
	for _, e := range delta {
		if e.Weight <= 0 {
			continue
		}
		if !ix.nullsNotDistinct {
			for _, c := range ix.cols {
				if e.Row[c].IsNull() {
					continue rows
				}
			}
		}
		key = ix.lookupKey(key[:0], e.Row)
		if seen != nil {
			if seen[string(key)] {
				continue
			}
			seen[string(key)] = true
		}
		var held int64
		var bad error
		err := st.Scan(key, state.PrefixEnd(key), func(_, v []byte) bool {
			w, n := binary.Varint(v)
			if n <= 0 {
				bad = errs.Newf(errs.DataCorrupted, "index %s: corrupt entry weight", ix.name)
				return false
			}
			held += w
			return held <= 1
		})
		if err == nil {
			err = bad
		}
		if err != nil {
			return nil, err
		}
		if held > 1 {
			return e.Row, nil
		}
	}
	return nil, nil
}

// lookupKey appends to dst the prefix of the entries of ix whose key
// is row's: ix's prefix, the key's bucket, the key.
func (ix *index) lookupKey(dst []byte, row zset.Row) []byte {
	dst = append(append(dst, ix.prefix()...), 0)
	n := len(dst)
	for _, c := range ix.cols {
		dst = zset.EncodeKey(dst, row[c])
	}
	dst[n-1] = byte(zset.Bucket(dst[n:]))
	return dst
}

// keyText is row's key in ix as PostgreSQL's errors show it: (a, b)=(1, x).
func (ix *index) keyText(o *object, row zset.Row) string {
	names, vals := make([]string, len(ix.cols)), make([]string, len(ix.cols))
	for i, c := range ix.cols {
		names[i] = quoteIdent(o.cols[c].Name)
		if v := row[c]; v.IsNull() {
			vals[i] = "null"
		} else {
			vals[i] = types.Format(v, o.cols[c].Type)
		}
	}
	return "(" + strings.Join(names, ", ") + ")=(" + strings.Join(vals, ", ") + ")"
}
