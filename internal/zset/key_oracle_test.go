package zset

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/internal/types"
	"pgregory.net/rapid"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestOracleArrayKeyOrder checks that the key order of arrays is
// PostgreSQL's: random arrays (NULL elements, equal prefixes, empty
// arrays, NULL arrays), sorted by their keys ascending and descending,
// come out in the order PostgreSQL's ORDER BY puts their literals in.
func TestOracleArrayKeyOrder(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	elemTypes := map[types.Kind]string{
		types.Int4: "integer", types.Text: "text", types.Float8: "double precision",
		types.Numeric: "numeric", types.Bool: "boolean", types.Interval: "interval",
	}
	rapid.Check(t, func(rt *rapid.T) {
		elem := rapid.SampledFrom([]types.Kind{types.Int4, types.Text, types.Float8, types.Numeric, types.Bool, types.Interval}).Draw(rt, "element kind")
		arrays := rapid.SliceOfN(genValue(types.ArrayOf(elem)).Filter(func(v types.Value) bool {
			return v.IsNull() || sendable(v)
		}), 2, 12).Draw(rt, "arrays")
		at := types.ArrayType(types.Of(elem))
		rows := make([]string, len(arrays))
		for i, a := range arrays {
			lit := "NULL"
			if !a.IsNull() {
				lit = "'" + strings.ReplaceAll(types.Format(a, at), "'", "''") + "'"
			}
			rows[i] = fmt.Sprintf("(%d, %s::%s[])", i, lit, elemTypes[elem])
		}
		for _, desc := range []bool{false, true} {
			dir := ""
			if desc {
				dir = " DESC"
			}
			res, err := conn.Exec(ctx, fmt.Sprintf("SELECT i FROM (VALUES %s) v(i, a) ORDER BY a%s, i",
				strings.Join(rows, ", "), dir)).ReadAll()
			if err != nil {
				rt.Fatalf("PostgreSQL: %v", err)
			}
			var want []int
			for _, r := range res[0].Rows {
				n, _ := strconv.Atoi(string(r[0]))
				want = append(want, n)
			}
			got := make([]int, len(arrays))
			keys := make([][]byte, len(arrays))
			for i, a := range arrays {
				got[i] = i
				if desc {
					keys[i] = EncodeKeyDesc(nil, a)
				} else {
					keys[i] = EncodeKey(nil, a)
				}
			}
			slices.SortStableFunc(got, func(x, y int) int { return bytes.Compare(keys[x], keys[y]) })
			if !slices.Equal(got, want) {
				rt.Fatalf("desc=%v: key order %v, PostgreSQL %v\n%s", desc, got, want, strings.Join(rows, "\n"))
			}
		}
	})
}

// sendable reports whether an array's elements can be written as SQL
// text for PostgreSQL: text that is valid UTF-8 without zero bytes, and
// not the interval of -2^63 microseconds, whose text neither reads back.
func sendable(a types.Value) bool {
	for _, e := range a.Elems() {
		if e.Kind() == types.Text && (strings.ContainsRune(e.Str(), 0) || !utf8Valid(e.Str())) {
			return false
		}
		if e.Kind() == types.Interval && e.Interval().Micros == math.MinInt64 {
			return false
		}
	}
	return true
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// TestOracleJSONBKeyOrder checks that the key order of jsonb values is
// PostgreSQL's btree order of jsonb: random trees (scalars at the top,
// empty and one-element arrays, objects of equal sizes, numbers equal at
// different scales), sorted by their keys ascending and descending, come
// out in the order PostgreSQL's ORDER BY puts them in, and values PostgreSQL
// finds equal have equal keys.
func TestOracleJSONBKeyOrder(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rapid.Check(t, func(rt *rapid.T) {
		vals := rapid.SliceOfN(genValue(types.Jsonb).Filter(func(v types.Value) bool {
			return v.IsNull() || utf8Valid(types.FormatJSONB(v.JSONB()))
		}), 2, 10).Draw(rt, "values")
		rows := make([]string, len(vals))
		for i, v := range vals {
			lit := "NULL"
			if !v.IsNull() {
				lit = "'" + strings.ReplaceAll(types.FormatJSONB(v.JSONB()), "'", "''") + "'"
			}
			rows[i] = fmt.Sprintf("(%d, %s::jsonb)", i, lit)
		}
		for _, desc := range []bool{false, true} {
			dir := ""
			if desc {
				dir = " DESC"
			}
			res, err := conn.Exec(ctx, fmt.Sprintf("SELECT i, dense_rank() OVER (ORDER BY a%s) FROM (VALUES %s) v(i, a) ORDER BY a%s, i",
				dir, strings.Join(rows, ", "), dir)).ReadAll()
			if err != nil {
				rt.Fatalf("PostgreSQL: %v", err)
			}
			var want []int
			rank := map[int]string{}
			for _, r := range res[0].Rows {
				n, _ := strconv.Atoi(string(r[0]))
				want = append(want, n)
				rank[n] = string(r[1])
			}
			got := make([]int, len(vals))
			keys := make([][]byte, len(vals))
			for i, v := range vals {
				got[i] = i
				if desc {
					keys[i] = EncodeKeyDesc(nil, v)
				} else {
					keys[i] = EncodeKey(nil, v)
				}
			}
			slices.SortStableFunc(got, func(x, y int) int { return bytes.Compare(keys[x], keys[y]) })
			if !slices.Equal(got, want) {
				rt.Fatalf("desc=%v: key order %v, PostgreSQL %v\n%s", desc, got, want, strings.Join(rows, "\n"))
			}
			for k := 1; k < len(got); k++ {
				x, y := got[k-1], got[k]
				if eq := bytes.Equal(keys[x], keys[y]); eq != (rank[x] == rank[y]) {
					rt.Fatalf("rows %d and %d: equal keys %v, PostgreSQL equal %v\n%s", x, y, eq, rank[x] == rank[y], strings.Join(rows, "\n"))
				}
			}
		}
	})
}
