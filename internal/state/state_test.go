package state

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"testing"

	"pgregory.net/rapid"
)

// backend is one Store implementation under test. commit, when set, pushes
// buffered writes down (for an Overlay) so that the suite also checks the
// parent after Commit.
type backend struct {
	name string
	open func() (Store, func() error)
}

func backends() []backend {
	return []backend{
		{"memory", func() (Store, func() error) { return NewMemory(), nil }},
		{"overlay", func() (Store, func() error) {
			o := NewOverlay(NewMemory())
			return o, o.Commit
		}},
		{"overlay-over-filled-parent", func() (Store, func() error) {
			// The parent holds keys that the suite's writes shadow.
			parent := NewMemory()
			for _, k := range []string{"a", "b", "c", "d", "zz"} {
				_ = parent.Set([]byte(k), []byte("parent-"+k))
			}
			o := NewOverlay(parent)
			for _, k := range []string{"a", "b", "c", "d", "zz"} {
				_ = o.Delete([]byte(k))
			}
			return o, o.Commit
		}},
		{"overlay-of-overlay", func() (Store, func() error) {
			mid := NewOverlay(NewMemory())
			top := NewOverlay(mid)
			return top, func() error {
				if err := top.Commit(); err != nil {
					return err
				}
				return mid.Commit()
			}
		}},
	}
}

type kv struct{ k, v string }

func scanAll(t *testing.T, r Reader, lo, hi []byte, reverse bool) []kv {
	t.Helper()
	var out []kv
	fn := func(k, v []byte) bool {
		out = append(out, kv{string(k), string(v)})
		return true
	}
	var err error
	if reverse {
		err = r.ScanReverse(lo, hi, fn)
	} else {
		err = r.Scan(lo, hi, fn)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustSet(t *testing.T, w Writer, k, v string) {
	t.Helper()
	if err := w.Set([]byte(k), []byte(v)); err != nil {
		t.Fatal(err)
	}
}

func TestStoreSuite(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Run("get-set-delete", func(t *testing.T) {
				st, _ := b.open()
				if _, ok, _ := st.Get([]byte("a")); ok {
					t.Fatal("empty store has a")
				}
				mustSet(t, st, "a", "1")
				mustSet(t, st, "a", "2")
				v, ok, err := st.Get([]byte("a"))
				if err != nil || !ok || string(v) != "2" {
					t.Fatalf("Get(a) = %q %v %v", v, ok, err)
				}
				if err := st.Delete([]byte("a")); err != nil {
					t.Fatal(err)
				}
				if _, ok, _ := st.Get([]byte("a")); ok {
					t.Fatal("deleted key still present")
				}
				if err := st.Delete([]byte("never")); err != nil {
					t.Fatal(err)
				}
			})
			t.Run("copies-buffers", func(t *testing.T) {
				st, _ := b.open()
				k, v := []byte("key"), []byte("val")
				if err := st.Set(k, v); err != nil {
					t.Fatal(err)
				}
				k[0], v[0] = 'X', 'X'
				got, ok, _ := st.Get([]byte("key"))
				if !ok || string(got) != "val" {
					t.Fatalf("store kept the caller's buffer: %q %v", got, ok)
				}
			})
			t.Run("empty-value", func(t *testing.T) {
				st, _ := b.open()
				mustSet(t, st, "e", "")
				v, ok, _ := st.Get([]byte("e"))
				if !ok || len(v) != 0 {
					t.Fatalf("Get(e) = %q %v", v, ok)
				}
			})
			t.Run("scan-order-and-bounds", func(t *testing.T) {
				st, commit := b.open()
				for _, k := range []string{"b", "a", "c", "ab", "b\x00", "\xff", "\xff\xff"} {
					mustSet(t, st, k, "v"+k)
				}
				check := func(st Reader) {
					all := scanAll(t, st, nil, nil, false)
					var keys []string
					for _, e := range all {
						keys = append(keys, e.k)
					}
					want := []string{"a", "ab", "b", "b\x00", "c", "\xff", "\xff\xff"}
					if !slices.Equal(keys, want) {
						t.Fatalf("Scan = %q, want %q", keys, want)
					}
					rev := scanAll(t, st, nil, nil, true)
					for i := range rev {
						if rev[i] != all[len(all)-1-i] {
							t.Fatalf("ScanReverse = %v, Scan = %v", rev, all)
						}
					}
					got := scanAll(t, st, []byte("ab"), []byte("c"), false)
					if len(got) != 3 || got[0].k != "ab" || got[2].k != "b\x00" {
						t.Fatalf("Scan[ab,c) = %v", got)
					}
					got = scanAll(t, st, []byte("ab"), []byte("c"), true)
					if len(got) != 3 || got[0].k != "b\x00" || got[2].k != "ab" {
						t.Fatalf("ScanReverse[ab,c) = %v", got)
					}
					p := []byte("b")
					got = scanAll(t, st, p, PrefixEnd(p), false)
					if len(got) != 2 || got[0].k != "b" || got[1].k != "b\x00" {
						t.Fatalf("prefix scan b = %v", got)
					}
					got = scanAll(t, st, []byte("\xff"), PrefixEnd([]byte("\xff")), true)
					if len(got) != 2 || got[0].k != "\xff\xff" {
						t.Fatalf("prefix scan \\xff = %v", got)
					}
					if got := scanAll(t, st, []byte("c"), []byte("c"), false); len(got) != 0 {
						t.Fatalf("empty range = %v", got)
					}
				}
				check(st)
				if commit != nil {
					if err := commit(); err != nil {
						t.Fatal(err)
					}
					check(st)
				}
			})
			t.Run("scan-stops", func(t *testing.T) {
				st, _ := b.open()
				for _, k := range []string{"a", "b", "c", "d"} {
					mustSet(t, st, k, k)
				}
				for _, reverse := range []bool{false, true} {
					n := 0
					fn := func(k, v []byte) bool { n++; return n < 2 }
					if reverse {
						_ = st.ScanReverse(nil, nil, fn)
					} else {
						_ = st.Scan(nil, nil, fn)
					}
					if n != 2 {
						t.Fatalf("reverse=%v: callback ran %d times after returning false", reverse, n)
					}
				}
			})
			t.Run("write-in-scan-fails", func(t *testing.T) {
				st, _ := b.open()
				mustSet(t, st, "a", "1")
				var werr error
				_ = st.Scan(nil, nil, func(k, v []byte) bool {
					werr = st.Set([]byte("b"), nil)
					return true
				})
				if werr == nil {
					t.Fatal("write during scan succeeded")
				}
			})
		})
	}
}

func TestOverlayShadowsParent(t *testing.T) {
	parent := NewMemory()
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		mustSet(t, parent, k, "p")
	}
	o := NewOverlay(parent)
	mustSet(t, o, "b", "o")
	mustSet(t, o, "bb", "o")
	mustSet(t, o, "0", "o")
	mustSet(t, o, "z", "o")
	_ = o.Delete([]byte("c"))
	_ = o.Delete([]byte("e"))
	_ = o.Delete([]byte("nope"))
	want := []kv{{"0", "o"}, {"a", "p"}, {"b", "o"}, {"bb", "o"}, {"d", "p"}, {"z", "o"}}
	if got := scanAll(t, o, nil, nil, false); !slices.Equal(got, want) {
		t.Fatalf("Scan = %v, want %v", got, want)
	}
	rev := slices.Clone(want)
	slices.Reverse(rev)
	if got := scanAll(t, o, nil, nil, true); !slices.Equal(got, rev) {
		t.Fatalf("ScanReverse = %v, want %v", got, rev)
	}
	if got := scanAll(t, parent, nil, nil, false); len(got) != 5 {
		t.Fatalf("parent changed before Commit: %v", got)
	}
	o.Discard()
	if got := scanAll(t, o, nil, nil, false); len(got) != 5 {
		t.Fatalf("after Discard = %v", got)
	}
	mustSet(t, o, "b", "o")
	_ = o.Delete([]byte("a"))
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	want = []kv{{"b", "o"}, {"c", "p"}, {"d", "p"}, {"e", "p"}}
	if got := scanAll(t, parent, nil, nil, false); !slices.Equal(got, want) {
		t.Fatalf("parent after Commit = %v, want %v", got, want)
	}
	if o.Len() != 0 {
		t.Fatalf("overlay holds %d writes after Commit", o.Len())
	}
}

// TestStoreModel checks every backend against a map under random
// operations, including random nested overlays committed or discarded.
func TestStoreModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		base := NewMemory()
		model := map[string]string{}
		// A stack of overlays; each level has its own model snapshot to
		// return to on Discard.
		type level struct {
			o     *Overlay
			saved map[string]string
		}
		var stack []level
		top := func() Store {
			if len(stack) == 0 {
				return base
			}
			return stack[len(stack)-1].o
		}
		keyGen := rapid.StringOfN(rapid.RuneFrom([]rune("ab\x00\xff")), 0, 3, -1)
		bound := func(t *rapid.T, label string) []byte {
			if rapid.Bool().Draw(t, label+"-nil") {
				return nil
			}
			return []byte(keyGen.Draw(t, label))
		}
		steps := rapid.IntRange(1, 80).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0, 1, 2:
				k, v := keyGen.Draw(t, "k"), rapid.String().Draw(t, "v")
				if err := top().Set([]byte(k), []byte(v)); err != nil {
					t.Fatal(err)
				}
				model[k] = v
			case 3:
				k := keyGen.Draw(t, "k")
				if err := top().Delete([]byte(k)); err != nil {
					t.Fatal(err)
				}
				delete(model, k)
			case 4:
				k := keyGen.Draw(t, "k")
				v, ok, err := top().Get([]byte(k))
				mv, mok := model[k]
				if err != nil || ok != mok || string(v) != mv {
					t.Fatalf("Get(%q) = %q %v, model %q %v", k, v, ok, mv, mok)
				}
			case 5, 6:
				lo, hi := bound(t, "lo"), bound(t, "hi")
				reverse := rapid.Bool().Draw(t, "reverse")
				limit := rapid.IntRange(0, 6).Draw(t, "limit")
				var got []string
				fn := func(k, v []byte) bool {
					if model[string(k)] != string(v) {
						t.Fatalf("Scan gave %q=%q, model has %q", k, v, model[string(k)])
					}
					got = append(got, string(k))
					return limit == 0 || len(got) < limit
				}
				var err error
				if reverse {
					err = top().ScanReverse(lo, hi, fn)
				} else {
					err = top().Scan(lo, hi, fn)
				}
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				for k := range model {
					if k >= string(lo) && (hi == nil || k < string(hi)) {
						want = append(want, k)
					}
				}
				sort.Strings(want)
				if reverse {
					slices.Reverse(want)
				}
				if limit > 0 && len(want) > limit {
					want = want[:limit]
				}
				if !slices.Equal(got, want) {
					t.Fatalf("scan [%q,%q) reverse=%v limit=%d = %q, want %q", lo, hi, reverse, limit, got, want)
				}
			case 7:
				if len(stack) < 3 {
					stack = append(stack, level{o: NewOverlay(top()), saved: maps(model)})
				}
			case 8:
				if n := len(stack); n > 0 {
					if err := stack[n-1].o.Commit(); err != nil {
						t.Fatal(err)
					}
					stack = stack[:n-1]
				}
			case 9:
				if n := len(stack); n > 0 {
					stack[n-1].o.Discard()
					model = stack[n-1].saved
					stack = stack[:n-1]
				}
			}
		}
		for n := len(stack); n > 0; n-- {
			if err := stack[n-1].o.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		var got []kv
		_ = base.Scan(nil, nil, func(k, v []byte) bool {
			got = append(got, kv{string(k), string(v)})
			return true
		})
		if len(got) != len(model) {
			t.Fatalf("base has %d keys, model %d", len(got), len(model))
		}
		for i, e := range got {
			if model[e.k] != e.v {
				t.Fatalf("base[%d] = %q=%q, model %q", i, e.k, e.v, model[e.k])
			}
			if i > 0 && bytes.Compare([]byte(got[i-1].k), []byte(e.k)) >= 0 {
				t.Fatal("base scan out of order")
			}
		}
	})
}

func maps(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func TestPrefixEnd(t *testing.T) {
	for _, c := range []struct{ in, want []byte }{
		{[]byte("ab"), []byte("ac")},
		{[]byte("a\xff"), []byte("b")},
		{[]byte("\xff\xff"), nil},
		{nil, nil},
	} {
		if got := PrefixEnd(c.in); !bytes.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("PrefixEnd(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func BenchmarkMemorySet(b *testing.B) {
	st := NewMemory()
	key := make([]byte, 0, 16)
	for i := 0; b.Loop(); i++ {
		key = fmt.Appendf(key[:0], "k%08d", i%100000)
		_ = st.Set(key, key)
	}
}
