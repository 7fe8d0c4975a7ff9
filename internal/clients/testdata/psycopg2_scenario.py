"""The client scenario with psycopg2 (libpq underneath).

Connection settings come from the libpq environment (PGHOST, PGPORT,
PGUSER, PGDATABASE). SCENARIO_PREFIX names this run's objects;
SCENARIO_TARGET=postgres runs the scenario against PostgreSQL itself,
with a plain view instead of a materialized one and without SUBSCRIBE,
which checks the scenario's own expectations. Exits non-zero on the first
failed assertion.
"""
import io
import os
from decimal import Decimal

import psycopg2
import psycopg2.errors

P = os.environ["SCENARIO_PREFIX"]
ROCKSTREAM = os.environ.get("SCENARIO_TARGET", "rockstream") == "rockstream"


def expect(got, want, what):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


conn = psycopg2.connect("")
conn.autocommit = True
cur = conn.cursor()

# DDL
cur.execute(f"CREATE TABLE {P}_orders (id int PRIMARY KEY, customer text NOT NULL, amount numeric(10,2))")
view = "MATERIALIZED VIEW" if ROCKSTREAM else "VIEW"
cur.execute(f"CREATE {view} {P}_totals AS SELECT customer, sum(amount) AS total, count(*) AS n "
            f"FROM {P}_orders GROUP BY customer")

# Parameterized DML through a server-side prepared statement (psycopg2
# itself interpolates parameters on the client, so PREPARE and EXECUTE are
# the way it reaches one).
cur.execute(f"PREPARE ins AS INSERT INTO {P}_orders VALUES ($1, $2, $3)")
for row in [(1, "alice", Decimal("10.50")), (2, "bob", Decimal("3.25")), (3, "alice", Decimal("1.00"))]:
    cur.execute("EXECUTE ins (%s, %s, %s)", row)
cur.execute("DEALLOCATE ins")

# A committed transaction and a rolled-back one.
conn.autocommit = False
cur.execute(f"INSERT INTO {P}_orders VALUES (%s, %s, %s)", (4, "carol", Decimal("7")))
cur.execute(f"UPDATE {P}_orders SET amount = amount + 1 WHERE id = %s", (2,))
conn.commit()
cur.execute(f"INSERT INTO {P}_orders VALUES (%s, %s, %s)", (5, "dave", Decimal("100")))
conn.rollback()
conn.autocommit = True

# Read the view.
cur.execute(f"SELECT customer, total, n FROM {P}_totals ORDER BY customer")
expect(cur.fetchall(), [("alice", Decimal("11.50"), 2), ("bob", Decimal("4.25"), 1),
                        ("carol", Decimal("7.00"), 1)], "view after transactions")
expect([d.name for d in cur.description], ["customer", "total", "n"], "column names")

# COPY in and out.
cur.copy_expert(f"COPY {P}_orders FROM STDIN", io.StringIO("6\terin\t2.50\n7\talice\t0.50\n"))
out = io.StringIO()
cur.copy_expert(f"COPY (SELECT customer, total, n FROM {P}_totals ORDER BY customer) TO STDOUT WITH (FORMAT csv)", out)
expect(out.getvalue(), "alice,12.00,3\nbob,4.25,1\ncarol,7.00,1\nerin,2.50,1\n", "COPY TO STDOUT")

# SUBSCRIBE through a cursor sees a change committed by another connection.
if ROCKSTREAM:
    sub = psycopg2.connect("")
    scur = sub.cursor()
    scur.execute(f"DECLARE c CURSOR FOR SUBSCRIBE {P}_totals WITH (SNAPSHOT = false)")
    cur.execute(f"INSERT INTO {P}_orders VALUES (%s, %s, %s)", (8, "bob", Decimal("1.00")))
    scur.execute("FETCH ALL c WITH (timeout = '10s')")
    changes = sorted((r[1], r[2], r[3], r[4]) for r in scur.fetchall())
    expect(changes, [(-1, "bob", Decimal("4.25"), 1), (1, "bob", Decimal("5.25"), 2)], "SUBSCRIBE changes")
    sub.rollback()
    sub.close()
else:
    cur.execute(f"INSERT INTO {P}_orders VALUES (%s, %s, %s)", (8, "bob", Decimal("1.00")))

# An error leaves the session usable.
try:
    cur.execute("SELECT 1/0")
    raise AssertionError("division by zero did not fail")
except psycopg2.errors.DivisionByZero as e:
    expect(e.pgcode, "22012", "SQLSTATE")
cur.execute(f"SELECT count(*) FROM {P}_orders")
expect(cur.fetchone()[0], 7, "rows after the error")
conn.close()
print("ok")
