package diff

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Reusing operator state across a change of a view's query.
//
// An operator keeps its state under its id, its position in the circuit
// (build.go opPrefix). Its state identity is a fingerprint of everything
// its state depends on: the plan node it was built for with every node
// below it (each relation it scans named by the identity its caller gives,
// such as the relation's id and the columns' positions and types), its
// place among the nodes built for that plan, and the circuit nodes of that
// subtree as built (kind, key, state kind, exchanges, lookups), their
// inputs numbered from the subtree's first node. It does not depend on
// where the subtree is in the circuit: two operators, of one circuit or of
// two, with the same identity keep the same state for the same input
// history, and a circuit may take over another's state for an operator of
// the same identity, under the operator's own id (the caller moves the
// entries when the ids differ). Every operator below one with the same
// identity has the same identity as its counterpart too.

// StateIdentities returns the state identity of each operator of c that
// keeps state, by operator id. scan names a scanned relation (a
// plan.Scan's Relation) by what identifies its rows, and reports false
// when it cannot; an operator whose plan cannot be fingerprinted (a scan
// not named, a value without a canonical form) has no identity and is
// left out.
func (c *Circuit) StateIdentities(scan func(rel string) (string, bool)) map[int][32]byte {
	ids := make(map[int][32]byte)
	plans := make(map[plan.Node][]byte) // each source plan's fingerprint, once
	for i := range c.nodes {
		nd := &c.nodes[i]
		if !nd.stateful || nd.src == nil {
			continue
		}
		fp, ok := plans[nd.src]
		if !ok {
			f := &fingerprinter{scan: scan, onPath: map[uintptr]bool{}}
			f.value(reflect.ValueOf(&nd.src).Elem())
			if f.err == nil {
				fp = f.buf
			}
			plans[nd.src] = fp
		}
		if fp == nil {
			continue
		}
		h := sha256.New()
		h.Write(fp)
		var num [binary.MaxVarintLen64]byte
		h.Write(num[:binary.PutUvarint(num[:], uint64(i-nd.start))])
		for k := nd.start; k <= i; k++ {
			m := &c.nodes[k]
			// Inputs by their place after start: the identity does not
			// depend on where the subtree is in the circuit.
			fmt.Fprintf(h, "\x00%T|%s|%v|%v|%v|%d|", m.op, m.explain, m.labels, m.single, m.stateful, len(m.routes))
			for _, in := range m.inputs {
				fmt.Fprintf(h, "%d,", in-nd.start)
			}
			for _, r := range m.routes {
				fmt.Fprintf(h, "|%d|%s", r.kind, exprList(r.key))
			}
		}
		var sum [32]byte
		copy(sum[:], h.Sum(nil))
		ids[i] = sum
	}
	return ids
}

// StatefulOperators returns the ids of c's operators that keep state, in
// order.
func (c *Circuit) StatefulOperators() []int {
	var ids []int
	for i := range c.nodes {
		if c.nodes[i].stateful {
			ids = append(ids, i)
		}
	}
	return ids
}

// fingerprinter writes a canonical form of a plan: every field of every
// node and expression, by type, with a scan's relation replaced by its
// identity, a value by its exact encoding and a time zone by its name. A
// function is written as its code's address, which is the same in one
// process for the same function (a closure's captured values are not
// seen; what they are built from is in the plan's other fields). A cycle
// or a value of a kind without a canonical form (a channel, an unsafe
// pointer) sets err.
type fingerprinter struct {
	buf    []byte
	scan   func(rel string) (string, bool)
	onPath map[uintptr]bool
	err    error
}

var (
	valueType = reflect.TypeFor[types.Value]()
	zoneType  = reflect.TypeFor[types.Zone]()
	scanType  = reflect.TypeFor[plan.Scan]()
)

func (f *fingerprinter) str(s string) {
	f.buf = binary.AppendUvarint(f.buf, uint64(len(s)))
	f.buf = append(f.buf, s...)
}

func (f *fingerprinter) fail(what string) {
	if f.err == nil {
		f.err = errs.Newf(errs.Internal, "plan holds %s", what)
	}
}

func (f *fingerprinter) value(v reflect.Value) {
	if f.err != nil {
		return
	}
	t := v.Type()
	switch t {
	case valueType:
		if !v.CanInterface() {
			f.fail("an unexported value")
			return
		}
		x := v.Interface().(types.Value)
		f.buf = append(f.buf, 'v', byte(x.Kind()))
		f.str(string(zset.EncodeRow(nil, zset.Row{x})))
		return
	case zoneType:
		if !v.CanInterface() {
			f.fail("an unexported time zone")
			return
		}
		f.buf = append(f.buf, 'z')
		f.str(v.Interface().(types.Zone).Name())
		return
	case scanType:
		if !v.CanInterface() {
			f.fail("an unexported scan")
			return
		}
		s := v.Interface().(plan.Scan)
		id, ok := f.scan(s.Relation)
		if !ok {
			f.fail("a scan of an unknown relation")
			return
		}
		f.buf = append(f.buf, 's')
		f.str(id)
		f.value(v.FieldByName("Cols"))
		f.value(v.FieldByName("AppendOnly"))
		f.value(v.FieldByName("Unique"))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			f.buf = append(f.buf, 1)
		} else {
			f.buf = append(f.buf, 0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f.buf = binary.AppendVarint(f.buf, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		f.buf = binary.AppendUvarint(f.buf, v.Uint())
	case reflect.Float32, reflect.Float64:
		f.str(fmt.Sprint(v.Float()))
	case reflect.Complex64, reflect.Complex128:
		f.str(fmt.Sprint(v.Complex()))
	case reflect.String:
		f.str(v.String())
	case reflect.Func:
		f.buf = binary.AppendUvarint(f.buf, uint64(v.Pointer()))
	case reflect.Array:
		for i := range v.Len() {
			f.value(v.Index(i))
		}
	case reflect.Slice:
		if v.IsNil() {
			f.buf = append(f.buf, 'n')
			return
		}
		f.buf = binary.AppendUvarint(append(f.buf, '['), uint64(v.Len()))
		for i := range v.Len() {
			f.value(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			f.buf = append(f.buf, 'n')
			return
		}
		type entry struct{ k, v []byte }
		var es []entry
		for it := v.MapRange(); it.Next(); {
			kf := &fingerprinter{scan: f.scan, onPath: f.onPath}
			kf.value(it.Key())
			vf := &fingerprinter{scan: f.scan, onPath: f.onPath}
			vf.value(it.Value())
			if kf.err != nil || vf.err != nil {
				f.fail("a map without a canonical form")
				return
			}
			es = append(es, entry{kf.buf, vf.buf})
		}
		slices.SortFunc(es, func(a, b entry) int { return strings.Compare(string(a.k), string(b.k)) })
		f.buf = binary.AppendUvarint(append(f.buf, '{'), uint64(len(es)))
		for _, e := range es {
			f.str(string(e.k))
			f.str(string(e.v))
		}
	case reflect.Pointer:
		if v.IsNil() {
			f.buf = append(f.buf, 'n')
			return
		}
		p := v.Pointer()
		if f.onPath[p] {
			f.fail("a cycle")
			return
		}
		f.onPath[p] = true
		f.buf = append(f.buf, '*')
		f.value(v.Elem())
		delete(f.onPath, p)
	case reflect.Interface:
		if v.IsNil() {
			f.buf = append(f.buf, 'n')
			return
		}
		e := v.Elem()
		f.buf = append(f.buf, 'i')
		f.str(e.Type().PkgPath() + "." + e.Type().String())
		f.value(e)
	case reflect.Struct:
		f.buf = append(f.buf, '(')
		f.str(t.PkgPath() + "." + t.Name())
		for i := range v.NumField() {
			f.value(v.Field(i))
		}
		f.buf = append(f.buf, ')')
	default:
		f.fail("a " + v.Kind().String())
	}
}

// Reuse is how a backfill of a circuit takes part of it from operator
// state that is kept (PlanReuse).
type Reuse struct {
	// Kept are the ids of the stateful operators whose state is kept,
	// and Fresh those that start from no state, in order.
	Kept, Fresh []int
	// Seeds are the kept operators the backfill reads the contents of
	// (ops.Contents): the highest kept ones. Nothing below them runs.
	Seeds []int
	// run marks the nodes the backfill steps.
	run []bool
}

// PlanReuse decides which of c's stateful operators keep their state in
// a backfill, given reusable: the operators whose state is exact for their
// input now (a former circuit's operator with the same state identity,
// whose state the caller puts under the operator's id). From the root
// down, the first reusable operator met on each path whose contents its
// state gives (ops.HasContents) is a seed: it and everything below it keep
// their state and do not run. Every other node runs; a stateful one that
// runs starts from no state, even if it was reusable (its output must be
// computed again, and its input arrives whole).
func (c *Circuit) PlanReuse(reusable func(id int) bool) *Reuse {
	r := &Reuse{run: make([]bool, len(c.nodes))}
	seed := make([]bool, len(c.nodes))
	var visit func(i int)
	visit = func(i int) {
		if r.run[i] || seed[i] {
			return
		}
		nd := &c.nodes[i]
		if nd.stateful && nd.op != nil && reusable(i) && ops.HasContents(nd.op) {
			seed[i] = true
			return
		}
		r.run[i] = true
		for _, j := range nd.inputs {
			visit(j)
		}
	}
	visit(c.root)
	for i := range c.nodes {
		if !c.nodes[i].stateful {
			continue
		}
		if seed[i] {
			r.Seeds = append(r.Seeds, i)
		}
		if r.run[i] {
			r.Fresh = append(r.Fresh, i)
		} else {
			r.Kept = append(r.Kept, i)
		}
	}
	return r
}

// Relations returns the relations a backfill planned by r reads whole:
// those scanned by a node that runs.
func (r *Reuse) Relations(c *Circuit) []string {
	var rels []string
	for i := range c.nodes {
		if nd := &c.nodes[i]; r.run[i] && nd.op == nil && !slices.Contains(rels, nd.rel) {
			rels = append(rels, nd.rel)
		}
	}
	return rels
}

// StepReusing is the first step of c over kept state, on one worker: the
// seeds of r emit their contents, the nodes that run step over them and
// over deltas (the whole of each relation r.Relations names), and the
// nodes below the seeds do nothing. The state of r.Fresh must be empty.
// It returns the circuit's output, which is its whole contents.
func (c *Circuit) StepReusing(ctx context.Context, st state.Store, deltas map[string]zset.Batch, r *Reuse) (zset.Batch, error) {
	outs := make([]zset.Batch, len(c.nodes))
	for _, i := range r.Seeds {
		out, err := ops.Contents(ctx, st, c.nodes[i].op)
		if err != nil {
			return nil, err
		}
		outs[i] = out
	}
	var ins []zset.Batch
	for i := range c.nodes {
		if !r.run[i] {
			continue
		}
		nd := &c.nodes[i]
		if nd.op == nil {
			d, err := c.inputOf(nd.rel, deltas[nd.rel])
			if err != nil {
				return nil, err
			}
			outs[i] = d
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ins = ins[:0]
		for _, j := range nd.inputs {
			ins = append(ins, outs[j])
		}
		out, err := nd.op.Step(ctx, st, ins)
		if err != nil {
			return nil, err
		}
		for _, j := range nd.inputs {
			outs[j] = nil
		}
		outs[i] = out
	}
	return consolidated(outs[c.root])
}
