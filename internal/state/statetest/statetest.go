// Package statetest is the conformance suite every state.Store
// implementation runs: the in-memory store, overlays, and the Pebble store
// in internal/storage. A backend passes when it behaves exactly as
// state.Memory does for reads and writes: bytewise key order, half-open
// scan bounds, copied buffers, empty values distinct from missing keys,
// scans that stop when the callback says so.
//
// Run runs the fixed cases; RunModel checks random operations, through
// random nested overlays, against a map.
package statetest

import (
	"bytes"
	"maps"
	"slices"
	"sort"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/internal/state"
)

// T is the part of *testing.T and *rapid.T that opening a backend needs.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// Backend opens empty stores of one implementation.
type Backend struct {
	Name string
	// Open returns an empty store and, when the store buffers writes (an
	// Overlay), a function that pushes them down so that the suite can
	// check the contents again after it. Resources are released with
	// t.Cleanup.
	Open func(t T) (st state.Store, flush func() error)
	// WriteInScanAllowed says the store accepts a write made from inside
	// a scan callback. Such a write must then not be seen by that scan.
	// Stores that reject it (state.Memory, state.Overlay) leave this false.
	WriteInScanAllowed bool
}

// MemoryBackends returns the in-memory store and overlays in the shapes
// the engine uses them.
func MemoryBackends() []Backend {
	return []Backend{
		{Name: "memory", Open: func(T) (state.Store, func() error) { return state.NewMemory(), nil }},
		{Name: "overlay", Open: func(t T) (state.Store, func() error) {
			return OverlayBackend(state.NewMemory(), nil)
		}},
		{Name: "overlay-over-filled-parent", Open: func(t T) (state.Store, func() error) {
			return ShadowingOverlay(t, state.NewMemory(), nil)
		}},
		{Name: "overlay-of-overlay", Open: func(T) (state.Store, func() error) {
			mid := state.NewOverlay(state.NewMemory())
			top := state.NewOverlay(mid)
			return top, func() error {
				if err := top.Commit(); err != nil {
					return err
				}
				return mid.Commit()
			}
		}},
	}
}

// OverlayBackend returns an overlay over parent whose flush commits the
// overlay and then calls after (when not nil), for a parent that needs
// its own commit step.
func OverlayBackend(parent state.Store, after func() error) (state.Store, func() error) {
	o := state.NewOverlay(parent)
	return o, func() error {
		if err := o.Commit(); err != nil {
			return err
		}
		if after != nil {
			return after()
		}
		return nil
	}
}

// ShadowingOverlay fills parent with keys that the suite writes too,
// pushes them down with after (when not nil), and returns an overlay
// that deletes them again: every read through it has to hide the
// parent's values.
func ShadowingOverlay(t T, parent state.Store, after func() error) (state.Store, func() error) {
	t.Helper()
	keys := []string{"a", "b", "c", "d", "zz"}
	for _, k := range keys {
		if err := parent.Set([]byte(k), []byte("parent-"+k)); err != nil {
			t.Fatalf("fill parent: %v", err)
		}
	}
	if after != nil {
		if err := after(); err != nil {
			t.Fatalf("fill parent: %v", err)
		}
	}
	st, flush := OverlayBackend(parent, after)
	for _, k := range keys {
		if err := st.Delete([]byte(k)); err != nil {
			t.Fatalf("shadow parent: %v", err)
		}
	}
	return st, flush
}

// KV is one key and value, as strings for readable failures.
type KV struct{ K, V string }

// ScanAll returns the entries of r in [lo, hi), in descending order when
// reverse is set.
func ScanAll(t testing.TB, r state.Reader, lo, hi []byte, reverse bool) []KV {
	t.Helper()
	var out []KV
	fn := func(k, v []byte) bool {
		out = append(out, KV{string(k), string(v)})
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

func mustSet(t testing.TB, w state.Writer, k, v string) {
	t.Helper()
	if err := w.Set([]byte(k), []byte(v)); err != nil {
		t.Fatal(err)
	}
}

// Run runs the store suite against b.
func Run(t *testing.T, b Backend) {
	t.Run("get-set-delete", func(t *testing.T) {
		st, _ := b.Open(t)
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
		st, _ := b.Open(t)
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
	t.Run("get-result-stays-valid", func(t *testing.T) {
		st, _ := b.Open(t)
		mustSet(t, st, "k", "first")
		got, _, _ := st.Get([]byte("k"))
		mustSet(t, st, "k", "second")
		mustSet(t, st, "k2", "other")
		if string(got) != "first" {
			t.Fatalf("a value returned by Get changed to %q after later writes", got)
		}
	})
	t.Run("empty-value-and-empty-key", func(t *testing.T) {
		st, commit := b.Open(t)
		mustSet(t, st, "e", "")
		mustSet(t, st, "", "root")
		check := func() {
			v, ok, _ := st.Get([]byte("e"))
			if !ok || len(v) != 0 {
				t.Fatalf("Get(e) = %q %v", v, ok)
			}
			v, ok, _ = st.Get(nil)
			if !ok || string(v) != "root" {
				t.Fatalf("Get(empty key) = %q %v", v, ok)
			}
			if got := ScanAll(t, st, nil, nil, false); !slices.Equal(got, []KV{{"", "root"}, {"e", ""}}) {
				t.Fatalf("Scan = %q", got)
			}
		}
		check()
		if commit != nil {
			if err := commit(); err != nil {
				t.Fatal(err)
			}
			check()
		}
		// Shadow the empty key again: a buffering store now merges its
		// own empty key with the one below.
		mustSet(t, st, "", "root2")
		mustSet(t, st, "\x00", "z")
		want := []KV{{"", "root2"}, {"\x00", "z"}, {"e", ""}}
		if got := ScanAll(t, st, nil, nil, false); !slices.Equal(got, want) {
			t.Fatalf("Scan = %q, want %q", got, want)
		}
		slices.Reverse(want)
		if got := ScanAll(t, st, nil, nil, true); !slices.Equal(got, want) {
			t.Fatalf("ScanReverse = %q, want %q", got, want)
		}
	})
	t.Run("scan-order-and-bounds", func(t *testing.T) {
		st, commit := b.Open(t)
		for _, k := range []string{"b", "a", "c", "ab", "b\x00", "\xff", "\xff\xff"} {
			mustSet(t, st, k, "v"+k)
		}
		check := func(st state.Reader) {
			all := ScanAll(t, st, nil, nil, false)
			var keys []string
			for _, e := range all {
				keys = append(keys, e.K)
			}
			want := []string{"a", "ab", "b", "b\x00", "c", "\xff", "\xff\xff"}
			if !slices.Equal(keys, want) {
				t.Fatalf("Scan = %q, want %q", keys, want)
			}
			rev := ScanAll(t, st, nil, nil, true)
			if len(rev) != len(all) {
				t.Fatalf("ScanReverse = %v, Scan = %v", rev, all)
			}
			for i := range rev {
				if rev[i] != all[len(all)-1-i] {
					t.Fatalf("ScanReverse = %v, Scan = %v", rev, all)
				}
			}
			got := ScanAll(t, st, []byte("ab"), []byte("c"), false)
			if len(got) != 3 || got[0].K != "ab" || got[2].K != "b\x00" {
				t.Fatalf("Scan[ab,c) = %v", got)
			}
			got = ScanAll(t, st, []byte("ab"), []byte("c"), true)
			if len(got) != 3 || got[0].K != "b\x00" || got[2].K != "ab" {
				t.Fatalf("ScanReverse[ab,c) = %v", got)
			}
			p := []byte("b")
			got = ScanAll(t, st, p, state.PrefixEnd(p), false)
			if len(got) != 2 || got[0].K != "b" || got[1].K != "b\x00" {
				t.Fatalf("prefix scan b = %v", got)
			}
			got = ScanAll(t, st, []byte("\xff"), state.PrefixEnd([]byte("\xff")), true)
			if len(got) != 2 || got[0].K != "\xff\xff" {
				t.Fatalf("prefix scan \\xff = %v", got)
			}
			for _, rev := range []bool{false, true} {
				if got := ScanAll(t, st, []byte("c"), []byte("c"), rev); len(got) != 0 {
					t.Fatalf("empty range (reverse=%v) = %v", rev, got)
				}
				if got := ScanAll(t, st, []byte("c"), []byte("b"), rev); len(got) != 0 {
					t.Fatalf("inverted range (reverse=%v) = %v", rev, got)
				}
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
		st, _ := b.Open(t)
		for _, k := range []string{"a", "b", "c", "d"} {
			mustSet(t, st, k, k)
		}
		for _, reverse := range []bool{false, true} {
			n := 0
			fn := func(k, v []byte) bool { n++; return n < 2 }
			var err error
			if reverse {
				err = st.ScanReverse(nil, nil, fn)
			} else {
				err = st.Scan(nil, nil, fn)
			}
			if err != nil {
				t.Fatal(err)
			}
			if n != 2 {
				t.Fatalf("reverse=%v: callback ran %d times after returning false", reverse, n)
			}
		}
	})
	t.Run("write-in-scan", func(t *testing.T) {
		st, _ := b.Open(t)
		mustSet(t, st, "a", "1")
		var werr error
		var seen []string
		err := st.Scan(nil, nil, func(k, v []byte) bool {
			seen = append(seen, string(k))
			if werr == nil && len(seen) == 1 {
				werr = st.Set([]byte("b"), nil)
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if !b.WriteInScanAllowed {
			if werr == nil {
				t.Fatal("write during scan succeeded")
			}
			return
		}
		if werr != nil {
			t.Fatalf("write during scan: %v", werr)
		}
		if !slices.Equal(seen, []string{"a"}) {
			t.Fatalf("scan saw a write made during it: %q", seen)
		}
	})
}

// RunModel checks random operations against a map: sets, deletes, point
// reads and bounded scans with early stops, through up to three nested
// overlays that are committed or discarded at random. newBase returns
// an empty store and, when writes to it need a commit step before
// reads see them, that step (called after every write to the base).
func RunModel(t *testing.T, newBase func(t T) (state.Store, func() error)) {
	rapid.Check(t, func(t *rapid.T) {
		base, settle := newBase(t)
		write := func(st state.Store, isBase bool, fn func() error) {
			if err := fn(); err != nil {
				t.Fatal(err)
			}
			if isBase && settle != nil {
				if err := settle(); err != nil {
					t.Fatal(err)
				}
			}
		}
		model := map[string]string{}
		type level struct {
			o     *state.Overlay
			saved map[string]string
		}
		var stack []level
		top := func() state.Store {
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
				st := top()
				write(st, len(stack) == 0, func() error { return st.Set([]byte(k), []byte(v)) })
				model[k] = v
			case 3:
				k := keyGen.Draw(t, "k")
				st := top()
				write(st, len(stack) == 0, func() error { return st.Delete([]byte(k)) })
				delete(model, k)
			case 4:
				k := keyGen.Draw(t, "k")
				v, ok, err := top().Get([]byte(k))
				mv, mok := model[k]
				if err != nil || ok != mok || string(v) != mv {
					t.Fatalf("Get(%q) = %q %v %v, model %q %v", k, v, ok, err, mv, mok)
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
					stack = append(stack, level{o: state.NewOverlay(top()), saved: maps.Clone(model)})
				}
			case 8:
				if n := len(stack); n > 0 {
					o := stack[n-1].o
					write(o, n == 1, o.Commit)
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
			o := stack[n-1].o
			write(o, n == 1, o.Commit)
		}
		var got []KV
		if err := base.Scan(nil, nil, func(k, v []byte) bool {
			got = append(got, KV{string(k), string(v)})
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(model) {
			t.Fatalf("base has %d keys, model %d", len(got), len(model))
		}
		for i, e := range got {
			if mv, ok := model[e.K]; !ok || mv != e.V {
				t.Fatalf("base[%d] = %q=%q, model %q %v", i, e.K, e.V, mv, ok)
			}
			if i > 0 && bytes.Compare([]byte(got[i-1].K), []byte(e.K)) >= 0 {
				t.Fatal("base scan out of order")
			}
		}
	})
}
