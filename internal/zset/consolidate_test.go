package zset

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
	"pgregory.net/rapid"
)

// referenceConsolidate is the naive model of Consolidate: a map from each
// distinct row (by its exact row encoding) to the sum of its weights, in
// (key, row encoding) order.
func referenceConsolidate(b Batch) (Batch, bool) {
	type group struct {
		key, enc []byte
		row      Row
		sum      *big.Int
	}
	groups := map[string]*group{}
	for _, e := range b {
		enc := EncodeRow(nil, e.Row)
		g := groups[string(enc)]
		if g == nil {
			g = &group{key: EncodeKey(nil, e.Row...), enc: enc, row: e.Row, sum: new(big.Int)}
			groups[string(enc)] = g
		}
		g.sum.Add(g.sum, big.NewInt(e.Weight))
	}
	sorted := slices.Collect(maps.Values(groups))
	slices.SortFunc(sorted, func(x, y *group) int {
		if c := bytes.Compare(x.key, y.key); c != 0 {
			return c
		}
		return bytes.Compare(x.enc, y.enc)
	})
	var out Batch
	for _, g := range sorted {
		if !g.sum.IsInt64() {
			return nil, false
		}
		if w := g.sum.Int64(); w != 0 {
			out = append(out, Entry{Row: g.row, Weight: w})
		}
	}
	return out, true
}

// genBatch draws a batch of rows of one schema, drawn from a small pool so
// that duplicates (and equal rows of different representations) are common.
func genBatch(t *rapid.T) Batch {
	kinds := rapid.SliceOfN(genKind(), 0, 3).Draw(t, "kinds")
	pool := []Row{{}} // with no columns, every row is the empty row
	if len(kinds) > 0 {
		pool = rapid.SliceOfN(genRow(kinds), 1, 8).Draw(t, "row pool")
	}
	weight := rapid.OneOf(
		rapid.Int64Range(-3, 3), rapid.Int64Range(-3, 3), rapid.Int64Range(-3, 3),
		rapid.SampledFrom([]int64{math.MaxInt64, math.MinInt64, math.MaxInt64 / 2, math.MinInt64 / 2}))
	// Up to insertionSortMax entries are sorted by comparison; longer
	// batches go through the radix sort.
	n := rapid.OneOf(rapid.IntRange(0, 40), rapid.IntRange(0, 400)).Draw(t, "batch size")
	b := make(Batch, n)
	for i := range b {
		b[i] = Entry{
			Row:    rapid.SampledFrom(pool).Draw(t, "row"),
			Weight: weight.Draw(t, "weight"),
		}
	}
	return b
}

func TestConsolidateMatchesReference(t *testing.T) {
	var c Consolidator // reused across cases, as the pool reuses them
	rapid.Check(t, func(t *rapid.T) {
		b := genBatch(t)
		want, ok := referenceConsolidate(b)
		orig := slices.Clone(b)
		useOwn := rapid.Bool().Draw(t, "own consolidator")
		var got Batch
		var err error
		if useOwn {
			got, err = c.Consolidate(b)
		} else {
			got, err = Consolidate(b)
		}
		if !ok {
			if err == nil || errs.SQLState(err) != "22003" {
				t.Fatalf("want an overflow error (22003), got %v", err)
			}
			for i := range b {
				if b[i].Weight != orig[i].Weight || !slices.Equal(b[i].Row, orig[i].Row) {
					t.Fatalf("failed Consolidate modified entry %d", i)
				}
			}
			return
		}
		if err != nil {
			t.Fatalf("Consolidate: %v", err)
		}
		if len(got) != len(want) {
			t.Fatalf("Consolidate gave %d entries, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i].Weight != want[i].Weight || len(got[i].Row) != len(want[i].Row) {
				t.Fatalf("entry %d = %s × %d, want %s × %d", i, describeRow(got[i].Row), got[i].Weight,
					describeRow(want[i].Row), want[i].Weight)
			}
			for j := range want[i].Row {
				if !identical(got[i].Row[j], want[i].Row[j]) {
					t.Fatalf("entry %d has row %s, want %s", i,
						describeRow(got[i].Row), describeRow(want[i].Row))
				}
			}
			if useOwn && !bytes.Equal(c.Key(i), EncodeKey(nil, got[i].Row...)) {
				t.Fatalf("Key(%d) is not the key of entry %d", i, i)
			}
		}
		if !IsConsolidated(got) {
			t.Fatalf("result is not consolidated")
		}
		for i := len(got); i < len(b); i++ {
			if b[i].Row != nil || b[i].Weight != 0 {
				t.Fatalf("entry %d past the result was not cleared", i)
			}
		}
		// Consolidating a consolidated batch changes nothing.
		again, err := Consolidate(slices.Clone(got))
		if err != nil || len(again) != len(got) {
			t.Fatalf("Consolidate is not idempotent: %v", err)
		}
	})
}

// TestConsolidateLarge checks batches large enough for the radix sort's
// one-pass histograms and deep recursion (long keys sharing long prefixes).
func TestConsolidateLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	long := strings.Repeat("a shared prefix longer than a few chunks ", 3)
	schemas := [][]types.Kind{
		{types.Int4, types.Text},
		{types.Text},
		{types.Numeric, types.Float8, types.Interval},
		{types.Bool, types.Int2, types.Bytea, types.Timestamp},
		allKinds,
	}
	for si, kinds := range schemas {
		for _, n := range []int{30, 500, 5000, 30000} {
			pool := make([]Row, 1+n/8)
			for i := range pool {
				pool[i] = genRow(kinds).Example(si*1_000_000 + n + i)
				for j, v := range pool[i] {
					if v.Kind() == types.Text && rng.IntN(2) == 0 {
						pool[i][j] = types.MakeText(long + v.Str())
					}
				}
			}
			b := make(Batch, n)
			for i := range b {
				b[i] = Entry{Row: pool[rng.IntN(len(pool))], Weight: rng.Int64N(7) - 3}
			}
			want, ok := referenceConsolidate(b)
			if !ok {
				t.Fatal("reference overflowed")
			}
			var c Consolidator
			got, err := c.Consolidate(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("schema %d, %d rows: %d entries, want %d", si, n, len(got), len(want))
			}
			for i := range want {
				if got[i].Weight != want[i].Weight || !slices.EqualFunc(got[i].Row, want[i].Row, identical) {
					t.Fatalf("schema %d, %d rows: entry %d = %s × %d, want %s × %d", si, n, i,
						describeRow(got[i].Row), got[i].Weight, describeRow(want[i].Row), want[i].Weight)
				}
				if !bytes.Equal(c.Key(i), EncodeKey(nil, want[i].Row...)) {
					t.Fatalf("Key(%d) is not the key of entry %d", i, i)
				}
			}
		}
	}
}

// TestConsolidateKeepsRepresentations checks that rows equal under = but
// written differently stay apart: an update from 1.00 to 1.0 is a change.
func TestConsolidateKeepsRepresentations(t *testing.T) {
	num := func(coeff int64, exp int32) types.Value { return types.MakeNumeric(apd.New(coeff, exp)) }
	one, oneOne := Row{num(100, -2)}, Row{num(10, -1)} // 1.00 and 1.0
	b := Batch{{one, -1}, {oneOne, 1}, {Row{types.MakeFloat8(math.Copysign(0, -1))}, 1},
		{Row{types.MakeFloat8(0)}, 1}, {Row{num(1, 0)}, 2}, {Row{num(100, -2)}, 1}}
	got, err := Consolidate(b)
	if err != nil {
		t.Fatal(err)
	}
	// Numerics 1.0 and 1 remain; 1.00 cancels out (-1 + 1); the two
	// zeros remain, apart.
	want := []string{"numeric(1.0) × 1", "numeric(1) × 2", "float8(-0) × 1", "float8(0) × 1"}
	var have []string
	for _, e := range got {
		have = append(have, fmt.Sprintf("%s × %d", describe(e.Row[0]), e.Weight))
	}
	slices.Sort(want)
	slices.Sort(have)
	if !slices.Equal(have, want) {
		t.Fatalf("got %v, want %v", have, want)
	}
	if !IsConsolidated(got) {
		t.Fatalf("result is not consolidated")
	}
}

func TestIdenticalMatchesRowEncoding(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := genRowPair(t)
		same := bytes.Equal(EncodeRow(nil, a), EncodeRow(nil, b))
		if identicalRows(a, b) != same {
			t.Fatalf("identicalRows = %v, equal row encodings = %v\na = %s\nb = %s",
				!same, same, describeRow(a), describeRow(b))
		}
	})
}

func TestConsolidateOverflowIsOrderIndependent(t *testing.T) {
	row := Row{types.MakeInt(types.Int4, 1)}
	b := Batch{{row, math.MaxInt64}, {row, 1}, {row, -1}, {Row{types.Null}, math.MinInt64}}
	got, err := Consolidate(b)
	if err != nil {
		t.Fatalf("a sum that fits must not fail on an intermediate overflow: %v", err)
	}
	if len(got) != 2 || got[0].Weight != math.MaxInt64 || got[1].Weight != math.MinInt64 {
		t.Fatalf("got %v", got)
	}
	_, err = Consolidate(Batch{{row, math.MaxInt64}, {row, 1}})
	if errs.SQLState(err) != "22003" {
		t.Fatalf("want 22003, got %v", err)
	}
}

func TestBatchNegate(t *testing.T) {
	b := Batch{{Row{types.MakeBool(true)}, 3}, {Row{types.Null}, -2}, {nil, math.MaxInt64}}
	if err := b.Negate(); err != nil {
		t.Fatal(err)
	}
	if b[0].Weight != -3 || b[1].Weight != 2 || b[2].Weight != -math.MaxInt64 {
		t.Fatalf("Negate gave %v", b)
	}
	bad := Batch{{nil, 1}, {nil, math.MinInt64}}
	if err := bad.Negate(); errs.SQLState(err) != "22003" || bad[0].Weight != 1 {
		t.Fatalf("Negate of MinInt64: err %v, batch %v", err, bad)
	}
}

// benchBatch returns n rows of (integer, text), weights ±1. With ints > 0,
// the integers are drawn from [0, ints) and the texts from 10, so with
// 100,000 rows and 2,000 integers there are 20,000 distinct rows, each about
// 5 times. With ints == 0 every row is distinct (the integers are a
// permutation of [0, n)).
func benchBatch(n, ints int) Batch {
	rng := rand.New(rand.NewPCG(1, 2))
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = fmt.Sprintf("customer-%02d", i)
	}
	perm := rng.Perm(n)
	b := make(Batch, n)
	for i := range b {
		x := int64(perm[i])
		if ints > 0 {
			x = int64(rng.IntN(ints))
		}
		w := int64(1)
		if rng.IntN(3) == 0 {
			w = -1
		}
		b[i] = Entry{
			Row:    Row{types.MakeInt(types.Int4, x), types.MakeText(texts[rng.IntN(len(texts))])},
			Weight: w,
		}
	}
	return b
}

func BenchmarkConsolidate(b *testing.B) {
	const n = 100_000
	benchConsolidate(b, benchBatch(n, 2000))
}

// BenchmarkConsolidateDistinct consolidates 100,000 distinct rows, the
// case where grouping duplicates first does not pay off.
func BenchmarkConsolidateDistinct(b *testing.B) {
	const n = 100_000
	benchConsolidate(b, benchBatch(n, 0))
}

func benchConsolidate(b *testing.B, src Batch) {
	n := len(src)
	work := make(Batch, n)
	b.Run("pooled", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			copy(work, src)
			b.StartTimer()
			if _, err := Consolidate(work); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
	})
	b.Run("consolidator", func(b *testing.B) {
		var c Consolidator
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			copy(work, src)
			b.StartTimer()
			if _, err := c.Consolidate(work); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
	})
}

func BenchmarkEncodeKey(b *testing.B) {
	src := benchBatch(1024, 2000)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		for _, e := range src {
			buf = EncodeKey(buf[:0], e.Row...)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(src)), "ns/row")
}

func BenchmarkRowRoundTrip(b *testing.B) {
	src := benchBatch(1024, 2000)
	var buf []byte
	var row Row
	b.ReportAllocs()
	for b.Loop() {
		for _, e := range src {
			buf = EncodeRow(buf[:0], e.Row)
			var err error
			if row, err = DecodeRowAppend(row[:0], buf); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(src)), "ns/row")
}
