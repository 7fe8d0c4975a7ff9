package diff

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
)

// release runs "release REL COL TIME" (TIME without spaces, as
// 2026-01-02T10:00): the watermark of column COL of table REL is at TIME;
// the circuit releases closed windows. It prints the number of state keys
// before and after.
func (h *harness) release(t *testing.T, d *datadriven.TestData) string {
	if len(d.CmdArgs) != 3 {
		d.Fatalf(t, "usage: release REL COL TIME")
	}
	rel, colName, lit := d.CmdArgs[0].Key, d.CmdArgs[1].Key, d.CmdArgs[2].Key
	cols, ok := h.pp.tables[rel]
	if !ok {
		d.Fatalf(t, "unknown table %q", rel)
	}
	col := -1
	for i, c := range cols {
		if c.Name == colName {
			col = i
		}
	}
	if col < 0 {
		d.Fatalf(t, "no column %q in %s", colName, rel)
	}
	wm, err := types.Parse(cols[col].Type, lit)
	if err != nil {
		d.Fatalf(t, "%v", err)
	}
	before := countKeys(t, h.store)
	ov := state.NewOverlay(h.store)
	if err := h.circuit.ReleaseClosedWindows(ov, rel, col, wm); err != nil {
		return errString(err) + "\n"
	}
	if err := ov.Commit(); err != nil {
		d.Fatalf(t, "%v", err)
	}
	return fmt.Sprintf("state keys: %d → %d\n", before, countKeys(t, h.store))
}

func countKeys(t *testing.T, st state.Reader) int {
	n := 0
	if err := st.Scan(nil, nil, func(_, _ []byte) bool {
		n++
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return n
}
