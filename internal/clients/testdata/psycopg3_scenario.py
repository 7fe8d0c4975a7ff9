"""The client scenario with psycopg 3 (extended query protocol, server-side
prepared statements, binary COPY).

Connection settings come from the libpq environment (PGHOST, PGPORT,
PGUSER, PGDATABASE). SCENARIO_PREFIX names this run's objects;
SCENARIO_TARGET=postgres runs the scenario against PostgreSQL itself,
with a plain view instead of a materialized one and without SUBSCRIBE,
which checks the scenario's own expectations. Exits non-zero on the first
failed assertion.
"""
import os
from decimal import Decimal

import psycopg
import psycopg.errors

P = os.environ["SCENARIO_PREFIX"]
ROCKSTREAM = os.environ.get("SCENARIO_TARGET", "rockstream") == "rockstream"


def expect(got, want, what):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


conn = psycopg.connect("", autocommit=True)

# DDL
conn.execute(f"CREATE TABLE {P}_orders (id int PRIMARY KEY, customer text NOT NULL, amount numeric(10,2))")
view = "MATERIALIZED VIEW" if ROCKSTREAM else "VIEW"
conn.execute(f"CREATE {view} {P}_totals AS SELECT customer, sum(amount) AS total, count(*) AS n "
             f"FROM {P}_orders GROUP BY customer")

# Parameterized DML through prepared statements, with text and binary
# parameters.
with conn.cursor() as cur:
    cur.execute(f"INSERT INTO {P}_orders VALUES (%s, %s, %s)", (1, "alice", Decimal("10.50")), prepare=True)
    cur.execute(f"INSERT INTO {P}_orders VALUES (%s, %s, %s)", (2, "bob", Decimal("3.25")), prepare=True)
    cur.execute(f"INSERT INTO {P}_orders VALUES (%b, %b, %b)", (3, "alice", Decimal("1.00")), prepare=True)

# A committed transaction and a rolled-back one.
with conn.transaction():
    conn.execute(f"INSERT INTO {P}_orders VALUES (%s, %s, %s)", (4, "carol", Decimal("7")))
    conn.execute(f"UPDATE {P}_orders SET amount = amount + 1 WHERE id = %s", (2,))


class Rollback(Exception):
    pass


try:
    with conn.transaction():
        conn.execute(f"INSERT INTO {P}_orders VALUES (%s, %s, %s)", (5, "dave", Decimal("100")))
        raise Rollback()
except Rollback:
    pass

# Read the view, in text and in binary.
for binary in (False, True):
    with conn.cursor(binary=binary) as cur:
        cur.execute(f"SELECT customer, total, n FROM {P}_totals ORDER BY customer")
        expect(cur.fetchall(), [("alice", Decimal("11.50"), 2), ("bob", Decimal("4.25"), 1),
                                ("carol", Decimal("7.00"), 1)], f"view after transactions (binary={binary})")

# COPY in (binary) and out (CSV text).
with conn.cursor() as cur:
    with cur.copy(f"COPY {P}_orders (id, customer, amount) FROM STDIN (FORMAT binary)") as copy:
        copy.set_types(["int4", "text", "numeric"])
        copy.write_row((6, "erin", Decimal("2.50")))
        copy.write_row((7, "alice", Decimal("0.50")))
    out = b""
    with cur.copy(f"COPY (SELECT customer, total, n FROM {P}_totals ORDER BY customer) TO STDOUT WITH (FORMAT csv)") as copy:
        for chunk in copy:
            out += bytes(chunk)
    expect(out.decode(), "alice,12.00,3\nbob,4.25,1\ncarol,7.00,1\nerin,2.50,1\n", "COPY TO STDOUT")

# SUBSCRIBE through a cursor sees a change committed by another connection.
if ROCKSTREAM:
    with psycopg.connect("") as sub:
        sub.execute(f"DECLARE c CURSOR FOR SUBSCRIBE {P}_totals WITH (SNAPSHOT = false)")
        conn.execute(f"INSERT INTO {P}_orders VALUES (%s, %s, %s)", (8, "bob", Decimal("1.00")))
        rows = sub.execute("FETCH ALL c WITH (timeout = '10s')").fetchall()
        changes = sorted((r[1], r[2], r[3], r[4]) for r in rows)
        expect(changes, [(-1, "bob", Decimal("4.25"), 1), (1, "bob", Decimal("5.25"), 2)], "SUBSCRIBE changes")
        sub.rollback()
else:
    conn.execute(f"INSERT INTO {P}_orders VALUES (%s, %s, %s)", (8, "bob", Decimal("1.00")))

# An error leaves the session usable.
try:
    conn.execute("SELECT 1/0")
    raise AssertionError("division by zero did not fail")
except psycopg.errors.DivisionByZero as e:
    expect(e.sqlstate, "22012", "SQLSTATE")
expect(conn.execute(f"SELECT count(*) FROM {P}_orders").fetchone()[0], 7, "rows after the error")
conn.close()
print("ok")
