package state

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHintedIsUnhinted drives two identical chains of stores (a Memory
// wrapped as the engine wraps it, an epoch overlay, a statement overlay,
// a table write's overlay: as deep as a Hint reaches)
// with the same random reads, writes and deletes, one chain through
// GetHinted, SetHinted and DeleteHinted with a few shared hints, the other
// through the plain methods: every read returns the same, and the stores
// end up with the same contents after each commit.
func TestHintedIsUnhinted(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			type chain struct {
				mem                *Memory
				base               Store
				epoch, stmt, write *Overlay
			}
			newChain := func() *chain {
				m := NewMemory().(*Memory)
				c := &chain{mem: m, base: struct{ *Memory }{m}}
				c.epoch = NewOverlay(c.base)
				c.stmt = NewOverlay(c.epoch)
				c.write = NewOverlay(c.stmt)
				return c
			}
			plain, hinted := newChain(), newChain()
			var hints [3]Hint
			// Keys from a small space, in runs of neighbours, so that hints
			// are both right and wrong.
			key := func() []byte {
				return fmt.Appendf(nil, "k%03d", rng.IntN(300))
			}
			stores := func(c *chain) []Store { return []Store{c.mem, c.epoch, c.stmt, c.write} }
			for step := range 3000 {
				i := [...]int{0, 1, 1, 1, 2, 2, 2, 3, 3, 3}[rng.IntN(10)]
				h := &hints[rng.IntN(len(hints))]
				p, q := stores(plain)[i], stores(hinted)[i]
				k := key()
				// The memory is written to directly only while the overlays
				// over it hold nothing: commit them first, and now and then.
				if i == 0 || rng.IntN(200) == 0 {
					for _, c := range []*chain{plain, hinted} {
						if err := c.write.Commit(); err != nil {
							t.Fatal(err)
						}
						if err := c.stmt.Commit(); err != nil {
							t.Fatal(err)
						}
						if err := c.epoch.Commit(); err != nil {
							t.Fatal(err)
						}
					}
					if got, want := scanAll(t, hinted.mem, nil, nil, false), scanAll(t, plain.mem, nil, nil, false); !slices.Equal(got, want) {
						t.Fatalf("step %d: memory through hints %v, plain %v", step, got, want)
					}
				}
				switch op := rng.IntN(10); {
				case op < 5:
					v1, ok1, err1 := p.Get(k)
					v2, ok2, err2 := GetHinted(q, k, h)
					if string(v1) != string(v2) || ok1 != ok2 || err1 != nil || err2 != nil {
						t.Fatalf("step %d: Get(%s) on store %d = %q %v %v, hinted %q %v %v", step, k, i, v1, ok1, err1, v2, ok2, err2)
					}
				case op < 8:
					v := fmt.Appendf(nil, "v%d", step)
					if err := p.Set(k, v); err != nil {
						t.Fatal(err)
					}
					if err := SetHinted(q, k, v, h); err != nil {
						t.Fatal(err)
					}
				default:
					if err := p.Delete(k); err != nil {
						t.Fatal(err)
					}
					if err := DeleteHinted(q, k, h); err != nil {
						t.Fatal(err)
					}
				}
			}
			if got, want := scanAll(t, hinted.write, nil, nil, false), scanAll(t, plain.write, nil, nil, false); !slices.Equal(got, want) {
				t.Fatalf("write overlay through hints %v, plain %v", got, want)
			}
		})
	}
}

// TestHintedWriteInScan checks that a hinted write during a scan of the
// same store fails as a plain one does.
func TestHintedWriteInScan(t *testing.T) {
	m := NewMemory().(*Memory)
	mustSet(t, m, "a", "1")
	o := NewOverlay(m)
	mustSet(t, o, "b", "2")
	var h Hint
	for _, s := range []Store{m, o} {
		var errs []error
		_ = s.Scan(nil, nil, func(k, v []byte) bool {
			errs = append(errs, SetHinted(s, []byte("c"), nil, &h), DeleteHinted(s, []byte("a"), &h))
			return false
		})
		for _, err := range errs {
			if err != errWriteInScan {
				t.Errorf("hinted write in a scan of %T = %v, want %v", s, err, errWriteInScan)
			}
		}
	}
}

// BenchmarkAddWeight reads and rewrites keys through an epoch overlay over
// a Memory of 200,000 keys, as operators add weights: "sorted" in runs of
// neighbouring keys (a join's sorted arrangement writes), "random" in no
// order (a view's rows), each plain and through one hint kept across
// keys. Per key.
func BenchmarkAddWeight(b *testing.B) {
	const base, perEpoch = 200000, 1000
	key := func(dst []byte, i int) []byte {
		return fmt.Appendf(append(dst[:0], 0x03, 0x05, 0, 0, 0, 3, 'l'), "%08d row payload", i)
	}
	m := NewMemory().(*Memory)
	var k []byte
	for i := range base {
		k = key(k, 2*i)
		_ = m.Set(k, k)
	}
	parent := struct{ *Memory }{m}
	for _, order := range []string{"sorted", "random"} {
		for _, mode := range []string{"plain", "hint"} {
			b.Run(order+"/"+mode, func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 2))
				keys := make([]int, perEpoch)
				n := 0
				for b.Loop() {
					if order == "sorted" {
						start := rng.IntN(2 * base)
						for i := range keys {
							keys[i] = start + i
						}
					} else {
						for i := range keys {
							keys[i] = rng.IntN(2 * base)
						}
					}
					epoch := NewOverlay(parent)
					var h Hint
					for _, x := range keys {
						n++
						k = key(k, x)
						switch mode {
						case "plain":
							v, _, _ := epoch.Get(k)
							_ = epoch.Set(k, append(v[:len(v):len(v)], 'x'))
						default:
							v, _, _ := GetHinted(epoch, k, &h)
							_ = SetHinted(epoch, k, append(v[:len(v):len(v)], 'x'), &h)
						}
					}
					epoch.Discard()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/key")
			})
		}
	}
}
