package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"testing"
	"unsafe"

	"github.com/rockstream/rockstream/internal/proccpu"
)

// The store suite and the model test run from package statetest, against
// every backend; the tests here are the Overlay's own.

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

// TestOverlayCommitIntoOverlay commits overlays into an overlay that holds
// fewer and more writes than they do (the two ways the trees merge), with
// equal keys on both sides, and the result into a Memory wrapped as the
// engine wraps it.
func TestOverlayCommitIntoOverlay(t *testing.T) {
	for _, childWrites := range []int{2, 40} {
		t.Run(fmt.Sprint(childWrites), func(t *testing.T) {
			m := NewMemory().(*Memory)
			base := struct{ *Memory }{m}
			model := map[string]string{}
			set := func(w Writer, k, v string) {
				mustSet(t, w, k, v)
				model[k] = v
			}
			del := func(w Writer, k string) {
				if err := w.Delete([]byte(k)); err != nil {
					t.Fatal(err)
				}
				delete(model, k)
			}
			for i := range 30 {
				set(m, fmt.Sprintf("k%02d", i), "m")
			}
			epoch := NewOverlay(base)
			for i := 0; i < 30; i += 3 {
				set(epoch, fmt.Sprintf("k%02d", i), "e")
				del(epoch, fmt.Sprintf("k%02d", i+1))
			}
			del(epoch, "k05")
			stmt := NewOverlay(epoch)
			for i := range childWrites {
				k := fmt.Sprintf("k%02d", (i*7)%50)
				if i%4 == 3 {
					del(stmt, k)
				} else {
					set(stmt, k, "s")
				}
			}
			set(stmt, "k04", "s") // deleted by the epoch, set again
			if err := stmt.Commit(); err != nil {
				t.Fatal(err)
			}
			if stmt.Len() != 0 {
				t.Fatalf("statement holds %d writes after Commit", stmt.Len())
			}
			var want []kv
			for _, k := range slices.Sorted(maps.Keys(model)) {
				want = append(want, kv{k, model[k]})
			}
			if got := scanAll(t, epoch, nil, nil, false); !slices.Equal(got, want) {
				t.Fatalf("epoch after the statement's Commit = %v, want %v", got, want)
			}
			if err := epoch.Commit(); err != nil {
				t.Fatal(err)
			}
			if got := scanAll(t, m, nil, nil, false); !slices.Equal(got, want) {
				t.Fatalf("memory after the epoch's Commit = %v, want %v", got, want)
			}
		})
	}
}

// BenchmarkEpochCommit follows the engine's pattern of writes: a Memory
// holding 200,000 keys laid out as a join arrangement's (namespace, view
// id, operator id, side, an encoded bigint join key, a row), an epoch
// overlay over it, and ten statement overlays
// of 100 scattered writes each (one in ten a delete), each committed into
// the epoch, which is then committed into the Memory. Per write.
func BenchmarkEpochCommit(b *testing.B) {
	const base, stmts, perStmt = 200000, 10, 100
	key := func(dst []byte, i int) []byte {
		dst = append(dst[:0], 0x03, 0x05, 0, 0, 0, 3, 'l', 0x30)
		dst = binary.BigEndian.AppendUint64(dst, uint64(i)^1<<63)
		return fmt.Appendf(append(dst, 0x01), "row payload %d", i)
	}
	parents := []struct {
		name string
		wrap func(*Memory) Store
	}{
		{"memory", func(m *Memory) Store { return m }},
		{"embedded", func(m *Memory) Store { return struct{ *Memory }{m} }},
	}
	for _, p := range parents {
		b.Run(p.name, func(b *testing.B) {
			m := NewMemory().(*Memory)
			var k []byte
			for i := range base {
				k = key(k, i)
				_ = m.Set(k, k)
			}
			parent := p.wrap(m)
			n, cpu := 0, proccpu.Used()
			for b.Loop() {
				epoch := NewOverlay(parent)
				for range stmts {
					st := NewOverlay(epoch)
					for range perStmt {
						n++
						k = key(k, (n*7919)%(base+base/10))
						if n%10 == 0 {
							_ = st.Delete(k)
						} else {
							_ = st.Set(k, k)
						}
					}
					if err := st.Commit(); err != nil {
						b.Fatal(err)
					}
				}
				if err := epoch.Commit(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/write")
			b.ReportMetric(float64((proccpu.Used()-cpu).Nanoseconds())/float64(n), "cpu-ns/write")
		})
	}
}

func TestOverlayNextWrite(t *testing.T) {
	parent := NewMemory()
	mustSet(t, parent, "a", "p")
	o := NewOverlay(parent)
	mustSet(t, o, "c", "o")
	_ = o.Delete([]byte("e"))
	for _, c := range []struct {
		from, want string
		ok         bool
	}{{"", "c", true}, {"a", "c", true}, {"c", "c", true}, {"cc", "e", true}, {"e", "e", true}, {"f", "", false}} {
		got, ok := o.NextWrite([]byte(c.from))
		if string(got) != c.want || ok != c.ok {
			t.Errorf("NextWrite(%q) = %q, %v; want %q, %v", c.from, got, ok, c.want, c.ok)
		}
	}
}

// TestEntryIs32Bytes keeps a tree item at 32 bytes (entry's comment says
// why); a field added to entry must make room elsewhere.
func TestEntryIs32Bytes(t *testing.T) {
	if n := unsafe.Sizeof(entry{}); n != 32 {
		t.Fatalf("entry is %d bytes, want 32", n)
	}
}

// TestEntryLessIsBytewise checks entryLess against bytes.Compare on keys
// around the head's 16 bytes: every pair of keys of lengths 0 to 20 drawn
// from two byte values, zero among them, so that zero padding, prefixes
// and equal heads of short and long keys all occur, and entries marked
// as deletions or merge operands.
func TestEntryLessIsBytewise(t *testing.T) {
	var keys [][]byte
	for n := 0; n <= 20; n++ {
		for _, pattern := range []uint32{0, 1, 1 << 15, 1 << 16, 1 << 19, 0xfffff} {
			k := make([]byte, n)
			for i := range k {
				if pattern&(1<<i) != 0 {
					k[i] = 7
				}
			}
			keys = append(keys, k)
		}
	}
	for _, a := range keys {
		for _, b := range keys {
			want := bytes.Compare(a, b) < 0
			ea, eb := probe(a), owned(b, []byte("v")).asDeletion()
			if got := entryLess(ea, eb); got != want {
				t.Fatalf("entryLess(%x, %x) = %v, want %v", a, b, got, want)
			}
			if got := entryLess(eb.asValue().asMerge(), ea); got != (bytes.Compare(b, a) < 0) {
				t.Fatalf("entryLess(%x, %x) = %v, want %v", b, a, got, !want)
			}
		}
	}
}
