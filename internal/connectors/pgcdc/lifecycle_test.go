package pgcdc

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/rockstream/rockstream/internal/runtime"
)

// eventually retries cond until it holds or 30 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 30s: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// upstreamLSN returns the upstream's current WAL position.
func (u *upstream) upstreamLSN() pglogrepl.LSN {
	u.t.Helper()
	lsn, err := pglogrepl.ParseLSN(u.query("SELECT pg_current_wal_lsn()::text")[0][0])
	if err != nil {
		u.t.Fatal(err)
	}
	return lsn
}

// TestIdleSlotAdvances writes only to a table the source does not
// replicate: the source commits the position it is idle at, so the slot
// releases that WAL, the committed progress covers it (the slot is never
// acknowledged past it) and the reported lag falls below what was
// written.
func TestIdleSlotAdvances(t *testing.T) {
	u := newUpstream(t, "idle_slot")
	r := newRS(t, runtime.OpenMemory())
	defer r.close()
	u.exec(`CREATE TABLE acct (id int PRIMARY KEY, bal int)`)
	u.exec(`CREATE TABLE other (k int, pad text)`)
	r.exec(`CREATE TABLE acct (id int PRIMARY KEY, bal int)`)
	r.exec(fmt.Sprintf("CREATE SOURCE idle FROM POSTGRES (connection = '%s', slot = 'idle_slot') FOR TABLES (acct)", u.dsn))
	u.exec(`INSERT INTO acct VALUES (1, 1)`)
	caughtUp(t, u, r, "idle", same("acct")...)
	lastTxn := r.progress("idle")

	u.exec(`INSERT INTO other SELECT g, repeat('x', 200) FROM generate_series(1, 20000) g`)
	written := u.upstreamLSN()
	eventually(t, "the slot reaches the position written past the last replicated transaction", func() bool {
		return u.slotFlushed("idle_slot") >= written
	})
	if p := r.progress("idle"); p < written {
		t.Errorf("committed progress %s, the slot is at or past %s", p, written)
	}
	checkFlushed(t, u, r, "idle", "idle_slot")
	eventually(t, "the lag drops below what was written", func() bool {
		res := r.exec("SELECT lag FROM rockstream_catalog.sources WHERE name = 'idle'")
		return !res.Rows[0][0].IsNull() && res.Rows[0][0].Int() < int64(written-lastTxn)
	})

	// Changes after the idle position still arrive, once.
	u.exec(`BEGIN; INSERT INTO acct VALUES (2, 2); INSERT INTO other VALUES (0, ''); UPDATE acct SET bal = 10 WHERE id = 1; COMMIT`)
	caughtUp(t, u, r, "idle", same("acct")...)
	checkFlushed(t, u, r, "idle", "idle_slot")
}

// TestDropSourceReleasesUpstream drops sources: the slot goes, the
// publication the source created goes, a publication the user made
// stays; a source created again under the same name loads a new snapshot.
func TestDropSourceReleasesUpstream(t *testing.T) {
	u := newUpstream(t, "dropped_slot")
	r := newRS(t, runtime.OpenMemory())
	defer r.close()
	u.exec(`CREATE TABLE acct (id int PRIMARY KEY, bal int)`)
	u.exec(`INSERT INTO acct SELECT g, g FROM generate_series(1, 10) g`)
	u.exec(`CREATE PUBLICATION mine FOR TABLE acct`)
	r.exec(`CREATE TABLE acct (id int PRIMARY KEY, bal int)`)
	slotGone := func(slot string) func() bool {
		return func() bool {
			return len(u.query("SELECT 1 FROM pg_replication_slots WHERE slot_name = $1", slot)) == 0
		}
	}
	publication := func(name string) bool {
		return len(u.query("SELECT 1 FROM pg_publication WHERE pubname = $1", name)) == 1
	}

	create := fmt.Sprintf("CREATE SOURCE dropped FROM POSTGRES (connection = '%s', slot = 'dropped_slot') FOR TABLES (acct)", u.dsn)
	r.exec(create)
	caughtUp(t, u, r, "dropped", same("acct")...)
	if !publication("rockstream_dropped") {
		t.Fatal("the source did not create its publication")
	}
	r.exec("DROP SOURCE dropped")
	eventually(t, "DROP SOURCE drops the slot", slotGone("dropped_slot"))
	eventually(t, "DROP SOURCE drops the publication it created", func() bool { return !publication("rockstream_dropped") })

	// Created again: a new slot and snapshot, which replaces the rows.
	u.exec(`DELETE FROM acct WHERE id > 5`)
	r.exec(create)
	caughtUp(t, u, r, "dropped", same("acct")...)
	r.exec("DROP SOURCE dropped")
	eventually(t, "the second DROP SOURCE drops the slot", slotGone("dropped_slot"))

	r.exec(fmt.Sprintf("CREATE SOURCE own FROM POSTGRES (connection = '%s', slot = 'dropped_slot', publication = 'mine') FOR TABLES (acct)", u.dsn))
	u.exec(`INSERT INTO acct VALUES (50, 50)`)
	caughtUp(t, u, r, "own", same("acct")...)
	r.exec("DROP SOURCE own")
	eventually(t, "DROP SOURCE drops the slot of a source on the user's publication", slotGone("dropped_slot"))
	if !publication("mine") {
		t.Error("DROP SOURCE dropped the user's publication")
	}
}
