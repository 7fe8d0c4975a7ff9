package ops

import (
	"math"
	"math/big"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"pgregory.net/rapid"
)

func bigOf(a int128) *big.Int {
	b := new(big.Int).SetInt64(a.hi)
	b.Lsh(b, 64)
	return b.Add(b, new(big.Int).SetUint64(a.lo))
}

func TestInt128(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x := rapid.Int64().Draw(t, "x")
		w := rapid.Int64().Draw(t, "w")
		y := rapid.Int64().Draw(t, "y")
		p := mul128(x, w)
		want := new(big.Int).Mul(big.NewInt(x), big.NewInt(w))
		if bigOf(p).Cmp(want) != 0 {
			t.Fatalf("mul128(%d, %d) = %s, want %s", x, w, bigOf(p), want)
		}
		s, ok := p.add(int128Of(y))
		want.Add(want, big.NewInt(y))
		if !ok || bigOf(s).Cmp(want) != 0 {
			t.Fatalf("add = %s %v, want %s", bigOf(s), ok, want)
		}
		if d := s.decimal(); d.Text('f') != want.String() {
			t.Fatalf("decimal = %s, want %s", d.Text('f'), want)
		}
		if v, fits := s.int64(); fits != want.IsInt64() || (fits && v != want.Int64()) {
			t.Fatalf("int64 = %d %v, want %s", v, fits, want)
		}
		if n := s.neg(); bigOf(n).Cmp(new(big.Int).Neg(want)) != 0 && want.Cmp(new(big.Int).Lsh(big.NewInt(-1), 127)) != 0 {
			t.Fatalf("neg(%s) = %s", want, bigOf(n))
		}
	})
	max := int128{hi: math.MaxInt64, lo: math.MaxUint64}
	if _, ok := max.add(int128Of(1)); ok {
		t.Fatal("int128 overflow not detected")
	}
	if _, ok := max.neg().add(int128Of(-2)); ok {
		t.Fatal("int128 underflow not detected")
	}
}

func genFloat(t *rapid.T, label string) float64 {
	switch rapid.IntRange(0, 3).Draw(t, label+"-kind") {
	case 0:
		return math.Float64frombits(rapid.Uint64().Draw(t, label))
	case 1:
		return float64(rapid.IntRange(-1000, 1000).Draw(t, label)) / 8
	case 2:
		return rapid.Float64Range(-1e-300, 1e-300).Draw(t, label)
	}
	return rapid.Float64().Draw(t, label)
}

// TestFloatDecimalExact checks that a float becomes the exact decimal of
// its binary value and rounds back to itself.
func TestFloatDecimalExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := genFloat(t, "f")
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return
		}
		var d apd.Decimal
		floatDecimal(&d, f)
		r, ok := new(big.Rat).SetString(d.Text('f'))
		if !ok {
			t.Fatalf("bad decimal %s", d.Text('f'))
		}
		if want := new(big.Rat).SetFloat64(f); r.Cmp(want) != 0 {
			t.Fatalf("floatDecimal(%g) = %s, want %s", f, r.FloatString(40), want.FloatString(40))
		}
		back, err := decimalFloat(&d, 64)
		if err != nil || back != f {
			t.Fatalf("decimalFloat(floatDecimal(%g)) = %g, %v", f, back, err)
		}
		back32, err := decimalFloat(&d, 32)
		if want := float64(float32(f)); err == nil && back32 != want && !math.IsInf(want, 0) {
			t.Fatalf("decimalFloat32(%g) = %g, want %g", f, back32, want)
		}
	})
}

// TestExactFloatSum checks that a sum kept exactly, with rows added and
// removed in any order, rounds to the correctly rounded sum of the rows
// present.
func TestExactFloatSum(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		vals := rapid.SliceOfN(rapid.Float64Range(-1e20, 1e20), 1, 20).Draw(t, "vals")
		var sum apd.Decimal
		exact := new(big.Rat)
		var x apd.Decimal
		for _, v := range vals {
			floatDecimal(&x, v)
			if err := addScaled(&sum, &x, 2); err != nil {
				t.Fatal(err)
			}
			exact.Add(exact, new(big.Rat).SetFloat64(v))
		}
		for _, v := range vals {
			floatDecimal(&x, v)
			if err := addScaled(&sum, &x, -1); err != nil {
				t.Fatal(err)
			}
		}
		got, err := decimalFloat(&sum, 64)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := exact.Float64(); got != want {
			t.Fatalf("sum = %g, want %g", got, want)
		}
	})
	var d, x apd.Decimal
	floatDecimal(&x, math.MaxFloat64)
	_ = addScaled(&d, &x, 2)
	if _, err := decimalFloat(&d, 64); err == nil {
		t.Fatal("float overflow not reported")
	}
}

func TestRescaleAndScales(t *testing.T) {
	d, _, _ := apd.NewFromString("12.3400")
	rescale(d, 2)
	if d.Text('f') != "12.34" {
		t.Fatalf("rescale to 2 = %s", d.Text('f'))
	}
	rescale(d, 5)
	if d.Text('f') != "12.34000" {
		t.Fatalf("rescale to 5 = %s", d.Text('f'))
	}
	z, _, _ := apd.NewFromString("-0.00")
	rescale(z, 0)
	if z.Text('f') != "0" {
		t.Fatalf("rescale -0.00 = %s", z.Text('f'))
	}
	var sc []scaleCount
	var err error
	for _, s := range []struct {
		scale int32
		w     int64
	}{{2, 1}, {0, 3}, {5, 1}, {5, -1}, {1, 2}} {
		if sc, err = addScale(sc, s.scale, s.w); err != nil {
			t.Fatal(err)
		}
	}
	if got := maxScale(sc); got != 2 {
		t.Fatalf("maxScale = %d, want 2 (%v)", got, sc)
	}
	back, err := decodeScales(nil, encodeScales(sc))
	if err != nil || len(back) != len(sc) {
		t.Fatalf("decodeScales = %v %v, want %v", back, err, sc)
	}
	for i := range sc {
		if back[i] != sc[i] {
			t.Fatalf("decodeScales = %v, want %v", back, sc)
		}
	}
}

// int128.mul, which merges a partial aggregate's sum w times, is the
// exact product or reports overflow.
func TestInt128Mul(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := mul128(rapid.Int64().Draw(t, "x"), rapid.Int64Range(-1<<20, 1<<20).Draw(t, "y"))
		w := rapid.SampledFrom([]int64{0, 1, -1, 2, -3, 8, math.MaxInt64, math.MinInt64 + 1}).Draw(t, "w")
		want := new(big.Int).Mul(bigOf(a), big.NewInt(w))
		p, ok := a.mul(w)
		fits := want.Cmp(new(big.Int).Lsh(big.NewInt(1), 127)) < 0 && want.Cmp(new(big.Int).Lsh(big.NewInt(-1), 127)) > 0
		if ok != fits || (ok && bigOf(p).Cmp(want) != 0) {
			t.Fatalf("%s.mul(%d) = %s %v, want %s (fits %v)", bigOf(a), w, bigOf(p), ok, want, fits)
		}
	})
}
