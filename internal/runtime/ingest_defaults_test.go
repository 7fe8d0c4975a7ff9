package runtime

import (
	"context"
	"strings"
	"testing"
)

// TestIngestAbsentColumns: columns a change marks absent take their
// DEFAULT on Insert and Upsert (evaluated as INSERT does, NOT NULL
// checked after) and are ignored by deletes.
func TestIngestAbsentColumns(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	s := eng.NewSession()
	mustExec(t, s, "CREATE TABLE d (k int PRIMARY KEY DEFAULT 40 + 2, name text NOT NULL DEFAULT 'none', n int DEFAULT 7, req int NOT NULL)")
	mustExec(t, s, "CREATE TABLE errs "+ErrorTableColumns)
	all := func(absent ...int) []bool {
		a := make([]bool, 4)
		for _, i := range absent {
			a[i] = true
		}
		return a
	}
	ctx := context.Background()
	res, err := eng.Ingest(ctx, &Ingest{Source: "src", ErrorTable: "errs", Changes: []RowChange{
		{Table: "d", Op: Upsert, Row: textRow("1", "ignored", "NULL", "5"), Absent: all(1, 2)},
		{Table: "d", Op: Upsert, Row: textRow("2", "b", "NULL", "6"), Absent: all()},
		{Table: "d", Op: Insert, Row: textRow("NULL", "c", "3", "7"), Absent: all(0)},
		{Table: "d", Op: Upsert, Row: textRow("2", "x", "9", "NULL"), Absent: all(3)},
		{Table: "d", Op: Upsert, Row: textRow("1", "a", "NULL", "8"), Absent: all(2)},
		{Table: "d", Op: DeleteKey, Row: textRow("NULL", "NULL", "NULL", "NULL"), Absent: all(0)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rejected) != 1 || !strings.Contains(res.Rejected[0].Err, `null value in column "req"`) {
		t.Fatalf("rejected: %+v", res.Rejected)
	}
	if got, want := queryText(t, s, "SELECT * FROM d ORDER BY k"), "1,a,7,8\n2,b,NULL,6\n42,c,3,7"; got != want {
		t.Fatalf("d =\n%s\nwant\n%s", got, want)
	}
}
