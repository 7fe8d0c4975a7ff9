package runtime

import (
	"strings"
	"testing"
)

// reuseNote returns the NOTICE a replacement of view raised.
func reuseNote(notes []string, view string) string {
	for _, n := range notes {
		if strings.HasPrefix(n, "materialized view \""+view+"\": ") {
			return n
		}
	}
	return ""
}

func TestReplaceReuseSmoke(t *testing.T) {
	s, notes := alterSession(t)
	execAll(t, s,
		"CREATE TABLE t (a int, b int)",
		"INSERT INTO t VALUES (1, 10), (2, 20), (1, 5)",
		"CREATE MATERIALIZED VIEW m AS SELECT a, sum(b) AS s FROM t GROUP BY a")
	*notes = nil
	execAll(t, s, "CREATE OR REPLACE MATERIALIZED VIEW m AS SELECT a, sum(b) AS s, a * 2 AS d FROM t GROUP BY a")
	t.Logf("%q", *notes)
	t.Log(alterQuery(t, s, "SELECT * FROM m ORDER BY a"))
	execAll(t, s, "INSERT INTO t VALUES (2, 1), (3, 3)", "DELETE FROM t WHERE b = 10")
	t.Log(alterQuery(t, s, "SELECT * FROM m ORDER BY a"))
}
