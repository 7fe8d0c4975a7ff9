package nexmark

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkExactString is the cost of the random padding that makes most
// of a generated event's bytes: a bid's is about 70 characters.
func BenchmarkExactString(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	for b.Loop() {
		_ = exactString(rng, 70)
	}
}
