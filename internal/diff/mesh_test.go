package diff

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/exchange"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// testCluster is several exchange nodes on loopback in one process: the
// members of a mesh, each a process of its own as far as the exchange
// can tell (they meet only over gRPC).
type testCluster struct {
	nodes []*exchange.Node
	rev   uint64
}

func newTestCluster(t testing.TB, members int) *testCluster {
	return newTestClusterWith(t, members, exchange.Options{})
}

func newTestClusterWith(t testing.TB, members int, opts exchange.Options) *testCluster {
	t.Helper()
	cl := &testCluster{}
	for range members {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		n, err := exchange.Listen(lis, opts)
		if err != nil {
			t.Fatal(err)
		}
		cl.nodes = append(cl.nodes, n)
		t.Cleanup(func() { _ = n.Close() })
	}
	return cl
}

// join makes every node join the cluster's next revision, closing the
// meshes of the previous one.
func (cl *testCluster) join(t testHelper) []*exchange.Mesh {
	t.Helper()
	cl.rev++
	addrs := make([]string, len(cl.nodes))
	for i, n := range cl.nodes {
		addrs[i] = n.Addr()
	}
	meshes := make([]*exchange.Mesh, len(cl.nodes))
	for i, n := range cl.nodes {
		m, err := n.Join(exchange.Assignment{Revision: cl.rev, Self: i, Peers: addrs})
		if err != nil {
			t.Fatal(err)
		}
		meshes[i] = m
	}
	return meshes
}

// stepMembers runs one step on every member at once, member i stepping
// circuits[i] over parts[i] in stores[i] through peers[i].
func stepMembers(ctx context.Context, circuits []*Circuit, stores []state.Store, parts []map[string]zset.Batch, peers []Peers, epoch uint64) ([]zset.Batch, []error) {
	outs := make([]zset.Batch, len(circuits))
	errsOf := make([]error, len(circuits))
	var wg sync.WaitGroup
	for i := range circuits {
		wg.Go(func() {
			// MinRows does not apply to a mesh step: a member whose part
			// is small (or empty) still passes every exchange.
			outs[i], errsOf[i] = circuits[i].StepParallel(ctx, stores[i], parts[i], Parallelism{Workers: 4, MinRows: DefaultMinRows, Peers: peers[i], Epoch: epoch})
		})
	}
	wg.Wait()
	return outs, errsOf
}

// storeText renders the keys and values of st under prefix whose bucket
// (the byte after prefix) member of members owns; member -1: every key.
func storeText(t testHelper, st state.Reader, prefix string, member, members int) string {
	t.Helper()
	var sb strings.Builder
	if err := st.Scan([]byte(prefix), zset.KeyPrefixEnd(nil, []byte(prefix)), func(k, v []byte) bool {
		if len(k) <= len(prefix) {
			t.Fatalf("state key %q without a bucket after the circuit's prefix %q", k, prefix)
		}
		if member < 0 || zset.BucketOwner(int(k[len(prefix)]), members) == member {
			fmt.Fprintf(&sb, "%x=%x\n", k, v)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

// meshCase is a plan and how to draw its input deltas.
type meshCase struct {
	p     plan.Node
	delta func(rel string, current zset.Batch) zset.Batch
	rels  []string
}

// drawMeshCase draws a plan of the kinds the property tests build:
// random plans of filters, projections, joins of every kind, grouped
// aggregates, distinct and unions; set operations, top-k and windows at
// the root; global aggregates and top-k; a recursive query.
func drawMeshCase(t *rapid.T) meshCase {
	g := &planGen{tables: map[string][]plan.Column{
		"r": {{Name: "a", Type: types.Of(types.Int4)}, {Name: "b", Type: types.Of(types.Int4)}, {Name: "c", Type: types.Of(types.Text)}},
		"s": {{Name: "a", Type: types.Of(types.Int4)}, {Name: "d", Type: types.Of(types.Int8)}, {Name: "n", Type: types.Of(types.Numeric)}},
	}}
	g.appendOnly = map[string]bool{"r": rapid.IntRange(0, 3).Draw(t, "r append-only") == 0, "s": false}
	large := rapid.Bool().Draw(t, "large")
	mc := meshCase{rels: []string{"r", "s"}, delta: func(rel string, current zset.Batch) zset.Batch {
		if large {
			return g.largeDelta(t, rel, current)
		}
		return g.delta(t, rel, current)
	}}
	switch kind := rapid.SampledFrom([]string{"any", "ordered", "global", "recursive"}).Draw(t, "kind"); kind {
	case "any":
		mc.p = g.node(t, rapid.IntRange(0, 3).Draw(t, "depth"))
	case "ordered":
		mc.p = g.orderedNode(t, rapid.IntRange(1, 3).Draw(t, "depth"))
	case "global":
		mc.p = g.globalAggregate(t)
	case "recursive":
		mc.p = rapid.SampledFrom(recursiveQueries).Draw(t, "query").plan()
		mc.rels = []string{"edges", "allowed"}
		mc.delta = func(rel string, current zset.Batch) zset.Batch {
			if rel == "edges" {
				return graphDelta(t, "edge", 2, current)
			}
			return graphDelta(t, "node", 1, current)
		}
	}
	return mc
}

// TestMeshEqualsOneWorker: a circuit stepping on 2 or 3 members of a
// mesh over real gRPC, each member with its own store, equals the
// circuit stepping on one worker over the same deltas. For random plans
// and random deltas over several steps, split between the members
// contiguously (the order of one worker's delta kept) or row by row at
// random, after every step the members' outputs sum to the one-worker
// output, byte for byte, and each member's store holds exactly the
// one-worker store's keys of the buckets it owns; a step that fails on
// one worker fails on every member, with its SQLSTATE, and leaves every
// store as it was.
func TestMeshEqualsOneWorker(t *testing.T) {
	// The 3 members cut their batches into frames of at most 512 bytes
	// and hold back a peer running ahead past 2 KiB: a step's messages
	// travel in chunks, under flow control.
	clusters := map[int]*testCluster{2: newTestCluster(t, 2), 3: newTestClusterWith(t, 3, exchange.Options{ChunkBytes: 512, BufferBytes: 2048})}
	rapid.Check(t, func(t *rapid.T) {
		members := rapid.SampledFrom([]int{2, 3}).Draw(t, "members")
		cl := clusters[members]
		exact := rapid.Bool().Draw(t, "contiguous")
		mc := drawMeshCase(t)
		t.Logf("plan on %d members (contiguous %v):\n%s", members, exact, describePlan(mc.p, 0))
		const prefix = "mesh/"
		build := func() *Circuit {
			c, err := Build(mc.p, []byte(prefix), false)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			return c
		}
		one, oneStore := build(), state.NewMemory()
		circuits, stores, peers := make([]*Circuit, members), make([]state.Store, members), make([]Peers, members)
		for i := range circuits {
			circuits[i], stores[i] = build(), state.NewMemory()
		}
		meshes := cl.join(t)
		for i, m := range meshes {
			peers[i] = m
		}
		defer func() {
			for _, m := range meshes {
				m.Close()
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		inputs := map[string]zset.Batch{}
		for step, steps := 0, rapid.IntRange(1, 5).Draw(t, "steps"); step < steps; step++ {
			deltas := map[string]zset.Batch{}
			parts := make([]map[string]zset.Batch, members)
			for i := range parts {
				parts[i] = map[string]zset.Batch{}
			}
			for _, rel := range mc.rels {
				d := mustConsolidate(t, mc.delta(rel, inputs[rel]))
				deltas[rel] = d
				for i := range members {
					if exact {
						parts[i][rel] = d[len(d)*i/members : len(d)*(i+1)/members]
					}
				}
				if !exact {
					for _, e := range d {
						i := rapid.IntRange(0, members-1).Draw(t, "member")
						parts[i][rel] = append(parts[i][rel], e)
					}
				}
			}
			ov := state.NewOverlay(oneStore)
			want, wantErr := one.Step(ctx, ov, deltas)
			before := make([]string, members)
			for i := range members {
				before[i] = storeText(t, stores[i], prefix, -1, members)
			}
			outs, errsOf := stepMembers(ctx, circuits, stores, parts, peers, uint64(step+1))
			if wantErr != nil {
				ov.Discard()
				same := false
				for i, err := range errsOf {
					if err == nil {
						t.Fatalf("step %d fails on one worker with %v, member %d succeeds", step, wantErr, i)
					}
					same = same || errs.SQLState(err) == errs.SQLState(wantErr)
					if got := storeText(t, stores[i], prefix, -1, members); got != before[i] {
						t.Fatalf("step %d: member %d wrote its store in a failed step", step, i)
					}
				}
				if !same {
					t.Fatalf("step %d fails on one worker with %v (%s), on the members with %v", step, wantErr, errs.SQLState(wantErr), errsOf)
				}
				// The mesh failed with the step: the members take up a
				// new one.
				for _, m := range meshes {
					m.Close()
				}
				meshes = cl.join(t)
				for i, m := range meshes {
					peers[i] = m
				}
				continue
			}
			if err := ov.Commit(); err != nil {
				t.Fatal(err)
			}
			for i, err := range errsOf {
				if err != nil {
					t.Fatalf("step %d: member %d: %v", step, i, err)
				}
			}
			for rel, d := range deltas {
				inputs[rel] = mustConsolidate(t, append(inputs[rel], d...))
			}
			got, err := mergeParts(outs)
			if err != nil {
				t.Fatal(err)
			}
			if renderExact(got) != renderExact(want) {
				t.Fatalf("step %d: the members' outputs sum to\n%s\none worker's output is\n%s", step, render(got, mc.p.Columns()), render(want, mc.p.Columns()))
			}
			for i := range members {
				if g, w := storeText(t, stores[i], prefix, -1, members), storeText(t, oneStore, prefix, i, members); g != w {
					t.Fatalf("step %d: member %d's store is not the one-worker store's buckets of member %d:\n%s\nwant\n%s", step, i, i, g, w)
				}
			}
		}
	})
}

// closingPeers is a member's mesh that it closes at its closeAt-th call,
// as a process does that gives up in the middle of a step, or whose
// context has ended at its expireAt-th call.
type closingPeers struct {
	*exchange.Mesh
	calls, closeAt, expireAt int
}

func (c *closingPeers) call(ctx context.Context) context.Context {
	c.calls++
	if c.calls == c.closeAt {
		c.Mesh.Close()
	}
	if c.calls == c.expireAt {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		return ctx
	}
	return ctx
}

func (c *closingPeers) Exchange(ctx context.Context, key exchange.Key, out []zset.Batch) ([]zset.Batch, error) {
	return c.Mesh.Exchange(c.call(ctx), key, out)
}

func (c *closingPeers) Max(ctx context.Context, key exchange.Key, local int64) (int64, error) {
	return c.Mesh.Max(c.call(ctx), key, local)
}

// TestMeshStepFailsWithAMember: when one member of three fails its part
// of a step (an error of its rows, its mesh closed before the step or in
// the middle of it, its context ended), or never steps, the others' steps
// fail promptly —
// with the failing member's SQLSTATE when it said why — and no member
// writes its store.
func TestMeshStepFailsWithAMember(t *testing.T) {
	pp := planParser{tables: map[string][]plan.Column{
		"t": {{Name: "g", Type: types.Of(types.Int8)}, {Name: "v", Type: types.Of(types.Int8)}},
	}}
	p, err := pp.parse("aggregate group=(g) aggs=(count(*), sum(q))\n  project g, 10 / v AS q\n    scan t\n")
	if err != nil {
		t.Fatal(err)
	}
	const members = 3
	cl := newTestCluster(t, members)
	part := func(from, to, zeroAt int64) map[string]zset.Batch {
		var d zset.Batch
		for i := from; i < to; i++ {
			v := i%7 + 1
			if i == zeroAt {
				v = 0
			}
			d = append(d, zset.Entry{Row: zset.Row{types.MakeInt(types.Int8, i%13), types.MakeInt(types.Int8, v)}, Weight: 1})
		}
		return map[string]zset.Batch{"t": d}
	}
	for _, tc := range []struct {
		name string
		// zero makes member 2's rows divide by zero; closeAt closes its
		// mesh at that call of its step (-1: before the step); absent
		// keeps it from stepping at all.
		zero              bool
		closeAt, expireAt int
		absent            bool
		// code is the SQLSTATE the others fail with ("": any).
		code    string
		timeout time.Duration
	}{
		{name: "its rows fail", zero: true, code: "22012", timeout: time.Minute},
		{name: "it closed its mesh before the step", closeAt: -1, timeout: time.Minute},
		{name: "it closes its mesh at its exchange", closeAt: 1, timeout: time.Minute},
		{name: "it closes its mesh at the closing agreement", closeAt: 2, timeout: time.Minute},
		{name: "its context ends at its exchange", expireAt: 1, timeout: time.Minute},
		{name: "its context ends at the closing agreement", expireAt: 2, timeout: time.Minute},
		{name: "it never steps", absent: true, timeout: 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			circuits, stores, peers := make([]*Circuit, members), make([]state.Store, members), make([]Peers, members)
			meshes := cl.join(t)
			defer func() {
				for _, m := range meshes {
					m.Close()
				}
			}()
			parts := make([]map[string]zset.Batch, members)
			for i := range members {
				if circuits[i], err = Build(p, []byte("mesh/"), false); err != nil {
					t.Fatal(err)
				}
				// Every member starts from state of an earlier step.
				stores[i] = state.NewMemory()
				peers[i] = meshes[i]
				zeroAt := int64(-1)
				if tc.zero && i == 2 {
					zeroAt = int64(i*100 + 50)
				}
				parts[i] = part(int64(i*100), int64(i*100+100), zeroAt)
			}
			first := make([]map[string]zset.Batch, members)
			for i := range first {
				first[i] = part(int64(i*100+1000), int64(i*100+1100), -1)
			}
			if _, errsOf := stepMembers(context.Background(), circuits, stores, first, peers, 1); errors.Join(errsOf...) != nil {
				t.Fatal(errsOf)
			}
			before := make([]string, members)
			for i := range members {
				before[i] = storeText(t, stores[i], "mesh/", -1, members)
				if before[i] == "" {
					t.Fatalf("member %d holds no state after the first step", i)
				}
			}
			meshes[0].Close()
			meshes = cl.join(t)
			for i := range members {
				peers[i] = meshes[i]
			}
			switch {
			case tc.closeAt < 0:
				meshes[2].Close()
			case tc.closeAt > 0 || tc.expireAt > 0:
				peers[2] = &closingPeers{Mesh: meshes[2], closeAt: tc.closeAt, expireAt: tc.expireAt}
			}
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			start := time.Now()
			stepping := circuits
			if tc.absent {
				stepping = circuits[:2]
			}
			_, errsOf := stepMembers(ctx, stepping, stores, parts, peers, 2)
			took := time.Since(start)
			for i, err := range errsOf {
				if err == nil {
					t.Fatalf("member %d's step succeeded", i)
				}
				t.Logf("member %d: %v (SQLSTATE %s)", i, err, errs.SQLState(err))
				if tc.code != "" && errs.SQLState(err) != tc.code {
					t.Errorf("member %d fails with SQLSTATE %s, want %s", i, errs.SQLState(err), tc.code)
				}
			}
			if took > tc.timeout/2 && !tc.absent {
				t.Errorf("the step took %v to fail", took)
			}
			for i := range members {
				if got := storeText(t, stores[i], "mesh/", -1, members); got != before[i] {
					t.Errorf("member %d wrote its store in the failed step", i)
				}
			}
		})
	}
}

// storedTable is a stored relation as the runtime keeps a table with a
// primary key: each row under prefix | bucket of its key | its key
// (ops.StoredRows).
type storedTable struct {
	prefix string
	key    []int
}

func (s storedTable) rowKey(vals ...types.Value) []byte {
	k := zset.EncodeKey(append([]byte(s.prefix), 0), vals...)
	k[len(s.prefix)] = byte(zset.Bucket(k[len(s.prefix)+1:]))
	return k
}

func (s storedTable) keyOf(row zset.Row) []byte {
	vals := make([]types.Value, len(s.key))
	for i, c := range s.key {
		vals[i] = row[c]
	}
	return s.rowKey(vals...)
}

func (s storedTable) Rows(st state.Reader, key []types.Value, fn func(row zset.Row, weight int64) error) error {
	v, ok, err := st.Get(s.rowKey(key...))
	if err != nil || !ok {
		return err
	}
	row, err := zset.DecodeRow(v)
	if err != nil {
		return err
	}
	return fn(row, 1)
}

// apply writes delta d of the table into st, keeping the rows of the
// buckets member of members owns (member -1: every row).
func (s storedTable) apply(t *testing.T, st state.Store, d zset.Batch, member, members int) {
	t.Helper()
	for _, e := range d {
		k := s.keyOf(e.Row)
		if member >= 0 && zset.BucketOwner(int(k[len(s.prefix)]), members) != member {
			continue
		}
		var err error
		if e.Weight > 0 {
			err = st.Set(k, zset.EncodeRow(nil, e.Row))
		} else {
			err = st.Delete(k)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestMeshLookupJoins: joins that read a stored table by key instead of
// arranging it (lookup.go) step on a mesh whose members each store only
// the table's rows of their buckets: the exchange routes the probes to
// the owner of the looked-up key's bucket. A join whose key lists a
// composite key's columns in another order refuses to step on a mesh.
func TestMeshLookupJoins(t *testing.T) {
	i8 := types.Of(types.Int8)
	pp := planParser{tables: map[string][]plan.Column{
		"f":    {{Name: "k", Type: i8}, {Name: "a", Type: i8}, {Name: "b", Type: i8}},
		"dim":  {{Name: "j", Type: i8}, {Name: "w", Type: i8}},
		"dim2": {{Name: "x", Type: i8}, {Name: "y", Type: i8}, {Name: "w2", Type: i8}},
	}}
	tables := map[string]storedTable{"dim": {prefix: "rel/dim/", key: []int{0}}, "dim2": {prefix: "rel/dim2/", key: []int{0, 1}}}
	lookups := func(scan string) (StoredRelation, bool) {
		tb, ok := tables[scan]
		return StoredRelation{Base: scan, KeyCols: tb.key, Rows: tb}, ok
	}
	const members = 3
	cl := newTestCluster(t, members)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		text, lookup string
		refused      bool
	}{
		{text: "join on (k = j)\n  scan f\n  scan dim\n", lookup: "dim"},
		{text: "aggregate group=(w) aggs=(count(*), sum(a))\n  join on (k = j)\n    scan f\n    scan dim\n", lookup: "dim"},
		{text: "join left on (k = j)\n  scan f\n  scan dim\n", lookup: "dim"},
		{text: "join semi on (k = j)\n  scan f\n  scan dim\n", lookup: "dim"},
		{text: "join on (a = x, b = y)\n  scan f\n  scan dim2\n", lookup: "dim2"},
		{text: "join on (b = y, a = x)\n  scan f\n  scan dim2\n", lookup: "dim2", refused: true},
	} {
		p, err := pp.parse(tc.text)
		if err != nil {
			t.Fatal(err)
		}
		build := func() *Circuit {
			c, err := BuildView(p, []byte("mesh/"), lookups)
			if err != nil {
				t.Fatal(err)
			}
			if !c.LookedUp(tc.lookup) {
				t.Fatalf("%q does not look %s up", tc.text, tc.lookup)
			}
			return c
		}
		one, oneStore := build(), state.NewMemory()
		circuits, stores, peers := make([]*Circuit, members), make([]state.Store, members), make([]Peers, members)
		meshes := cl.join(t)
		for i := range members {
			circuits[i], stores[i], peers[i] = build(), state.NewMemory(), meshes[i]
		}
		tb := tables[tc.lookup]
		var present zset.Batch // the table's rows
		for step := range 4 {
			// The table: new keys, and some rows of the last step
			// deleted or updated.
			var dim zset.Batch
			for _, e := range present {
				if e.Row[0].Int()%2 == int64(step%2) {
					dim = append(dim, zset.Entry{Row: e.Row, Weight: -1})
				}
			}
			for i := range 40 {
				k := int64(step*20 + i%30)
				row := zset.Row{types.MakeInt(types.Int8, k), types.MakeInt(types.Int8, k%4)}
				if tc.lookup == "dim2" {
					row = zset.Row{types.MakeInt(types.Int8, k%6), types.MakeInt(types.Int8, k%7), types.MakeInt(types.Int8, int64(step))}
				}
				if !slices.ContainsFunc(present, func(e zset.Entry) bool { return string(tb.keyOf(e.Row)) == string(tb.keyOf(row)) }) &&
					!slices.ContainsFunc(dim, func(e zset.Entry) bool { return e.Weight > 0 && string(tb.keyOf(e.Row)) == string(tb.keyOf(row)) }) {
					dim = append(dim, zset.Entry{Row: row, Weight: 1})
				}
			}
			dim = mustConsolidate(t, dim)
			present = mustConsolidate(t, append(present, dim...))
			var fact zset.Batch
			for i := range 60 {
				fact = append(fact, zset.Entry{Row: zset.Row{types.MakeInt(types.Int8, int64((i*7+step)%90)),
					types.MakeInt(types.Int8, int64(i%6)), types.MakeInt(types.Int8, int64((i+step)%7))}, Weight: 1})
			}
			fact = mustConsolidate(t, fact)
			deltas := map[string]zset.Batch{"f": fact, tc.lookup: dim}
			parts := make([]map[string]zset.Batch, members)
			for i := range members {
				parts[i] = map[string]zset.Batch{}
				for rel, d := range deltas {
					parts[i][rel] = d[len(d)*i/members : len(d)*(i+1)/members]
				}
				tb.apply(t, stores[i], dim, i, members)
			}
			tb.apply(t, oneStore, dim, -1, members)
			ov := state.NewOverlay(oneStore)
			want, err := one.Step(ctx, ov, deltas)
			if err != nil {
				t.Fatal(err)
			}
			if err := ov.Commit(); err != nil {
				t.Fatal(err)
			}
			outs, errsOf := stepMembers(ctx, circuits, stores, parts, peers, uint64(step+1))
			if tc.refused {
				for i, err := range errsOf {
					if errs.SQLState(err) != "0A000" || !strings.Contains(err.Error(), "dim2") {
						t.Fatalf("%q: member %d: %v, want the refusal to step on a mesh", tc.text, i, err)
					}
				}
				break
			}
			for i, err := range errsOf {
				if err != nil {
					t.Fatalf("%q: step %d: member %d: %v", tc.text, step, i, err)
				}
			}
			got, err := mergeParts(outs)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatalf("%q: step %d: the test joins nothing", tc.text, step)
			}
			if renderExact(got) != renderExact(want) {
				t.Fatalf("%q: step %d: the members' outputs sum to\n%s\none worker's output is\n%s", tc.text, step, render(got, p.Columns()), render(want, p.Columns()))
			}
			for i := range members {
				if g, w := storeText(t, stores[i], "mesh/", -1, members), storeText(t, oneStore, "mesh/", i, members); g != w {
					t.Fatalf("%q: step %d: member %d's store is not the one-worker store's buckets of member %d", tc.text, step, i, i)
				}
			}
		}
		for _, m := range meshes {
			m.Close()
		}
	}
}
