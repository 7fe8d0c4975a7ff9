package zset

import (
	"math"
	"math/big"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
	"pgregory.net/rapid"
)

func genWeight() *rapid.Generator[int64] {
	return edgy(rapid.Int64(), math.MinInt64, math.MinInt64+1, -1, 0, 1, math.MaxInt64,
		math.MaxInt64-1, 1<<32, -(1 << 32), 3037000499, 3037000500, -3037000500)
}

// checkWeightResult compares a checked operation's result with the exact
// big-integer one.
func checkWeightResult(t *rapid.T, op string, a, b int64, got int64, err error, exact *big.Int) {
	if !exact.IsInt64() {
		if err == nil {
			t.Fatalf("%d %s %d = %d, want an overflow error", a, op, b, got)
		}
		if errs.SQLState(err) != "22003" {
			t.Fatalf("%d %s %d: SQLSTATE %s, want 22003", a, op, b, errs.SQLState(err))
		}
		return
	}
	if err != nil || got != exact.Int64() {
		t.Fatalf("%d %s %d = %d, %v; want %s", a, op, b, got, err, exact)
	}
}

func TestWeightArithmetic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := genWeight().Draw(t, "a"), genWeight().Draw(t, "b")
		ba, bb := big.NewInt(a), big.NewInt(b)
		sum, err := AddWeight(a, b)
		checkWeightResult(t, "+", a, b, sum, err, new(big.Int).Add(ba, bb))
		prod, err := MulWeight(a, b)
		checkWeightResult(t, "*", a, b, prod, err, new(big.Int).Mul(ba, bb))
		neg, err := NegWeight(a)
		checkWeightResult(t, "neg", a, 0, neg, err, new(big.Int).Neg(ba))
	})
}

func TestWeightSumIsExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ws := rapid.SliceOf(genWeight()).Draw(t, "weights")
		var s weightSum
		exact := new(big.Int)
		for _, w := range ws {
			s.add(w)
			exact.Add(exact, big.NewInt(w))
		}
		got, ok := s.result()
		if ok != exact.IsInt64() || ok && got != exact.Int64() {
			t.Fatalf("sum = %d (fits %v), want %s", got, ok, exact)
		}
	})
}
