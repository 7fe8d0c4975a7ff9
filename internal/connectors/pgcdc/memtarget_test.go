package pgcdc

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// memTarget holds the source's tables as multisets of rows in memory and
// commits a batch and its progress together, as an epoch does.
type memTarget struct {
	mu       sync.Mutex
	tables   []Table
	rows     []map[string]memRow // by encoded row
	progress []byte
	epochs   int
	// failNext makes the next Apply fail without changing anything.
	failNext error
	// applied hears every committed batch.
	applied func(deltas map[int]*TableDelta)
}

type memRow struct {
	row   zset.Row
	count int64
}

func newMemTarget(tables []Table) *memTarget {
	m := &memTarget{tables: tables}
	for range tables {
		m.rows = append(m.rows, map[string]memRow{})
	}
	return m
}

func (m *memTarget) Progress(context.Context) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.progress, nil
}

func (m *memTarget) RowByKey(table int, key zset.Row) (zset.Row, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := &m.tables[table]
	for _, r := range m.rows[table] {
		match := true
		for _, k := range t.Key {
			if types.Compare(r.row[k], key[k]) != 0 {
				match = false
			}
		}
		if match {
			return r.row, true, nil
		}
	}
	return nil, false, nil
}

func (m *memTarget) Apply(_ context.Context, deltas map[int]*TableDelta, progress []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failNext; err != nil {
		m.failNext = nil
		return err
	}
	next := make([]map[string]memRow, len(m.rows))
	for i, rows := range m.rows {
		d := deltas[i]
		if d == nil {
			next[i] = rows
			continue
		}
		n := map[string]memRow{}
		if !d.Truncate {
			for k, v := range rows {
				n[k] = v
			}
		}
		for _, e := range d.Delta {
			k := string(zset.EncodeRow(nil, e.Row))
			r := n[k]
			r.row, r.count = e.Row, r.count+e.Weight
			if r.count < 0 {
				return errors.New("memTarget: a row's count went negative")
			}
			if r.count == 0 {
				delete(n, k)
			} else {
				n[k] = r
			}
		}
		next[i] = n
	}
	m.rows, m.progress = next, progress
	m.epochs++
	if m.applied != nil {
		m.applied(deltas)
	}
	return nil
}

// text returns table i's rows as sorted text lines (columns separated by
// |, NULL as \N), the form upstreamText gives PostgreSQL's.
func (m *memTarget) text(i int) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := &m.tables[i]
	var lines []string
	for _, r := range m.rows[i] {
		for c := int64(0); c < r.count; c++ {
			lines = append(lines, formatRow(t, r.row))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func formatRow(t *Table, row zset.Row) string {
	parts := make([]string, len(row))
	for j, v := range row {
		if v.IsNull() {
			parts[j] = `\N`
		} else {
			parts[j] = types.Format(v, t.Columns[j].Type)
		}
	}
	return strings.Join(parts, "|")
}
