package pgcdc

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/instance"
	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/internal/runtime"
)

// typedColumns are the columns of the typed table, upstream and in
// RockStream (which holds character(n) as text).
const typedColumns = `id int PRIMARY KEY, i2 int2, i8 int8, n numeric(12,3), nu numeric, f4 float4, f8 float8,
	b bool, s text, v varchar(20), c %s, by bytea, d date, ts timestamp, tz timestamptz(3),
	iv interval, arr int[], words text[]`

const typedRow = `(%d, 7, 9000000000, 123.456, 1e-20, 1.5, 0.1, true, 'x''y', 'vv', 'ab', '\x00ff', '2024-02-29',
	'2024-01-02 03:04:05.678901', '2024-01-02 03:04:05.678+02', '1 year 2 mons 3 days 04:05:06.7', '{1,NULL,3}', '{"a b",c}')`

func createSource(u *upstream, r *rs, name, tables string) {
	r.exec(fmt.Sprintf("CREATE SOURCE %s FROM POSTGRES (connection = '%s', slot = '%s_slot') FOR TABLES (%s)", name, u.dsn, name, tables))
}

// TestSnapshotThenStream loads rows that exist before the source starts and
// rows written while it snapshots, then streams every kind of change, and
// checks the tables, and a view over them, equal upstream's after each
// step.
func TestSnapshotThenStream(t *testing.T) {
	u := newUpstream(t, "snap_slot")
	r := newRS(t, runtime.OpenMemory())
	defer r.close()
	u.exec(fmt.Sprintf("CREATE TABLE typed ("+typedColumns+")", "char(4)"))
	r.exec(fmt.Sprintf("CREATE TABLE typed ("+typedColumns+")", "text"))
	u.exec(`CREATE TABLE full_ident (k int, val text)`)
	u.exec(`ALTER TABLE full_ident REPLICA IDENTITY FULL`)
	r.exec(`CREATE TABLE full_ident (k int, val text)`)
	const view = `SELECT f.val, count(*) AS n, sum(t.n) AS total, max(t.s) AS s FROM full_ident f JOIN typed t ON t.id % 10 = f.k % 10 GROUP BY f.val`
	r.exec(`CREATE MATERIALIZED VIEW joined AS ` + view)
	r.exec(`CREATE MATERIALIZED VIEW big_ids AS SELECT 'typed' AS t, id FROM typed WHERE id >= 900 UNION ALL SELECT 'full', k FROM full_ident WHERE k >= 900`)
	for i := 1; i <= 50; i++ {
		u.exec(fmt.Sprintf("INSERT INTO typed VALUES "+typedRow, i))
	}
	u.exec(`INSERT INTO typed (id) VALUES (0)`)
	u.exec(`INSERT INTO full_ident VALUES (1, 'one'), (1, 'one'), (2, NULL)`)
	check := func() {
		t.Helper()
		caughtUp(t, u, r, "snap", append(append(same("typed"), same("full_ident")...), "SELECT * FROM joined", view)...)
	}

	// A writer inserts while the snapshot is taken and streaming starts:
	// each of its rows must arrive once, by the snapshot or the stream.
	writer, stopWriter := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 100; writer.Err() == nil; i++ {
			if _, err := u.conn.Exec(context.Background(), fmt.Sprintf("INSERT INTO full_ident VALUES (%d, 'during')", i)).ReadAll(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	start := r.eng.Epoch()
	createSource(u, r, "snap", "typed, full_ident")
	for r.eng.Epoch() < start+4 {
		time.Sleep(5 * time.Millisecond)
	}
	stopWriter()
	wg.Wait()
	check()
	if state, last := r.status("snap"); state != "running" || last != "" {
		t.Errorf("status %s %q, want running", state, last)
	}

	// Updates under both identities, a key change, deletes.
	u.exec(`UPDATE typed SET s = 'updated', n = n * 2 WHERE id % 3 = 0`)
	u.exec(`UPDATE typed SET id = id + 100 WHERE id = 5`)
	u.exec(`DELETE FROM typed WHERE id % 7 = 0`)
	u.exec(`UPDATE full_ident SET val = 'uno' WHERE k = 1`)
	// Arrays of any shape replicate as they are: two dimensions, and
	// lower bounds other than 1.
	u.exec(`UPDATE typed SET arr = '{{1,2},{3,NULL}}', words = '[0:1]={"x y",z}' WHERE id = 1`)
	u.exec(`UPDATE typed SET arr = '[-1:0][2:3]={{4,5},{6,7}}' WHERE id = 2`)
	u.exec(`DELETE FROM full_ident WHERE val IS NULL`)
	check()

	// An unchanged TOASTed value: PostgreSQL leaves it out of the new
	// tuple and the row RockStream holds supplies it, also when the row
	// was written earlier in the same transaction.
	u.exec(`INSERT INTO typed (id, s) SELECT 500, string_agg(md5(g::text), '') FROM generate_series(1, 400) g`)
	u.exec(`UPDATE typed SET i2 = 1 WHERE id = 500`)
	u.exec(`BEGIN; INSERT INTO typed (id, s) SELECT 501, string_agg(md5(g::text), '') FROM generate_series(1, 400) g; UPDATE typed SET i2 = 2 WHERE id IN (500, 501); COMMIT`)
	check()

	// One transaction over both tables lands in one epoch.
	before := r.eng.Epoch()
	u.exec(`BEGIN; INSERT INTO typed (id, s) VALUES (900, 'pair'); INSERT INTO full_ident VALUES (900, 'pair'); COMMIT`)
	check()
	changes, _, err := r.eng.Changes("big_ids", before)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 || changes[0].Epoch != changes[1].Epoch {
		t.Errorf("the two-table transaction's changes %v, want two in one epoch", changes)
	}

	// TRUNCATE empties the table in its epoch; later inserts follow.
	u.exec(`BEGIN; INSERT INTO full_ident VALUES (7, 'gone'); TRUNCATE full_ident; INSERT INTO full_ident VALUES (8, 'after'); COMMIT`)
	u.exec(`TRUNCATE typed`)
	u.exec(fmt.Sprintf("INSERT INTO typed VALUES "+typedRow, 1))
	check()
	checkFlushed(t, u, r, "snap", "snap_slot")
}

// TestRestartResumes closes and reopens a durable engine between bursts
// of upstream transactions, some of them committed while RockStream is
// down: every change lands once and the slot is never acknowledged past
// what RockStream committed.
func TestRestartResumes(t *testing.T) {
	u := newUpstream(t, "restart_slot")
	dir := t.TempDir()
	open := func() *rs {
		eng, err := instance.Open(instance.Options{Storage: dir})
		if err != nil {
			t.Fatal(err)
		}
		return newRS(t, eng)
	}
	u.exec(`CREATE TABLE acct (id int PRIMARY KEY, bal numeric)`)
	u.exec(`INSERT INTO acct SELECT g, 100 FROM generate_series(1, 20) g`)
	r := open()
	r.exec(`CREATE TABLE acct (id int PRIMARY KEY, bal numeric)`)
	r.exec(`CREATE MATERIALIZED VIEW total AS SELECT sum(bal) AS s, count(*) AS n FROM acct`)
	createSource(u, r, "restart", "acct")
	for round := 0; round < 4; round++ {
		for i := 0; i < 10; i++ {
			u.exec(fmt.Sprintf(`BEGIN; UPDATE acct SET bal = bal - %d WHERE id = %d; UPDATE acct SET bal = bal + %d WHERE id = %d; COMMIT`, i, i%20+1, i, (i*7)%20+1))
		}
		u.exec(fmt.Sprintf(`INSERT INTO acct VALUES (%d, 0)`, 100+round))
		if round%2 == 0 {
			caughtUp(t, u, r, "restart", append(same("acct"), "SELECT * FROM total", "SELECT sum(bal), count(*) FROM acct")...)
		}
		checkFlushed(t, u, r, "restart", "restart_slot")
		r.close()
		u.exec(fmt.Sprintf(`UPDATE acct SET bal = bal + 1 WHERE id %% 4 = %d`, round))
		r = open()
	}
	caughtUp(t, u, r, "restart", append(same("acct"), "SELECT * FROM total", "SELECT sum(bal), count(*) FROM acct")...)
	checkFlushed(t, u, r, "restart", "restart_slot")
	r.close()
}

// TestUpstreamRestart ends the walsender: the source reports the error,
// reconnects and catches up.
func TestUpstreamRestart(t *testing.T) {
	u := newUpstream(t, "walsender_slot")
	r := newRS(t, runtime.OpenMemory())
	defer r.close()
	u.exec(`CREATE TABLE ev (id int PRIMARY KEY, note text)`)
	r.exec(`CREATE TABLE ev (id int PRIMARY KEY, note text)`)
	createSource(u, r, "walsender", "ev")
	u.exec(`INSERT INTO ev SELECT g, 'a' FROM generate_series(1, 100) g`)
	caughtUp(t, u, r, "walsender", same("ev")...)
	for i := 0; i < 3; i++ {
		u.exec(`SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = 'walsender_slot' AND active_pid IS NOT NULL`)
		u.exec(fmt.Sprintf(`UPDATE ev SET note = 'b%d' WHERE id %% 4 = %d`, i, i))
		caughtUp(t, u, r, "walsender", same("ev")...)
	}
	state, last := r.status("walsender")
	if state != "running" || !strings.Contains(last, "terminating connection") {
		t.Errorf("status %s %q, want running after reporting the lost connection", state, last)
	}
	checkFlushed(t, u, r, "walsender", "walsender_slot")
}

// TestSchemaChangeFails alters an upstream table: the source fails with a
// message naming the table and the change, and applies nothing after it.
func TestSchemaChangeFails(t *testing.T) {
	u := newUpstream(t, "schema_slot")
	r := newRS(t, runtime.OpenMemory())
	defer r.close()
	u.exec(`CREATE TABLE item (id int PRIMARY KEY, name text)`)
	r.exec(`CREATE TABLE item (id int PRIMARY KEY, name text)`)
	u.exec(`INSERT INTO item VALUES (1, 'a')`)
	createSource(u, r, "schema", "item")
	u.exec(`INSERT INTO item VALUES (2, 'b')`)
	caughtUp(t, u, r, "schema", same("item")...)
	u.exec(`ALTER TABLE item ADD COLUMN price numeric`)
	u.exec(`INSERT INTO item VALUES (3, 'c', 1.5)`)
	want := `upstream table public.item changed: column "price" was added`
	waitStatus(t, r, "schema", "failed", want)
	if got := r.text("SELECT * FROM item"); got != "1|a\n2|b" {
		t.Errorf("item = %q after the schema change", got)
	}
}

// TestMismatchedTable points a source at a RockStream table that cannot
// hold the upstream one: the source fails and says why.
func TestMismatchedTable(t *testing.T) {
	u := newUpstream(t, "mismatch_slot")
	r := newRS(t, runtime.OpenMemory())
	defer r.close()
	u.exec(`CREATE TABLE m (id int PRIMARY KEY, amount numeric(10,2))`)
	r.exec(`CREATE TABLE m (id int PRIMARY KEY, amount float8)`)
	createSource(u, r, "mismatch", "m")
	waitStatus(t, r, "mismatch", "failed", `table "m" cannot hold upstream table public.m: column "amount" is double precision, upstream numeric(10,2)`)
}

func waitStatus(t *testing.T, r *rs, source, state, lastPrefix string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, last := r.status(source)
		if s == state && strings.HasPrefix(last, lastPrefix) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("source %s: status %s %q, want %s %q", source, s, last, state, lastPrefix)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCreateSourceErrors are the definitions CREATE SOURCE refuses.
func TestCreateSourceErrors(t *testing.T) {
	r := newRS(t, runtime.OpenMemory())
	defer r.close()
	r.exec(`CREATE TABLE x (a int PRIMARY KEY)`)
	for _, c := range []struct{ stmt, err string }{
		{`CREATE SOURCE s FROM POSTGRES (slot = 'a') FOR TABLES (x)`, `postgres source: option "connection" is required`},
		{`CREATE SOURCE s FROM POSTGRES (connection = 'host=h', bogus = 1) FOR TABLES (x)`, `postgres source: unknown option "bogus"`},
		{`CREATE SOURCE s FROM POSTGRES (connection = 'host=h')`, `postgres source: name the tables`},
		{`CREATE SOURCE s FROM POSTGRES (connection = 'host=h') FOR ALL TABLES`, `postgres source: FOR ALL TABLES replicates the tables of a publication`},
		{`CREATE SOURCE s FROM POSTGRES (connection = 'host=h', slot = 'Bad-Name') FOR TABLES (x)`, `postgres source: slot "Bad-Name" is not a valid`},
		{`CREATE SOURCE s FROM POSTGRES (connection = 'host=h') FOR TABLES (nope)`, `relation "nope" does not exist`},
	} {
		_, err := r.sess.Exec(context.Background(), c.stmt, nil)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want %q", c.stmt, err, c.err)
		}
	}
}

// TestPublicationMissingTable names an existing publication that lacks one
// of the source's tables: the source fails and says how to fix it.
func TestPublicationMissingTable(t *testing.T) {
	u := newUpstream(t, "pubmiss_slot")
	r := newRS(t, runtime.OpenMemory())
	defer r.close()
	u.exec(`CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int PRIMARY KEY); CREATE PUBLICATION only_a FOR TABLE a`)
	r.exec(`CREATE TABLE a (id int PRIMARY KEY)`)
	r.exec(`CREATE TABLE b (id int PRIMARY KEY)`)
	r.exec(fmt.Sprintf("CREATE SOURCE pubmiss FROM POSTGRES (connection = '%s', slot = 'pubmiss_slot', publication = 'only_a') FOR TABLES (a, b)", u.dsn))
	waitStatus(t, r, "pubmiss", "failed", `publication "only_a" does not publish table public.b; add it with ALTER PUBLICATION "only_a" ADD TABLE "public"."b"`)
}

// TestUpstreamServerRestart restarts the upstream server mid-stream, with
// transactions committed while the source is disconnected: the source
// reconnects and every change lands once.
func TestUpstreamServerRestart(t *testing.T) {
	u := newUpstream(t, "pgrestart_slot")
	r := newRS(t, runtime.OpenMemory())
	defer r.close()
	u.exec(`CREATE TABLE ev (id int PRIMARY KEY, note text)`)
	r.exec(`CREATE TABLE ev (id int PRIMARY KEY, note text)`)
	createSource(u, r, "pgrestart", "ev")
	u.exec(`INSERT INTO ev SELECT g, 'a' FROM generate_series(1, 100) g`)
	caughtUp(t, u, r, "pgrestart", same("ev")...)
	u.conn.Close(context.Background())
	if err := pgtest.Shared(t).Restart(); err != nil {
		t.Fatal(err)
	}
	conn, err := pgconn.Connect(context.Background(), u.dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.conn = conn
	u.exec(`UPDATE ev SET note = 'after restart' WHERE id % 3 = 0`)
	u.exec(`DELETE FROM ev WHERE id > 90`)
	caughtUp(t, u, r, "pgrestart", same("ev")...)
	if _, last := r.status("pgrestart"); last == "" {
		t.Error("the lost connection was not reported")
	}
	checkFlushed(t, u, r, "pgrestart", "pgrestart_slot")
}
