package runtime

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/errs"
)

// arbiterSchema has a keyed table with a UNIQUE constraint and a UNIQUE
// NULLS NOT DISTINCT one, a table without a primary key whose only
// unique key is a two-column constraint, and views over both ({MV} is a
// materialized view here, a view in PostgreSQL).
var arbiterSchema = []string{
	`CREATE TABLE oc (id int PRIMARY KEY, a int UNIQUE, b int, c text, UNIQUE NULLS NOT DISTINCT (b))`,
	`CREATE TABLE ocn (a int, b int, v int, CONSTRAINT ocn_ab UNIQUE (a, b))`,
	`CREATE {MV} oc_sum AS SELECT count(*) AS n, sum(a) AS sa, sum(b) AS sb, string_agg(c, ',' ORDER BY c) AS cs FROM oc`,
	`CREATE {MV} ocn_g AS SELECT a, count(*) AS n, sum(v) AS sv FROM ocn GROUP BY a`,
	`CREATE {MV} oc_j AS SELECT oc.id, ocn.v FROM oc JOIN ocn ON oc.a = ocn.a`,
}

// randomArbiterStatement is an INSERT ... ON CONFLICT, or an UPDATE or
// DELETE, over arbiterSchema's tables, with small domains so that keys
// collide, NULLs, and rows of one statement that conflict with each
// other.
func randomArbiterStatement(rng *rand.Rand) string {
	small := func() string {
		if rng.IntN(5) == 0 {
			return "NULL"
		}
		return fmt.Sprint(rng.IntN(4))
	}
	rows := func(row func() string) string {
		out := make([]string, 1+rng.IntN(3))
		for i := range out {
			out[i] = row()
		}
		return strings.Join(out, ", ")
	}
	if rng.IntN(2) == 0 {
		values := rows(func() string {
			return fmt.Sprintf("(%d, %s, %s, 'r%d')", rng.IntN(6), small(), small(), rng.IntN(9))
		})
		clause := []string{
			"ON CONFLICT (a) DO NOTHING",
			"ON CONFLICT DO NOTHING",
			"ON CONFLICT (b) DO NOTHING",
			"ON CONFLICT (a) DO UPDATE SET c = excluded.c || '+' || oc.c",
			"ON CONFLICT (a) DO UPDATE SET c = excluded.c WHERE oc.id > 2",
			"ON CONFLICT ON CONSTRAINT oc_a_key DO UPDATE SET b = excluded.b",
			"ON CONFLICT (b) DO UPDATE SET a = excluded.a, c = 'b'",
			"ON CONFLICT (id) DO UPDATE SET a = excluded.a",
			"ON CONFLICT ON CONSTRAINT oc_pkey DO NOTHING",
			"",
		}[rng.IntN(10)]
		return "INSERT INTO oc VALUES " + values + " " + clause + " RETURNING *"
	}
	switch rng.IntN(6) {
	case 0:
		return fmt.Sprintf("UPDATE oc SET a = %s WHERE id = %d", small(), rng.IntN(6))
	case 1:
		return fmt.Sprintf("DELETE FROM %s WHERE a = %d", []string{"oc", "ocn"}[rng.IntN(2)], rng.IntN(4))
	}
	values := rows(func() string { return fmt.Sprintf("(%s, %s, %d)", small(), small(), rng.IntN(9)) })
	clause := []string{
		"ON CONFLICT (a, b) DO UPDATE SET v = ocn.v + excluded.v",
		"ON CONFLICT (b, a) DO NOTHING",
		"ON CONFLICT ON CONSTRAINT ocn_ab DO UPDATE SET v = excluded.v, b = ocn.b + 10 WHERE ocn.v < 5",
		"ON CONFLICT DO NOTHING",
	}[rng.IntN(4)]
	return "INSERT INTO ocn VALUES " + values + " " + clause + " RETURNING *"
}

// TestOnConflictArbitersMatchPostgres runs random INSERT ... ON CONFLICT
// statements with unique constraints as arbiters on RockStream and on
// PostgreSQL: each must succeed on both (with the same RETURNING rows)
// or fail on both with the same SQLSTATE, and after each, every table
// and view must hold the same rows. A restart halfway through must keep
// the constraints.
func TestOnConflictArbitersMatchPostgres(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			st := NewMemoryStore()
			eng, err := Open(st, Options{})
			if err != nil {
				t.Fatal(err)
			}
			pgc := connectOracle(t)
			s := eng.NewSession()
			for _, q := range arbiterSchema {
				arbiterBoth(t, s, pgc, q)
			}
			rng := rand.New(rand.NewPCG(seed, 12))
			for i := range 80 {
				if i == 40 {
					if err := eng.Close(); err != nil {
						t.Fatal(err)
					}
					if eng, err = Open(st, Options{}); err != nil {
						t.Fatalf("reopen: %v", err)
					}
					s = eng.NewSession()
					compareRelations(t, s, pgc, "reopen")
				}
				arbiterBoth(t, s, pgc, randomArbiterStatement(rng))
			}
			if err := eng.VerifyIndexes(); err != nil {
				t.Fatal(err)
			}
			eng.Close()
		})
	}
}

// arbiterBoth runs stmt on both sides and compares the outcomes and the
// relations after it. Of errors only the SQLSTATE is compared: of
// several violations in one statement the two systems may report
// another first.
func arbiterBoth(t *testing.T, s *Session, pgc *pgconn.PgConn, stmt string) {
	t.Helper()
	ctx := context.Background()
	ours := strings.ReplaceAll(stmt, "{MV}", "MATERIALIZED VIEW")
	theirs := strings.ReplaceAll(stmt, "{MV}", "VIEW")
	if strings.Contains(stmt, "RETURNING") {
		o := &joinOracle{t: t, s: s, pg: pgc}
		want, pgErr := o.theirs([]string{theirs})
		if pgErr != nil {
			_, ourErr := s.Exec(ctx, ours, nil)
			if ourErr == nil || sqlState(pgErr) != errs.SQLState(ourErr) {
				t.Fatalf("%s:\nPostgreSQL: %v\nRockStream: %v", stmt, pgErr, ourErr)
			}
			return
		}
		if got := o.ours(ours); strings.Join(got, "\n") != strings.Join(want[0], "\n") {
			t.Fatalf("%s returned:\nRockStream:\n  %s\nPostgreSQL:\n  %s", stmt, strings.Join(got, "\n  "), strings.Join(want[0], "\n  "))
		}
	} else {
		_, pgErr := pgc.Exec(ctx, theirs).ReadAll()
		_, ourErr := s.Exec(ctx, ours, nil)
		if (pgErr == nil) != (ourErr == nil) || pgErr != nil && sqlState(pgErr) != errs.SQLState(ourErr) {
			t.Fatalf("%s:\nPostgreSQL: %v\nRockStream: %v", stmt, pgErr, ourErr)
		}
		if pgErr != nil {
			return
		}
	}
	compareRelations(t, s, pgc, stmt)
}
