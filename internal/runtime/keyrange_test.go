package runtime

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// keyRangeSchema has relations of every key shape: a composite primary key
// (integer, bigint), a table keyed by its whole row (bigint, numeric,
// integer, text, with NULLs and duplicates), and materialized views keyed
// by their rows, one grouped.
var keyRangeSchema = []string{
	"CREATE TABLE tk (a int, b bigint, c numeric, v text, PRIMARY KEY (a, b))",
	"CREATE TABLE tn (a bigint, b numeric, c int, v text)",
	"CREATE MATERIALIZED VIEW mg AS SELECT a, b, count(*) AS n, sum(c) AS s FROM tn GROUP BY a, b",
	"CREATE MATERIALIZED VIEW mc AS SELECT c, v, a FROM tn",
	"CREATE MATERIALIZED VIEW mk AS SELECT b, a, v FROM tk",
}

// The relations' leading key columns, in key order, and the literals the
// predicates compare them with: integers of every width and beyond,
// numerics with fractions and with equal values written at different
// scales, floats, special values and NULL.
var (
	keyRangeCols = map[string][]string{
		"tk": {"a", "b"}, "tn": {"a", "b", "c"}, "mg": {"a", "b"}, "mc": {"c", "v", "a"}, "mk": {"b", "a"},
	}
	keyRangeNumbers = []string{
		"0", "1", "2", "-1", "-2", "2.0", "2.00", "1.5", "1.50", "-1.5", "2.5", "0.999",
		"3000000000", "-3000000000", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
		"32767", "2147483647", "2147483648", "-2147483649", "1e30",
		"2::smallint", "2::bigint", "2::numeric", "'NaN'::numeric", "'Infinity'::numeric", "'-Infinity'::numeric",
		"NULL", "1.5::float8", "2::float8", "'NaN'::float8", "'Infinity'::float8",
	}
	keyRangeTexts = []string{"'a'", "'b'", "''", "'a '", "NULL", "'b'::varchar"}
	keyRangeOps   = []string{"=", "<", "<=", ">", ">="}
)

func keyRangeLiteral(t *rapid.T, col string) string {
	if col == "v" {
		return rapid.SampledFrom(keyRangeTexts).Draw(t, "text")
	}
	if rapid.IntRange(0, 2).Draw(t, "common") > 0 {
		return rapid.SampledFrom([]string{"0", "1", "2", "-1", "1.0", "2.0", "1.5", "-2"}).Draw(t, "number")
	}
	return rapid.SampledFrom(keyRangeNumbers).Draw(t, "number")
}

// keyRangeAtom draws one condition on col.
func keyRangeAtom(t *rapid.T, col string) string {
	switch rapid.IntRange(0, 5).Draw(t, "form") {
	case 0:
		var items []string
		for range rapid.IntRange(1, 4).Draw(t, "items") {
			items = append(items, keyRangeLiteral(t, col))
		}
		return col + " IN (" + strings.Join(items, ", ") + ")"
	case 1:
		return col + " BETWEEN " + keyRangeLiteral(t, col) + " AND " + keyRangeLiteral(t, col)
	case 2:
		return keyRangeLiteral(t, col) + " " + rapid.SampledFrom(keyRangeOps).Draw(t, "op") + " " + col
	}
	return col + " " + rapid.SampledFrom(keyRangeOps).Draw(t, "op") + " " + keyRangeLiteral(t, col)
}

// keyRangePredicate draws a conjunction of conditions, mostly on leading
// key columns.
func keyRangePredicate(t *rapid.T, rel string) string {
	cols := keyRangeCols[rel]
	var atoms []string
	for range rapid.SampledFrom([]int{1, 1, 1, 2, 2, 3}).Draw(t, "atoms") {
		col := cols[rapid.IntRange(0, len(cols)-1).Draw(t, "col")]
		atoms = append(atoms, keyRangeAtom(t, col))
	}
	if rapid.IntRange(0, 4).Draw(t, "other") == 0 {
		atoms = append(atoms, "v IS NOT NULL")
	}
	return strings.Join(atoms, " AND ")
}

func keyRangeRow(t *rapid.T, table string) string {
	num := func(label string, vals ...string) string { return rapid.SampledFrom(vals).Draw(t, label) }
	if table == "tk" {
		return fmt.Sprintf("(%s, %s, %s, %s)",
			num("a", "-2", "-1", "0", "1", "2", "3", "32767", "-2147483648", "2147483647"),
			num("b", "-1", "0", "1", "2", "3000000000", "-3000000000", "9223372036854775807"),
			num("c", "1", "1.0", "2.50", "NULL"), num("v", "'a'", "'b'", "NULL"))
	}
	return fmt.Sprintf("(%s, %s, %s, %s)",
		num("a", "-2", "0", "1", "2", "2", "3000000000", "-9223372036854775808", "NULL"),
		num("b", "0", "1", "1.0", "1.00", "1.5", "1.50", "2", "2.5", "-1.5", "'NaN'", "'Infinity'", "'-Infinity'", "1e25", "NULL"),
		num("c", "-1", "0", "1", "2", "2", "32767", "-2147483648", "2147483647", "NULL"),
		num("v", "'a'", "'b'", "''", "'a '", "NULL"))
}

// resultText prints a result's rows sorted, or its error.
func resultText(res *Result, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	writeResult(&b, res)
	lines := strings.Split(b.String(), "\n")
	if len(lines) > 2 {
		body := lines[1 : len(lines)-2]
		slices.Sort(body)
		copy(lines[1:], body)
	}
	return strings.Join(lines, "\n")
}

// TestKeyRangesMatchFullScan checks on random data and random predicates
// that reading by key returns exactly what reading every row returns: for
// SELECTs on tables and materialized views (through the relation cache and
// from the store), with a parameter, joined, AS OF EPOCH, and for DELETE.
func TestKeyRangesMatchFullScan(t *testing.T) {
	ctx := context.Background()
	rapid.Check(t, func(t *rapid.T) {
		eng := OpenMemory()
		s := eng.NewSession()
		exec := func(q string, params ...*string) (*Result, error) { return s.Exec(ctx, q, params) }
		for _, q := range keyRangeSchema {
			if _, err := exec(q); err != nil {
				t.Fatal(err)
			}
		}
		both := func(q string, params ...*string) {
			var res [2]string
			keyFirst := rapid.Bool().Draw(t, "keyFirst")
			write := strings.HasPrefix(q, "DELETE")
			for i := range 2 {
				byKey := (i == 0) == keyFirst
				fullScansOnly.Store(!byKey)
				if write {
					if _, err := exec("BEGIN"); err != nil {
						t.Fatal(err)
					}
				}
				r, err := exec(q, params...)
				if write {
					if _, err := exec("ROLLBACK"); err != nil {
						t.Fatal(err)
					}
				}
				if byKey {
					res[0] = resultText(r, err)
				} else {
					res[1] = resultText(r, err)
				}
			}
			fullScansOnly.Store(false)
			if res[0] != res[1] {
				t.Fatalf("%s\nby key:\n%s\nfull scan:\n%s", q, res[0], res[1])
			}
		}
		epochs := []uint64{}
		for range rapid.IntRange(1, 3).Draw(t, "rounds") {
			for _, table := range []string{"tk", "tn"} {
				var rows []string
				for range rapid.IntRange(0, 30).Draw(t, "rows") {
					rows = append(rows, keyRangeRow(t, table))
				}
				if len(rows) > 0 {
					q := "INSERT INTO " + table + " VALUES " + strings.Join(rows, ", ")
					if table == "tk" {
						q += " ON CONFLICT DO NOTHING"
					}
					if _, err := exec(q); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
			}
			epochs = append(epochs, eng.Epoch())
			for range rapid.IntRange(1, 8).Draw(t, "queries") {
				rel := rapid.SampledFrom([]string{"tk", "tn", "mg", "mc", "mk"}).Draw(t, "rel")
				pred := keyRangePredicate(t, rel)
				switch rapid.IntRange(0, 5).Draw(t, "shape") {
				case 0:
					both("SELECT * FROM " + rel + " WHERE " + pred)
				case 1:
					p := rapid.SampledFrom([]string{"0", "1", "2", "-2"}).Draw(t, "param")
					col := keyRangeCols[rel][0]
					if col == "v" {
						p = "a"
					}
					both("SELECT * FROM "+rel+" WHERE "+col+" = $1 AND "+pred, &p)
				case 2:
					both("SELECT * FROM tn JOIN tk ON tn.c = tk.a WHERE " + qualify(pred, "tk") +
						" AND " + qualify(keyRangePredicate(t, "tn"), "tn"))
				case 3:
					if rel == "mg" || rel == "mc" || rel == "mk" {
						at := rapid.SampledFrom(epochs).Draw(t, "epoch")
						both(fmt.Sprintf("SELECT * FROM %s WHERE %s AS OF EPOCH %d", rel, pred, at))
					}
				case 4:
					if rel == "tk" || rel == "tn" {
						both("DELETE FROM " + rel + " WHERE " + pred + " RETURNING *")
					}
				default:
					both("SELECT * FROM " + rel + " a1, " + rel + " a2 WHERE " + qualify(pred, "a1") + " AND " +
						qualify(keyRangePredicate(t, rel), "a2"))
				}
			}
		}
	})
}

// qualify prefixes the column names of a drawn predicate with rel.
func qualify(pred, rel string) string {
	var out []string
	for _, w := range strings.Split(pred, " ") {
		if slices.Contains([]string{"a", "b", "c", "v", "(a", "(b", "(c"}, w) {
			w = strings.Replace(w, strings.TrimLeft(w, "("), rel+"."+strings.TrimLeft(w, "("), 1)
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// TestExplainKeyRanges checks which scans read key ranges, as plain
// EXPLAIN shows them.
func TestExplainKeyRanges(t *testing.T) {
	ctx := context.Background()
	eng := OpenMemory()
	s := eng.NewSession()
	for _, q := range append(keyRangeSchema,
		"CREATE TABLE ao (k int, v int) APPEND ONLY",
		"CREATE MATERIALIZED VIEW ms AS SELECT sum(c) AS s, a FROM tn GROUP BY a") {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ query, plan string }{
		{"SELECT * FROM tk WHERE a = 12", "Index Scan using tk_pkey on tk\n  Index Cond: (a = 12)"},
		{"SELECT * FROM tk WHERE b = 12", "Seq Scan on tk"}, // not the leading key column
		{"SELECT * FROM tk WHERE a = 1 AND b > 5", "Index Scan using tk_pkey on tk\n  Index Cond: ((a = 1) AND (b > 5))"},
		{"SELECT * FROM tk WHERE b > 5 AND a IN (1, 2)", "Index Scan using tk_pkey on tk\n  Index Cond: ((a IN (1, 2)) AND (b > 5))"},
		{"SELECT * FROM tk WHERE a > 1 AND b > 5", "Index Scan using tk_pkey on tk\n  Index Cond: (a > 1)"},
		{"SELECT * FROM tk WHERE a BETWEEN 1 AND 3", "Index Scan using tk_pkey on tk\n  Index Cond: ((a >= 1) AND (a <= 3))"},
		{"SELECT * FROM tk WHERE a = 1 OR a = 2", "Seq Scan on tk"},
		{"SELECT * FROM tk WHERE a <> 1", "Seq Scan on tk"},
		{"SELECT * FROM tk WHERE a + 0 = 1", "Seq Scan on tk"},
		{"SELECT * FROM tk WHERE a = b", "Seq Scan on tk"},
		{"SELECT * FROM tn WHERE a = 12", "Key Range Scan on tn\n  Key Cond: (a = 12)"},             // bigint = integer
		{"SELECT * FROM tn WHERE a = 12.0", "Key Range Scan on tn\n  Key Cond: (a = 12.0)"},         // bigint as numeric
		{"SELECT * FROM mc WHERE c = 12.5::float8", "Key Range Scan on mc\n  Key Cond: (c = 12.5)"}, // integer as float, exact
		{"SELECT * FROM tn WHERE a = 12::float8", "Seq Scan on tn"},                                 // bigint as float is not exact
		{"SELECT * FROM tn WHERE a = 1 AND b = 2 AND c < 3", "Key Range Scan on tn\n  Key Cond: ((a = 1) AND (b = 2) AND (c < 3))"},
		{"SELECT * FROM tn WHERE a = 1 AND c < 3", "Key Range Scan on tn\n  Key Cond: (a = 1)"},
		{"SELECT * FROM tn WHERE a = $1", "Key Range Scan on tn\n  Key Cond: (a = $1)"},
		{"SELECT * FROM mg WHERE a = 7", "Key Range Scan on mg\n  Key Cond: (a = 7)"},
		{"SELECT * FROM mc WHERE c = 1 AND v = 'x'", "Key Range Scan on mc\n  Key Cond: ((c = 1) AND (v = 'x'::text))"},
		{"SELECT * FROM ms WHERE a = 7", "Seq Scan on ms"}, // the view's rows are ordered by s first
		{"SELECT * FROM ao WHERE k = 7", "Seq Scan on ao"}, // stored in arrival order
		{"SELECT * FROM tk JOIN tn ON tk.a = tn.c WHERE tk.a = 3", "Index Scan using tk_pkey on tk\n  Index Cond: (a = 3)\nSeq Scan on tn"},
		{"SELECT tn.a, count(*) FROM tn JOIN mg ON mg.a = tn.a WHERE mg.a IN (1, 2) GROUP BY tn.a", "Key Lookup on tn\n  Key Cond: (a = mg.a)\n  Lookup keys from: mg\nKey Range Scan on mg\n  Key Cond: (a IN (1, 2))"},
		{"SELECT * FROM tk WHERE a = (SELECT max(c) FROM tn WHERE a = 1)", "Seq Scan on tk\nKey Range Scan on tn\n  Key Cond: (a = 1)"},
		{"SELECT 1", "no stored relation is read"},
	} {
		var params []*string
		if strings.Contains(c.query, "$1") {
			one := "1"
			params = []*string{&one}
		}
		res, err := s.Exec(ctx, "EXPLAIN "+c.query, params)
		if err != nil {
			t.Errorf("%s: %v", c.query, err)
			continue
		}
		var lines []string
		for _, row := range res.Rows {
			lines = append(lines, row[0].Str())
		}
		if got := strings.Join(lines, "\n"); got != c.plan {
			t.Errorf("EXPLAIN %s:\n got %q\nwant %q", c.query, got, c.plan)
		}
	}
}

// TestKeyRangesEqualNumerics checks that numerics equal under = but
// written at different scales have one key, so that a read by key finds
// all of them, each as written.
func TestKeyRangesEqualNumerics(t *testing.T) {
	ctx := context.Background()
	eng := OpenMemory()
	s := eng.NewSession()
	for _, q := range []string{
		"CREATE TABLE n (k numeric, v int)",
		"INSERT INTO n VALUES (1, 1), (1.0, 2), (1.00, 3), (1.001, 4), (0.999, 5), (NULL, 6)",
	} {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	for q, want := range map[string]string{
		"SELECT k, v FROM n WHERE k = 1.000":            "1,1 1.0,2 1.00,3",
		"SELECT k, v FROM n WHERE k IN (1, 0.9990)":     "0.999,5 1,1 1.0,2 1.00,3",
		"SELECT k, v FROM n WHERE k > 1.0":              "1.001,4",
		"SELECT k, v FROM n WHERE k >= 1 AND k < 1.001": "1,1 1.0,2 1.00,3",
		"SELECT k, v FROM n WHERE k = NULL":             "",
	} {
		res, err := s.Exec(ctx, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, row := range res.Rows {
			got = append(got, row[0].Decimal().String()+","+fmt.Sprint(row[1].Int()))
		}
		slices.Sort(got)
		if strings.Join(got, " ") != want {
			t.Errorf("%s: got %q, want %q", q, strings.Join(got, " "), want)
		}
	}
}

// TestLeadingEqualityRangesMatchSpanRanges checks the short path of a read
// by key against the general one: for one equality on each of the leading
// key positions, with values of every numeric kind and width, fractions,
// special values, NULL and texts, on relations of every key shape,
// and of secondary indexes, leadingEqualityRanges returns exactly the
// ranges spanRanges returns,
// and it declines conditions that are not such equalities.
func TestLeadingEqualityRangesMatchSpanRanges(t *testing.T) {
	ctx := context.Background()
	eng := OpenMemory()
	s := eng.NewSession()
	for _, q := range append(slices.Clip(keyRangeSchema), "CREATE INDEX tn_cb ON tn (c, b)", "CREATE INDEX mg_s ON mg (s)") {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	num := func(s string) types.Value {
		d, err := types.ParseNumeric(s)
		if err != nil {
			t.Fatal(err)
		}
		return types.MakeNumeric(d)
	}
	numbers := []types.Value{
		types.MakeInt(types.Int2, 2), types.MakeInt(types.Int4, -1), types.MakeInt(types.Int4, 0),
		types.MakeInt(types.Int8, 1), types.MakeInt(types.Int8, 3000000000), types.MakeInt(types.Int8, math.MaxInt64),
		types.MakeInt(types.Int8, math.MinInt64), types.MakeInt(types.Int4, math.MaxInt32),
		num("2.0"), num("2.00"), num("1.5"), num("-1.5"), num("9223372036854775808"), num("1e30"), num("NaN"), num("Infinity"),
		types.MakeFloat8(2), types.MakeFloat8(1.5), types.MakeFloat8(math.NaN()), types.MakeFloat8(math.Inf(-1)), types.MakeFloat4(-2),
		types.Null,
	}
	texts := []types.Value{types.MakeText("a"), types.MakeText(""), types.MakeText("a "), types.MakeText("\xff\xff"), types.Null}
	eng.mu.RLock()
	cat := eng.mu.cat
	eng.mu.RUnlock()
	short, shortIndex := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.SampledFrom([]string{"tk", "tn", "mg", "mc", "mk", "tn_cb", "mg_s"}).Draw(t, "rel")
		var o *object
		var ord keyOrder
		if ix := cat.indexes[name]; ix != nil {
			o, ord = cat.lookup(ix.relName), ix.order()
		} else {
			o = cat.lookup(name)
			ord = keyOrder{cols: keyColumns(o), route: o.routeColumns(), prefix: o.rowsPrefix()}
		}
		if o == nil {
			t.Fatalf("no relation %s", name)
		}
		n := rapid.IntRange(1, len(ord.cols)).Draw(t, "n")
		positions := rapid.Permutation(slices.Collect(func(yield func(int) bool) {
			for i := range n {
				if !yield(i) {
					return
				}
			}
		})).Draw(t, "positions")
		if rapid.IntRange(0, 5).Draw(t, "other") == 0 {
			positions[0] = rapid.IntRange(0, len(ord.cols)-1).Draw(t, "pos") // a repeat or a gap
		}
		var conds []keyCond
		for _, pos := range positions {
			vals := numbers
			if id := o.cols[ord.cols[pos]].Type.ID; id == types.Text || id == types.Varchar {
				vals = texts
			}
			op := "="
			if rapid.IntRange(0, 7).Draw(t, "range") == 0 {
				op = rapid.SampledFrom(keyRangeOps).Draw(t, "op")
			}
			conds = append(conds, keyCond{pos: pos, op: op, args: []plan.Expr{&plan.Const{Val: rapid.SampledFrom(vals).Draw(t, "value")}}})
		}
		got, ok := leadingEqualityRanges(o, ord, conds)
		want, wantOK := spanRanges(o, ord, conds)
		if !ok {
			return
		}
		short++
		if cat.indexes[name] != nil {
			shortIndex++
		}
		if !wantOK || len(got) != len(want) {
			t.Fatalf("%s %v: short path %d ranges, general %d (%v)", o.name, conds, len(got), len(want), wantOK)
		}
		for i := range got {
			if !bytes.Equal(got[i].lo, want[i].lo) || !bytes.Equal(got[i].hi, want[i].hi) || got[i].bucket != want[i].bucket {
				t.Fatalf("%s %v: short path [%x, %x) bucket %d, general [%x, %x) bucket %d", o.name, conds,
					got[i].lo, got[i].hi, got[i].bucket, want[i].lo, want[i].hi, want[i].bucket)
			}
		}
	})
	if short == 0 || shortIndex == 0 {
		t.Fatalf("the short path took conditions %d times, on an index %d times", short, shortIndex)
	}
}
