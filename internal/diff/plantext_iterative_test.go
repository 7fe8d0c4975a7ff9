package diff

import (
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// buildIterative parses the plan text of recursive queries and time
// windows:
//
//	recursive NAME union [all] [limit N]   inputs: the non-recursive term, the recursive term
//	working NAME                           the working table of NAME; its columns are those of
//	                                       the table NAME declared by the script
//	tumble COL 'size'                      input: the rows to window
//	hop COL 'slide' 'size'
func (pp *planParser) buildIterative(kind string, lx *lexer, children []plan.Node) (plan.Node, error) {
	switch kind {
	case "recursive":
		if err := needInputs(children, 2); err != nil {
			return nil, err
		}
		name := lx.next()
		if err := lx.expect("union"); err != nil {
			return nil, err
		}
		r := &plan.Recursive{Name: name, ID: recursionID(name), Base: children[0], Step: children[1],
			Distinct: !lx.accept("all"), Cols: children[0].Columns()}
		if lx.accept("limit") {
			n, err := strconv.Atoi(lx.next())
			if err != nil {
				return nil, err
			}
			r.MaxIterations = n
		}
		base, step := r.Base.Columns(), r.Step.Columns()
		if len(base) != len(step) {
			return nil, fmt.Errorf("terms have %d and %d columns", len(base), len(step))
		}
		for i := range base {
			if base[i].Type != step[i].Type {
				return nil, fmt.Errorf("column %d is %s in the non-recursive term, %s in the recursive one", i, base[i].Type, step[i].Type)
			}
		}
		return r, lx.end()
	case "working":
		name := lx.next()
		cols, ok := pp.tables[name]
		if !ok {
			return nil, fmt.Errorf("declare the working table's columns as table %s", name)
		}
		return &plan.WorkingTable{Name: name, ID: recursionID(name), Cols: cols}, lx.end()
	case "tumble", "hop":
		if err := needInputs(children, 1); err != nil {
			return nil, err
		}
		in := children[0]
		col := lx.next()
		w := &plan.TimeWindow{Input: in, Func: kind, TimeCol: -1}
		for i, c := range in.Columns() {
			if c.Name == col {
				w.TimeCol = i
			}
		}
		if w.TimeCol < 0 {
			return nil, fmt.Errorf("no column %q", col)
		}
		sizes := []*int64{&w.Size}
		if kind == "hop" {
			sizes = []*int64{&w.Slide, &w.Size}
		}
		for _, p := range sizes {
			iv, err := types.ParseInterval(strings.Trim(lx.next(), "'"))
			if err != nil {
				return nil, err
			}
			*p = int64(iv.Days)*86_400_000_000 + iv.Micros
		}
		if kind == "tumble" {
			w.Slide = w.Size
		}
		t := in.Columns()[w.TimeCol].Type
		w.Cols = append(append([]plan.Column(nil), in.Columns()...),
			plan.Column{Name: "window_start", Type: t}, plan.Column{Name: "window_end", Type: t})
		return w, lx.end()
	}
	return nil, fmt.Errorf("unknown node %q", kind)
}

// recursionID pairs a recursive query with its working table by name.
func recursionID(name string) int { return int(crc32.ChecksumIEEE([]byte(name))) }
