package runtime

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql/pgparse"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/storage"
	"github.com/rockstream/rockstream/internal/zset"
)

// layoutWorkload writes every stored layout: keyed and unkeyed tables, an
// append-only table in arrival order, views with duplicate rows, and
// change logs over several epochs, some rows equal under = but written
// differently.
var layoutWorkload = []string{
	"CREATE TABLE t (k int PRIMARY KEY, g int, v numeric)",
	"CREATE TABLE bag (a int, b text)",
	"CREATE TABLE ev (x int, s text) APPEND ONLY",
	"CREATE MATERIALIZED VIEW groups AS SELECT g, count(*) AS n, sum(v) AS s FROM t GROUP BY g",
	"CREATE MATERIALIZED VIEW dup AS SELECT a FROM bag",
	"CREATE MATERIALIZED VIEW evs AS SELECT s, count(*) FROM ev GROUP BY s",
	"CREATE MATERIALIZED VIEW joined AS SELECT t.k, bag.b FROM t JOIN bag ON t.g = bag.a",
	"CREATE MATERIALIZED VIEW totals AS SELECT count(*) AS n, min(v) AS lo, max(v) AS hi, sum(v) AS s FROM t",
	"CREATE MATERIALIZED VIEW top3 AS SELECT k, v FROM t ORDER BY v DESC, k LIMIT 3",
	"CREATE MATERIALIZED VIEW dist AS SELECT DISTINCT b FROM bag",
	"CREATE MATERIALIZED VIEW ranked AS SELECT k, g, rank() OVER (PARTITION BY g ORDER BY v, k) AS r FROM t",
	"CREATE MATERIALIZED VIEW reach AS WITH RECURSIVE r(n) AS (SELECT a FROM bag WHERE a = 1 UNION SELECT r.n + 1 FROM r JOIN bag ON bag.a = r.n + 1) SELECT n FROM r",
	"INSERT INTO t SELECT i, i % 7, i * 1.5 FROM generate_series(1, 300) AS i",
	"INSERT INTO bag SELECT i % 11, 'b' || (i % 5) FROM generate_series(1, 200) AS i",
	"INSERT INTO bag VALUES (1, 'x'), (1, 'x'), (NULL, NULL)",
	"INSERT INTO ev SELECT i % 13, 's' || (i % 4) FROM generate_series(1, 150) AS i",
	"INSERT INTO ev VALUES (1, 's1'), (1, 's1')",
	"UPDATE t SET v = 1.50 WHERE k % 10 = 0",
	"UPDATE t SET v = 1.5 WHERE k % 20 = 0",
	"DELETE FROM bag WHERE a = 3",
	"DELETE FROM t WHERE k > 280",
}

// layoutQueries read every relation of layoutWorkload whole, by key and
// by key range.
var layoutQueries = []string{
	"SELECT * FROM t", "SELECT * FROM bag", "SELECT * FROM ev",
	"SELECT * FROM groups", "SELECT * FROM dup", "SELECT * FROM evs", "SELECT * FROM joined",
	"SELECT * FROM totals", "SELECT * FROM top3", "SELECT * FROM reach",
	"SELECT * FROM t WHERE k = 17", "SELECT * FROM t WHERE k BETWEEN 40 AND 60",
	"SELECT * FROM bag WHERE a = 1 AND b = 'x'", "SELECT * FROM bag WHERE a IN (2, 4)",
	"SELECT * FROM groups WHERE g = 3", "SELECT * FROM dup WHERE a > 8",
}

func runAll(t *testing.T, s *Session, stmts []string) []string {
	t.Helper()
	var out []string
	for _, q := range stmts {
		res, err := s.Exec(context.Background(), q, nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		out = append(out, fmt.Sprintf("%s: %s\n%s", q, res.Tag, formatRows(res)))
	}
	return out
}

// routingBucket is the bucket of a stored row of o, computed from the row
// alone.
func routingBucket(o *object, row zset.Row) int {
	if len(o.pk) > 0 {
		var k []byte
		for _, i := range o.pk {
			k = zset.EncodeKey(k, row[i])
		}
		return zset.Bucket(k)
	}
	if o.route > 0 {
		row = row[:o.route]
	}
	return zset.Bucket(zset.EncodeKey(nil, row...))
}

// TestBucketsAreContiguous checks that every stored row and change-log
// entry of an object lies in its bucket's range [prefix|b, prefix|b+1),
// b being the bucket of the row's routing key (its table's primary key,
// else the whole row): so one bucket of one object is one key range.
func TestBucketsAreContiguous(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	runAll(t, eng.NewSession(), layoutWorkload)
	eng.mu.RLock()
	defer eng.mu.RUnlock()
	byID := map[uint64]*object{}
	for _, o := range eng.mu.cat.byName {
		byID[o.id] = o
	}
	counts := map[byte]int{}
	routed := map[string]bool{} // views routed by their group key
	buckets := map[int]bool{}
	if err := eng.mu.store.Scan(nil, nil, func(k, v []byte) bool {
		ns := k[0]
		if ns != nsTableRows && ns != nsViewRows && ns != nsChangeLog {
			return true
		}
		id, n := binary.Uvarint(k[1:])
		o := byID[id]
		if n <= 0 || o == nil {
			t.Fatalf("key %x: no object", k)
		}
		var rows []zset.Row
		if ns == nsChangeLog {
			if err := decodeLogRecord(v, 0, func(_ uint64, e zset.Entry) { rows = append(rows, e.Row) }); err != nil {
				t.Fatal(err)
			}
		} else {
			e, err := decodeStored(v)
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, e.Row)
		}
		if o.route > 0 {
			routed[o.name] = true
		}
		prefix := k[:1+n]
		for _, row := range rows {
			b := routingBucket(o, row)
			lo, hi := append(append([]byte(nil), prefix...), byte(b)), []byte(nil)
			if b < zset.Buckets-1 {
				hi = append(append([]byte(nil), prefix...), byte(b+1))
			} else {
				hi = storagePrefixEnd(prefix)
			}
			if string(k) < string(lo) || string(k) >= string(hi) {
				t.Fatalf("key %x of %s (row %v, bucket %d) is outside [%x, %x)", k, o.name, row, b, lo, hi)
			}
			counts[ns]++
			buckets[b] = true
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if counts[nsTableRows] == 0 || counts[nsViewRows] == 0 || counts[nsChangeLog] == 0 || len(buckets) < 100 {
		t.Fatalf("too little data checked: %v keys by namespace, %d buckets", counts, len(buckets))
	}
	if !routed["groups"] || !routed["evs"] || routed["dup"] || routed["joined"] {
		t.Fatalf("views routed by their group key: %v, want groups and evs", routed)
	}
	checkOperatorStateBuckets(t, eng.mu.store, byID)
}

// checkOperatorStateBuckets checks that every operator state key of the
// views of layoutWorkload, 0x03 | id | b | operator u32be | own bytes,
// records in b the bucket of the operator's routing key, decoded from
// the own bytes: a group key (groups, evs), a join key (joined, the
// recursion's body), a whole row (dist, the recursion's derivation
// counts), a partition key (ranked), and for the split global aggregate
// and top-k the row bucket the partial is keyed by (totals, top3) and
// the empty key of the final. So one bucket's operator state of a view is
// the range [0x03 | id | b, 0x03 | id | b+1).
func checkOperatorStateBuckets(t *testing.T, st state.Reader, byID map[uint64]*object) {
	t.Helper()
	type opKey struct {
		op  uint32
		own []byte
		b   int
		key []byte
	}
	keys := map[string][]opKey{}
	first := map[string]uint32{} // each view's first operator with state
	if err := st.Scan([]byte{nsOpState}, []byte{nsOpState + 1}, func(k, _ []byte) bool {
		id, n := binary.Uvarint(k[1:])
		o := byID[id]
		if n <= 0 || o == nil || len(k) < 1+n+5 {
			t.Fatalf("operator state key %x: no view", k)
		}
		p := 1 + n
		op := binary.BigEndian.Uint32(k[p+1:])
		if f, ok := first[o.name]; !ok || op < f {
			first[o.name] = op
		}
		keys[o.name] = append(keys[o.name], opKey{op: op, own: append([]byte(nil), k[p+5:]...), b: int(k[p]), key: append([]byte(nil), k...)})
		return true
	}); err != nil {
		t.Fatal(err)
	}
	// leading returns the bytes of the first n key values of own.
	leading := func(own []byte, n int) []byte {
		_, rest, err := zset.DecodeKey(own, n)
		if err != nil {
			t.Fatalf("own bytes %x: %v", own, err)
		}
		return own[:len(own)-len(rest)]
	}
	// rowBucket returns the bucket carried as the value of a leading
	// EncodeKey(int4 bucket).
	rowBucket := func(own []byte) int {
		vs, _, err := zset.DecodeKey(own, 1)
		if err != nil {
			t.Fatalf("own bytes %x: %v", own, err)
		}
		return int(vs[0].Int())
	}
	empty := zset.Bucket(nil)
	for _, view := range []string{"groups", "evs", "joined", "dist", "ranked", "totals", "top3", "reach"} {
		ks := keys[view]
		buckets := map[int]bool{}
		for _, e := range ks {
			own, partial := e.own, e.op == first[view]
			var want int
			switch view {
			case "groups", "evs": // 'g' | EncodeKey(group)
				want = zset.Bucket(leading(own[1:], 1))
			case "joined": // 'l' or 'r' | EncodeKey(join key) | ...
				want = zset.Bucket(leading(own[1:], 1))
			case "dist", "ranked": // EncodeKey(row), EncodeKey(partition) | ...
				want = zset.Bucket(leading(own, 1))
			case "totals": // 'g' | group, 'a' | u16 | group | ...
				g := own[1:]
				if own[0] == 'a' {
					g = own[3:]
				}
				want = empty
				if partial {
					want = rowBucket(g)
				}
			case "top3": // EncodeKey(partition) | sort key | ...
				want = empty
				if partial {
					want = rowBucket(own)
				}
			case "reach":
				switch own[0] {
				case 'd': // 'd' | EncodeRow(row)
					row, err := zset.DecodeRow(own[1:])
					if err != nil {
						t.Fatal(err)
					}
					want = zset.Bucket(zset.EncodeKey(nil, row...))
				case 'b': // 'b' | body operator u32be | 'l' or 'r' | EncodeKey(join key) | ...
					want = zset.Bucket(leading(own[6:], 1))
				default:
					t.Fatalf("%s: unexpected operator state key %x", view, e.key)
				}
			}
			if e.b != want {
				t.Errorf("%s: operator state key %x is in bucket %d, its key's bucket is %d", view, e.key, e.b, want)
			}
			buckets[e.b] = true
		}
		if len(buckets) < 2 {
			t.Errorf("%s: operator state in %d buckets (%d keys), want several", view, len(buckets), len(ks))
		}
	}
}

func storagePrefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i]++; end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// downgradeToLayout1 rewrites st as a build before layout versions wrote
// it: no bucket byte in table rows, view contents, change logs and
// operator state (moved out of reach, below), and no
// layout version.
func downgradeToLayout1(t *testing.T, st Store) {
	t.Helper()
	var dels, keys, vals [][]byte
	if err := st.Scan(nil, nil, func(k, v []byte) bool {
		switch k[0] {
		case nsCatalog:
			_, version, payload, err := storage.DecodeRecord(v)
			if err != nil {
				t.Fatal(err)
			}
			var rec catalogRecord
			if err := json.Unmarshal(payload, &rec); err != nil {
				t.Fatal(err)
			}
			rec.RouteColumns = 0
			if payload, err = json.Marshal(rec); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, append([]byte(nil), k...))
			vals = append(vals, storage.EncodeRecord(catalogRecordKind, version, payload))
		case nsOpState:
			// Builds before layout 2 wrote no bucket in operator state
			// and numbered some views' operators otherwise (a global
			// aggregate, top-k or recursion was one operator): the
			// upgrade must not read this state. Dropping the bucket and
			// moving it to operator numbers no circuit uses makes it
			// unreadable.
			_, n := binary.Uvarint(k[1:])
			p := 1 + n
			nk := append(append([]byte(nil), k[:p]...), k[p+1:]...)
			nk[p] ^= 0x80
			dels = append(dels, append([]byte(nil), k...))
			keys = append(keys, nk)
			vals = append(vals, append([]byte(nil), v...))
		case nsTableRows, nsViewRows:
			_, n := binary.Uvarint(k[1:])
			p := 1 + n
			dels = append(dels, append([]byte(nil), k...))
			keys = append(keys, append(append([]byte(nil), k[:p]...), k[p+1:]...))
			vals = append(vals, append([]byte(nil), v...))
		case nsChangeLog:
			// One key per entry, no bucket.
			_, n := binary.Uvarint(k[1:])
			p := 1 + n
			dels = append(dels, append([]byte(nil), k...))
			splitLogRecord(t, k, v, func(ek, ev []byte) {
				keys = append(keys, append(append([]byte(nil), ek[:p]...), ek[p+1:]...))
				vals = append(vals, ev)
			})
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	rewriteKeys(t, st, dels, keys, vals)
	if err := st.Delete(metaLayout); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
}

// rewriteKeys deletes dels from st, then sets keys to vals.
func rewriteKeys(t *testing.T, st Store, dels, keys, vals [][]byte) {
	t.Helper()
	for _, k := range dels {
		if err := st.Delete(k); err != nil {
			t.Fatal(err)
		}
	}
	for i := range keys {
		if err := st.Set(keys[i], vals[i]); err != nil {
			t.Fatal(err)
		}
	}
}

// splitLogRecord calls fn with each entry of the change-log record k = v
// as layouts 1 and 2 stored it: its key (the record's key with the
// entry's seq) and its value, weight | row.
func splitLogRecord(t *testing.T, k, v []byte, fn func(k, v []byte)) {
	t.Helper()
	first := binary.BigEndian.Uint64(k[len(k)-8:])
	if err := decodeLogRecord(v, first, func(seq uint64, e zset.Entry) {
		ek := binary.BigEndian.AppendUint64(append([]byte(nil), k[:len(k)-8]...), seq)
		fn(ek, encodeStored(nil, e.Weight, e.Row))
	}); err != nil {
		t.Fatalf("change-log key %x: %v", k, err)
	}
}

// downgradeToLayout2 rewrites st's change logs as layout 2 stored them,
// one key per entry, and records layout 2.
func downgradeToLayout2(t *testing.T, st Store) {
	t.Helper()
	var dels, keys, vals [][]byte
	if err := st.Scan([]byte{nsChangeLog}, []byte{nsChangeLog + 1}, func(k, v []byte) bool {
		dels = append(dels, append([]byte(nil), k...))
		splitLogRecord(t, k, v, func(ek, ev []byte) {
			keys, vals = append(keys, ek), append(vals, ev)
		})
		return true
	}); err != nil {
		t.Fatal(err)
	}
	rewriteKeys(t, st, dels, keys, vals)
	if err := st.Set(metaLayout, binary.BigEndian.AppendUint64(nil, 2)); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
}

// dumpEntries is dumpRaw with each change-log record shown as its
// entries, one line each, as layout 2 kept them: the upgrades write
// one-entry records, the engine one record per bucket of each delta.
func dumpEntries(t *testing.T, st Store) string {
	t.Helper()
	var sb strings.Builder
	if err := st.Scan(nil, nil, func(k, v []byte) bool {
		if k[0] == nsChangeLog {
			splitLogRecord(t, k, v, func(ek, ev []byte) { fmt.Fprintf(&sb, "%x = %x\n", ek, ev) })
			return true
		}
		fmt.Fprintf(&sb, "%x = %x\n", k, v)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

func changesText(cs []Change) string {
	var sb strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&sb, "%d %d %x\n", c.Epoch, c.Weight, zset.EncodeRow(nil, c.Row))
	}
	return sb.String()
}

func dumpRaw(t *testing.T, st Store) string {
	t.Helper()
	var sb strings.Builder
	if err := st.Scan(nil, nil, func(k, v []byte) bool {
		fmt.Fprintf(&sb, "%x = %x\n", k, v)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

// TestUpgradeFromLayout1 writes a durable store, rewrites it in layout 1
// (as builds before buckets wrote it), and opens it: the upgrade restores
// exactly the store that was written (its change-log entries as one-entry
// records), every query and change log answers as before, and the views
// go on equal to their queries recomputed from the tables.
func TestUpgradeFromLayout1(t *testing.T) { testUpgrade(t, 1, downgradeToLayout1) }

// TestUpgradeFromLayout2 is TestUpgradeFromLayout1 from layout 2, whose
// change logs hold one key per entry.
func TestUpgradeFromLayout2(t *testing.T) { testUpgrade(t, 2, downgradeToLayout2) }

func testUpgrade(t *testing.T, layout uint64, downgrade func(*testing.T, Store)) {
	dir := t.TempDir()
	openStore := func() Store {
		st, err := storage.Open(storage.Options{Dir: dir, Logger: quietLog})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	eng, err := Open(openStore(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	runAll(t, eng.NewSession(), layoutWorkload)
	want := runAll(t, eng.NewSession(), layoutQueries)
	wantChanges := map[string][]Change{}
	for _, v := range []string{"groups", "dup", "evs", "joined"} {
		if wantChanges[v], _, err = eng.Changes(v, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	st := openStore()
	wantDump := dumpEntries(t, st)
	downgrade(t, st)
	if v, err := checkLayout(st); err != nil || v != layout {
		t.Fatalf("downgraded store has layout %d, %v", v, err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	eng, err = Open(openStore(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	eng.mu.RLock()
	gotDump := dumpEntries(t, eng.mu.store)
	eng.mu.RUnlock()
	if gotDump != wantDump {
		t.Fatalf("the upgraded store differs from the one written: %s", firstDifference(wantDump, gotDump))
	}
	got := runAll(t, eng.NewSession(), layoutQueries)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("after the upgrade: %s", firstDifference(want[i], got[i]))
		}
	}
	for v, wc := range wantChanges {
		gc, _, err := eng.Changes(v, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := changesText(gc), changesText(wc); got != want {
			t.Fatalf("change log of %s after the upgrade: %s", v, firstDifference(want, got))
		}
	}
	runAll(t, eng.NewSession(), []string{
		"INSERT INTO t SELECT i, i % 5, i FROM generate_series(400, 450) AS i",
		"DELETE FROM bag WHERE a = 1",
		"UPDATE t SET g = g + 1 WHERE k < 100",
		"DELETE FROM t WHERE k IN (280, 279, 278)",
		"INSERT INTO bag VALUES (1, 'y'), (2, 'y')",
		"INSERT INTO ev VALUES (2, 's9')",
	})
	if err := eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}

// TestLayoutVersionRefused checks that a store recording a layout newer
// than this build's, or one no build writes, is refused before anything
// is read.
func TestLayoutVersionRefused(t *testing.T) {
	for _, c := range []struct {
		version uint64
		code    errs.Code
	}{{storeLayout + 1, errs.FeatureNotSupported}, {1, errs.DataCorrupted}} {
		st := NewMemoryStore()
		eng, err := Open(st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		runAll(t, eng.NewSession(), []string{"CREATE TABLE t (k int PRIMARY KEY)", "INSERT INTO t VALUES (1)"})
		eng.Close()
		if err := st.Set(metaLayout, binary.BigEndian.AppendUint64(nil, c.version)); err != nil {
			t.Fatal(err)
		}
		_, err = Open(st, Options{})
		if errs.CodeOf(err) != c.code {
			t.Fatalf("layout %d: got %v, want %s", c.version, err, c.code)
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("layout version %d", c.version)) {
			t.Fatalf("layout %d: error %q does not name the version", c.version, err)
		}
	}
}

// TestChangeLogTrimmedInEveryBucket checks that retention trims the
// change log in every bucket: no entry older than the oldest readable
// epoch is left in any of them, and the entries kept span many buckets.
func TestChangeLogTrimmedInEveryBucket(t *testing.T) {
	eng, err := Open(NewMemoryStore(), Options{ChangeLogRetention: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	s := eng.NewSession()
	runAll(t, s, []string{"CREATE TABLE t (k int)", "CREATE MATERIALIZED VIEW mv AS SELECT k FROM t"})
	for i := 0; i < 200; i++ {
		runAll(t, s, []string{fmt.Sprintf("INSERT INTO t VALUES (%d), (%d)", i, i+1000)})
	}
	eng.mu.RLock()
	defer eng.mu.RUnlock()
	o := eng.mu.cat.lookup("mv")
	oldest := eng.oldestRetained(eng.mu.epoch)
	prefix := relPrefix(nsChangeLog, o.id)
	buckets := map[byte]bool{}
	n := 0
	if err := eng.mu.store.Scan(prefix, storagePrefixEnd(prefix), func(k, v []byte) bool {
		ep := binary.BigEndian.Uint64(k[len(prefix)+1:])
		if ep < oldest {
			t.Fatalf("bucket %d keeps epoch %d, older than the oldest readable %d", k[len(prefix)], ep, oldest)
		}
		buckets[k[len(prefix)]] = true
		if err := decodeLogRecord(v, 0, func(uint64, zset.Entry) { n++ }); err != nil {
			t.Fatal(err)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if want := 2 * int(eng.mu.epoch-oldest+1); n != want || len(buckets) < 20 {
		t.Fatalf("%d entries in %d buckets, want %d in many", n, len(buckets), want)
	}
	changes, err := readChanges(eng.mu.store, o.id, oldest, eng.mu.epoch)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(changes); i++ {
		if changes[i].Epoch < changes[i-1].Epoch {
			t.Fatalf("changes out of epoch order at %d", i)
		}
	}
}

// bucketCounter is a reader that records the buckets its scans of one
// relation's rows visit.
type bucketCounter struct {
	state.Reader
	prefix  []byte
	buckets map[byte]bool
}

func (c *bucketCounter) Scan(lo, hi []byte, fn func(k, v []byte) bool) error {
	if len(lo) > len(c.prefix) && string(lo[:len(c.prefix)]) == string(c.prefix) {
		c.buckets[lo[len(c.prefix)]] = true
	}
	return c.Reader.Scan(lo, hi, fn)
}

// TestReadsByRoutingKeyTouchOneBucket checks that a read fixing a
// relation's routing key (a table's primary key, a grouped view's group
// key, every column otherwise) reads one bucket, that other key-range
// reads visit every bucket, and that both return what a full scan
// filtered does.
func TestReadsByRoutingKeyTouchOneBucket(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	runAll(t, eng.NewSession(), layoutWorkload)
	eng.mu.RLock()
	defer eng.mu.RUnlock()
	for _, c := range []struct {
		query, rel string
		buckets    int // -1: every bucket that holds rows
	}{
		{"SELECT * FROM groups WHERE g = 3", "groups", 1},
		{"SELECT * FROM groups WHERE g = 3 AND n > 2", "groups", 1},
		{"SELECT * FROM groups WHERE g > 3", "groups", -1},
		{"SELECT * FROM t WHERE k = 17", "t", 1},
		{"SELECT * FROM t WHERE k IN (17, 18)", "t", 2},
		{"SELECT * FROM t WHERE k BETWEEN 40 AND 60", "t", -1},
		{"SELECT * FROM bag WHERE a = 1 AND b = 'x'", "bag", 1},
		{"SELECT * FROM bag WHERE a = 1", "bag", -1},
		{"SELECT * FROM dup WHERE a = 4", "dup", 1},
		{"SELECT * FROM joined WHERE k = 5", "joined", -1},
	} {
		tree, err := pgparse.Parse(c.query)
		if err != nil {
			t.Fatal(err)
		}
		p, err := newBinder(eng.mu.cat, nil, nil).Query(tree.Stmts[0].Stmt)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		o := eng.mu.cat.lookup(c.rel)
		ranges, ok := scanRanges(o, scanUses(p)[c.rel])
		if !ok {
			t.Fatalf("%s: no key ranges", c.query)
		}
		r := &bucketCounter{Reader: eng.mu.store, prefix: o.rowsPrefix(), buckets: map[byte]bool{}}
		got, err := readKeyRanges(context.Background(), r, o, ranges, serialRead)
		if err != nil {
			t.Fatal(err)
		}
		want := c.buckets
		if want < 0 {
			want = zset.Buckets
		}
		if len(r.buckets) != want {
			t.Errorf("%s: read %d buckets, want %d", c.query, len(r.buckets), want)
		}
		all, err := readRelation(context.Background(), eng.mu.store, o)
		if err != nil {
			t.Fatal(err)
		}
		if wantRows := cachedRanges(o, all, ranges); fmt.Sprint(rowsText(got)) != fmt.Sprint(rowsText(wantRows)) {
			t.Errorf("%s: read %d rows, want the %d of the full scan in its ranges", c.query, len(got), len(wantRows))
		}
	}
}

func rowsText(b zset.Batch) []string {
	var out []string
	for _, e := range b {
		out = append(out, fmt.Sprintf("%d %x", e.Weight, zset.EncodeRow(nil, e.Row)))
	}
	return out
}

// TestCheckOfOlderLayoutsWritesNothing checks that rockstream doctor's
// check of a layout 1 or 2 store (opened read-only) checks it as the
// upgrade would leave it, deep, without writing anything.
func TestCheckOfOlderLayoutsWritesNothing(t *testing.T) {
	for layout, downgrade := range map[uint64]func(*testing.T, Store){1: downgradeToLayout1, 2: downgradeToLayout2} {
		st := NewMemoryStore()
		eng, err := Open(st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		runAll(t, eng.NewSession(), layoutWorkload)
		eng.Close()
		downgrade(t, st)
		before := dumpRaw(t, st)
		rep, err := Check(st, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) > 0 || rep.Layout != layout || rep.Objects["materialized view"] != 9 {
			t.Fatalf("layout %d: report %+v", layout, rep)
		}
		if after := dumpRaw(t, st); after != before {
			t.Fatalf("layout %d: Check wrote to the store: %s", layout, firstDifference(before, after))
		}
	}
}
