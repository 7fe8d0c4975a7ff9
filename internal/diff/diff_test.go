package diff

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// TestCircuits runs the golden scripts in testdata/. Commands:
//
//	table NAME        input: one "column type" per line
//	build [query]     input: a plan (see plantext_test.go); prints EXPLAIN
//	step              input: "REL +N v, v, ..." or "REL -N ..." lines;
//	                  prints the output delta
//	show              prints the accumulated view contents
//	release REL COL TIME
//	                  releases the state of windows closed by a watermark
//	                  (windows_test.go)
//
// After every step the harness also checks the promise the circuit exists
// for: the accumulated output equals a batch evaluation (a fresh circuit
// stepped once over the accumulated inputs), and holds no negative weight.
func TestCircuits(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		if !strings.HasSuffix(path, ".txt") {
			t.Skip("not a script") // e.g. rapid's failure files
		}
		h := &harness{pp: planParser{tables: map[string][]plan.Column{}}}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return h.run(t, d)
		})
	})
}

type harness struct {
	pp       planParser
	plan     plan.Node
	forQuery bool
	circuit  *Circuit
	store    state.Store
	inputs   map[string]zset.Batch
	view     zset.Batch
}

func (h *harness) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "table":
		var cols []plan.Column
		for _, l := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			f := strings.Fields(l)
			if len(f) != 2 {
				d.Fatalf(t, "bad column %q", l)
			}
			typ, err := types.TypeByName([]string{f[1]}, nil)
			if err != nil {
				d.Fatalf(t, "%v", err)
			}
			cols = append(cols, plan.Column{Name: f[0], Type: typ})
		}
		h.pp.tables[d.CmdArgs[0].Key] = cols
		return ""

	case "build":
		p, err := h.pp.parse(d.Input)
		if err != nil {
			d.Fatalf(t, "%v", err)
		}
		h.plan, h.forQuery = p, d.HasArg("query")
		h.circuit, err = Build(p, []byte("v/"), h.forQuery)
		if err != nil {
			return errString(err)
		}
		h.store = state.NewMemory()
		h.inputs = map[string]zset.Batch{}
		h.view = nil
		return h.circuit.Explain()

	case "step":
		deltas := map[string]zset.Batch{}
		for _, l := range strings.Split(d.Input, "\n") {
			if strings.TrimSpace(l) == "" {
				continue
			}
			rel, rest, _ := strings.Cut(strings.TrimSpace(l), " ")
			ws, vals, _ := strings.Cut(strings.TrimSpace(rest), " ")
			w, err := strconv.ParseInt(ws, 10, 64)
			if err != nil {
				d.Fatalf(t, "bad weight in %q", l)
			}
			cols, ok := h.pp.tables[rel]
			if !ok {
				d.Fatalf(t, "unknown table %q", rel)
			}
			row, err := parseRow(vals, cols)
			if err != nil {
				d.Fatalf(t, "%v", err)
			}
			deltas[rel] = append(deltas[rel], zset.Entry{Row: row, Weight: w})
		}
		ov := state.NewOverlay(h.store)
		out, err := h.circuit.Step(context.Background(), ov, deltas)
		sameOnWorkers(t, d.Pos, h.circuit, h.store, deltas, ov, out, err)
		if err != nil {
			ov.Discard()
			return errString(err) + "\n"
		}
		if err := ov.Commit(); err != nil {
			d.Fatalf(t, "%v", err)
		}
		for rel, b := range deltas {
			h.inputs[rel] = mustConsolidate(t, append(h.inputs[rel], b...))
		}
		h.view = mustConsolidate(t, append(h.view, out...))
		h.checkBatch(t, d)
		if len(out) == 0 {
			return "(empty)\n"
		}
		var sb strings.Builder
		for _, e := range out {
			fmt.Fprintf(&sb, "%+d %s\n", e.Weight, formatRow(e.Row, h.plan.Columns()))
		}
		return sb.String()

	case "release":
		return h.release(t, d)

	case "show":
		if len(h.view) == 0 {
			return "(empty)\n"
		}
		var sb strings.Builder
		for _, e := range h.view {
			sb.WriteString(formatRow(e.Row, h.plan.Columns()))
			if e.Weight != 1 {
				fmt.Fprintf(&sb, " ×%d", e.Weight)
			}
			sb.WriteByte('\n')
		}
		return sb.String()
	}
	d.Fatalf(t, "unknown command %q", d.Cmd)
	return ""
}

// checkBatch compares the accumulated view with a batch evaluation of the
// accumulated inputs.
func (h *harness) checkBatch(t *testing.T, d *datadriven.TestData) {
	t.Helper()
	for _, e := range h.view {
		if e.Weight < 0 {
			d.Fatalf(t, "view holds a negative weight: %s ×%d", formatRow(e.Row, h.plan.Columns()), e.Weight)
		}
	}
	batch, err := batchEval(h.plan, h.forQuery, h.inputs)
	if err != nil {
		d.Fatalf(t, "batch evaluation failed: %v", err)
	}
	if got, want := render(h.view, h.plan.Columns()), render(batch, h.plan.Columns()); got != want {
		d.Fatalf(t, "incremental result differs from batch evaluation\nincremental:\n%s\nbatch:\n%s", got, want)
	}
}

// batchEval runs a fresh circuit once over the whole input. The circuit
// is built serial: its global operators run in one step, not as a
// partial and a final one, so that the reference does not share the
// split it checks.
func batchEval(p plan.Node, forQuery bool, inputs map[string]zset.Batch) (zset.Batch, error) {
	c, err := build(p, ops.Prefix{Circuit: []byte("batch/")}, forQuery, true)
	if err != nil {
		return nil, err
	}
	return c.Step(context.Background(), state.NewMemory(), inputs)
}

func render(b zset.Batch, cols []plan.Column) string {
	var sb strings.Builder
	for _, e := range b {
		fmt.Fprintf(&sb, "%s ×%d\n", formatRow(e.Row, cols), e.Weight)
	}
	return sb.String()
}

func mustConsolidate(t interface {
	Helper()
	Fatal(...any)
}, b zset.Batch) zset.Batch {
	t.Helper()
	c, err := zset.Consolidate(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func errString(err error) string {
	return "error: " + errs.SQLState(err) + ": " + err.Error()
}
