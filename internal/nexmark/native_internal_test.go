package nexmark

import (
	"strings"
	"testing"
)

// TestColumnCounts checks BatchWriter's column counts against the tables.
func TestColumnCounts(t *testing.T) {
	for k, tb := range map[Kind]Table{KindPerson: Tables[0], KindAuction: Tables[1], KindBid: Tables[2]} {
		if tb.Name != k.String() {
			t.Fatalf("Tables[%d] is %s, want %s", k, tb.Name, k)
		}
		if n := strings.Count(tb.Columns, ",") + 1; n != columnCounts[k] {
			t.Errorf("%s has %d columns, columnCounts says %d", tb.Name, n, columnCounts[k])
		}
	}
}
