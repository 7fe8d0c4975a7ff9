package types

import (
	"crypto/rand"
	"encoding/binary"
	"math"
	"sync"

	"github.com/rockstream/rockstream/internal/errs"
)

// Random is a session's generator for random() and setseed(): PostgreSQL
// 15's pg_prng (xoroshiro128**, seeded through splitmix64), so that after
// the same setseed(x) a session draws the same numbers PostgreSQL does.
// Until setseed is called it starts from a random seed. It is safe for
// concurrent use.
type Random struct {
	mu     sync.Mutex
	s0, s1 uint64
	seeded bool
}

// Float64 is random(): a number in [0, 1) with 52 random bits.
func (r *Random) Float64() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.seeded {
		var b [8]byte
		_, _ = rand.Read(b[:])
		r.seed(binary.LittleEndian.Uint64(b[:]))
	}
	v := r.next()
	return math.Ldexp(float64(v>>(64-52)), -52)
}

// SetSeed is setseed(x): x in [-1, 1] fixes the numbers random() draws
// next, as pg_prng_fseed does.
func (r *Random) SetSeed(x float64) error {
	if x < -1 || x > 1 || math.IsNaN(x) {
		return errs.Newf(errs.InvalidParameterValue, "setseed parameter %s is out of allowed range [-1,1]", cFormatG(x, 6))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seed(uint64(int64(float64(uint64(1)<<52-1) * x)))
	return nil
}

// Seed fixes the numbers random() draws next from a 64-bit seed, as a
// cluster's gateway gives one with each statement so that every member
// draws the same numbers.
func (r *Random) Seed(s uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seed(s)
}

func (r *Random) seed(s uint64) {
	r.s0 = splitmix64(&s)
	r.s1 = splitmix64(&s)
	if r.s0 == 0 && r.s1 == 0 {
		r.s0 = 1
	}
	r.seeded = true
}

func (r *Random) next() uint64 {
	s0 := r.s0
	sx := r.s1 ^ s0
	val := rotl(s0*5, 7) * 9
	r.s0 = rotl(s0, 24) ^ sx ^ (sx << 16)
	r.s1 = rotl(sx, 37)
	return val
}

func rotl(x uint64, bits uint) uint64 { return x<<bits | x>>(64-bits) }

func splitmix64(state *uint64) uint64 {
	*state += 0x9E3779B97F4A7C15
	v := *state
	v = (v ^ (v >> 30)) * 0xBF58476D1CE4E5B9
	v = (v ^ (v >> 27)) * 0x94D049BB133111EB
	return v ^ (v >> 31)
}
