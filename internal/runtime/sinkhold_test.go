package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestSinkHoldsChangeLog: a sink keeps its view's change log past the
// retention horizon from its creation, then from the epoch it reports
// delivered; a lower report changes nothing, and DROP SINK releases the
// log.
func TestSinkHoldsChangeLog(t *testing.T) {
	const retention = 8
	eng, err := Open(NewMemoryStore(), Options{ChangeLogRetention: retention})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	s := eng.NewSession()
	mustExec(t, s, "CREATE TABLE t (k int)")
	mustExec(t, s, "CREATE MATERIALIZED VIEW v AS SELECT k FROM t")
	mustExec(t, s, "CREATE MATERIALIZED VIEW w AS SELECT count(*) AS n FROM t")
	mustExec(t, s, "CREATE SINK out FROM v INTO testkind ()")
	created, _ := eng.CommitWait()
	insert := func(n int) uint64 {
		for i := 0; i < n; i++ {
			mustExec(t, s, fmt.Sprintf("INSERT INTO t VALUES (%d)", i))
		}
		e, _ := eng.CommitWait()
		return e
	}
	// readable reports whether the changes of view after epoch can be
	// read, failing on any error but the horizon's.
	readable := func(view string, after uint64) bool {
		t.Helper()
		frontier, _ := eng.CommitWait()
		_, _, err := eng.ChangesBetween(view, after, frontier)
		if err != nil && !strings.Contains(err.Error(), "change-log horizon") {
			t.Fatal(err)
		}
		return err == nil
	}
	frontier := insert(10 * retention)
	if !readable("v", created) {
		t.Fatalf("the changes of v since the sink's creation (epoch %d) are gone at epoch %d", created, frontier)
	}
	if readable("w", created) {
		t.Fatalf("the changes of w, which has no sink, are kept from epoch %d", created)
	}
	ch, _, err := eng.ChangesBetween("v", created, frontier)
	if err != nil || len(ch) != 10*retention {
		t.Fatalf("%d changes since the sink's creation, want %d (%v)", len(ch), 10*retention, err)
	}

	delivered := created + 5*retention
	if err := eng.SinkDelivered(context.Background(), "out", delivered); err != nil {
		t.Fatal(err)
	}
	if err := eng.SinkDelivered(context.Background(), "out", created+1); err != nil {
		t.Fatal(err)
	}
	insert(10 * retention)
	if readable("v", created) {
		t.Fatal("the changes before the delivered epoch are kept")
	}
	if !readable("v", delivered) {
		t.Fatal("the changes after the delivered epoch are gone (a lower report moved the hold back?)")
	}

	mustExec(t, s, "DROP SINK out")
	if err := eng.SinkDelivered(context.Background(), "out", delivered+1); err != nil {
		t.Fatal(err)
	}
	insert(10 * retention)
	if readable("v", delivered) {
		t.Fatal("the changes are kept after DROP SINK")
	}
}
