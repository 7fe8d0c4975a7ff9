package rockstream_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/rockstream/rockstream"
)

// TestOrderedViewsSurviveRestart checks that the state of INTERSECT/EXCEPT,
// TopK and window operators is found again after a durable instance is
// reopened: changes after the restart keep each view equal to its query.
func TestOrderedViewsSurviveRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	views := map[string]string{
		"top2":   "SELECT id, x FROM t ORDER BY x DESC, id LIMIT 2",
		"pergrp": "SELECT * FROM (SELECT g, id, row_number() OVER (PARTITION BY g ORDER BY x, id) AS rn FROM t) s WHERE rn <= 1",
		"win":    "SELECT id, sum(x) OVER (PARTITION BY g ORDER BY id ROWS 1 PRECEDING) AS s, rank() OVER (ORDER BY x) AS r FROM t",
		"setop":  "SELECT g FROM t WHERE x > 2 EXCEPT ALL SELECT g FROM t WHERE x > 5",
		"firsts": "SELECT DISTINCT ON (g) g, id FROM t ORDER BY g, id DESC",
	}
	open := func() *rockstream.DB {
		db, err := rockstream.Open(rockstream.Options{Storage: dir})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	exec := func(db *rockstream.DB, sql string) *rockstream.Result {
		t.Helper()
		res, err := db.Exec(ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return res
	}
	rows := func(r *rockstream.Result) string {
		var out []string
		for _, row := range r.Rows {
			var vals []string
			for _, v := range row {
				if v == nil {
					vals = append(vals, "NULL")
				} else {
					vals = append(vals, *v)
				}
			}
			out = append(out, strings.Join(vals, "|"))
		}
		sort.Strings(out)
		return strings.Join(out, "\n")
	}
	check := func(db *rockstream.DB, when string) {
		t.Helper()
		for name, q := range views {
			if got, want := rows(exec(db, "SELECT * FROM "+name)), rows(exec(db, q)); got != want {
				t.Fatalf("%s: view %s holds\n%s\nwant\n%s", when, name, got, want)
			}
		}
	}

	db := open()
	exec(db, "CREATE TABLE t (id int PRIMARY KEY, g text, x int)")
	for name, q := range views {
		exec(db, "CREATE MATERIALIZED VIEW "+name+" AS "+q)
	}
	exec(db, "INSERT INTO t VALUES (1, 'a', 3), (2, 'a', 7), (3, 'b', 6), (4, 'b', 1), (5, NULL, 9)")
	check(db, "before the restart")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = open()
	defer db.Close()
	check(db, "after the restart")
	exec(db, "DELETE FROM t WHERE id = 5")
	exec(db, "UPDATE t SET x = 10, g = 'b' WHERE id = 1")
	exec(db, "INSERT INTO t VALUES (6, 'a', 4), (7, 'c', 8)")
	check(db, "after changes following the restart")
}
