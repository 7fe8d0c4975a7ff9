package pgcdc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/zset"
)

const typedTable = `CREATE TABLE typed (
	id int PRIMARY KEY, i2 int2, i8 int8, n numeric(12,3), nu numeric, f4 float4, f8 float8,
	b bool, s text, v varchar(20), c char(4), by bytea, d date, ts timestamp, tz timestamptz(3),
	iv interval, arr int[], words text[])`

const typedRow = `(%d, 7, 9000000000, 123.456, 1e-20, 1.5, 0.1, true, 'x''y', 'vv', 'ab', '\x00ff', '2024-02-29',
	'2024-01-02 03:04:05.678901', '2024-01-02 03:04:05.678+02', '1 year 2 mons 3 days 04:05:06.7', '{1,NULL,3}', '{"a b",c}')`

// TestSnapshotThenStream loads rows that exist before the source starts and
// rows written while it snapshots, then streams every kind of change, and
// checks the tables equal upstream's after each step.
func TestSnapshotThenStream(t *testing.T) {
	u := newUpstream(t, "snap_slot")
	u.exec(typedTable)
	u.exec(`CREATE TABLE full_ident (k int, val text)`)
	u.exec(`ALTER TABLE full_ident REPLICA IDENTITY FULL`)
	for i := 1; i <= 50; i++ {
		u.exec(fmt.Sprintf("INSERT INTO typed VALUES "+typedRow, i))
	}
	u.exec(`INSERT INTO typed (id) VALUES (0)`)
	u.exec(`INSERT INTO full_ident VALUES (1, 'one'), (1, 'one'), (2, NULL)`)
	cfg := u.source("snap_slot", "typed", "full_ident")
	target := newMemTarget(cfg.Tables)
	var batches []map[int]*TableDelta
	var bmu sync.Mutex
	target.applied = func(d map[int]*TableDelta) {
		bmu.Lock()
		batches = append(batches, d)
		bmu.Unlock()
	}

	// A writer inserts while the snapshot is taken and streaming starts:
	// each of its rows must arrive once, by the snapshot or the stream.
	writer, stopWriter := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1000; writer.Err() == nil; i++ {
			if _, err := u.conn.Exec(context.Background(), fmt.Sprintf("INSERT INTO full_ident VALUES (%d, 'during')", i)).ReadAll(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	r := start(cfg, target)
	defer r.stop(t)
	for target.epochs < 3 {
		time.Sleep(10 * time.Millisecond)
	}
	stopWriter()
	wg.Wait()
	caughtUp(t, u, target, r)

	// Updates under both identities, a key change, deletes.
	u.exec(`UPDATE typed SET s = 'updated', n = n * 2 WHERE id % 3 = 0`)
	u.exec(`UPDATE typed SET id = id + 100 WHERE id = 5`)
	u.exec(`DELETE FROM typed WHERE id % 7 = 0`)
	u.exec(`UPDATE full_ident SET val = 'uno' WHERE k = 1`)
	u.exec(`DELETE FROM full_ident WHERE val IS NULL`)
	caughtUp(t, u, target, r)

	// An unchanged TOASTed value: PostgreSQL leaves it out of the new
	// tuple and the row RockStream holds supplies it.
	u.exec(`INSERT INTO typed (id, s) SELECT 500, string_agg(md5(g::text), '') FROM generate_series(1, 400) g`)
	u.exec(`UPDATE typed SET i2 = 1 WHERE id = 500`)
	caughtUp(t, u, target, r)

	// One transaction over both tables lands in one epoch.
	u.exec(`BEGIN; INSERT INTO typed (id, s) VALUES (900, 'pair'); INSERT INTO full_ident VALUES (900, 'pair'); COMMIT`)
	caughtUp(t, u, target, r)
	bmu.Lock()
	together := 0
	for _, b := range batches {
		if hasRow(b[0], 900) || hasRow(b[1], 900) {
			if !hasRow(b[0], 900) || !hasRow(b[1], 900) {
				t.Errorf("the two-table transaction was split across epochs")
			}
			together++
		}
	}
	bmu.Unlock()
	if together != 1 {
		t.Errorf("the two-table transaction's rows were in %d epochs, want 1", together)
	}

	// TRUNCATE empties the table in its epoch; later inserts follow.
	u.exec(`BEGIN; INSERT INTO full_ident VALUES (7, 'gone'); TRUNCATE full_ident; INSERT INTO full_ident VALUES (8, 'after'); COMMIT`)
	u.exec(`TRUNCATE typed`)
	u.exec(fmt.Sprintf("INSERT INTO typed VALUES "+typedRow, 1))
	caughtUp(t, u, target, r)
	checkFlushed(t, u, target, "snap_slot")
}

func hasRow(d *TableDelta, id int32) bool {
	if d == nil {
		return false
	}
	for _, e := range d.Delta {
		if v := e.Row[0]; !v.IsNull() && v.Int() == int64(id) && e.Weight > 0 {
			return true
		}
	}
	return false
}

// checkFlushed checks that the slot was never acknowledged past what the
// target committed.
func checkFlushed(t *testing.T, u *upstream, target *memTarget, slot string) {
	t.Helper()
	p, ok, err := DecodeProgress(target.progress)
	if err != nil || !ok {
		t.Fatalf("progress: %v %v", ok, err)
	}
	if f := u.slotFlushed(slot); f > p.LSN {
		t.Errorf("slot confirmed %s, past the committed %s", f, p.LSN)
	}
}

// TestRestartResumes stops the runner, and fails a commit, mid-stream: the
// next runner resumes from the committed progress and every change lands
// once.
func TestRestartResumes(t *testing.T) {
	u := newUpstream(t, "restart_slot")
	u.exec(`CREATE TABLE acct (id int PRIMARY KEY, bal numeric)`)
	u.exec(`INSERT INTO acct SELECT g, 100 FROM generate_series(1, 20) g`)
	cfg := u.source("restart_slot", "acct")
	target := newMemTarget(cfg.Tables)
	for round := 0; round < 4; round++ {
		r := start(cfg, target)
		for i := 0; i < 10; i++ {
			u.exec(fmt.Sprintf(`BEGIN; UPDATE acct SET bal = bal - %d WHERE id = %d; UPDATE acct SET bal = bal + %d WHERE id = %d; COMMIT`, i, i%20+1, i, (i*7)%20+1))
		}
		u.exec(fmt.Sprintf(`INSERT INTO acct VALUES (%d, 0)`, 100+round))
		if round%2 == 1 {
			// A failed commit stops the runner with nothing applied.
			target.mu.Lock()
			target.failNext = errors.New("disk full")
			target.mu.Unlock()
			if err := <-r.done; err == nil || !strings.Contains(err.Error(), "disk full") {
				t.Fatalf("runner after a failed commit: %v", err)
			}
			checkFlushed(t, u, target, "restart_slot")
			continue
		}
		caughtUp(t, u, target, r)
		r.stop(t)
		checkFlushed(t, u, target, "restart_slot")
	}
	r := start(cfg, target)
	caughtUp(t, u, target, r)
	r.stop(t)
	checkFlushed(t, u, target, "restart_slot")
}

// TestUpstreamRestart ends the walsender: the runner reconnects and
// catches up.
func TestUpstreamRestart(t *testing.T) {
	u := newUpstream(t, "walsender_slot")
	u.exec(`CREATE TABLE ev (id int PRIMARY KEY, note text)`)
	cfg := u.source("walsender_slot", "ev")
	target := newMemTarget(cfg.Tables)
	r := start(cfg, target)
	defer r.stop(t)
	u.exec(`INSERT INTO ev SELECT g, 'a' FROM generate_series(1, 100) g`)
	caughtUp(t, u, target, r)
	for i := 0; i < 3; i++ {
		u.exec(`SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = 'walsender_slot' AND active_pid IS NOT NULL`)
		u.exec(fmt.Sprintf(`UPDATE ev SET note = 'b%d' WHERE id %% 4 = %d`, i, i))
		caughtUp(t, u, target, r)
	}
	if !r.saw(StateReconnecting) {
		t.Errorf("the runner never reported %q", StateReconnecting)
	}
}

// TestSchemaChangeFails alters an upstream table: the source fails with a
// message naming the table and the change, and applies nothing after it.
func TestSchemaChangeFails(t *testing.T) {
	u := newUpstream(t, "schema_slot")
	u.exec(`CREATE TABLE item (id int PRIMARY KEY, name text)`)
	u.exec(`INSERT INTO item VALUES (1, 'a')`)
	cfg := u.source("schema_slot", "item")
	target := newMemTarget(cfg.Tables)
	r := start(cfg, target)
	u.exec(`INSERT INTO item VALUES (2, 'b')`)
	caughtUp(t, u, target, r)
	before := target.text(0)
	u.exec(`ALTER TABLE item ADD COLUMN price numeric`)
	u.exec(`INSERT INTO item VALUES (3, 'c', 1.5)`)
	select {
	case err := <-r.done:
		var sc *SchemaChangeError
		if !errors.As(err, &sc) {
			t.Fatalf("runner stopped with %v, want a schema change", err)
		}
		if want := `upstream table public.item changed: column "price" was added`; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("error %q, want it to start with %q", err, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the runner did not stop after a schema change")
	}
	if !r.saw(StateFailed + `: upstream table public.item changed`) {
		t.Errorf("states %q lack the failure", r.states)
	}
	if got := target.text(0); got != before {
		t.Errorf("the table changed after the schema change:\n%s\nwas\n%s", got, before)
	}
}

var _ = zset.Row{}
