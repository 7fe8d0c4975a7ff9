package spill

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
)

// files returns the regular files under dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, path)
		}
		return nil
	})
	return out
}

// TestStoreMatchesMemory: random sets, deletes, gets and scans (both
// directions, bounded and not) give the same answers from a Store with
// the least budget, which spills many times, as from an in-memory store;
// closing the statement removes every file.
func TestStoreMatchesMemory(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 1))
			area := NewTempArea(t.TempDir())
			defer area.Close()
			_, stmt := WithStatement(context.Background(), area, -1)
			st := NewStore(stmt, nil, 0)
			ref := state.NewMemory()
			key := func() []byte {
				k := binary.BigEndian.AppendUint32([]byte{0xff, byte(rng.IntN(3))}, uint32(rng.IntN(3000)))
				return k[:2+rng.IntN(5)] // prefixes of one another too
			}
			for i := range 20000 {
				switch op := rng.IntN(10); {
				case op < 6:
					k, v := key(), bytes.Repeat([]byte{byte(i)}, rng.IntN(40))
					must(t, st.Set(k, v))
					must(t, ref.Set(k, v))
				case op < 8:
					k := key()
					must(t, st.Delete(k))
					must(t, ref.Delete(k))
				case op < 9:
					k := key()
					got, gok, err := st.Get(k)
					must(t, err)
					want, wok, _ := ref.Get(k)
					if gok != wok || !bytes.Equal(got, want) {
						t.Fatalf("op %d: Get(%x) = %x %v, want %x %v", i, k, got, gok, want, wok)
					}
				default:
					lo, hi := key(), key()
					if bytes.Compare(lo, hi) > 0 {
						lo, hi = hi, lo
					}
					if rng.IntN(4) == 0 {
						hi = nil
					}
					for _, reverse := range []bool{false, true} {
						scan := func(s state.Reader) (out []string) {
							f := s.Scan
							if reverse {
								f = s.ScanReverse
							}
							n := rng.IntN(50) + 1
							must(t, f(lo, hi, func(k, v []byte) bool {
								out = append(out, fmt.Sprintf("%x=%x", k, v))
								return len(out) < n
							}))
							return out
						}
						state := rng.Uint64()
						rng = rand.New(rand.NewPCG(state, 2))
						got := scan(st)
						rng = rand.New(rand.NewPCG(state, 2))
						want := scan(ref)
						if !slices.Equal(got, want) {
							t.Fatalf("op %d: scan [%x, %x) reverse=%v:\n got %v\nwant %v", i, lo, hi, reverse, got, want)
						}
					}
				}
			}
			if !st.Spilled() {
				t.Fatal("the store never spilled")
			}
			if len(files(t, area.Root())) == 0 {
				t.Fatal("no files while spilled")
			}
			must(t, stmt.Close())
			if left := files(t, area.Root()); len(left) > 0 {
				t.Fatalf("files left: %v", left)
			}
			if _, _, err := st.Get([]byte{1}); err == nil {
				t.Fatal("a closed store answered")
			}
		})
	}
}

// TestSorterMergesRuns: items sorted through many runs come out in order,
// equal items in the order they were added; the runs' files go with the
// statement.
func TestSorterMergesRuns(t *testing.T) {
	type item struct{ k, seq int }
	codec := Codec[item]{
		Compare: func(a, b item) int { return cmp.Compare(a.k, b.k) },
		Append: func(dst []byte, it item) []byte {
			return binary.AppendVarint(binary.AppendVarint(dst, int64(it.k)), int64(it.seq))
		},
		Decode: func(b []byte) (item, error) {
			k, n := binary.Varint(b)
			s, m := binary.Varint(b[n:])
			if n <= 0 || m <= 0 {
				return item{}, errors.New("bad item")
			}
			return item{int(k), int(s)}, nil
		},
		Size: func(item) int64 { return 100 },
		Sort: func(_ context.Context, items []item) error {
			slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(a.k, b.k) })
			return nil
		},
	}
	ctx := context.Background()
	area := NewTempArea(t.TempDir())
	defer area.Close()
	_, stmt := WithStatement(ctx, area, -1)
	s := NewSorter(stmt, nil, 0, codec)
	rng := rand.New(rand.NewPCG(7, 7))
	var want []item
	for i := range 10000 {
		it := item{rng.IntN(500), i}
		want = append(want, it)
		must(t, s.Add(ctx, it))
	}
	slices.SortStableFunc(want, func(a, b item) int { return cmp.Compare(a.k, b.k) })
	m, err := s.Finish(ctx)
	must(t, err)
	if s.Runs() < 10 {
		t.Fatalf("%d runs, want many", s.Runs())
	}
	for i, w := range want {
		got, ok, err := m.Next(ctx)
		must(t, err)
		if !ok || got != w {
			t.Fatalf("item %d = %v %v, want %v", i, got, ok, w)
		}
	}
	if _, ok, _ := m.Next(ctx); ok {
		t.Fatal("items past the last")
	}
	must(t, s.Close())
	must(t, stmt.Close())
	if left := files(t, area.Root()); len(left) > 0 {
		t.Fatalf("files left: %v", left)
	}
}

// TestTempFileLimit: a statement writing past its temp_file_limit fails
// with 53400.
func TestTempFileLimit(t *testing.T) {
	area := NewTempArea(t.TempDir())
	defer area.Close()
	_, stmt := WithStatement(context.Background(), area, 100<<10)
	defer stmt.Close()
	st := NewStore(stmt, nil, 0)
	var err error
	for i := 0; err == nil && i < 100000; i++ {
		err = st.Set(binary.BigEndian.AppendUint32(nil, uint32(i)), make([]byte, 100))
	}
	var e *errs.Error
	if !errors.As(err, &e) || e.SQLState != "53400" {
		t.Fatalf("err = %v, want 53400", err)
	}
}

// TestOpenAreaRemovesLeftovers: what an earlier process left in a
// durable store's temporary directory is removed when it is opened.
func TestOpenAreaRemovesLeftovers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tmp")
	must(t, os.MkdirAll(filepath.Join(dir, "stmt-3", "state-1"), 0o700))
	must(t, os.WriteFile(filepath.Join(dir, "stmt-3", "state-1", "000001.sst"), []byte("x"), 0o600))
	area, err := OpenArea(dir)
	must(t, err)
	if left := files(t, dir); len(left) > 0 {
		t.Fatalf("files left: %v", left)
	}
	_, stmt := WithStatement(context.Background(), area, -1)
	st := NewStore(stmt, nil, 0)
	for i := range 5000 {
		must(t, st.Set(binary.BigEndian.AppendUint32(nil, uint32(i)), make([]byte, 50)))
	}
	if len(files(t, dir)) == 0 {
		t.Fatal("nothing spilled")
	}
	must(t, stmt.Close())
	must(t, area.Close())
	if left := files(t, dir); len(left) > 0 {
		t.Fatalf("files left: %v", left)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
